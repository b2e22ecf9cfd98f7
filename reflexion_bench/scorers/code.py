"""The code scorer: hidden unit tests run in the sandbox decide the benchmark result.

Its verdict (pass / fail / timeout / error, with the failing assert or traceback
tail as detail) is logged next to the self-test verdict and never reaches the actor
or the reflector.
"""

from __future__ import annotations

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score, Task
from reflexion_bench.environments.code_common import HiddenOutcome, code_language
from reflexion_bench.sandbox.base import Sandbox


class CodeScorer:
    """Runs a task's hidden tests on a program.

    Args:
        timeout_s: Wall-clock limit of one hidden-test run (a task's own
            ``timeout_s`` takes precedence). The paper used 10 s.
    """

    def __init__(self, timeout_s: float = 10.0) -> None:
        if timeout_s <= 0:
            raise ConfigError("scorer.timeout_s", timeout_s, "a number of seconds > 0")
        self.timeout_s = timeout_s

    def timeout_for(self, task: Task) -> float:
        return float(task.data.get("timeout_s") or self.timeout_s)

    async def run(self, sandbox: Sandbox, task: Task, program: str) -> HiddenOutcome:
        """The hidden-test verdict of ``program`` (library entry point, no TaskState)."""
        lang = code_language(task)
        return await lang.run_hidden(sandbox, program, task, self.timeout_for(task))

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        outcome = await self.run(state.sandbox, state.task, attempt.candidate)
        return Score(
            passed=outcome.passed,
            status=outcome.status,
            value=1.0 if outcome.passed else 0.0,
            detail=outcome.detail,
            extra={"duration_s": round(outcome.duration_s, 3)},
        )
