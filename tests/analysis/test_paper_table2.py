"""Issue 32: ``report --paper --table self_tests`` carries the paper's Table 2 (TP, FN,
FP, TN rates per self-test verdict) beside a run's own counts, and a log written under
the baseline's old name ``none`` is compared as ``retry``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_bench.analysis.paper import published_for
from reflexion_bench.analysis.report import build_comparison
from reflexion_bench.analysis.tables import tables

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humaneval_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real mock-model Reflexion run of two HumanEval problems."""
    tmp = tmp_path_factory.mktemp("table2")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "experiment=table1_humaneval_py",
            "strategy=reflexion",
            "model=mock",
            "limit=2",
            "strategy.max_trials=2",
            f"run_dir={tmp / 'run'}",
            f"paths.cache_dir={tmp / 'cache'}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return tmp / "run"


def test_self_tests_table_carries_the_papers_table_2_rates(humaneval_run: Path) -> None:
    frame = tables(build_comparison([humaneval_run], n_resamples=200, paper=True))["self_tests"]
    mine = frame[frame["source"] == "this run"]
    assert len(mine) == 1 and int(mine.iloc[0][["tp", "fn", "fp", "tn"]].sum()) > 0
    paper = frame[frame["source"].str.startswith("published")]
    assert set(paper["benchmark"]) == {"humaneval"}  # never another benchmark's rows
    (row,) = paper.to_dict("records")
    printed = {p.metric: p.value for p in published_for({"humaneval"}) if "self_test" in p.metric}
    assert row["fp_rate"] == pytest.approx(printed["self_test_fp_rate"])
    assert row["fn_rate"] == pytest.approx(printed["self_test_fn_rate"])
    # Rates per self-test verdict, as the paper prints them.
    assert row["tp_rate"] + row["fp_rate"] == pytest.approx(1.0)
    assert row["fn_rate"] + row["tn_rate"] == pytest.approx(1.0)


def test_every_table_2_benchmark_has_both_rates() -> None:
    rows = [p for p in published_for(metric="self_test_fn_rate")]
    fp = {(p.benchmark, p.strategy, p.model) for p in published_for(metric="self_test_fp_rate")}
    assert len(rows) == 4  # HumanEval and MBPP, Python and Rust
    assert {(p.benchmark, p.strategy, p.model) for p in rows} == fp


def test_a_log_under_the_old_name_none_compares_as_retry(
    humaneval_run: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old_none_run"
    shutil.copytree(humaneval_run, old)
    for name in ("log.jsonl", "summary.json"):
        path = old / name
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace('"reflexion"', '"none"'), encoding="utf-8")
    assert '"strategy": "none"' in (old / "log.jsonl").read_text(encoding="utf-8")
    report = build_comparison([old], n_resamples=200)
    assert [g["strategy"] for g in report["groups"]] == ["retry"]
