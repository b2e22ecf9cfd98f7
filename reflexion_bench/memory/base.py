"""Memory: what the next trial of a task is shown.

The paper's memory is a sliding window of the last Ω entries (Ω=1 for code, 3 for
HotpotQA and ALFWorld). Entries carry a ``kind`` so that the memory-content controls
(raw log, reflection, wrong reflection, irrelevant text...) share one mechanism and
the log records exactly what was shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from reflexion_bench.core.state import TaskState


@dataclass(frozen=True)
class MemoryEntry:
    kind: str
    """``reflection``, ``raw_log``, ``feedback``, ``wrong_reflection``, ``irrelevant_text``, ``lesson``..."""
    text: str
    trial: int = 0


@runtime_checkable
class Memory(Protocol):
    def add(self, entry: MemoryEntry) -> None: ...

    def render(self) -> list[MemoryEntry]:
        """The entries the next trial's actor sees, oldest first."""
        ...


class WindowMemory:
    """The paper's episodic memory: keep the last ``window`` entries (per task)."""

    def __init__(self, window: int = 1) -> None:
        if window < 0:
            raise ValueError(f"memory.window must be >= 0, got {window}")
        self.window = window
        self._entries: list[MemoryEntry] = []

    def add(self, entry: MemoryEntry) -> None:
        self._entries.append(entry)

    def render(self) -> list[MemoryEntry]:
        if self.window == 0:
            return []
        # Entries added in the same trial (e.g. raw log + reflection) count as one
        # slot, so `raw_log_and_reflection` keeps the same number of trials as the others.
        trials = sorted({e.trial for e in self._entries})[-self.window :]
        return [e for e in self._entries if e.trial in trials]

    @property
    def all_entries(self) -> list[MemoryEntry]:
        return list(self._entries)


@runtime_checkable
class TaskAwareMemory(Protocol):
    """Optional hooks for memories that live beyond one task (lifelong mode).

    The runner calls ``begin_task`` before a task's first trial (e.g. to retrieve
    lessons from similar past tasks) and ``end_task`` after its last (e.g. to store
    the task's reflections).
    """

    async def begin_task(self, state: TaskState) -> None: ...

    async def end_task(self, state: TaskState) -> None: ...


_HEADINGS = {
    "reflection": "Reflection",
    "raw_log": "Previous attempt",
    "feedback": "Test feedback from the previous attempt",
    "wrong_reflection": "Reflection",
    "irrelevant_text": "Reflection",
    "lesson": "Lesson from a similar past task",
    "critique": "Review of the previous implementation",
    "trace_debug": "Debugging the failing test with its runtime values",
}


def format_memory(entries: list[MemoryEntry]) -> str:
    """The one text rendering of memory that every actor puts in its prompt.

    ``wrong_reflection`` and ``irrelevant_text`` are headed exactly like a real
    reflection so that the controls differ from Reflexion only in content.
    """
    blocks = []
    for e in entries:
        head = _HEADINGS.get(e.kind, e.kind.replace("_", " ").capitalize())
        suffix = f" (trial {e.trial})" if e.trial and e.kind != "lesson" else ""
        blocks.append(f"[{head}{suffix}]\n{e.text.strip()}")
    return "\n\n".join(blocks)
