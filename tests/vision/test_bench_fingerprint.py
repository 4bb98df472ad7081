"""``python -m bench.fingerprint``: one hash of what the default reader reads on a fixed set of frames, for changes
meant to read every frame as before (``docs/READING.md``, "Checking that a change reads as before")."""

from __future__ import annotations

import pytest

from bench.fingerprint import PHOTO_SETS, fingerprint, main, table_rows
from companion.app.settings import Settings
from vision.reader import load_reader


@pytest.fixture(scope="module")
def reader():
    return load_reader(Settings.defaults(), threads=1)


def test_the_same_reader_reads_the_same_fingerprint_twice(reader):
    assert fingerprint(table_rows(reader, 2)) == fingerprint(table_rows(reader, 2))


def test_a_reader_that_reads_otherwise_gives_another_fingerprint(reader):
    rows, told_two = table_rows(reader, 2), table_rows(reader.with_expected(2), 2)  # three dice found, two expected
    assert [row[1]["status"] for row in rows] != [row[1]["status"] for row in told_two]
    assert fingerprint(rows) != fingerprint(told_two)


def test_without_the_shared_sets_it_reads_the_tables_and_names_what_it_left_out(tmp_path, capsys):
    assert main(["--tables", "2", "--shared", str(tmp_path), "--output", str(tmp_path / "rows.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if "left out" in line] == [f"fingerprint: {name} is not in {tmp_path}; left out"
                                                           for name in [n for n, _ in PHOTO_SETS] + ["real-dice-patterson"]]
    assert out[-1].startswith("fingerprint: ") and out[-1].endswith("readings ok)") and " of 3 readings" in out[-1]
    assert (tmp_path / "rows.json").is_file()
