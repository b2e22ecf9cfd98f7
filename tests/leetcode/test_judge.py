"""The offline LeetcodeHard judge on the real hidden tests, in the real sandbox.

Correct solutions (written for these tests, see reference_solutions.py) pass; wrong
ones fail; a quadratic one times out; the LeetCode environment (prelude with the
builtin ``pow``, recursion limit, big thread stack) is what makes some correct
solutions pass, shown by switching each part off.
"""

from __future__ import annotations

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.leetcode import JudgeSettings, LeetcodeHiddenScorer, judge_python
from tests.leetcode.reference_solutions import CORRECT, SLOW, WRONG


@pytest.mark.parametrize("slug", sorted(CORRECT))
async def test_correct_solutions_pass(
    slug: str, py_tasks: dict[str, Task], sandbox: Sandbox
) -> None:
    score = await LeetcodeHiddenScorer().score_program(sandbox, py_tasks[slug], CORRECT[slug])
    assert score.status == "pass", score.detail
    assert score.passed and score.value == 1.0
    assert score.extra["n_hidden_cases"] == py_tasks[slug].data["n_hidden_cases"]


@pytest.mark.parametrize("slug", sorted(WRONG))
async def test_wrong_solutions_fail(slug: str, py_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    score = await LeetcodeHiddenScorer().score_program(sandbox, py_tasks[slug], WRONG[slug])
    assert score.status == "fail" and not score.passed
    assert score.detail.startswith("wrong answer: AssertionError")
    assert "hidden.py:" in score.detail and "assert candidate(" in score.detail


async def test_quadratic_solution_times_out(py_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    slug = "count-subarrays-with-fixed-bounds"
    fast = LeetcodeHiddenScorer(timeout_s=3.0)
    score = await fast.score_program(sandbox, py_tasks[slug], SLOW[slug])
    assert score.status == "timeout", score.detail
    assert score.extra["timeout_s"] == 3.0
    # The correct linear solution fits in the same budget.
    ok = await fast.score_program(sandbox, py_tasks[slug], CORRECT[slug])
    assert ok.status == "pass", ok.detail


async def test_prelude_restores_builtin_pow(py_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    # count-anagrams' solution calls pow(x, MOD - 2, MOD), which math.pow (what
    # `from math import *` binds) rejects; it also uses Counter without importing it.
    task = py_tasks["count-anagrams"]
    assert (
        await LeetcodeHiddenScorer().score_program(sandbox, task, CORRECT["count-anagrams"])
    ).passed
    # Without the prelude the same program fails: the judge's prelude is what passes it.
    bare = await LeetcodeHiddenScorer(prelude=False).score_program(
        sandbox, task, CORRECT["count-anagrams"]
    )
    assert bare.status == "fail" and "NameError" in bare.detail
    # Every verdict reports the broken visible tests the problem's prompt left out.
    ok = await LeetcodeHiddenScorer().score_program(sandbox, task, CORRECT["count-anagrams"])
    assert ok.extra["n_broken_visible_tests"] == 2
    assert all("0 argument(s)" in b["reason"] for b in ok.extra["broken_visible_tests"])
    # And `pow` really is the builtin after the star imports.
    probe = "import builtins\ndef f(x):\n    return pow is builtins.pow and pow(3, 4, 5) == 1 and gcd(4, 6) == 2\n"
    check = "def check(candidate):\n    assert candidate(0) is True\n"
    out = await judge_python(sandbox, probe, check, "f", 10)
    assert out.status == "pass", out.detail


DEEP = """
@cache
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)

def f(n):
    return depth(n)
"""
DEEP_CHECK = "def check(candidate):\n    assert candidate(200000) == 200000\n"


async def test_deep_recursion_needs_the_big_stack(sandbox: Sandbox) -> None:
    # @cache recursion goes through C for every level: 2e5 levels need far more than
    # the default 8 MiB stack, and far more than the default recursion limit.
    ok = await judge_python(sandbox, DEEP, DEEP_CHECK, "f", 20)
    assert ok.status == "pass", ok.detail
    main_thread = await judge_python(sandbox, DEEP, DEEP_CHECK, "f", 20, JudgeSettings(stack_mb=0))
    assert main_thread.status == "fail"  # the interpreter crashes: no verdict line
    low_limit = await judge_python(
        sandbox, DEEP, DEEP_CHECK, "f", 20, JudgeSettings(recursion_limit=1000)
    )
    assert low_limit.status == "fail" and "RecursionError" in low_limit.detail


@pytest.mark.slow
async def test_real_problem_with_100k_deep_dfs(py_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    """A recursive rerooting DFS on the 1e5-node stress trees of
    count-number-of-possible-root-nodes passes within the problem's time limit, and
    fails without the raised recursion limit or without the big stack."""
    from tests.leetcode.reference_solutions import DEEP_RECURSION

    slug = "count-number-of-possible-root-nodes"
    task, code = py_tasks[slug], DEEP_RECURSION[slug]
    ok = await LeetcodeHiddenScorer().score_program(sandbox, task, code)
    assert ok.status == "pass", ok.detail
    low = await LeetcodeHiddenScorer(recursion_limit=1000).score_program(sandbox, task, code)
    assert low.status == "fail" and "RecursionError" in low.detail
    small_stack = await LeetcodeHiddenScorer(stack_mb=0).score_program(sandbox, task, code)
    assert small_stack.status == "fail"


@pytest.mark.parametrize(
    ("program", "status", "detail"),
    [
        # A program that does not load fails (issue 27: `error` is the harness's).
        ("def isReachable(targetX, targetY)\n    return True\n", "fail", "SyntaxError"),
        ("def other(x, y):\n    return True\n", "fail", "defines no function `isReachable`"),
        ("raise ValueError('boom at import')\n", "fail", "ValueError: boom at import"),
        ("def isReachable(x, y):\n    return [][0]\n", "fail", "IndexError"),
        # Printing a fake verdict or leaving early never counts as a pass.
        (
            "import os, json\n"
            "def isReachable(x, y):\n"
            "    print('@@verdict-0000@@' + json.dumps({'status': 'pass'}))\n"
            "    os._exit(0)\n",
            "fail",
            "before answering",
        ),
        ("import sys\ndef isReachable(x, y):\n    sys.exit(0)\n", "fail", "SystemExit"),
    ],
)
async def test_bad_programs(
    program: str, status: str, detail: str, py_tasks: dict[str, Task], sandbox: Sandbox
) -> None:
    score = await LeetcodeHiddenScorer().score_program(
        sandbox, py_tasks["check-if-point-is-reachable"], program
    )
    assert score.status == status and not score.passed
    assert detail in score.detail


async def test_leetcode_class_solution_is_accepted(
    py_tasks: dict[str, Task], sandbox: Sandbox
) -> None:
    program = (
        "class Solution:\n"
        "    def isReachable(self, targetX: int, targetY: int) -> bool:\n"
        "        g = gcd(targetX, targetY)\n"
        "        return g & (g - 1) == 0\n"
    )
    score = await LeetcodeHiddenScorer().score_program(
        sandbox, py_tasks["check-if-point-is-reachable"], program
    )
    assert score.passed, score.detail


def test_config_errors_name_the_key() -> None:
    from reflexion_bench.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"scorer\.timeout_s"):
        LeetcodeHiddenScorer(timeout_s=0)
    with pytest.raises(ConfigError, match=r"scorer\.stack_mb"):
        LeetcodeHiddenScorer(stack_mb=-1)
