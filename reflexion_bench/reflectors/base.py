"""Reflector: turns a failed attempt and its feedback into a short verbal lesson."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback


@runtime_checkable
class Reflector(Protocol):
    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        """Return the reflection text (what went wrong, what to do next time)."""
        ...
