"""Issue 32: ``report`` on a small sweep is quick because it draws no figure it does not
need: a run folder's curve.png is redrawn only when its summary changed (or the figure
is missing), so a report of unchanged runs never imports matplotlib. Structural checks
(what is imported, what is rewritten), not a wall-clock limit on a shared machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("sweep")
    out = cli(
        "-m",
        "reflexion_bench.cli",
        "run",
        "-m",
        f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
        "env=toy",
        "model=toy",
        "sandbox=none",
        "progress=false",
        "strategy=simple,reflexion",
        f"paths.results_dir={results}",
        "sweep_name=speed",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return results / "sweeps" / "speed"


def imported_modules(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if "|" in line}


def test_report_of_unchanged_runs_draws_no_figure(sweep: Path) -> None:
    runs = sorted(p.parent for p in sweep.glob("*/log.jsonl"))
    assert len(runs) == 2
    curves = {r: (r / "curve.png").stat().st_mtime_ns for r in runs}
    summaries = {r: (r / "summary.json").read_text() for r in runs}

    out = cli("-X", "importtime", "-m", "reflexion_bench.cli", "report", str(sweep))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "matplotlib" not in imported_modules(out.stderr)
    assert {r: (r / "curve.png").stat().st_mtime_ns for r in runs} == curves
    assert {r: (r / "summary.json").read_text() for r in runs} == summaries
    assert "| simple" in out.stdout or "simple" in out.stdout  # the report itself ran


def test_a_changed_summary_or_a_missing_figure_is_redrawn(sweep: Path) -> None:
    runs = sorted(p.parent for p in sweep.glob("*/log.jsonl"))
    stale, missing = runs
    # An older summary (e.g. written by an older version of the metrics).
    data = json.loads((stale / "summary.json").read_text())
    data["n_tasks"] = -1
    (stale / "summary.json").write_text(json.dumps(data))
    before = (stale / "curve.png").stat().st_mtime_ns
    (missing / "curve.png").unlink()

    out = cli("-m", "reflexion_bench.cli", "report", str(sweep))
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads((stale / "summary.json").read_text())["n_tasks"] > 0  # refreshed
    assert (stale / "curve.png").stat().st_mtime_ns != before
    assert (missing / "curve.png").stat().st_size > 0


def test_a_figure_of_an_older_drawing_is_redrawn(sweep: Path) -> None:
    """The summary unchanged, but curve.png drawn by an older drawing (no current version
    key in the PNG, as every figure drawn before the key existed): redrawn, and then
    current."""
    from reflexion_bench.analysis.report import curve_is_current

    runs = sorted(p.parent for p in sweep.glob("*/log.jsonl"))
    old = runs[0] / "curve.png"
    assert curve_is_current(old)
    old.write_bytes(
        old.read_bytes().replace(b"reflexion-bench-curve\x00", b"reflexion-bench-curvX\x00")
    )
    assert not curve_is_current(old)
    out = cli("-m", "reflexion_bench.cli", "report", str(sweep))
    assert out.returncode == 0, out.stderr[-3000:]
    assert curve_is_current(old)
