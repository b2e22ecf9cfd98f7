"""Actor: produces one attempt (a program, an answer, a trajectory) for the task.

The actor reads the memory it may see from ``state.memory.render(state)`` and calls
the model through ``state.generate("actor", ...)`` so that the call is accounted.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt


@runtime_checkable
class Actor(Protocol):
    async def act(self, state: TaskState) -> Attempt:
        """Return this trial's attempt."""
        ...
