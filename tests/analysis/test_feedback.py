"""Self-test reliability from the log (reflexion_bench/analysis/feedback.py and the
report's ``self_test_trials``, ``rewrites`` and ``elapsed`` tables): hand-made records
with hand-counted answers, and a real loop run whose self-tests reject correct programs."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.feedback import confusion_by_trial, elapsed_s, rewrites
from reflexion_bench.commands import report as report_cmd
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.strategies import Strategy
from tests.strategies.toyrun import run_toy


def rec(
    task: str,
    trial: int,
    hidden: bool,
    own: bool | None,
    *,
    n_tests: int = 5,
    time: str = "2026-12-01T10:00:00+00:00",
    wall: float = 1.0,
) -> dict[str, Any]:
    return {
        "task_id": task,
        "trial": trial,
        "hidden": {"passed": hidden},
        "self_test": None if own is None else {"passed": own, "details": {"n_tests": n_tests}},
        "time": time,
        "wall_time_s": wall,
    }


# A: right, rejected (FN) -> rewritten wrong (TN) -> right and accepted (TP)
# B: wrong but accepted (FP)
# C: right, rejected (FN) -> right again, accepted (TP)
# D: right, rejected (FN) at its last trial: submitted anyway
# E: no self-tests (another strategy): right -> wrong, a break not after an FN
RECORDS = [
    rec("A", 1, True, False, n_tests=3),
    rec("A", 2, False, False),
    rec("A", 3, True, True),
    rec("B", 1, False, True, n_tests=5),
    rec("C", 1, True, False, n_tests=4),
    rec("C", 2, True, True),
    rec("D", 1, True, False, n_tests=2),
    rec("E", 1, True, None),
    rec("E", 2, False, None),
]


def test_confusion_is_split_by_trial() -> None:
    rows = confusion_by_trial(RECORDS)
    assert rows == [
        {"trial": 1, "trials": 5, "hidden_pass": 4, "tp": 0, "fp": 1, "fn": 3, "tn": 0},
        {"trial": 2, "trials": 3, "hidden_pass": 1, "tp": 1, "fp": 0, "fn": 0, "tn": 1},
        {"trial": 3, "trials": 1, "hidden_pass": 1, "tp": 1, "fp": 0, "fn": 0, "tn": 0},
    ]


def test_rewrites_count_what_became_of_rejected_correct_programs() -> None:
    out = rewrites(RECORDS)
    assert out == {
        "fn": 3,
        "fn_to_wrong": 1,  # A: the correct program rewritten into a wrong one
        "fn_to_right": 1,  # C
        "fn_submitted": 1,  # D
        "fixes": 1,  # A 2->3
        "breaks": 2,  # A 1->2 (after an FN) and E 1->2 (no self-test)
        "breaks_other": 1,
        "tasks_ever_right": 4,  # A, C, D, E
        "tasks_lost": 1,  # E
        "n_tasks": 5,
        "tests_per_task": pytest.approx((3 + 5 + 4 + 2) / 4),  # E had no self-tests
    }


def test_unknown_hidden_verdicts_are_not_counted() -> None:
    imported = [
        {"task_id": "X", "trial": 1, "hidden": None, "self_test": {"passed": False},
         "extra": {"missing": ["hidden"]}},
        rec("X", 2, True, True),
    ]  # fmt: skip
    assert confusion_by_trial(imported)[0] == {
        "trial": 1, "trials": 1, "hidden_pass": 0, "tp": 0, "fp": 0, "fn": 0, "tn": 0
    }  # fmt: skip
    out = rewrites(imported)
    assert (out["fn"], out["fixes"], out["breaks"]) == (0, 0, 0)


def test_elapsed_is_the_union_of_trial_intervals() -> None:
    records = [
        rec("A", 1, True, True, time="2026-12-01T10:01:00+00:00", wall=60.0),  # 10:00-10:01
        rec("B", 1, True, True, time="2026-12-01T10:02:30+00:00", wall=120.0),  # 10:00:30-
        rec("C", 1, True, True, time="2026-12-01T10:05:00+00:00", wall=30.0),  # 10:04:30-
        # resumed an hour later: the pause is not counted
        rec("D", 1, True, True, time="2026-12-01T11:10:00+00:00", wall=100.0),
        rec("D", 2, True, True, time="2026-12-01T11:09:00+00:00", wall=20.0),  # inside D1
    ]
    assert elapsed_s(records) == pytest.approx(150.0 + 30.0 + 100.0)
    assert elapsed_s([{"task_id": "A", "trial": 1}]) is None


class RejectsTrialOne:
    """Self-tests that fail every first attempt (right or wrong) and judge later
    attempts truthfully: the loop's feedback is wrong exactly at trial 1."""

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        if state.trial_index == 1:
            return Feedback(passed=False, text="assert f() == 'something else'")
        ok = attempt.candidate == state.task.data["answer"]
        return Feedback(passed=ok, text="" if ok else "wrong word")


def test_report_rebuilds_the_study_tables_from_a_real_loop_run(tmp_path: Path) -> None:
    # alpha: right at trial 1 but rejected, rewritten wrong, right again at trial 3;
    # gamma: right at trial 1, rejected, right again; beta: never right.
    scripts = {"alpha": ["alpha", "wrongA", "alpha"], "gamma": ["gamma"], "beta": ["wrongB"]}
    run = tmp_path / "run"
    asyncio.run(
        run_toy(
            run,
            Strategy(name="reflexion", max_trials=3),
            words=["alpha", "beta", "gamma"],
            scripts=scripts,
            evaluator=RejectsTrialOne(),
        )
    )
    out = tmp_path / "report"
    code = report_cmd.main([str(run), "--out", str(out), "--resamples", "200", "--no-write"])
    assert code == 0

    def table(name: str) -> list[dict[str, str]]:
        with (out / f"table_{name}.csv").open() as fh:
            return list(csv.DictReader(fh))

    (rw,) = table("rewrites")
    assert {k: rw[k] for k in ("fn", "fn_to_wrong", "fn_to_right", "fn_submitted")} == {
        "fn": "2",
        "fn_to_wrong": "1",
        "fn_to_right": "1",
        "fn_submitted": "0",
    }
    assert (rw["fixes"], rw["breaks"], rw["breaks_other"], rw["tasks_lost"]) == ("1", "1", "0", "0")
    first = table("self_test_trials")[0]
    assert (first["trial"], first["tp"], first["fp"], first["fn"], first["tn"]) == (
        "1", "0", "0", "2", "1"
    )  # fmt: skip
    (el,) = table("elapsed")
    assert el["solved"] == "2" and float(el["elapsed_min"]) >= 0
    md = (out / "report.md").read_text()
    assert "Correct programs the self-tests rejected" in md and "FN -> wrong next" in md


def test_fixes_between_trials_and_tasks_fixed_from_trial_1_have_one_definition_each() -> None:
    """The report's main table, its rewrites table and the viewer count fixes and breaks
    with one function, and tasks fixed from trial 1 with another: wrong, right, wrong,
    right is 2 fixes and 1 break between trials, and 1 task fixed from trial 1."""
    from reflexion_bench.analysis.metrics import first_to_final, fixes_breaks, summarize
    from reflexion_bench.view.data import task_row

    assert fixes_breaks([False, True, False, True]) == (2, 1)
    assert fixes_breaks([False, None, True]) == (0, 0)  # an unknown verdict breaks the pair
    assert first_to_final(False, True) == "fixed" and first_to_final(True, False) == "broken"
    assert first_to_final(None, True) is None and first_to_final(True, True) == "same"

    def trial(task: str, k: int, passed: bool, last: bool) -> dict:
        return {
            "type": "trial",
            "run_id": "r",
            "attempt_id": "a",
            "task_id": task,
            "benchmark": "toy",
            "strategy": "s",
            "model": "m",
            "final": last,
            "trial": k,
            "candidate": "x",
            "hidden": {"passed": passed, "status": "pass" if passed else "fail"},
            "self_test": {"passed": False},
            "model_calls": [],
            "wall_time_s": 0.1,
        }

    zigzag = [False, True, False, True]
    recs = [trial("z", k, v, k == 4) for k, v in enumerate(zigzag, 1)]
    recs += [trial("b", k, v, k == 2) for k, v in enumerate([True, False], 1)]
    s = summarize(recs)
    assert (s["fixes"], s["breaks"]) == (2, 2)
    assert (s["first_to_final"]["fixed"], s["first_to_final"]["broken"]) == (1, 1)
    rw = rewrites(recs)
    assert (rw["fixes"], rw["breaks"]) == (s["fixes"], s["breaks"])
    row = task_row("z", recs[:4], in_progress=False)
    assert (row["n_fixes"], row["n_breaks"], row["fixed"], row["broken"]) == (2, 1, True, False)
