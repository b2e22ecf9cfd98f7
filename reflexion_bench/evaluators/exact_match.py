"""The in-loop evaluator of the paper's HotpotQA protocol: exact match against the GOLD answer.

Unlike the code benchmarks (where the in-loop signal comes from self-generated tests),
the paper's HotpotQA agents learn after each trial whether their answer matched the
reference answer: the environment's binary reward. This evaluator reproduces that and
says so in its name. Its feedback text tells whether the answer was wrong or never
given, and never reveals the gold answer. Every call counts one use of the answer key
(:mod:`reflexion_bench.core.answer_key`): runs with it are labelled ``answer-in-loop``.
"""

from __future__ import annotations

from reflexion_bench.core.answer_key import EVALUATOR_GOLD_ANSWER, note_answer_key_use
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.scorers.exact_match import answer_metrics, gold_answer

_HALT_TEXT = {
    "max_steps": "the step limit was reached before Finish[...]",
    "prompt_length": "the prompt grew past the length limit before Finish[...]",
    "no_answer": "the reply gave no answer in the form Finish[answer]",
}


class GoldExactMatchEvaluator:
    """Binary in-loop reward: does the answer exactly match the gold answer?

    Args:
        answer_key: Key of the gold answer in ``Task.data``.
    """

    #: The name in logs and reports (its config file: configs/evaluator/exact_match.yaml).
    name = "exact_match"

    uses_gold_answer = True

    def __init__(self, answer_key: str = "answer") -> None:
        self.answer_key = answer_key

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        gold = gold_answer(state.task.data, self.answer_key)
        # The paper's protocol, and the answer key inside the loop: counted, so the run
        # is labelled answer-in-loop from its log.
        note_answer_key_use(state, EVALUATOR_GOLD_ANSWER)
        answer = attempt.candidate.strip()
        metrics = answer_metrics(answer, gold)
        details = {"em": metrics["em"], "f1": metrics["f1"]}
        if metrics["em"]:
            return Feedback(passed=True, text=f"Finish[{answer}] is correct.", details=details)
        halted = attempt.extra.get("halted")
        if not answer:
            reason = _HALT_TEXT.get(str(halted), "no answer was given")
            return Feedback(
                passed=False, text=f"The attempt gave no answer: {reason}.", details=details
            )
        return Feedback(
            passed=False,
            text=f"Finish[{answer}] is incorrect (it does not exactly match the reference answer).",
            details=details,
        )
