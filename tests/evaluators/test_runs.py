"""Issue 48: every in-loop feedback source runs end to end through the real CLI
(``reflexion-bench run model=mock env=humaneval ... evaluator=E``: real HumanEval, real
sandbox, the mock model), and its summary.json names the evaluator, labels the run
(``clean`` / ``answer-in-loop``) and holds the in-loop vs hidden confusion."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: evaluator -> (the run's answer-key label, the read site counted in its log)
EXPECTED = {
    "visible_tests": ("clean", None),
    "oracle": ("answer-in-loop", "evaluator.hidden_tests"),
    "oracle_verdict": ("answer-in-loop", "evaluator.hidden_verdict"),
    "noisy_oracle": ("answer-in-loop", "evaluator.noisy_hidden_verdict"),
}


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def run(run_dir: Path, *overrides: str) -> dict[str, Any]:
    out = cli(
        "run", "model=mock", "env=humaneval", "progress=false", f"run_dir={run_dir}", *overrides
    )
    assert out.returncode == 0, out.stdout + out.stderr
    summary: dict[str, Any] = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return summary


def records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "log.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "trial"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One 4-task run per evaluator, as the issue's command line runs it."""
    base = tmp_path_factory.mktemp("evaluators")
    out = {}
    for name in EXPECTED:
        out[name] = base / name
        run(out[name], "limit=4", f"evaluator={name}")
    return out


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_evaluator_runs_named_and_labelled(runs: dict[str, Path], name: str) -> None:
    summary = json.loads((runs[name] / "summary.json").read_text(encoding="utf-8"))
    label, source = EXPECTED[name]
    assert summary["n_tasks"] == 4 and summary["errored_tasks"] == 0
    assert (summary["strategy"], summary["evaluator"]) == ("reflexion", name)
    assert summary["in_loop"]["evaluator"] == name
    assert summary["answer_key"]["label"] == label
    recs = records(runs[name])
    assert {r["evaluator"] for r in recs} == {name}
    if source is None:
        assert summary["answer_key"]["uses"] == 0
        assert all(r["answer_key_uses"] == {} for r in recs)
    else:
        # One read per judged trial, every one logged.
        assert summary["answer_key"]["by_source"] == {source: len(recs)}
    c = summary["in_loop"]["confusion"]
    assert c["tp"] + c["fp"] + c["fn"] + c["tn"] == summary["in_loop"]["trials_judged"] > 0


@pytest.mark.parametrize("name", ["oracle", "oracle_verdict"])
def test_the_oracle_agrees_with_the_final_score(runs: dict[str, Path], name: str) -> None:
    # One judge: the in-loop verdict is the scorer's on every trial.
    summary = json.loads((runs[name] / "summary.json").read_text(encoding="utf-8"))
    assert summary["in_loop"]["confusion"]["fp"] == summary["in_loop"]["confusion"]["fn"] == 0
    for r in records(runs[name]):
        assert r["self_test"]["passed"] == r["hidden"]["passed"]
        assert r["self_test"]["details"]["hidden_status"] == r["hidden"]["status"]


def test_oracle_feedback_carries_the_first_failing_test(runs: dict[str, Path]) -> None:
    first = records(runs["oracle"])[0]
    assert first["hidden"]["passed"] is False
    assert "First failure" in first["self_test"]["text"]
    assert first["hidden"]["detail"].strip()[:40] in first["self_test"]["text"]
    bare = records(runs["oracle_verdict"])[0]["self_test"]["text"]
    assert bare == "The hidden tests failed."


def test_visible_tests_run_the_prompt_examples(runs: dict[str, Path]) -> None:
    first = records(runs["visible_tests"])[0]
    assert first["task_id"] == "HumanEval/0"
    assert first["self_test"]["details"]["n_tests"] == 2
    assert "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False" in first["self_test"]["text"]


def test_visible_tests_fall_back_to_no_feedback_and_count_it(tmp_path: Path) -> None:
    # HumanEval/38's prompt shows no example.
    summary = run(tmp_path / "r", "task_ids=[HumanEval/0,HumanEval/38]", "evaluator=visible_tests")
    recs = records(tmp_path / "r")
    none = [r for r in recs if r["task_id"] == "HumanEval/38"]
    assert none and all(r["self_test"]["passed"] is None for r in none)
    assert all(r["self_test"]["details"]["fallback"] == "no_feedback" for r in none)
    assert "No visible tests" in none[0]["self_test"]["text"]
    assert summary["in_loop"]["no_feedback_trials"] == len(none)
    assert summary["in_loop"]["no_feedback_tasks"] == 1
    assert summary["in_loop"]["fallbacks"] == {"no_feedback": len(none)}
    # Trials without a verdict are not in the confusion.
    assert summary["in_loop"]["trials_judged"] == len(recs) - len(none)
    assert summary["answer_key"]["label"] == "clean"


def test_noisy_oracle_false_positive_rate_matches_fp_rate(tmp_path: Path) -> None:
    """The mock's programs (`return None`) fail every hidden test: each in-loop pass is a
    false positive, and FP / (FP + TN) estimates ``fp_rate`` over >= 100 trials."""
    summary = run(
        tmp_path / "r",
        "limit=25",
        "strategy.max_trials=5",
        "strategy.stop_on_pass=false",  # every task runs all 5 trials: 125 trials
        "evaluator=noisy_oracle",
        "evaluator.fp_rate=0.3",
    )
    loop = summary["in_loop"]
    c = loop["confusion"]
    n = c["fp"] + c["tn"]
    assert c["tp"] == c["fn"] == 0  # no program passes
    assert n == loop["trials_judged"] == 125
    se = math.sqrt(0.3 * 0.7 / n)
    assert abs(loop["rates"]["fp"] - 0.3) <= 3.3 * se, loop
    assert loop["rates"]["fp"] == c["fp"] / n


def test_report_shows_each_evaluator_s_confusion(runs: dict[str, Path]) -> None:
    out = cli(
        "report",
        *map(str, runs.values()),
        "--table",
        "self_tests",
        "--no-write",
        "--resamples",
        "100",
    )
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| humaneval")]
    assert len(rows) == 4  # never pooled: one row per evaluator
    for name in EXPECTED:
        # A noisy oracle's arm carries its rates (runs at two rates are never pooled).
        label = f"| {name}(fn=" if name == "noisy_oracle" else f"| {name} |"
        assert any(label in row for row in rows), out.stdout
    one = cli("report", str(runs["oracle"]), "--no-write")
    assert "evaluator=oracle" in one.stdout
    assert "in-loop (oracle) TP/FP/FN/TN" in one.stdout


def test_bad_evaluator_config_names_the_key(tmp_path: Path) -> None:
    base = ["run", "model=mock", "env=humaneval", "limit=1", "progress=false"]
    unknown = cli(*base, f"run_dir={tmp_path / 'a'}", "evaluator=nope", timeout=180)
    assert unknown.returncode != 0
    assert "`evaluator=nope`" in unknown.stderr + unknown.stdout
    assert "visible_tests" in unknown.stderr + unknown.stdout  # the options are listed
    bad = cli(
        *base,
        f"run_dir={tmp_path / 'b'}",
        "evaluator=noisy_oracle",
        "evaluator.fp_rate=1.5",
        timeout=180,
    )
    assert bad.returncode != 0
    assert "`evaluator.fp_rate`" in bad.stderr + bad.stdout
    assert "Traceback" not in bad.stderr
