"""Gating decisions and the confidence estimate."""

from __future__ import annotations

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TrialRecord
from reflexion_bench.core.types import Feedback
from reflexion_bench.memory.lifelong import GatingPolicy, TaskFacts, task_confidence


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (TaskFacts("humaneval", had_failure=True, confidence=0.0, stored_of_type=10),
         {"always": True, "failures": True, "low_confidence": True, "novel": False, "gated": True}),
        (TaskFacts("humaneval", had_failure=False, confidence=1.0, stored_of_type=10),
         {"always": True, "failures": False, "low_confidence": False, "novel": False, "gated": False}),
        (TaskFacts("mbpp", had_failure=False, confidence=1.0, stored_of_type=2),
         {"always": True, "failures": False, "low_confidence": False, "novel": True, "gated": True}),
        (TaskFacts("mbpp", had_failure=False, confidence=0.4, stored_of_type=3),
         {"always": True, "failures": False, "low_confidence": True, "novel": False, "gated": True}),
    ],
)  # fmt: skip
def test_every_policy_decides(facts: TaskFacts, expected: dict[str, bool]) -> None:
    g = GatingPolicy("gated", low_confidence_threshold=0.5, novel_min=3)
    assert g.decisions(facts) == expected
    for policy, want in expected.items():
        assert GatingPolicy(policy).decide(facts)[0] is want


def test_unknown_policy_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"memory\.gating\.policy"):
        GatingPolicy("sometimes")


def _rec(passed: bool | None, details: dict | None = None, **extra: object) -> TrialRecord:  # type: ignore[type-arg]
    r = TrialRecord(trial=1, self_test=Feedback(passed=passed, details=details or {}))
    r.extra.update(extra)
    return r


def test_confidence_estimate() -> None:
    assert task_confidence([_rec(True)]) == 1.0
    assert task_confidence([_rec(False), _rec(True)]) == 0.5  # solved at the 2nd try
    assert task_confidence([_rec(False)]) == 0.0
    assert task_confidence([_rec(True, {"n_tests": 4, "n_passed": 3})]) == 0.75
    assert task_confidence([_rec(True, confidence=0.2)]) == 0.2  # the actor's own estimate wins
