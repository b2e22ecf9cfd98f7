"""Tables that go into a paper as they are (issue 33): ``report --columns`` in every
format, columns empty for every run left out of md and LaTeX, units in the headers."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from reflexion_bench.analysis.report import build_comparison
from reflexion_bench.analysis.tables import TABLES, display_frame, tables
from reflexion_bench.commands import report as report_cmd
from tests.analysis.test_report import make_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("cols"))


def _report(sweep: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = report_cmd.main([str(sweep), "--resamples", "200", "--no-write", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _md_header(text: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith("| "))
    return [c.strip() for c in line.strip("|").split("|")]


def test_columns_are_chosen_in_every_format(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cols = "strategy,final,first_try"
    rc, md, _ = _report(sweep, capsys, "--table", "main", "--columns", cols)
    assert rc == 0
    assert _md_header(md) == ["strategy", "final (errored = failed) %", "first try %"]
    rc, tex, _ = _report(sweep, capsys, "--table", "main", "--columns", cols, "--format", "latex")
    assert rc == 0
    header = next(ln for ln in tex.splitlines() if ln.startswith("strategy &"))
    assert header.startswith(r"strategy & final (errored = failed) \% & first try \%")
    assert header.count("&") == 2
    rc, text, _ = _report(sweep, capsys, "--table", "main", "--columns", cols, "--format", "csv")
    assert rc == 0
    (row, *_) = list(csv.reader(io.StringIO(text)))
    # The chosen ones first, in order; each interval column brings its bounds.
    assert row[:3] == ["strategy", "final", "first_try"]
    assert set(row[3:]) <= {"final_low", "final_high", "first_try_low", "first_try_high"}


def test_columns_hold_in_json_too(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--format json --columns`` printed the whole report, every key (issue 49)."""
    cols = ["strategy", "final", "first_try"]
    args = ["--table", "main", "--columns", ",".join(cols)]
    rc, text, _ = _report(sweep, capsys, *args, "--format", "json")
    assert rc == 0
    data = json.loads(text)
    assert list(data) == ["main"]
    bounds = {"final_low", "final_high", "first_try_low", "first_try_high"}
    assert data["main"]
    for row in data["main"]:
        assert list(row)[:3] == cols and set(row) <= set(cols) | bounds
    # The same values as the CSV (its keys, numbers unrounded).
    _, text, _ = _report(sweep, capsys, *args, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["strategy"] for r in rows] == [r["strategy"] for r in data["main"]]
    assert [float(r["final"]) for r in rows] == pytest.approx([r["final"] for r in data["main"]])
    # Without --table: every table that has the column, each row that column only.
    rc, text, _ = _report(sweep, capsys, "--columns", "final", "--format", "json")
    assert rc == 0
    data = json.loads(text)
    assert "main" in data and len(data) < len(TABLES)  # tables without `final` left out
    for name, table in data.items():
        assert table and all(set(row) <= {"final", "final_low", "final_high"} for row in table)
        assert any("final" in row for row in table), name
    # Neither --table nor --columns: the whole report, as before.
    rc, text, _ = _report(sweep, capsys, "--format", "json")
    assert rc == 0 and "groups" in json.loads(text)


def test_an_unknown_column_is_one_line_naming_the_columns_there_are(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = _report(sweep, capsys, "--table", "main", "--columns", "strategy,finl")
    assert rc == 2
    assert "finl" in err and "final" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_columns_empty_for_every_run_are_left_out_of_md_but_kept_in_csv(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = build_comparison([sweep], n_resamples=200)
    main = tables(report)["self_tests"]
    empty = [
        c
        for c in main.columns
        if not c.endswith(("_low", "_high"))
        and all(v is None or (isinstance(v, float) and math.isnan(v)) for v in main[c])
    ]
    assert empty, "the toy sweep has no plus verdicts: its plus columns are empty"
    shown = display_frame(main)
    kept = display_frame(main, drop_empty=False)
    assert len(shown.columns) == len(kept.columns) - len(empty)
    assert all(any(str(v) for v in shown[c]) for c in shown.columns)
    rc, text, _ = _report(sweep, capsys, "--table", "self_tests", "--format", "csv")
    assert rc == 0
    assert set(empty) <= set(next(csv.reader(io.StringIO(text))))  # CSV keeps its schema


def test_differences_are_in_points_and_shares_in_percent(sweep: Path) -> None:
    report = build_comparison([sweep], n_resamples=200)
    paired = display_frame(tables(report)["paired"])
    assert "A - B (points)" in paired.columns
    assert not any(c.startswith("A - B") and c.endswith("%") for c in paired.columns)
    assert "final A %" in paired.columns
