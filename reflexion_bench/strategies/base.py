"""Strategies: what the loop does between trials, with one shared loop for all.

A strategy is data (how many trials, whether the in-loop evaluator runs, what goes
into memory after a failure) plus one hook, :meth:`Strategy.after_failure`, so the
paper's variants and the controls it lacked differ only where they really differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.reflectors.base import Reflector

#: Key of ``TaskState.scratch`` under which a strategy leaves values for the current
#: trial's ``extra`` field in the run log (e.g. the real reflection a control replaced).
TRIAL_EXTRA_KEY = "trial_extra"

MEMORY_CONTENTS = (
    "none",  # retry with no memory (the `retry` control / the paper's base agents)
    "raw_log",  # the previous attempt and its feedback verbatim (episodic memory)
    "reflection",  # Reflexion
    "raw_log_and_reflection",
    "feedback",  # failing self-test output only (the paper's "immediate-refinement")
    "wrong_reflection",  # a reflection written for another task (control)
    "irrelevant_text",  # length-matched text that says nothing about the task (control)
)


@dataclass
class Strategy:
    """Loop policy.

    Args:
        name: Label used in the run log and reports.
        max_trials: K, the maximum number of trials per task.
        self_test: Run the in-loop evaluator (self-generated tests, heuristics).
        memory_content: What a failed trial leaves in memory; one of ``MEMORY_CONTENTS``.
        stop_on_pass: Stop a task as soon as the in-loop evaluator passes.
        memory_window: Ω, entries kept; ``None`` means the environment's default.
    """

    name: str = "reflexion"
    max_trials: int = 5
    self_test: bool = True
    memory_content: str = "reflection"
    stop_on_pass: bool = True
    memory_window: int | None = None

    def __post_init__(self) -> None:
        if self.memory_content not in MEMORY_CONTENTS:
            raise ConfigError("strategy.memory_content", self.memory_content, MEMORY_CONTENTS)
        if self.max_trials < 1:
            raise ConfigError("strategy.max_trials", self.max_trials, "an integer >= 1")

    @property
    def reflects(self) -> bool:
        return self.memory_content in ("reflection", "raw_log_and_reflection")

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        """Return (the reflection written, if any; the memory entries to add)."""
        trial = state.trial_index
        reflection: str | None = None
        entries: list[MemoryEntry] = []
        if self.memory_content in ("raw_log", "raw_log_and_reflection"):
            entries.append(MemoryEntry("raw_log", raw_log_text(attempt, feedback), trial))
        if self.reflects:
            reflection = await reflector.reflect(state, attempt, feedback)
            entries.append(MemoryEntry("reflection", reflection, trial))
        if self.memory_content == "feedback" and feedback.text:
            entries.append(MemoryEntry("feedback", feedback.text, trial))
        if self.memory_content in ("wrong_reflection", "irrelevant_text"):
            raise ConfigError(
                "strategy",
                self.memory_content,
                "this memory content needs its control strategy class "
                "(configs/strategy/wrong_reflection.yaml, irrelevant_text.yaml)",
            )
        return reflection, entries


def raw_log_text(attempt: Attempt, feedback: Feedback) -> str:
    """The verbatim previous attempt (trajectory or candidate) followed by its feedback."""
    body = attempt.trajectory or attempt.candidate
    if feedback.text:
        return f"{body}\n\n[feedback]\n{feedback.text}"
    return body


def note_trial_extra(state: TaskState, **values: Any) -> None:
    """Leave ``values`` for the ``extra`` field of the trial in progress.

    The loop merges ``state.scratch[TRIAL_EXTRA_KEY]`` into the trial record when the
    trial ends, so what a strategy did but did not show (the real reflection behind an
    ``irrelevant_text`` control, the task a wrong reflection came from) is in the log.
    """
    state.scratch.setdefault(TRIAL_EXTRA_KEY, {}).update(values)
