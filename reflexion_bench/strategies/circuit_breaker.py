"""The circuit breaker: stop re-applying the same fix to the same failure.

Reflexion's loop lets a task fail the same way trial after trial, each reflection
proposing the same fix. With this strategy, when two consecutive failed trials of a
task have the same failure signature (the same cause: exception type and message
shape, failing-assert pattern, timeout...), the next trial is told to bring new
evidence first (a new, different self-test, or printing intermediate values)
instead of re-applying the fix; when a third consecutive trial fails the same way
the task stops and is marked for human review.

Everything else is the ``reflexion`` strategy. It is off in the paper reproductions
(``strategy=reflexion``) and measured like any other strategy
(``strategy=circuit_breaker``). The log shows it: the instruction is a memory entry of
kind ``new_evidence_required`` (``extra.memory_kinds`` of the next trial), the
signature chain is in ``extra.circuit_breaker``, and a stopped task's last trial has
the error ``CircuitBreakerOpen: ...`` (the loop's way to end a task early).
"""

from __future__ import annotations

from dataclasses import dataclass

from reflexion_bench.core.errors import ConfigError, TaskStopped
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.memory.lifelong.signature import UNKNOWN, failure_signature
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.strategies.base import Strategy, note_trial_extra

SCRATCH_KEY = "circuit_breaker"
KIND = "new_evidence_required"

EVIDENCE_TEXT = (
    "The last {n} attempts failed for the same reason ({signature}). Re-applying the same "
    "fix will not help. Before changing the logic again, gather new evidence: trace the "
    "failing input by hand step by step, or add a check of intermediate values, and test a "
    "case different from the ones already tried. Then make a different change than before."
)


class CircuitBreakerOpen(TaskStopped):
    """The same failure repeated too often: the task stops and needs a human's review."""


@dataclass
class CircuitBreakerStrategy(Strategy):
    """Reflexion with a circuit breaker on repeated failure causes.

    Args:
        probe_after: Consecutive same-signature failures after which the next trial
            must gather new evidence (2).
        stop_after: Consecutive same-signature failures after which the task stops
            for human review (3).
        ignore_unknown: Do not count failures whose cause cannot be named
            (signature ``unknown``) as "the same cause".
    """

    name: str = "circuit_breaker"
    probe_after: int = 2
    stop_after: int = 3
    ignore_unknown: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.probe_after < 2:
            raise ConfigError("strategy.probe_after", self.probe_after, "an integer >= 2")
        if self.stop_after <= self.probe_after:
            raise ConfigError("strategy.stop_after", self.stop_after, "an integer > probe_after")

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        sig = failure_signature(feedback.text)
        chain: list[str] = state.scratch.setdefault(SCRATCH_KEY, [])
        chain.append(sig)
        run = _trailing_run(chain, self.ignore_unknown)
        note_trial_extra(state, circuit_breaker={"signature": sig, "same_cause_run": run})
        if run >= self.stop_after:
            raise CircuitBreakerOpen(
                f"the same failure cause {run} times in a row ({sig}); "
                "task stopped and marked for human review"
            )
        reflection, entries = await super().after_failure(state, attempt, feedback, reflector)
        if run >= self.probe_after:
            text = EVIDENCE_TEXT.format(n=run, signature=sig)
            entries.append(MemoryEntry(KIND, text, state.trial_index))
        return reflection, entries


def _trailing_run(chain: list[str], ignore_unknown: bool) -> int:
    """How many of the latest signatures are equal (0 if the last is ignored)."""
    if not chain or (ignore_unknown and chain[-1] == UNKNOWN):
        return 0
    last = chain[-1]
    n = 0
    for sig in reversed(chain):
        if sig != last:
            break
        n += 1
    return n
