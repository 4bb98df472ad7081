"""The hardware documents agree with the default pin map in ``firmware/settings.py``."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from firmware.settings import REQUIRED_PINS, SUGGESTED_PINS

HW = Path(__file__).resolve().parents[2] / "hardware"
SVG = "{http://www.w3.org/2000/svg}"

#: BCM -> physical header pin, from the Raspberry Pi pinout (40-pin models).
HEADER = {2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 5: 29, 6: 31, 13: 33, 19: 35, 26: 37,
          14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26, 12: 32, 16: 36, 20: 38, 21: 40}
EXPECTED = {**REQUIRED_PINS, **SUGGESTED_PINS}


def pins_md_rows() -> dict[str, tuple[int, int]]:
    rows = {}
    for line in (HW / "PINS.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`(gpio\.[a-z_]+)`[^|]*\|\s*(\d+)\s*\|\s*(\d+)\s*\|", line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return rows


def svg_connections() -> dict[str, tuple[int, int, str]]:
    root = ET.parse(HW / "wiring.svg").getroot()
    found = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "connection":
            text = " ".join("".join(t.itertext()) for t in g.iter(f"{SVG}text"))
            found[g.get("data-key")] = (int(g.get("data-bcm")), int(g.get("data-header-pin")), text)
    return found


def test_pins_md_lists_every_pin_setting_with_its_default_and_header_pin():
    rows = pins_md_rows()
    assert set(rows) == set(EXPECTED)
    for key, bcm in EXPECTED.items():
        assert rows[key] == (bcm, HEADER[bcm]), key


def test_wiring_svg_draws_every_pin_setting_where_the_settings_put_it():
    conns = svg_connections()
    assert set(conns) == set(EXPECTED)
    for key, bcm in EXPECTED.items():
        svg_bcm, svg_pin, text = conns[key]
        assert (svg_bcm, svg_pin) == (bcm, HEADER[bcm]), key
        assert f"GPIO{bcm} (pin {HEADER[bcm]})" in text, key  # what a person reads agrees too


def test_pins_md_marks_the_optional_parts_as_optional():
    text = (HW / "PINS.md").read_text(encoding="utf-8")
    for key in SUGGESTED_PINS:
        assert f"`{key}` (optional)" in text


@pytest.mark.parametrize("name", ["BOM.md", "LIGHTING.md", "BUILD.md", "tray-mount.scad", "tray-mount.png"])
def test_the_build_documents_exist(name):
    assert (HW / name).stat().st_size > 500


@pytest.mark.skipif(shutil.which("openscad") is None, reason="openscad is not installed (apt-get install openscad)")
def test_the_tray_mount_keeps_the_whole_window_in_frame_and_the_hood_out_of_it(tmp_path):
    out = tmp_path / "echo.echo"
    run = subprocess.run(["openscad", "-o", str(out), str(HW / "tray-mount.scad")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    echo = out.read_text(encoding="utf-8")
    minimum, used = map(float, re.search(r"minimum lens-to-tray distance: ([\d.]+) mm; using ([\d.]+) mm", echo).groups())
    seen_w, seen_d = map(float, re.search(r"plane seen at that distance: ([\d.]+) x ([\d.]+) mm", echo).groups())
    assert round(minimum, 1) == 120.9 and used == 135  # the numbers BUILD.md and LIGHTING.md quote
    assert seen_w >= 240 and seen_d >= 160  # the whole tray window is in the picture
    hood = float(re.search(r"lens hood rim at ([\d.]+) degrees", echo).group(1))
    assert hood > 51  # the hood stays outside the lens's half field of view


@pytest.mark.parametrize("doc", ["BOM.md", "LIGHTING.md", "BUILD.md", "PINS.md", "../deploy/README.md"])
def test_every_picture_and_file_a_document_links_to_exists(doc):
    path = HW / doc
    links = re.findall(r"\]\(([^)#\s]+)\)", path.read_text(encoding="utf-8"))
    for link in links:
        if "://" not in link:
            assert (path.parent / link).exists(), f"{doc} links to {link}, which is missing"


def test_the_rendered_tray_picture_is_a_png():
    assert (HW / "tray-mount.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
