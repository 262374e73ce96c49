"""Tests for `timetrack.py export --format csv`."""

import csv
import io
import json

import pytest

import timetrack


def write_db(path, entries):
    path.write_text(json.dumps({"version": 1, "entries": entries}), encoding="utf-8")


def entry(project, start, end, note=""):
    return {"project": project, "start": start, "end": end, "note": note}


def run_export(capsys, db, *extra):
    rc = timetrack.main(["--db", str(db), "export", "--format", "csv", *extra])
    out = capsys.readouterr().out
    assert rc == 0
    return list(csv.reader(io.StringIO(out)))


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "entries.json"
    write_db(path, [
        entry("thesis", "2026-03-01T09:00:00", "2026-03-01T11:30:00", "chapter 2"),
        entry("lab", "2026-03-02T13:00:00", "2026-03-02T13:20:00", "calibrate, then log"),
        entry("thesis", "2026-03-03T08:00:00", "2026-03-03T09:05:00"),
        entry("lab", "2026-03-04T10:00:00", None, "running"),
    ])
    return path


def test_header_and_columns(capsys, db):
    rows = run_export(capsys, db)
    assert rows[0] == ["project", "start", "end", "hours", "note"]
    assert rows[1] == ["thesis", "2026-03-01T09:00:00", "2026-03-01T11:30:00", "2.50", "chapter 2"]


def test_hours_have_two_decimals(capsys, db):
    rows = run_export(capsys, db)
    assert [r[3] for r in rows[1:]] == ["2.50", "0.33", "1.08"]


def test_running_timer_is_excluded(capsys, db):
    rows = run_export(capsys, db)
    assert len(rows) == 4
    assert all(r[4] != "running" for r in rows[1:])


def test_since_filters_by_start_date(capsys, db):
    rows = run_export(capsys, db, "--since", "2026-03-02")
    assert [r[1] for r in rows[1:]] == ["2026-03-02T13:00:00", "2026-03-03T08:00:00"]


def test_empty_result_is_header_only(capsys, db, tmp_path):
    assert run_export(capsys, db, "--since", "2026-04-01") == [["project", "start", "end", "hours", "note"]]
    empty = tmp_path / "none.json"
    assert run_export(capsys, empty) == [["project", "start", "end", "hours", "note"]]


def test_note_with_comma_is_quoted(capsys, db):
    rows = run_export(capsys, db)
    assert rows[2][4] == "calibrate, then log"


def test_bad_since_date_is_an_error(capsys, db):
    rc = timetrack.main(["--db", str(db), "export", "--format", "csv", "--since", "03/02/2026"])
    assert rc == 1
    assert "YYYY-MM-DD" in capsys.readouterr().err


def test_output_file(capsys, db, tmp_path):
    target = tmp_path / "out.csv"
    rc = timetrack.main(["--db", str(db), "export", "--format", "csv", "--output", str(target)])
    assert rc == 0
    assert target.read_text(encoding="utf-8").splitlines()[0] == "project,start,end,hours,note"
    assert "Wrote 3 entries" in capsys.readouterr().out
