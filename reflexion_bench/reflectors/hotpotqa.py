"""A reflector for question answering: the failed attempt and its outcome -> a short plan.

It sees what the paper's reflector saw: the question with the attempt's steps (the
actor's trajectory) and whether the answer was wrong or never given. It never sees
the gold answer (the evaluator's feedback text does not contain it).
"""

from __future__ import annotations

import re

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message
from reflexion_bench.prompts import load_prompts

# A model that keeps going after its reflection starts a new example or attempt.
_RUNOFF = re.compile(r"\n\s*(?:previous attempt|question|outcome|reflection)\s*:", re.I)
_LABEL = re.compile(r"^\s*\**reflection\**\s*:\s*", re.I)


class QAReflector:
    """Verbal self-reflection for QA actors (CoT, ReAct).

    Args:
        prompts: External prompt pack layered over the built-in ``hotpotqa`` pack
            (templates ``reflect_instructions``, ``reflect_examples``, ``reflect_prompt``).
        max_tokens: Completion budget of the reflection.
        max_chars: Longest reflection kept (memory holds up to Ω of them).
    """

    def __init__(
        self, prompts: str | None = None, max_tokens: int = 256, max_chars: int = 1500
    ) -> None:
        self.max_tokens = max_tokens
        self.max_chars = max_chars
        self.pack = load_prompts(
            "hotpotqa",
            prompts,
            required=["reflect_instructions", "reflect_examples", "reflect_prompt"],
        )

    def messages(self, attempt: Attempt, feedback: Feedback) -> list[Message]:
        trajectory = attempt.trajectory.strip() or f"Answer: {attempt.candidate}"
        # Without an in-loop evaluator (strategy=reflexion_no_tests) nothing checked the
        # answer: say so rather than call it wrong, so the reflector judges it itself.
        unchecked = "The answer was not checked; judge from the steps whether it is right."
        fallback = unchecked if feedback.passed is None else "The answer was judged incorrect."
        outcome = feedback.text.strip() or fallback
        return [
            Message("system", self.pack.render("reflect_instructions").strip()),
            Message(
                "user",
                self.pack.render(
                    "reflect_prompt",
                    examples=self.pack["reflect_examples"].strip(),
                    trajectory=trajectory,
                    feedback=outcome,
                ).strip(),
            ),
        ]

    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        cfg = state.services.generate_config.replace(
            max_tokens=self.max_tokens, stop=("\nPrevious attempt:", "\nQuestion:")
        )
        out = await state.generate("reflector", self.messages(attempt, feedback), cfg)
        return clean_reflection(out.text, self.max_chars)


def clean_reflection(text: str, max_chars: int = 1500) -> str:
    """Drop a leading ``Reflection:`` label and anything after the reflection proper."""
    text = _LABEL.sub("", text.strip())
    m = _RUNOFF.search(text)
    if m is not None:
        text = text[: m.start()]
    text = text.strip()
    if len(text) > max_chars:
        text = text[:max_chars].rsplit(" ", 1)[0] + " [...]"
    return text
