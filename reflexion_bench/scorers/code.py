"""The code scorer: hidden unit tests run in the sandbox decide the benchmark result.

Its verdict (pass / fail / timeout / error, with the failing assert or traceback
tail as detail) is logged next to the self-test verdict and never reaches the actor
or the reflector.

``tests`` chooses the hidden tests: ``base`` (the benchmark's own, as in the paper),
``plus`` (the base tests and then the stronger plus tests of :mod:`.plus`: MBPP+ inputs
for MBPP, generated HumanEval+ inputs for HumanEval) or ``both`` (the headline verdict
stays on the base tests, for comparison with the paper, and every trial also records
the plus verdict in ``hidden.extra.plus``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score, Task
from reflexion_bench.environments.code_common import HiddenOutcome, code_language
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.plus import PlusTests

TESTS = ("base", "plus", "both")


class CodeScorer:
    """Runs a task's hidden tests on a program.

    Args:
        timeout_s: Wall-clock limit of one hidden-test run (a task's own
            ``timeout_s`` takes precedence). The paper used 10 s.
        tests: ``base``, ``plus`` or ``both`` (see the module's docstring).
        mbpp_plus_path: MBPP+ v1 (``evalplus/MbppPlus-v1.jsonl``); null: MBPP tasks
            have no plus tests.
        humaneval_plus_path: The HumanEval+ inputs (null: those shipped in the package).
        cache_dir: Where the reference's expected outputs are cached.
        plus_min_call_s / plus_time_factor: a plus call may take max(min, factor x the
            reference's time) seconds (EvalPlus's 1 s and 4x).
    """

    def __init__(
        self,
        timeout_s: float = 10.0,
        tests: str = "base",
        mbpp_plus_path: str | None = None,
        humaneval_plus_path: str | None = None,
        cache_dir: str | None = None,
        plus_min_call_s: float = 1.0,
        plus_time_factor: float = 4.0,
    ) -> None:
        if timeout_s <= 0:
            raise ConfigError("scorer.timeout_s", timeout_s, "a number of seconds > 0")
        if tests not in TESTS:
            raise ConfigError("scorer.tests", tests, TESTS)
        self.timeout_s = timeout_s
        self.tests = tests
        self.plus: PlusTests | None = None
        if tests != "base":
            if mbpp_plus_path and not Path(mbpp_plus_path).expanduser().is_file():
                raise ConfigError(
                    "scorer.mbpp_plus_path",
                    mbpp_plus_path,
                    "the path of MbppPlus-v1.jsonl (evalplus/ in the data folder: set "
                    "paths.data_dir), or null when no MBPP task needs plus tests",
                )
            if humaneval_plus_path and not Path(humaneval_plus_path).expanduser().is_file():
                raise ConfigError(
                    "scorer.humaneval_plus_path",
                    humaneval_plus_path,
                    "a file written by scripts/make_humaneval_plus.py, or null for the "
                    "inputs shipped in the package",
                )
            self.plus = PlusTests(
                mbpp_plus_path=str(Path(mbpp_plus_path).expanduser()) if mbpp_plus_path else None,
                humaneval_plus_path=humaneval_plus_path,
                cache_dir=cache_dir,
                min_call_s=plus_min_call_s,
                time_factor=plus_time_factor,
            )

    def timeout_for(self, task: Task) -> float:
        return float(task.data.get("timeout_s") or self.timeout_s)

    async def run(self, sandbox: Sandbox, task: Task, program: str) -> HiddenOutcome:
        """The hidden-test verdict of ``program`` (library entry point, no TaskState)."""
        lang = code_language(task)
        return await lang.run_hidden(sandbox, program, task, self.timeout_for(task))

    async def run_plus(
        self, sandbox: Sandbox, task: Task, program: str, base: HiddenOutcome
    ) -> dict[str, Any]:
        """The plus verdict as logged (``hidden.extra.plus``): the base tests first (a
        program that fails them fails plus without running it), then the plus inputs."""
        from reflexion_bench.environments.code_python import PythonLanguage

        assert self.plus is not None
        lang = code_language(task)
        suite = self.plus.suite_for(task) if isinstance(lang, PythonLanguage) else None
        if suite is None:
            return {
                "passed": base.passed,
                "status": base.status,
                "detail": "no plus inputs for this task: the base verdict",
                "inputs": 0,
            }
        if not base.passed:
            return {
                "passed": False,
                "status": base.status,
                "detail": "failed the base tests (plus not run)",
                "inputs": len(suite.inputs),
            }
        cases, dropped = await self.plus.cases(sandbox, suite)
        from reflexion_bench.judge import judge_plus, timing_fields

        v = await judge_plus(
            sandbox,
            program=program,
            entry_point=suite.entry_point,
            cases=cases,
            oracle=suite.oracle,
            atol=suite.atol,
            seq_insensitive=suite.seq_insensitive,
            load_timeout_s=self.timeout_for(task),
            candidate_prelude=str(task.data.get("prelude", getattr(lang, "prelude", "")) or ""),
        )
        out: dict[str, Any] = {
            "passed": v.status == "pass",
            "status": v.status,
            "detail": v.detail,
            "inputs": len(cases),
            "dropped": dropped,
            "duration_s": round(v.duration_s, 3),
            "reference": suite.reference_name,
            **timing_fields(v),
        }
        if v.failed_input is not None:
            out["failed_input"] = v.failed_input
        return out

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        base = await self.run(state.judge_sandbox, state.task, attempt.candidate)
        extra: dict[str, Any] = {"duration_s": round(base.duration_s, 3), **base.timing}
        if self.tests != "base":
            extra["plus"] = await self.run_plus(
                state.judge_sandbox, state.task, attempt.candidate, base
            )
        if self.tests != "plus":  # base and both: the headline verdict stays on the base tests
            return Score(
                passed=base.passed,
                status=base.status,
                value=1.0 if base.passed else 0.0,
                detail=base.detail,
                extra=extra,
            )
        plus = extra["plus"]
        extra["base"] = {"passed": base.passed, "status": base.status, "detail": base.detail}
        return Score(
            passed=bool(plus["passed"]),
            status=str(plus["status"]),
            value=1.0 if plus["passed"] else 0.0,
            detail=str(plus["detail"]) or base.detail,
            extra=extra,
        )
