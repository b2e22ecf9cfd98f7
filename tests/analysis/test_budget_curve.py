"""Budget curves and the submission rule (issue 48), on synthetic run logs written as run
folders: the report reads them as it reads real runs."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from reflexion_bench.analysis.budget_curve import (
    CSV_COLUMNS,
    UNITS,
    _bands,
    budget_curve_frame,
    unit_points,
)
from reflexion_bench.analysis.equal_budget import task_budget_points, verdicts_at_budget
from reflexion_bench.analysis.report import build_comparison, write_comparison
from reflexion_bench.analysis.submission import apply_submission, submitted_indices
from reflexion_bench.commands import report as report_cmd

CAP = 1500
RESAMPLES = 400  # enough for the checks below, quick on two shared cores


def _trial(
    task: str,
    k: int,
    *,
    strategy: str,
    passed: bool,
    own: int | None,
    final: bool,
    calls: list[dict[str, Any]],
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": "trial",
        "task_id": task,
        "attempt_id": f"{strategy}-{task}",
        "benchmark": "toy",
        "strategy": strategy,
        "model": "mock",
        "trial": k,
        "final": final,
        "hidden": {"passed": passed},
        "self_test": None
        if own is None
        else {"passed": own == 4, "details": {"n_tests": 4, "n_passed": own}},
        "model_calls": calls,
        "wall_time_s": 2.0 * k,
        "error": None,
        "extra": {"budget": {"tokens": CAP}} if final else {},
    }
    return rec


def _call(role: str, prompt: int, completion: int) -> dict[str, Any]:
    return {"role": role, "prompt_tokens": prompt, "completion_tokens": completion}


def _arm(strategy: str, seed: int, n_tasks: int = 40) -> list[dict[str, Any]]:
    """Tasks of up to 4 trials, each trial's verdict paid by its actor + self-test calls;
    reflexion pays a reflection between trials; a task stops once past the cap."""
    rng = random.Random(seed)
    out = []
    for t in range(n_tasks):
        spent, recs = 0, []
        for k in range(1, 5):
            calls = [_call("actor", 150, rng.randint(50, 250)), _call("self_test", 40, 20)]
            if strategy == "reflexion":
                calls.append(_call("reflector", 80, rng.randint(20, 120)))
            p = 0.2 + (0.15 * k if strategy == "retry" else 0.05 * k)
            recs.append(
                dict(
                    task=f"T{t}",
                    k=k,
                    strategy=strategy,
                    passed=rng.random() < p,
                    own=rng.randint(0, 4),
                    calls=calls,
                )
            )
            spent += sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
            if spent > CAP:
                break
        out += [_trial(**r, final=i == len(recs) - 1) for i, r in enumerate(recs)]
    return out


def _write_run(root: Path, name: str, records: list[dict[str, Any]]) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return d


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("study")
    _write_run(root, "retry", _arm("retry", 1))
    _write_run(root, "reflexion", _arm("reflexion", 2))
    return root


@pytest.fixture(scope="module")
def report(study: Path) -> dict[str, Any]:
    return build_comparison([study], n_resamples=RESAMPLES)


def test_curve_at_the_cap_is_the_strategies_tables_pass_at_budget(report: dict[str, Any]) -> None:
    rows = {r["strategy"]: r for r in report["strategies"]["rows"]}
    assert rows["reflexion"]["budget"] == CAP
    (curve,) = [c for c in report["budget_curves"]["curves"] if c["strategy"] == "reflexion"]
    last = curve["points"][-1]
    assert last["budget"] == CAP
    assert last["pass_at_budget"] == pytest.approx(rows["reflexion"]["pass_at_budget"]["estimate"])
    assert last["reference_pass_at_budget"] == pytest.approx(
        rows["retry"]["pass_at_budget"]["estimate"]
    )
    assert last["diff"] == pytest.approx(rows["reflexion"]["vs_retry"]["diff"]["estimate"])


def test_a_run_at_a_cap_answers_every_lower_budget() -> None:
    """Truncating a log to the trials paid for within B (what a run capped at B would
    have logged) gives the same verdicts at B as the full log, at every B."""
    records = _arm("reflexion", 3)
    full = task_budget_points(records, "tokens")
    for budget in range(300, CAP + 1, 100):
        capped = {t: [(c, v) for c, v in pts if c <= budget] for t, pts in full.items()}
        assert verdicts_at_budget(full, budget) == verdicts_at_budget(capped, budget)


def test_the_curves_own_points_are_monotone_in_budget(report: dict[str, Any]) -> None:
    for curve in report["budget_curves"]["curves"]:
        budgets = [p["budget"] for p in curve["points"]]
        assert budgets == sorted(set(budgets)) and len(budgets) >= 10
        assert budgets[-1] == CAP


def test_solved_share_never_drops_as_budget_grows_when_every_verdict_is_a_pass() -> None:
    # With every trial a hidden pass, more budget can only add verdicts: a monotone curve.
    recs = [dict(r, hidden={"passed": True}) for r in _arm("retry", 4)]
    pts = unit_points(recs, "tokens")
    shares = [
        np.mean([bool(v) for v in verdicts_at_budget(pts, b).values()])
        for b in range(0, CAP + 200, 50)
    ]
    assert shares == sorted(shares) and shares[0] == 0 and shares[-1] == 1


def test_simultaneous_band_contains_the_pointwise_band(report: dict[str, Any]) -> None:
    for curve in report["budget_curves"]["curves"]:
        for p in curve["points"]:
            assert p["simultaneous_lo"] <= p["lo"] <= p["diff"] <= p["hi"] <= p["simultaneous_hi"]
        # A bound on a whole curve is at least the one-budget normal quantile.
        assert curve["critical_value"] >= 1.9


def test_the_sup_t_band_itself_is_wider_than_pointwise() -> None:
    # Before any widening to the pointwise band: c se_j covers more than the pointwise
    # (Newcombe) interval at most budgets (the hull is a safeguard, not what makes it).
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, size=(120, 15)).astype(float)
    b = rng.integers(0, 2, size=(120, 15)).astype(float)
    bands, c = _bands(a, b, level=0.95, n_resamples=2000, seed=0)
    se = np.array([b["simultaneous_hi"] - b["diff"] for b in bands]) / c
    raw_wider = [
        b["diff"] - c * s <= b["lo"] and b["hi"] <= b["diff"] + c * s
        for b, s in zip(bands, se, strict=True)
    ]
    assert c > 2.0 and sum(raw_wider) >= 13


def test_best_own_tests_submits_the_trial_passing_most_in_loop_tests_earliest_on_ties() -> None:
    scores: list[float | None] = [2, None, 4, 4, 1]
    assert submitted_indices(scores, "last") == [0, 1, 2, 3, 4]
    assert submitted_indices(scores, "best_own_tests") == [0, 0, 2, 2, 2]
    assert submitted_indices([None, 0], "best_own_tests") == [0, 1]
    calls = [_call("actor", 10, 10)]
    recs = [
        _trial("A", 1, strategy="retry", passed=False, own=2, final=False, calls=calls),
        _trial("A", 2, strategy="retry", passed=True, own=4, final=False, calls=calls),
        _trial("A", 3, strategy="retry", passed=False, own=4, final=False, calls=calls),
        _trial("A", 4, strategy="retry", passed=False, own=1, final=True, calls=calls),
    ]
    out = apply_submission(recs, "best_own_tests")
    assert [r["hidden"]["passed"] for r in out] == [False, True, True, True]
    assert [r["extra"]["submitted_trial"] for r in out] == [1, 2, 2, 2]
    assert [r["extra"]["own_hidden"]["passed"] for r in out] == [False, True, False, False]
    assert recs[3]["hidden"]["passed"] is False  # the input is left alone


def test_submit_flag_recomputes_the_report_from_the_logged_in_loop_results(
    tmp_path: Path,
) -> None:
    calls = [_call("actor", 10, 10)]
    recs = [
        _trial("A", 1, strategy="retry", passed=True, own=4, final=False, calls=calls),
        _trial("A", 2, strategy="retry", passed=False, own=3, final=True, calls=calls),
        _trial("B", 1, strategy="retry", passed=False, own=1, final=False, calls=calls),
        _trial("B", 2, strategy="retry", passed=True, own=2, final=True, calls=calls),
    ]
    run = _write_run(tmp_path, "retry", recs)
    last = build_comparison([run], n_resamples=50)
    best = build_comparison([run], n_resamples=50, submit="best_own_tests")
    assert last["groups"][0]["final"]["estimate"] == 0.5  # A fails, B passes
    assert best["groups"][0]["final"]["estimate"] == 1.0  # A's trial 1, B's trial 2
    assert best["settings"]["submit"] == "best_own_tests" and "submit" not in last["settings"]
    # The in-loop verdicts are still paired with each trial's own hidden verdict.
    assert best["groups"][0]["self_test"] == last["groups"][0]["self_test"]


def test_table_has_the_columns_and_at_least_ten_budgets_per_curve(
    report: dict[str, Any], tmp_path: Path
) -> None:
    written = write_comparison(report, tmp_path / "out")
    df = pd.read_csv(tmp_path / "out" / "table_budget_curve.csv")
    assert tuple(df.columns) == CSV_COLUMNS
    assert list(df.columns[:10]) == [
        "benchmark",
        "strategy",
        "reference",
        "evaluator",
        "budget",
        "diff",
        "lo",
        "hi",
        "simultaneous_lo",
        "simultaneous_hi",
    ]
    assert set(df["evaluator"]) == {"self_tests"}  # the synthetic logs name none
    sizes = df.groupby(["benchmark", "strategy", "reference", "evaluator"]).size()
    assert len(sizes) == 2 and (sizes >= 10).all()
    names = {p.name for p in written}
    assert (
        "budget_curve_tokens_toy_mock.png" in names and "budget_curve_tokens_toy_mock.pdf" in names
    )
    assert "Budget curves" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.parametrize("unit", UNITS)
def test_every_budget_unit_gives_curves_in_that_unit(study: Path, unit: str) -> None:
    rep = build_comparison([study], n_resamples=50, budget_unit=unit)
    section = rep["budget_curves"]
    assert section["unit"] == unit
    df = budget_curve_frame(section)
    assert set(df["unit"]) == {unit}
    top = df["budget"].max()
    if unit == "tokens":
        assert top == CAP  # the logs' cap
    elif unit == "completion_tokens":
        assert top < CAP  # prompts no longer count
    elif unit == "wall_s":
        assert top <= sum(2.0 * k for k in range(1, 5))  # the trials' wall_time_s
    else:
        assert top == 0.0  # the synthetic calls carry no price


@pytest.mark.parametrize(("flag", "value"), [("--budget-unit", "furlongs"), ("--submit", "first")])
def test_a_bad_flag_value_is_one_line_naming_the_flag(
    study: Path, flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report_cmd.main([str(study), flag, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0] and value in err[0]
