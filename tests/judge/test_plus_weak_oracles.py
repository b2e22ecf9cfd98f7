"""MBPP+'s two oracles that accept (almost) anything (Mbpp/164: any value; Mbpp/295: 0
too): the verdicts keep EvalPlus's semantics, and the plus summary names those tasks as
ones where plus cannot reject a program that passes base."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.analysis.report import format_table
from reflexion_bench.environments.mbpp import MBPPEnvironment
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.sandbox.local import LocalSandbox
from reflexion_bench.scorers.code import CodeScorer
from reflexion_bench.scorers.plus import PlusTests
from reflexion_bench.scorers.plus_oracles import WEAK_ORACLES, weak_oracle_tasks
from tests.judge.test_judge import _level

MBPP_PLUS = "evalplus/MbppPlus-v1.jsonl"
# The two tasks the issue names (MBPP+ ids Mbpp/164 and Mbpp/295), as MultiPL-E names them.
ANY_TASK, ZERO_TASK = "mbpp_164_are_equivalent", "mbpp_295_sum_div"


# --------------------------------------------------------------------------- which tasks


@pytest.mark.requires("shared_data")
def test_exactly_the_two_named_tasks_of_real_mbpp_are_weak(shared_data: Path) -> None:
    tasks = MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl")).load_tasks()
    weak = weak_oracle_tasks(t.id for t in tasks)
    assert [(w["task"], w["mbpp_plus_id"], w["oracle"]) for w in weak] == [
        (ANY_TASK, "Mbpp/164", "any"),
        (ZERO_TASK, "Mbpp/295", "eq_or_zero"),
    ]
    assert all(w["why"] for w in weak)


@pytest.mark.requires("shared_data")
def test_the_list_agrees_with_the_oracle_each_plus_suite_is_judged_by(shared_data: Path) -> None:
    # The summary names tasks from their ids; the scorer picks the oracle when it builds
    # the suite from MBPP+. The two must agree on every real MBPP task.
    tasks = MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl")).load_tasks()
    plus = PlusTests(mbpp_plus_path=str(shared_data / MBPP_PLUS))
    by_suite = set()
    for t in tasks:
        suite = plus.suite_for(t)
        if suite is not None and suite.oracle in WEAK_ORACLES:
            by_suite.add((t.id, suite.oracle))
    by_id = {(w["task"], w["oracle"]) for w in weak_oracle_tasks(t.id for t in tasks)}
    assert by_suite == by_id == {(ANY_TASK, "any"), (ZERO_TASK, "eq_or_zero")}


def test_ids_that_are_not_mbpp_or_repeat_are_handled() -> None:
    ids = ["HumanEval/32", ZERO_TASK, "mbpp_2_similar_elements", ZERO_TASK, "sum_div", ANY_TASK]
    assert [w["task"] for w in weak_oracle_tasks(ids)] == [ZERO_TASK, ANY_TASK]
    assert weak_oracle_tasks([]) == []


# --------------------------------------------------------------------------- the summary


def _rec(tid: str, base: bool, plus: bool | None, inputs: int = 100) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if plus is not None:
        extra["plus"] = {"passed": plus, "status": "pass" if plus else "fail", "inputs": inputs}
    return {
        "task_id": tid,
        "trial": 1,
        "final": True,
        "self_test": {"passed": True},
        "hidden": {"passed": base, "status": "pass" if base else "fail", "extra": extra},
        "model_calls": [],
        "wall_time_s": 1.0,
    }


def test_the_plus_summary_lists_the_weak_tasks_of_the_run_and_keeps_the_counts() -> None:
    records = [
        _rec("mbpp_2_similar_elements", True, False),
        _rec(ZERO_TASK, True, True),
        _rec(ANY_TASK, False, False),  # failed base: still a task plus cannot reject
        _rec("mbpp_3_is_not_prime", True, True),
    ]
    s = summarize(records)
    p = s["plus"]
    # The verdicts are counted as logged: the weak tasks are named, not dropped.
    assert (p["n_tasks"], p["final_count"], p["base_final_count"]) == (4, 2, 3)
    assert p["base_pass_plus_fail_tasks"] == ["mbpp_2_similar_elements"]
    assert [(w["task"], w["mbpp_plus_id"], w["oracle"]) for w in p["weak_oracles"]] == [
        (ANY_TASK, "Mbpp/164", "any"),
        (ZERO_TASK, "Mbpp/295", "eq_or_zero"),
    ]
    text = format_table(s)
    line = next(x for x in text.splitlines() if x.startswith("weak plus oracles"))
    assert "2 tasks where plus cannot reject a base pass" in line
    assert f"{ANY_TASK} (Mbpp/164, oracle any)" in line
    assert f"{ZERO_TASK} (Mbpp/295, oracle eq_or_zero)" in line


def test_only_tasks_that_were_judged_under_the_oracle_are_listed() -> None:
    records = [
        _rec("mbpp_3_is_not_prime", True, True),
        _rec(ZERO_TASK, True, True, inputs=0),  # no plus suite (no MBPP+ file): base kept
        _rec(ANY_TASK, True, None),  # no plus verdict logged for this task
    ]
    s = summarize(records)
    assert s["plus"]["weak_oracles"] == []
    assert "weak plus oracles" not in format_table(s)


def test_a_run_without_those_tasks_has_an_empty_list_and_no_line() -> None:
    s = summarize([_rec("HumanEval/32", True, True), _rec("HumanEval/0", True, False)])
    assert s["plus"]["weak_oracles"] == []
    assert "weak plus oracles" not in format_table(s)


# --------------------------------------------------------------------------- semantics


def test_the_judge_keeps_evalplus_semantics_for_the_two_oracles() -> None:
    from reflexion_bench.judge._judge_main import plus_match

    assert plus_match("anything", False, (36, 57), oracle="any")
    assert plus_match(None, True, (23, 47), oracle="any")
    assert plus_match(0, 16, (12,), oracle="eq_or_zero")  # 0 is also accepted
    assert plus_match(16, 16, (12,), oracle="eq_or_zero")
    assert not plus_match(15, 16, (12,), oracle="eq_or_zero")  # a wrong non-zero fails
    assert not plus_match(0, 16, (12,), oracle="eq")


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    sb = LocalSandbox(jobs=2, isolation=_level())
    yield sb
    await sb.aclose()


# Pass the three base tests of each task by rote and answer nonsense elsewhere.
_ROTE_164 = """def are_equivalent(num1: int, num2: int) -> bool:
    return {(36, 57): False, (2, 4): False, (23, 47): True}.get((num1, num2), False)
"""
_ROTE_295_ZERO = """def sum_div(number: int) -> int:
    return {8: 7, 12: 16, 7: 1}.get(number, 0)
"""
_ROTE_295_TWO = """def sum_div(number: int) -> int:
    return {8: 7, 12: 16, 7: 1}.get(number, 2)
"""


@pytest.mark.requires("shared_data")
@pytest.mark.requires("bwrap")
@pytest.mark.parametrize(
    ("task_id", "program", "plus_passes"),
    [
        (ANY_TASK, _ROTE_164, True),  # any value passes: plus cannot reject it
        (ZERO_TASK, _ROTE_295_ZERO, True),  # 0 everywhere else passes too
        (ZERO_TASK, _ROTE_295_TWO, False),  # a wrong non-zero value is still caught
    ],
)
async def test_rote_programs_on_the_real_plus_tests(
    sandbox: Sandbox,
    shared_data: Path,
    tmp_path: Path,
    task_id: str,
    program: str,
    plus_passes: bool,
) -> None:
    tasks = {t.id: t for t in MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl")).load_tasks()}
    task = tasks[task_id]
    scorer = CodeScorer(
        tests="both", mbpp_plus_path=str(shared_data / MBPP_PLUS), cache_dir=str(tmp_path)
    )
    base = await scorer.run(sandbox, task, program)
    assert base.passed, base.detail
    plus = await scorer.run_plus(sandbox, task, program, base)
    # Judged on MBPP+'s inputs, not the base verdict kept for a task without plus inputs
    # (Mbpp/295 keeps few: its reference returns floats where the prompt says int).
    assert plus["inputs"] >= 1 and "no plus inputs" not in plus["detail"], plus
    assert plus["passed"] is plus_passes, plus
