"""Memory role: what a trial sees of earlier trials (and, in lifelong mode, earlier tasks)."""

from reflexion_bench.memory.base import (
    Memory,
    MemoryEntry,
    TaskAwareMemory,
    WindowMemory,
    format_memory,
)

__all__ = ["Memory", "MemoryEntry", "TaskAwareMemory", "WindowMemory", "format_memory"]
