"""Makes the fixed conformance set that `make pi-check` reads here and on the Pi.

Run once; its output is committed (``tests/conformance/frames/`` and
``frames.json``), so every later `pi-check` reads the very same bytes:

    .venv/bin/python tests/conformance/make_frames.py

The kinds of frame:

- ``render-*``: tray frames from the project's renderer (``vision/simtable.py``),
  seen from below through the acrylic, seeded, with glare, blur, noise, touching
  and leaning dice;
- ``byler-*`` and ``skovy-*``: real photos from the ``train`` and ``val`` splits of
  ``../shared/datasets`` (never Byler's ``test`` split), copied byte for byte;
- ``tray/``: a calibrated tray (``tray/config.toml`` with the die size, ``tray/empty.jpg``)
  and ``tray/frames/tray-*``: one scene's dice in several layouts, two pushed together, a
  blank card where a die should be, a die missing: read with ``read --instance tray``, so
  tray mode's empty-tray steps (``pipeline/tray.py``, the outline against the empty tray) run
  on both machines. ``make_frames.py --tray`` remakes this folder alone;
- ``closeup/``: ``closeup/config.toml`` (one die expected) and ``closeup/frames/closeup-*``:
  real casino dice (patterson's ``val`` crops, MIT) each filling most of a 480-px frame
  (``bench.eval_sets.big``), whose big marks the detector takes for dice from every distance,
  and a crop read whole (byte for byte): read with ``read --instance closeup``, so the die
  around its marks (``propose.around_marks``) and its check against the frame's centre are
  read on both machines; and ``closeup/frames/closeup-inside-*``: two ``mid`` built-set photos (real val dice,
  ``bench.eval_sets.mid``) changed as the robustness sweep changes them, where a lone die is read as a one whose
  square holds the die reading another face, so the look inside (``classify.one_holding_a_die``) and its bar are
  read on both machines (the second's die is rune55's, CC BY 4.0: ``RUNE55_CREDIT``).
  ``make_frames.py --closeup`` remakes this folder alone;
- ``bigframe/``: ``bigframe/config.toml`` (five dice expected) and ``bigframe/frames/bigframe-*``: real photos of
  five dice at their own scale in a phone's 12-megapixel frame, where the dice are 1-2 % of the frame's width: read
  with ``read --instance bigframe``, so the finest look (``FINEST_NET_SIDE``) runs on both machines.
  ``make_frames.py --bigframe`` remakes this folder alone;
- ``calibrated/``: ``calibrated/config.toml`` (one die, a die side of ``CALIBRATED_SIDE``, seen from above) and
  ``calibrated/frames/calibrated-*``: ``mid`` built-set photos (real val dice) the look at that size misses, two of
  that size by ``calibrate --dice``'s measure (reason ``second_look``) and two of another size (``size``), so the
  measure (``shape.die_sides``, the classic finder's outlines among them) decides between them on both machines.
  ``make_frames.py --calibrated`` remakes this folder alone;
- ``lens/``: ``lens/config.toml`` (a die side, the empty tray, and the bend of a wide lens, ``LENS_BEND``) and
  ``lens/frames/lens-*``: a calibrated tray seen through that lens (``vision.pipeline.lens.bend_frame``), dice apart,
  touching, and one leaning on the cup: each die's outline is straightened before it is judged, float maths on both
  machines. ``make_frames.py --lens`` remakes this folder alone;
- ``far-*``: a rendered table shrunk so its dice are a few hundredths of the frame's
  width, the table stretched around it (a 1280×960 frame, and a small one the finer
  look enlarges), so the reader's finer look runs on both machines;
  ``make_frames.py --far`` adds these to the set alone;
- ``cue-*``: rendered tables with a die leaning on the cup whose outline passes, so that only
  the leaning cue (``vision/leaning_cue.py``) doubts it: the cue's embedding and its line are
  read on both machines (seeds the cue was not fit on); ``make_frames.py --cue`` adds these alone;
- ``turned-*``: rune55's photos where the first look's turned check (``classify.TURNED_BAR``) decides: its dark
  die with glowing marks photographed on its side (turned a quarter clockwise here, saved as PNG so the bytes are the
  turned pixels; the wider cut's turns read it 0.54), and the two ``val`` photos whose turned dice come nearest the
  bar, one each side (0.695, 0.721), copied byte for byte. ``make_frames.py --turned`` adds these alone. Rune55 dataset by Roboflow user
  rune-zkmvl (https://universe.roboflow.com/rune-zkmvl/rune55), CC BY 4.0;
- ``margin-*``: hard renders (heavy blur, noise, dim light, a die leaning on the
  cup) chosen from a larger batch because the reader's least sure die on them
  is closest to where a die stops counting as sure: the frames where float
  differences between machines would show first.

The near-margin choice reads the candidates with ``elephants-bluff read --json``
(the command, not the reader's code), so it picks whatever reader is installed.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from vision.simtable import from_farther, render_calibrated_table, render_table  # noqa: E402  (the renderer: frames only, not the reader)

DATASETS = REPO.parent / "shared" / "datasets"
OUT = HERE / "frames"
TRAY = HERE / "tray"
CLOSEUP = HERE / "closeup"
BIGFRAME = HERE / "bigframe"
CALIBRATED = HERE / "calibrated"
LENS = HERE / "lens"
#: the ``lens`` group's wide lens (``camera.lens_distortion`` and ``camera.lens_distortion_k2``: both terms of the
#: straightening in float maths) and its tray's scene (its seed)
LENS_BEND, LENS_SEED = (0.15, 0.1), 7300
#: the patterson val crops (by their order in ``crops.csv``) pasted close up for the ``closeup`` group: dice whose marks
#: the detector takes for dice from every distance (the die around them read sure, and read unsure), and dice the
#: looks from farther read
CLOSEUP_CROPS = (4, 6, 9, 13, 25, 26, 33, 0, 2)
#: ... and patterson crops read whole, copied byte for byte: a casino one whose square around its marks reads a two
#: and the frame's centred square the one (the reader's check between the two)
CLOSEUP_WHOLE = ("crops/DJI_20241005234432_0239_D_detection_1.jpg",)
#: the calibrated tray's scene (its seed) and die size
TRAY_SEED, TRAY_DIE_SIDE = 7100, 64
#: a die read at this confidence or above counts as sure (the reader's own figure when the set was made)
SURE_FROM = 0.95


def _save(path: Path, frame: np.ndarray) -> None:
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 88])
    assert ok
    path.write_bytes(data.tobytes())


def renders(out: Path, manifest: dict) -> None:
    kinds = [
        ("plain", {}), ("plain", {}), ("plain", {}), ("plain", {}),
        ("glare", {"glare": 2}), ("glare", {"glare": 3}),
        ("touching", {"touching": 1.0}), ("touching", {"touching": 1.0}),
        ("blur", {"blur": 1.2}), ("noise", {"noise": 6.0}),
        ("small", {"die_side": 44.0}), ("big", {"die_side": 90.0}),
        ("lean", {"leaning": 25.0}), ("jpeg", {"jpeg_quality": 60}),
        ("plain", {}), ("glare", {"glare": 1}),
    ]
    for i, (kind, kw) in enumerate(kinds):
        rng = np.random.default_rng(7000 + i)
        seen = [int(v) for v in rng.integers(1, 7, size=3)]
        frame, dice = render_table(seen, rng, view="below", **kw)
        name = f"render-{i:02d}-{kind}.jpg"
        _save(out / name, frame)
        manifest[name] = {"kind": "render", "seed": 7000 + i, "seen": seen, "options": kw}


def real_photos(out: Path, manifest: dict) -> None:
    picks = [("real-dice-byler", "train", "byler", 7), ("real-dice-skovy", "train", "skovy", 3), ("real-dice-skovy", "val", "skovy", 2)]
    for folder, split, short, count in picks:
        names = json.loads((DATASETS / folder / "split.json").read_text(encoding="utf-8"))[split]
        assert split != "test"
        for stem in random.Random(f"{folder}-{split}").sample(sorted(names), count):
            name = f"{short}-{split}-{stem}.jpg"
            shutil.copyfile(DATASETS / folder / "images" / f"{stem}.jpg", out / name)
            labels = (DATASETS / folder / "labels" / f"{stem}.txt").read_text(encoding="utf-8").split("\n")
            manifest[name] = {"kind": "photo", "set": folder, "split": split, "image": f"images/{stem}.jpg",
                              "values_as_photographed": sorted(int(line.split()[0]) + 1 for line in labels if line.strip())}


def margin_frames(out: Path, manifest: dict, wanted: int = 8, tries: int = 40) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        candidates = {}
        for i in range(tries):
            rng = np.random.default_rng(9000 + i)
            seen = [int(v) for v in rng.integers(1, 7, size=3)]
            kw = [{"blur": 2.2}, {"noise": 16.0}, {"leaning": 12.0}, {"blur": 1.6, "noise": 10.0}, {"die_side": 38.0, "noise": 8.0}][i % 5]
            frame, _ = render_table(seen, rng, view="below", **kw)
            if i % 7 == 3:
                frame = (frame.astype(np.float32) * 0.45).astype(np.uint8)  # a dim tray
            name = f"cand-{i:02d}.jpg"
            _save(Path(tmp) / name, frame)
            candidates[name] = {"seed": 9000 + i, "seen": seen, "options": kw, "dimmed": i % 7 == 3}
        command = REPO / ".venv" / "bin" / "elephants-bluff"
        lines = subprocess.run([str(command), "read", "--json", *sorted(candidates)], cwd=tmp, capture_output=True, text=True, check=True).stdout
        scored = []
        for line in lines.splitlines():
            reading = json.loads(line)
            confidences = [d["confidence"] for d in reading.get("dice", [])]
            if confidences:
                scored.append((abs(min(confidences) - SURE_FROM), reading["file"], min(confidences), reading["status"]))
        for rank, (_, cand, low, status) in enumerate(sorted(scored)[:wanted]):
            name = f"margin-{rank:02d}.jpg"
            shutil.copyfile(Path(tmp) / cand, out / name)
            manifest[name] = {"kind": "near-margin", **candidates[cand], "least_sure_when_made": round(low, 4), "status_when_made": status}


def _write_manifest(path: Path, manifest: dict) -> None:
    path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n", encoding="utf-8")


def far_frames(out: Path, manifest: dict) -> None:
    """Rendered tables shrunk into bigger frames: dice 15 px in 1280×960 and 9 px in 480×360."""
    for i, (die_px, width, height) in enumerate([(15, 1280, 960), (9, 480, 360)]):
        seed = 9500 + i
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, size=3)]
        frame, _ = from_farther(*render_table(seen, rng, view="below", touching=0.0, glare=1), die_px, width, height)
        name = f"far-{i:02d}.jpg"
        _save(out / name, frame)
        manifest[name] = {"kind": "far", "seed": seed, "seen": seen, "die_px": die_px, "frame": [width, height]}


RUNE55_CREDIT = "Rune55 dataset by Roboflow user rune-zkmvl (https://universe.roboflow.com/rune-zkmvl/rune55), CC BY 4.0"
#: rune55 photos for the turned check: (name in the set, split, quarter turns clockwise)
TURNED_PHOTOS = (("00119_jpg.rf.2e6cdb7583bfade5f73d4577c22ad039", "val", 1),
                 ("00199_jpg.rf.4422ca054093b303c7e5047741623cee", "val", 0),
                 ("00056_jpg.rf.405dabb89f41206eb8a8ae0c29ac8127", "val", 0))


def turned_frames(out: Path, manifest: dict) -> None:
    """rune55 photos whose dice the first look's turned check decides (``TURNED_PHOTOS``)."""
    folder = DATASETS / "real-dice-rune55"
    for i, (stem, split, turns) in enumerate(TURNED_PHOTOS):
        assert stem in json.loads((folder / "split.json").read_text(encoding="utf-8"))[split]
        labels = (folder / "labels" / f"{stem}.txt").read_text(encoding="utf-8").split("\n")
        if turns:
            name = f"turned-{i:02d}-{split}-{stem[:5]}-on-its-side.png"
            ok, data = cv2.imencode(".png", cv2.rotate(cv2.imread(str(folder / "images" / f"{stem}.jpg")), cv2.ROTATE_90_CLOCKWISE))
            assert ok
            (out / name).write_bytes(data.tobytes())
        else:
            name = f"turned-{i:02d}-{split}-{stem[:5]}.jpg"
            shutil.copyfile(folder / "images" / f"{stem}.jpg", out / name)
        manifest[name] = {"kind": "turned", "set": "real-dice-rune55", "split": split, "image": f"images/{stem}.jpg",
                          "quarter_turns_clockwise": turns, "credit": RUNE55_CREDIT,
                          "values_as_photographed": sorted(int(line.split()[0]) + 1 for line in labels if line.strip())}


#: leaning frames the cue's fit holds out (``models.training.leaning_cue``: seeds 50,400-50,499) that the outline
#: alone reads ok and the cue doubts
CUE_SEEDS = (50400, 50407, 50423, 50428)


def cue_frames(out: Path, manifest: dict) -> None:
    """Rendered tables with a die leaning on the cup that only the leaning cue doubts."""
    for i, seed in enumerate(CUE_SEEDS):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        tilt = float(rng.uniform(20, 45))
        frame, _, _ = render_calibrated_table(seen, rng, view="below", leaning=tilt)
        name = f"cue-{i:02d}.jpg"
        _save(out / name, frame)
        manifest[name] = {"kind": "leaning", "seed": seed, "seen": seen, "leaning_deg": round(tilt, 2)}


def _calibrated_tray(seed: int, kinds: list[tuple[str, dict]]):
    """One calibrated tray's frames from below (``tray_frames``, ``lens_frames``): for each (kind, render options) of
    ``kinds``, its index, kind, options, the faces seen, the frame, its dice and the empty tray. Every frame is drawn
    from ``seed`` (the same room and tray; the layouts differ with the options), its faces from ``seed + 1 + index``."""
    for i, (kind, kw) in enumerate(kinds):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in np.random.default_rng(seed + 1 + i).integers(1, 7, size=3)]
        frame, dice, empty = render_calibrated_table(seen, rng, view="below", die_side=TRAY_DIE_SIDE, glare=0, **kw)
        yield i, kind, kw, seen, frame, dice, empty


def tray_frames(folder: Path) -> None:
    """One calibrated tray: its empty photo, its settings, and frames of dice on it (the same room, light and tray)."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "frames").mkdir(parents=True)
    manifest: dict = {}
    kinds = [("apart", {"touching": 0.0}), ("apart", {"touching": 0.0, "blur": 1.0}), ("touching", {"touching": 1.0}),
             ("touching", {"touching": 1.0, "noise": 5.0}), ("some", {"touching": 0.5}), ("some", {"touching": 0.5, "jpeg_quality": 70})]
    empty = None
    for i, kind, kw, seen, frame, dice, empty_now in _calibrated_tray(TRAY_SEED, kinds):
        empty = empty if empty is not None else empty_now
        name = f"tray-{i:02d}-{kind}.jpg"
        _save(folder / "frames" / name, frame)
        manifest[name] = {"kind": "tray", "seen": seen, "options": kw}
        if kind == "apart" and i == 0:  # the same frame with a blank card over one die, and with that die gone
            d = dice[1]
            half = int(d.side * 0.55)
            card = frame.copy()
            card[int(d.cy) - half:int(d.cy) + half, int(d.cx) - half:int(d.cx) + half] = 200
            _save(folder / "frames" / "tray-90-card.jpg", card)
            manifest["tray-90-card.jpg"] = {"kind": "tray", "seen": seen, "options": kw, "changed": "a blank card over the second die"}
            gone = frame.copy()
            gone[int(d.cy) - half:int(d.cy) + half, int(d.cx) - half:int(d.cx) + half] = empty_now[int(d.cy) - half:int(d.cy) + half, int(d.cx) - half:int(d.cx) + half]
            _save(folder / "frames" / "tray-91-missing.jpg", gone)
            manifest["tray-91-missing.jpg"] = {"kind": "tray", "seen": seen, "options": kw, "changed": "the second die taken away"}
    _save(folder / "empty.jpg", empty)
    (folder / "config.toml").write_text(f"[reader]\ndie_side_px = {TRAY_DIE_SIDE}\n\n[camera]\nempty_tray = \"empty.jpg\"\n", encoding="utf-8")
    _write_manifest(folder / "frames.json", manifest)
    print(f"{len(manifest)} tray frames in {folder.relative_to(REPO)}")


#: ``mid`` photos changed as the robustness sweep changes them (photo, change, which of its frames, the die's set):
#: a patterson four three times farther, inside a 272-px square read as a one; a rune55 six on another table,
#: whose whole photo reads as a one.
CLOSEUP_INSIDE = (("m0141", "3x farther", 0, "real-dice-patterson"), ("m0064", "7 other tables", 1, "real-dice-rune55"))


def closeup_frames(folder: Path) -> None:
    """Real casino dice close up, each alone in a 480-px frame, and real dice far off inside a square read as a one
    (``CLOSEUP_INSIDE``), read with one die expected."""
    import csv

    from bench.eval_sets import big  # the close-up set's own paste: the same frames the bench reads

    if folder.exists():
        shutil.rmtree(folder)
    (folder / "frames").mkdir(parents=True)
    root = DATASETS / "real-dice-patterson"
    with open(root / "crops.csv", newline="") as f:
        every = {row["file"]: row for row in csv.DictReader(f)}
    rows = [row for row in every.values() if row.get("split") == "val"]
    manifest: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        big(Path(tmp), [(int(row["value"]), cv2.imread(str(root / row["file"]))) for row in rows])
        for i in CLOSEUP_CROPS:
            name = f"closeup-{i:02d}.jpg"
            _save(folder / "frames" / name, cv2.imread(str(Path(tmp) / "images" / f"b{i:04d}.png")))
            manifest[name] = {"kind": "closeup", "set": "real-dice-patterson", "crop": rows[i]["file"], "seen": int(rows[i]["value"])}
    with tempfile.TemporaryDirectory() as tmp:
        from bench.eval_sets import mid, real_val_dice
        from models.training.robustness import CHANGES, _any_photo

        mid(Path(tmp), real_val_dice())
        for photo, change, which, source in CLOSEUP_INSIDE:
            img, labels = _any_photo(Path(tmp), photo)
            frame, inside, _ = list(CHANGES[change](img, labels, np.random.default_rng(int(photo[1:]))))[which]
            name = f"closeup-inside-{photo}.jpg"
            _save(folder / "frames" / name, frame)
            manifest[name] = {"kind": "closeup-inside", "set": source, "split": "val", "photo": photo, "change": change,
                              "which": which, "seen": int(inside[0][0]),
                              **({"credit": RUNE55_CREDIT} if source == "real-dice-rune55" else {})}
    for crop in CLOSEUP_WHOLE:
        name = "closeup-whole-" + Path(crop).name
        shutil.copy2(root / crop, folder / "frames" / name)
        manifest[name] = {"kind": "closeup-whole", "set": "real-dice-patterson", "crop": crop, "seen": int(every[crop]["value"])}
    (folder / "config.toml").write_text("[reader]\nexpected_dice = 1\n", encoding="utf-8")
    _write_manifest(folder / "frames.json", manifest)
    print(f"{len(manifest)} close-up frames in {folder.relative_to(REPO)}")


#: Byler's held-out ``train`` photos of five dice, each put at its own scale into a phone's 12-megapixel frame
#: (``models.training.robustness``'s "in a 12 MP frame", the photo's place and grain from its seed): on the first the
#: finest look (``FINEST_NET_SIDE``) settles the reading, on the second it boxes every die, still unsure.
BIGFRAME_PHOTOS = (("IMG_20191209_095609", 2), ("IMG_20191208_112451", 14))


def bigframe_frames(folder: Path) -> None:
    """Real photos small in a big frame, read with their five dice expected: the finest look runs on both machines."""
    from models.training.robustness import CHANGES
    from vision.dataset import photo

    if folder.exists():
        shutil.rmtree(folder)
    (folder / "frames").mkdir(parents=True)
    manifest: dict = {}
    for name, seed in BIGFRAME_PHOTOS:
        img, labels = photo(DATASETS / "real-dice-byler", name)
        (frame, inside, _), = CHANGES["in a 12 MP frame"](img, labels, np.random.default_rng(seed))
        out = f"bigframe-{name}.jpg"
        _save(folder / "frames" / out, frame)
        manifest[out] = {"kind": "bigframe", "set": "real-dice-byler", "photo": name, "split": "train", "seed": seed,
                         "frame": [frame.shape[1], frame.shape[0]], "seen": sorted(v for v, *_ in inside)}
    (folder / "config.toml").write_text("[reader]\nexpected_dice = 5\n", encoding="utf-8")
    _write_manifest(folder / "frames.json", manifest)
    print(f"{len(manifest)} big frames in {folder.relative_to(REPO)}")


#: ``mid`` built-set photos (real val dice, one a 1280×960 JPEG) read told a die side of ``CALIBRATED_SIDE`` from above:
#: two dice the look at that size misses and the look knowing no size finds, of that size as ``calibrate --dice``
#: measures it (``second_look``), and two of another size (``size``: m0057's die bigger, m0065's smaller, its side
#: measured by the classic finder's outline), so the measure's outlines decide between the reasons on both machines.
CALIBRATED_PHOTOS = ("m0094", "m0107", "m0057", "m0065")
CALIBRATED_SIDE = 180


def _val_dice_sources() -> list[str]:
    """The shared set each of ``bench.eval_sets.real_val_dice``'s dice comes from, in its order (rune55's, skovy's,
    patterson's): each set's dice counted alone, beside a folder holding only it."""
    from bench.eval_sets import real_val_dice

    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("real-dice-rune55", "real-dice-skovy", "real-dice-patterson"):
            alone = Path(tmp) / name
            alone.mkdir()
            (alone / name).symlink_to(DATASETS / name)
            out += [name] * len(real_val_dice(alone))
    return out


def calibrated_frames(folder: Path) -> None:
    """Real photos read in tray mode told a die side (``CALIBRATED_PHOTOS``), with one die expected, from above."""
    from bench.eval_sets import mid, real_val_dice

    if folder.exists():
        shutil.rmtree(folder)
    (folder / "frames").mkdir(parents=True)
    dice = real_val_dice()
    sources = _val_dice_sources()
    assert len(sources) == len(dice)
    manifest: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        mid(Path(tmp), dice)
        for photo in CALIBRATED_PHOTOS:
            name = f"calibrated-{photo}.jpg"
            shutil.copy2(Path(tmp) / "images" / f"{photo}.jpg", folder / "frames" / name)
            source = sources[int(photo[1:])]
            manifest[name] = {"kind": "calibrated", "set": source, "split": "val", "photo": photo, "seen": dice[int(photo[1:])][0],
                              **({"credit": RUNE55_CREDIT} if source == "real-dice-rune55" else {})}
    (folder / "config.toml").write_text(f"[reader]\nexpected_dice = 1\ndie_side_px = {CALIBRATED_SIDE}\n\n[camera]\ncamera_view = \"above\"\n",
                                        encoding="utf-8")
    _write_manifest(folder / "frames.json", manifest)
    print(f"{len(manifest)} calibrated frames in {folder.relative_to(REPO)}")


def lens_frames(folder: Path) -> None:
    """A calibrated tray seen through a wide lens (``LENS_BEND``): its bent empty photo, its settings (the die side as
    ``calibrate --dice`` measures it through the known lens: at the frame's centre) and bent frames of dice on it."""
    from vision.pipeline.lens import bend_frame

    if folder.exists():
        shutil.rmtree(folder)
    (folder / "frames").mkdir(parents=True)
    manifest: dict = {}
    kinds = [("apart", {"touching": 0.0}), ("touching", {"touching": 1.0}), ("some", {"touching": 0.5, "jpeg_quality": 80}),
             ("leaning", {"touching": 0.0, "leaning": 30.0})]
    empty = None
    for i, kind, kw, seen, frame, _, empty_now in _calibrated_tray(LENS_SEED, kinds):
        empty = empty if empty is not None else empty_now
        name = f"lens-{i:02d}-{kind}.jpg"
        _save(folder / "frames" / name, bend_frame(frame, *LENS_BEND))
        manifest[name] = {"kind": "lens", "seen": seen, "options": kw, "bend": list(LENS_BEND)}
    _save(folder / "empty.jpg", bend_frame(empty, *LENS_BEND))
    (folder / "config.toml").write_text(f"[reader]\ndie_side_px = {TRAY_DIE_SIDE}\n\n[camera]\nempty_tray = \"empty.jpg\"\n"
                                        f"lens_distortion = {LENS_BEND[0]}\nlens_distortion_k2 = {LENS_BEND[1]}\n", encoding="utf-8")
    _write_manifest(folder / "frames.json", manifest)
    print(f"{len(manifest)} lens frames in {folder.relative_to(REPO)}")


def main() -> int:
    if "--lens" in sys.argv[1:]:
        lens_frames(LENS)
        return 0
    if "--closeup" in sys.argv[1:]:
        closeup_frames(CLOSEUP)
        return 0
    if "--tray" in sys.argv[1:]:
        tray_frames(TRAY)
        return 0
    if "--bigframe" in sys.argv[1:]:
        bigframe_frames(BIGFRAME)
        return 0
    if "--calibrated" in sys.argv[1:]:
        calibrated_frames(CALIBRATED)
        return 0
    if "--cue" in sys.argv[1:]:  # added to the committed set, the other frames' bytes untouched
        manifest = json.loads((HERE / "frames.json").read_text(encoding="utf-8"))
        cue_frames(OUT, manifest)
        _write_manifest(HERE / "frames.json", manifest)
        return 0
    if "--turned" in sys.argv[1:]:  # added to the committed set, the other frames' bytes untouched
        manifest = json.loads((HERE / "frames.json").read_text(encoding="utf-8"))
        turned_frames(OUT, manifest)
        _write_manifest(HERE / "frames.json", manifest)
        return 0
    if "--far" in sys.argv[1:]:  # added to the committed set, the other frames' bytes untouched
        manifest = json.loads((HERE / "frames.json").read_text(encoding="utf-8"))
        far_frames(OUT, manifest)
        _write_manifest(HERE / "frames.json", manifest)
        return 0
    tray_frames(TRAY)
    closeup_frames(CLOSEUP)
    bigframe_frames(BIGFRAME)
    calibrated_frames(CALIBRATED)
    lens_frames(LENS)
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    manifest: dict = {}
    renders(OUT, manifest)
    real_photos(OUT, manifest)
    far_frames(OUT, manifest)
    cue_frames(OUT, manifest)
    turned_frames(OUT, manifest)
    margin_frames(OUT, manifest)
    _write_manifest(HERE / "frames.json", manifest)
    print(f"{len(manifest)} frames in {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
