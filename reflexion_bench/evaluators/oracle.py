"""In-loop feedback from the hidden tests: the answer key inside the loop, on purpose.

Three evaluators that put the scorer's own verdict into the loop, to measure how much
Reflexion gains from a perfect (or a known-noisy) judge instead of its own tests:

- ``oracle``: the hidden verdict with the first failing test's message, as the repair
  studies feed it back (Olausson et al. 2024, "Is Self-Repair a Silver Bullet for Code
  Generation?"; LiveCodeBench's self-repair scenario);
- ``oracle_verdict``: the hidden pass/fail, nothing else;
- ``noisy_oracle``: the hidden pass/fail flipped with ``fn_rate`` (a pass reported as a
  failure) and ``fp_rate`` (a failure reported as a pass), with one fixed text per
  reported verdict so the words never betray a flip.

The verdict comes from the run's scorer object itself (``scorer: ${scorer}`` in each
config builds the scorer from the same node, as ``lats_oracle`` does), through
:meth:`Scorer.score`: the in-loop oracle and the final score are one judge, so they
agree on every trial (``oracle``'s confusion has no FP or FN unless the program is
nondeterministic). Every call counts one answer-key use
(:mod:`reflexion_bench.core.answer_key`), so these runs are labelled ``answer-in-loop``.

The noise is drawn per (run seed, task id, trial) from a hash, not from a global random
state: a resumed run, a shard, or the same task under concurrency draws the same flips.
"""

from __future__ import annotations

import hashlib
from typing import Any

from reflexion_bench.core.answer_key import (
    EVALUATOR_HIDDEN_TESTS,
    EVALUATOR_HIDDEN_VERDICT,
    EVALUATOR_NOISY_HIDDEN_VERDICT,
    note_answer_key_use,
)
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Score
from reflexion_bench.scorers.base import Scorer

PASS_TEXT = "The hidden tests passed."
FAIL_TEXT = "The hidden tests failed."


def noise_draw(seed: int, task_id: str, trial: int, stream: str = "noisy_oracle") -> float:
    """A uniform number in [0, 1) fixed by (seed, task id, trial, stream).

    SHA-256 of the four fields, so draws are independent across tasks and trials,
    identical on every machine and Python version, and untouched by any other use of
    randomness in the run (the model's sampling, a strategy's shuffles).
    """
    key = f"{stream}\x00{seed}\x00{task_id}\x00{trial}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2.0**64


class HiddenTestsEvaluator:
    """The hidden verdict of the run's scorer as the in-loop signal (``oracle_verdict``;
    subclasses add the failure message or the noise).

    Args:
        scorer: The run's scorer (``${scorer}``): its verdict is the one reported.
        name: The evaluator's name in logs and reports.
    """

    #: The answer-key read site counted per call.
    source = EVALUATOR_HIDDEN_VERDICT

    def __init__(self, scorer: Scorer | None = None, name: str = "oracle_verdict") -> None:
        if scorer is None or not callable(getattr(scorer, "score", None)):
            raise ConfigError(
                "evaluator.scorer", scorer, "the run's scorer: ${scorer} (as in its config file)"
            )
        self.scorer = scorer
        self.name = name

    async def hidden(self, state: TaskState, attempt: Attempt) -> Score:
        """The scorer's verdict on ``attempt``, counted as a use of the answer key.

        Issue #47 (the hidden judge and the in-loop evaluator never share a sandbox
        worker): this goes through the scorer's own ``score`` path, i.e. the judgment
        the final score gets (the hidden-test judge, whatever sandbox the scorer
        judges in), never through the self-test runner (``CodeLanguage.run_tests``).
        When the scorer gets a sandbox of its own, this evaluator follows it unchanged.
        """
        note_answer_key_use(state, self.source)
        return await self.scorer.score(state, attempt)

    @staticmethod
    def _hidden_details(score: Score) -> dict[str, Any]:
        # Logged for the reliability analysis; no reflector reads these keys.
        return {"hidden_passed": score.passed, "hidden_status": score.status}

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        score = await self.hidden(state, attempt)
        text = PASS_TEXT if score.passed else FAIL_TEXT
        return Feedback(score.passed, text, self._hidden_details(score))


class OracleEvaluator(HiddenTestsEvaluator):
    """``oracle``: the hidden verdict and, on a failure, the first failing test's message
    (the scorer's detail: the failing assert, the exception, or the timeout).

    Args:
        scorer: The run's scorer (``${scorer}``).
        max_feedback_chars: Longest failure message passed on to the reflector.
        name: The evaluator's name in logs and reports.
    """

    source = EVALUATOR_HIDDEN_TESTS

    def __init__(
        self, scorer: Scorer | None = None, max_feedback_chars: int = 4000, name: str = "oracle"
    ) -> None:
        super().__init__(scorer, name)
        if max_feedback_chars < 100:
            raise ConfigError(
                "evaluator.max_feedback_chars", max_feedback_chars, "an integer >= 100"
            )
        self.max_feedback_chars = max_feedback_chars

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        score = await self.hidden(state, attempt)
        if score.passed:
            return Feedback(True, PASS_TEXT, self._hidden_details(score))
        detail = (score.detail or "").strip() or "(no message)"
        if len(detail) > self.max_feedback_chars:
            detail = detail[: self.max_feedback_chars - 20] + "\n... (truncated)"
        text = f"{FAIL_TEXT} Status: {score.status}. First failure:\n{detail}"
        return Feedback(False, text, self._hidden_details(score))


class NoisyOracleEvaluator(HiddenTestsEvaluator):
    """``noisy_oracle``: the hidden pass/fail, flipped at known rates.

    Args:
        scorer: The run's scorer (``${scorer}``).
        fn_rate: Probability that a hidden pass is reported as a failure.
        fp_rate: Probability that a hidden failure is reported as a pass.
        name: The evaluator's name in logs and reports.
    """

    source = EVALUATOR_NOISY_HIDDEN_VERDICT

    def __init__(
        self,
        scorer: Scorer | None = None,
        fn_rate: float = 0.0,
        fp_rate: float = 0.0,
        name: str = "noisy_oracle",
    ) -> None:
        super().__init__(scorer, name)
        self.fn_rate = _rate("evaluator.fn_rate", fn_rate)
        self.fp_rate = _rate("evaluator.fp_rate", fp_rate)

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        score = await self.hidden(state, attempt)
        u = noise_draw(state.services.seed, state.task.id, state.trial_index)
        flip = u < (self.fn_rate if score.passed else self.fp_rate)
        reported = score.passed != flip
        details = {**self._hidden_details(score), "flipped": flip, "noise_u": round(u, 6)}
        # The same fixed text for a true and a flipped verdict: the words carry no more
        # than the bit they report.
        return Feedback(reported, PASS_TEXT if reported else FAIL_TEXT, details)


def _rate(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(key, value, "a probability in [0, 1]")
    return float(value)
