"""Evaluator: the in-loop judge whose feedback the reflector sees.

It must not use hidden material (hidden tests, gold answers) unless the benchmark's
protocol says so (HotpotQA's paper protocol uses exact match against the gold answer
as the in-loop signal; that evaluator says so in its name).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback


@runtime_checkable
class Evaluator(Protocol):
    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        """Judge ``attempt``; ``Feedback.passed`` ends the task's trials when true."""
        ...
