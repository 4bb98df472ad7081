"""The annotated photo's words: drawn by ``vision.glyphs`` (never OpenCV 5's font engine, ~8 MiB kept by
``serve``), every character the reader writes there in the font, and text cut off cleanly at the edges."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.core.reading import OK, REASON_CODES, UNCERTAIN, DieReading, Reading
from vision.annotate import annotate
from vision.glyphs import GLYPHS, draw_text, glyph, text_mask
from vision.pipeline.decide import reason_in_words

GREEN = (60, 200, 60)


def _every_reason() -> list[str]:
    params = {"count": {"found": 1, "expected": 3}, "low_confidence": {"n": 2, "lowest": 0.7}, "size": {"seen_px": 176, "calibrated_px": 110},
              "second_look": {"n": 2}, "calibration": {"frame": [640, 480], "empty_tray": [1280, 960]}}
    region = {"code": "calibration", "frame": [640, 480], "region": [80, 60, 1120, 840]}
    return [reason_in_words({"code": code, **params.get(code, {})}) for code in REASON_CODES] + [reason_in_words(region)]


def test_every_character_the_reader_writes_on_a_photo_is_in_the_font() -> None:
    texts = _every_reason() + ["ok: total 18", "uncertain: ", "6 (sees 1) 0.99", "1 (sees 6) 0.18"]
    missing = {ch for text in texts for ch in text if ch.lower() not in GLYPHS}
    assert not missing, f"no glyph for {sorted(missing)}"


def test_a_character_the_font_lacks_is_drawn_as_a_question_mark_and_capitals_as_small_letters() -> None:
    assert (glyph("§") == GLYPHS["?"]).all()
    assert (glyph("K") == GLYPHS["k"]).all()


def test_glyphs_are_seven_by_five_and_none_but_the_space_is_blank() -> None:
    for ch, cells in GLYPHS.items():
        assert cells.shape == (7, 5), ch
        assert cells.any() == (ch != " "), ch
    assert len({cells.tobytes() for cells in GLYPHS.values()}) == len(GLYPHS)  # no two glyphs alike


def test_text_is_drawn_above_and_right_of_its_origin_with_a_dark_outline() -> None:
    img = np.full((80, 200, 3), 128, np.uint8)
    draw_text(img, "6 0.99", (20, 50), 14, GREEN)
    ys, xs = np.nonzero((img == GREEN).all(axis=2))
    assert ys.min() >= 50 - 14 and ys.max() < 50 and xs.min() >= 20
    assert xs.max() - xs.min() + 1 == text_mask("6 0.99", 2).shape[1]  # every glyph column drawn, 2-px cells
    assert ((img == 0).all(axis=2)).any()  # the outline
    untouched = img.copy()
    untouched[30:56, 14:20 + text_mask("6 0.99", 2).shape[1] + 6] = 128
    assert (untouched == 128).all()  # nothing drawn away from the text


@pytest.mark.parametrize("origin", [(-30, 5), (190, 79), (-500, -500), (5000, 40), (10, 5000)])
def test_text_running_off_the_photo_is_cut_off_not_an_error(origin: tuple[int, int]) -> None:
    img = np.zeros((80, 200, 3), np.uint8)
    draw_text(img, "uncertain: found 1 die, expected 3", origin, 14, GREEN)
    assert img.shape == (80, 200, 3)


def test_the_annotated_photo_never_uses_opencvs_text(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("cv2.putText loads OpenCV 5's font engine")

    monkeypatch.setattr(cv2, "putText", refuse)
    frame = np.full((960, 1280, 3), 90, np.uint8)
    dice = (DieReading(1, 6, 0.99, (100, 100, 60, 60)), DieReading(6, 1, 0.18, (400, 300, 60, 60), doubts=("low_confidence",)))
    for reading in (Reading(OK, dice, model_id="m"), Reading(UNCERTAIN, dice, reason="; ".join(_every_reason()), model_id="m")):
        out = annotate(frame, reading, 0.9)
        assert out.shape == frame.shape and (out != frame).any()
    assert (frame == 90).all()  # a copy is drawn on, never the camera's frame
