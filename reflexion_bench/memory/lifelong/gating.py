"""Gating: after which tasks a lesson is written to the lifelong store.

Every policy's decision is computed for every task (and logged), whichever policy is
active, so one run gives the reflection counts of all policies; only the active
policy's decision is acted on.

- ``always``: every task (a solved task gets a post-success lesson);
- ``failures``: tasks with at least one failed trial (in-loop verdict);
- ``low_confidence``: tasks whose confidence is below ``low_confidence_threshold``;
- ``novel``: tasks of a type with fewer than ``novel_min`` stored reflections;
- ``gated``: failures OR low confidence OR novel (the combination to compare with
  ``always``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reflexion_bench.core.errors import ConfigError

POLICIES = ("always", "failures", "low_confidence", "novel", "gated")


@dataclass(frozen=True)
class TaskFacts:
    """What gating looks at for one finished task."""

    task_type: str
    had_failure: bool
    confidence: float
    stored_of_type: int


@dataclass
class GatingPolicy:
    """Args:
    policy: The active policy, one of ``POLICIES``.
    low_confidence_threshold: Confidence below this is "low".
    novel_min: A task type is novel while it has fewer stored reflections than this.
    """

    policy: str = "gated"
    low_confidence_threshold: float = 0.5
    novel_min: int = 3

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError("memory.gating.policy", self.policy, POLICIES)

    def decisions(self, facts: TaskFacts) -> dict[str, bool]:
        """Every policy's decision for this task."""
        failures = facts.had_failure
        low = facts.confidence < self.low_confidence_threshold
        novel = facts.stored_of_type < self.novel_min
        return {
            "always": True,
            "failures": failures,
            "low_confidence": low,
            "novel": novel,
            "gated": failures or low or novel,
        }

    def decide(self, facts: TaskFacts) -> tuple[bool, dict[str, Any]]:
        """(write?, the decisions of every policy) for the active policy."""
        d = self.decisions(facts)
        return d[self.policy], d


def task_confidence(trials: list[Any]) -> float:
    """A separate confidence estimate of a finished task, from its in-loop record only.

    The actor's own estimate wins when it logged one (``extra["confidence"]`` on the
    last trial). Otherwise: 0 when the last in-loop verdict failed; else the share of
    self-tests passed on the last trial (1.0 when not reported), divided by the
    number of trials used (a task solved at the third try is less certain).
    """
    if not trials:
        return 0.0
    last = trials[-1]
    own = (last.extra or {}).get("confidence")
    if isinstance(own, int | float):
        return float(min(1.0, max(0.0, own)))
    fb = last.self_test
    if last.error or fb is None or not fb.passed:
        return 0.0
    details = fb.details or {}
    share = 1.0
    total = details.get("total") or details.get("n_tests")
    passed = details.get("passed_count") or details.get("n_passed")
    if isinstance(total, int) and total > 0 and isinstance(passed, int):
        share = passed / total
    return share / len(trials)
