"""Scorer: the final judge that decides the benchmark result.

Separate from the in-loop evaluator on purpose: it may use hidden tests or gold
answers, and its verdict is never shown to the actor. The loop scores every trial so
that false positives of the in-loop evaluator are measurable from the log.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score


@runtime_checkable
class Scorer(Protocol):
    async def score(self, state: TaskState, attempt: Attempt) -> Score: ...
