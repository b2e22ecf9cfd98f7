"""Evaluator: the in-loop judge whose feedback the reflector sees.

It must not use hidden material (hidden tests, gold answers) unless the benchmark's
protocol says so (HotpotQA's paper protocol uses exact match against the gold answer
as the in-loop signal; that evaluator says so in its name), or the run studies the
answer key in the loop on purpose (``evaluator=oracle`` and its variants). Either way
every read of it is counted (:mod:`reflexion_bench.core.answer_key`).
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


def evaluator_name(evaluator: object) -> str:
    """The name an evaluator is logged and reported under: its ``name`` (the option's
    name in ``configs/evaluator/``), else its class name (a test's stand-in)."""
    name = getattr(evaluator, "name", None)
    return str(name) if name else type(evaluator).__name__
