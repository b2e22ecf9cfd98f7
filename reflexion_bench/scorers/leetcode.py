"""LeetcodeHard, judged offline: the hidden tests run the way LeetCode runs Python.

The check runs in the trusted judge process and the solution in its own candidate
process (:mod:`reflexion_bench.judge`: the solution cannot forge the verdict).
LeetCode's Python 3 judge differs from a bare ``python main.py`` in three ways that
decide verdicts on hard problems, so the candidate process reproduces them:

- the usual modules are pre-imported (``from typing import *``, ``collections``,
  ``heapq``, ``math``...), with the builtin ``pow`` restored after ``from math
  import *`` shadowed it (see :data:`~reflexion_bench.environments.leetcode.PYTHON_PRELUDE`);
- the recursion limit is high and the solution runs on a thread with a large stack
  (here 10**6 and 512 MiB), because accepted solutions recurse ~1e5 deep (DFS on a
  path-shaped tree; ``@cache`` recursion also consumes C stack per level);
- each problem's check runs in its own process with the problem's time limit
  (``recommended_timeout_s`` of the hidden-test file, scaled by ``timeout_scale``).

The verdict is ``pass``, ``fail`` (an assertion or an exception in the solution),
``timeout`` or ``error`` (the solution does not load: syntax error, missing entry
point, crash at import). It is never shown to the actor.
"""

from __future__ import annotations

from dataclasses import dataclass

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score, Task
from reflexion_bench.environments.code_common import CodeLanguage
from reflexion_bench.environments.leetcode import PYTHON_PRELUDE
from reflexion_bench.judge import judge_hidden
from reflexion_bench.sandbox.base import Limits, Sandbox


@dataclass
class JudgeOutcome:
    """One hidden-test run. ``status``: pass, fail, timeout or error."""

    status: str
    detail: str = ""
    duration_s: float = 0.0
    timeout_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True)
class JudgeSettings:
    """How the judge runs a solution (defaults: LeetCode's environment, see module doc).

    Args:
        recursion_limit: ``sys.setrecursionlimit`` for the solution.
        stack_mb: Stack of the solution's thread in MiB; 0 runs it on the main thread.
        prelude: Pre-import LeetCode's modules and restore ``pow``.
        timeout_scale: Multiplies each problem's recommended timeout (slower machines).
        min_timeout_s: Lower bound of the timeout.
        memory_mb: Address-space limit of the judge process; it must hold the thread
            stack (reserved, not used) on top of the solution's data.
    """

    recursion_limit: int = 10**6
    stack_mb: int = 512
    prelude: bool = True
    timeout_scale: float = 1.0
    min_timeout_s: float = 10.0
    memory_mb: int = 4096


async def judge_python(
    sandbox: Sandbox,
    program: str,
    hidden_test: str,
    entry_point: str,
    timeout_s: float,
    settings: JudgeSettings | None = None,
) -> JudgeOutcome:
    """Run one problem's hidden ``check`` on ``program`` through the unforgeable judge
    (:mod:`reflexion_bench.judge`): the check runs in the judge process, the solution
    in its own candidate process with LeetCode's prelude, recursion limit and stack."""
    s = settings or JudgeSettings()
    timeout = max(s.min_timeout_s, timeout_s * s.timeout_scale)
    verdict = await judge_hidden(
        sandbox,
        program=program,
        test=hidden_test,
        test_call="check(candidate)",
        entry_point=entry_point,
        timeout_s=timeout,
        judge_prelude=PYTHON_PRELUDE if s.prelude else "",
        candidate_prelude=PYTHON_PRELUDE if s.prelude else "",
        solution_class=True,
        recursion_limit=s.recursion_limit,
        stack_mb=s.stack_mb or None,
        limits=Limits(memory_mb=s.memory_mb, cpu_s=int(timeout) + 30),
        test_filename="hidden.py",
    )
    detail = verdict.detail
    if verdict.status == "fail" and detail.startswith("AssertionError"):
        detail = "wrong answer: " + detail
    return JudgeOutcome(verdict.status, detail, verdict.duration_s, timeout)


class LeetcodeHiddenScorer:
    """Final scorer of LeetcodeHard: the offline hidden tests, judged like LeetCode.

    Python programs run in :func:`judge_python`; programs of another language (the
    Rust variant) are run by their task's language on the same Python checks. Every
    verdict carries the task's count of broken visible tests left out of the prompt.

    Args:
        recursion_limit, stack_mb, prelude, timeout_scale, min_timeout_s, memory_mb:
            see :class:`JudgeSettings`.
        timeout_s: One fixed timeout for every problem instead of each problem's
            ``recommended_timeout_s`` (what ``evaluate --timeout`` sets).
    """

    def __init__(
        self,
        recursion_limit: int = 10**6,
        stack_mb: int = 512,
        prelude: bool = True,
        timeout_scale: float = 1.0,
        min_timeout_s: float = 10.0,
        memory_mb: int = 4096,
        timeout_s: float | None = None,
    ) -> None:
        if timeout_s is not None and timeout_s <= 0:
            raise ConfigError("scorer.timeout_s", timeout_s, "null or a number of seconds > 0")
        if recursion_limit < 100:
            raise ConfigError("scorer.recursion_limit", recursion_limit, "an integer >= 100")
        if stack_mb < 0:
            raise ConfigError("scorer.stack_mb", stack_mb, "0 (main thread) or MiB > 0")
        if timeout_s is not None:
            # An explicit timeout is taken as given (no scaling, no lower bound).
            timeout_scale, min_timeout_s = 1.0, 0.0
        self.timeout_s = timeout_s
        self.settings = JudgeSettings(
            recursion_limit, stack_mb, prelude, timeout_scale, min_timeout_s, memory_mb
        )

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        return await self.score_program(state.judge_sandbox, state.task, attempt.candidate)

    async def score_program(self, sandbox: Sandbox, task: Task, program: str) -> Score:
        hidden = task.data.get("test")
        if not hidden:
            return Score(
                passed=False,
                status="error",
                detail=f"{task.id}: no hidden tests (set `env.hidden_path`)",
            )
        timeout = self.timeout_s or float(task.data.get("timeout_s", 10.0))
        lang = task.data.get("language")
        if isinstance(lang, CodeLanguage) and lang.name != "python":
            # LeetcodeHard-rs: the same Python checks, run by the language (compiled
            # program behind a JSON call bridge; see environments/code_rust.py).
            hidden_out = await lang.run_hidden(sandbox, program, task, timeout)
            out = JudgeOutcome(hidden_out.status, hidden_out.detail, hidden_out.duration_s, timeout)
        else:
            out = await judge_python(
                sandbox,
                program,
                str(hidden),
                str(task.data.get("hidden_entry_point") or task.data["entry_point"]),
                timeout,
                self.settings,
            )
        return Score(
            passed=out.passed,
            status=out.status,
            value=1.0 if out.passed else 0.0,
            detail=out.detail,
            extra={
                "duration_s": round(out.duration_s, 3),
                "timeout_s": out.timeout_s,
                "n_hidden_cases": task.data.get("n_hidden_cases"),
                # Logged with every verdict so that reports can count them from the log.
                "n_broken_visible_tests": int(task.data.get("n_broken_visible_tests", 0)),
                "broken_visible_tests": list(task.data.get("broken_visible_tests", [])),
            },
        )
