"""Self-generated unit tests: the paper's in-loop evaluator for code.

The model writes ``n_tests`` assert statements from the function's signature and
docstring once per task (role ``self_test``); they are kept in ``state.scratch`` and
reused on every later trial, so all trials of a task face the same tests. Each trial
runs them against the candidate in the sandbox, one isolated process per test, and
the feedback lists passed and failed tests with the value the candidate returned, in
the paper's format::

    Tested passed:
    assert add(1, 2) == 3

    Tests failed:
    assert add(2, 2) == 5 # output: 4

(The heading "Tested passed:" is the paper's own spelling, kept so the feedback reads
the same as in the paper's runs and its prompt pack can be used unchanged.)

When the model produced no usable test, the feedback says so. ``on_no_tests``
decides the verdict: ``fail`` (default) keeps the loop going on reflection alone and
never counts a vacuous "pass" as a self-test positive; ``pass`` reproduces the
original code, where an empty test list passes and ends the task.
"""

from __future__ import annotations

from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message
from reflexion_bench.environments.code_common import (
    CodePrompts,
    TestOutcome,
    base_values,
    code_language,
    entry_point_of,
    role_config,
)

TEMPLATES = ("self_test_system", "self_test_user")
SCRATCH_KEY = "self_tests"
ON_NO_TESTS = ("fail", "pass")


def format_feedback(outcomes: list[TestOutcome], limit: int = 4000) -> str:
    """The paper-style feedback text: passed tests, then failed ones with their output."""
    passed = [o.test for o in outcomes if o.passed]
    failed = [f"{o.test} # output: {o.output}" for o in outcomes if not o.passed and not o.dropped]
    text = "Tested passed:\n" + "\n".join(passed) + "\n\nTests failed:\n" + "\n".join(failed)
    return text if len(text) <= limit else text[: limit - 20] + "\n... (truncated)"


class SelfTestEvaluator:
    """Generates unit tests once per task and runs them on every trial's candidate.

    Args:
        n_tests: Tests kept per task (the first ``n_tests`` valid ones; the paper
            sampled 5 from the generated set).
        pack: The prompt pack (``code/{language}``: the project's own).
        prompts: An external pack layered over ``pack`` (directory or JSON/YAML).
        max_tokens: Token budget of the test generation (None: the run's default).
        test_timeout_s: Timeout of each test.
        on_no_tests: Verdict when no test could be generated: ``fail`` or ``pass``.
        max_feedback_chars: Longest feedback text passed on to the reflector.
    """

    #: The name in logs and reports (its config file: configs/evaluator/self_tests.yaml).
    name = "self_tests"

    role = "self_test"

    def __init__(
        self,
        n_tests: int = 5,
        pack: str = "code/{language}",
        prompts: str | None = None,
        max_tokens: int | None = None,
        test_timeout_s: float = 5.0,
        on_no_tests: str = "fail",
        max_feedback_chars: int = 4000,
    ) -> None:
        if n_tests < 1:
            raise ConfigError("evaluator.n_tests", n_tests, "an integer >= 1")
        if on_no_tests not in ON_NO_TESTS:
            raise ConfigError("evaluator.on_no_tests", on_no_tests, ON_NO_TESTS)
        if test_timeout_s <= 0:
            raise ConfigError("evaluator.test_timeout_s", test_timeout_s, "a number of seconds > 0")
        self.n_tests = n_tests
        self.prompts = CodePrompts(pack, prompts, TEMPLATES, "evaluator.prompts")
        self.max_tokens = max_tokens
        self.test_timeout_s = test_timeout_s
        self.on_no_tests = on_no_tests
        self.max_feedback_chars = max_feedback_chars

    def messages(self, state: TaskState) -> list[Message]:
        lang = code_language(state.task)
        values = {**base_values(state.task), "n_tests": self.n_tests}
        return [
            Message("system", self.prompts.render(lang, "self_test_system", **values)),
            Message("user", self.prompts.render(lang, "self_test_user", **values)),
        ]

    async def tests(self, state: TaskState) -> tuple[dict[str, Any], bool]:
        """This task's tests (generated on first use); also whether they were just made."""
        cached = state.scratch.get(SCRATCH_KEY)
        if cached is not None:
            return cached, False
        lang = code_language(state.task)
        out = await state.generate(
            self.role, self.messages(state), role_config(state, self.max_tokens)
        )
        parsed = lang.parse_tests(out.text, entry_point_of(state.task))
        info: dict[str, Any] = {
            "tests": parsed.tests[: self.n_tests],
            "parsed": len(parsed.tests),
            "dropped": parsed.dropped,
            "dropped_examples": parsed.dropped_examples,
            "raw": out.text,
        }
        state.scratch[SCRATCH_KEY] = info
        return info, True

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        info, fresh = await self.tests(state)
        tests: list[str] = list(info["tests"])
        details: dict[str, Any] = {
            "n_tests": len(tests),
            "dropped_tests": info["dropped"],
        }
        if fresh:
            # Logged once, on the trial that generated them.
            details["generated"] = {k: info[k] for k in ("raw", "parsed", "dropped_examples")}
        if not tests:
            details["no_tests"] = True
            note = f" ({info['dropped']} unusable line(s) dropped)" if info["dropped"] else ""
            return Feedback(
                passed=self.on_no_tests == "pass",
                text=(
                    "No unit tests are available: the test generator produced none that "
                    f"parse and call the function{note}. The implementation could not be checked."
                ),
                details=details,
            )
        outcomes, judged = await run_tests_recorded(
            state, attempt, tests, self.test_timeout_s, details
        )
        # A test the judge refused to evaluate (a computation bomb) says nothing about
        # the program: counted with the dropped ones, left out of the verdict.
        if len(judged) < len(outcomes):
            details["dropped_tests"] = info["dropped"] + len(outcomes) - len(judged)
        if not judged:
            details["no_tests"] = True
            return Feedback(
                passed=self.on_no_tests == "pass",
                text="No unit test could be evaluated: the judge dropped every one.",
                details=details,
            )
        return Feedback(
            passed=all(o.passed for o in judged),
            text=format_feedback(outcomes, self.max_feedback_chars),
            details=details,
        )


async def run_tests_recorded(
    state: TaskState,
    attempt: Attempt,
    tests: list[str],
    timeout_s: float,
    details: dict[str, Any],
) -> tuple[list[Any], list[Any]]:
    """Run ``tests`` against the attempt on the loop's own workers (``state.sandbox``,
    never the hidden judge's), record each outcome in ``details``; return the outcomes
    and those the judge did not drop (a dropped test says nothing about the program)."""
    lang = code_language(state.task)
    outcomes = await lang.run_tests(
        state.sandbox, attempt.candidate, tests, entry_point_of(state.task), timeout_s
    )
    details["results"] = [
        {"test": o.test, "status": o.status, "output": o.output, **o.timing} for o in outcomes
    ]
    details["n_passed"] = sum(o.passed for o in outcomes)
    return list(outcomes), [o for o in outcomes if not o.dropped]
