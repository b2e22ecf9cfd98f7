"""``visible_tests``: the examples the prompt already shows, run as the in-loop tests.

A feedback source between self-generated tests (the model's own guesses, often wrong)
and the hidden tests (the answer key): the asserts and ``>>>`` examples of the task's
prompt (:mod:`reflexion_bench.environments.prompt_examples`), run against each trial's
candidate by the self-test judge and reported in the paper's format. The actor has
seen them, so reading them is no use of the answer key: runs stay ``clean``.

A task whose prompt shows no usable example (every MBPP task, a few HumanEval ones)
gets *no feedback*: the verdict is ``None`` (as when no evaluator runs), the text says
so, and the trial's ``self_test.details`` carries ``no_tests: true`` and
``fallback: "no_feedback"``, so the summary counts those trials (``in_loop``) instead of
scoring them as in-loop failures or passes.
"""

from __future__ import annotations

from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.environments.code_common import code_language, entry_point_of
from reflexion_bench.environments.prompt_examples import prompt_tests
from reflexion_bench.evaluators.self_tests import format_feedback, run_tests_recorded

SCRATCH_KEY = "visible_tests"
#: ``self_test.details["fallback"]`` of a trial whose task shows no example.
NO_FEEDBACK = "no_feedback"


class VisibleTestsEvaluator:
    """Runs the prompt's own examples on every trial's candidate (Python tasks).

    Args:
        test_timeout_s: Timeout of each test.
        max_feedback_chars: Longest feedback text passed on to the reflector.
        name: The evaluator's name in logs and reports.
    """

    def __init__(
        self,
        test_timeout_s: float = 5.0,
        max_feedback_chars: int = 4000,
        name: str = "visible_tests",
    ) -> None:
        if test_timeout_s <= 0:
            raise ConfigError("evaluator.test_timeout_s", test_timeout_s, "a number of seconds > 0")
        if max_feedback_chars < 100:
            raise ConfigError(
                "evaluator.max_feedback_chars", max_feedback_chars, "an integer >= 100"
            )
        self.test_timeout_s = test_timeout_s
        self.max_feedback_chars = max_feedback_chars
        self.name = name

    def tests(self, state: TaskState) -> dict[str, Any]:
        """This task's visible tests, parsed once per task (the prompt does not change)."""
        cached: dict[str, Any] | None = state.scratch.get(SCRATCH_KEY)
        if cached is not None:
            return cached
        lang = code_language(state.task)
        if lang.name != "python":
            # Other languages' examples are not Python expressions: running them would
            # need a parser per language, and silently giving no feedback would
            # mislabel the run as a visible-tests run.
            raise ConfigError(
                "evaluator",
                self.name,
                f"self_tests for {lang.name} tasks (visible_tests reads Python prompts)",
            )
        parsed = prompt_tests(state.task.prompt, entry_point_of(state.task))
        info = {
            "tests": parsed.tests,
            "dropped": parsed.dropped,
            "dropped_examples": parsed.dropped_examples,
        }
        state.scratch[SCRATCH_KEY] = info
        return info

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        info = self.tests(state)
        tests: list[str] = list(info["tests"])
        details: dict[str, Any] = {"n_tests": len(tests), "dropped_tests": info["dropped"]}
        if info["dropped"]:
            details["dropped_examples"] = info["dropped_examples"]
        if not tests:
            details.update(no_tests=True, fallback=NO_FEEDBACK)
            return Feedback(
                passed=None,
                text=(
                    "No visible tests: the task's prompt shows no example that can be run "
                    "as a test, so the implementation was not checked (no feedback)."
                ),
                details=details,
            )
        outcomes, judged = await run_tests_recorded(
            state, attempt, tests, self.test_timeout_s, details
        )
        if not judged:
            details.update(no_tests=True, fallback=NO_FEEDBACK)
            return Feedback(
                passed=None,
                text="No visible test could be evaluated: the judge dropped every one.",
                details=details,
            )
        return Feedback(
            passed=all(o.passed for o in judged),
            text=format_feedback(outcomes, self.max_feedback_chars),
            details=details,
        )
