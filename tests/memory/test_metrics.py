"""Lifelong metrics on hand-made logs."""

from __future__ import annotations

from typing import Any

import pytest

from reflexion_bench.memory.lifelong.metrics import (
    gating_counts,
    learning_curve,
    precision_at_k,
    repeat_failure_rate,
    same_benchmark_neighbours,
    task_rows,
    tfidf_neighbours,
    usefulness,
)

NONE_RET = "Tested passed:\n\nTests failed:\nassert f([1]) == [1] # output: None"
NONE_RET_2 = "Tested passed:\n\nTests failed:\nassert g([3, 4]) == [4, 3] # output: None"
IDX = "Traceback:\nIndexError: list index out of range"


def trial(
    task: str, k: int, passed: bool, detail: str = "", bench: str = "humaneval"
) -> dict[str, Any]:
    return {
        "task_id": task,
        "trial": k,
        "benchmark": bench,
        "hidden": {"passed": passed, "detail": detail},
        "self_test": {"passed": passed, "text": detail},
    }


LOG = [
    trial("A", 1, False, NONE_RET),  # fails: missing return
    trial("A", 2, True),
    trial("B", 1, False, NONE_RET_2),  # similar to A, same cause again: a repeat
    trial("C", 1, False, IDX),  # similar to A, different cause: exposed, no repeat
    trial("D", 1, True),  # similar to A, no failure: exposed, no repeat
    trial("E", 1, False, NONE_RET),  # similar to nothing: not exposed
]
SIMILAR = {"A": [], "B": ["A"], "C": ["A"], "D": ["A", "B"], "E": []}


def test_repeat_failure_rate_by_hand() -> None:
    rows = task_rows(LOG)
    out = repeat_failure_rate(rows, SIMILAR)
    assert out["exposed"] == 3  # B, C, D (E has no similar earlier task)
    assert out["repeats"] == 1  # only B
    assert out["rate"] == pytest.approx(1 / 3)
    assert out["by_signature"] == {"AssertionError [call == collection] got None": 1}


def test_repeat_failure_ignores_unknown_and_handles_no_exposure() -> None:
    rows = task_rows([trial("A", 1, False, ""), trial("B", 1, False, "")])
    assert repeat_failure_rate(rows, {"B": ["A"]})["rate"] is None


def test_learning_curve_rolling_window() -> None:
    rows = task_rows(LOG)
    pts = learning_curve(rows, window=2)
    assert [p["success"] for p in pts] == [True, False, False, True, False]
    assert [p["first_try"] for p in pts] == [False, False, False, True, False]
    assert [p["rolling_success"] for p in pts] == [1.0, 0.5, 0.0, 0.5, 0.5]
    assert pts[-1]["cumulative_success"] == pytest.approx(2 / 5)


def test_similarity_helpers() -> None:
    texts = {
        "A": "reverse the list of integers",
        "B": "reverse a list of integers in place",
        "C": "parse a calendar date string",
    }
    near = tfidf_neighbours(texts, ["A", "B", "C"], min_sim=0.2)
    assert near == {"A": [], "B": ["A"], "C": []}
    rows = task_rows(
        [trial("x/1", 1, True), trial("y/1", 1, True, bench="mbpp"), trial("x/2", 1, True)]
    )
    assert same_benchmark_neighbours(rows)["x/2"] == ["x/1"]


def test_gating_counts_and_usefulness() -> None:
    events = [
        {"event": "begin_task", "task_id": "A", "retrieved": []},
        {"event": "end_task", "task_id": "A", "policy": "gated", "wrote": 1,
         "decisions": {"always": True, "failures": True, "gated": True}},
        {"event": "begin_task", "task_id": "D", "retrieved": [{"id": "r1"}, {"id": "r2"}]},
        {"event": "end_task", "task_id": "D", "policy": "gated", "wrote": 0,
         "decisions": {"always": True, "failures": False, "gated": False}},
    ]  # fmt: skip
    g = gating_counts(events)
    assert g["would_reflect"] == {"always": 2, "failures": 1, "gated": 1}
    assert g["written"] == 1 and g["reduction_vs_always"] == pytest.approx(0.5)
    u = usefulness(events, task_rows(LOG), {"r1": "failure", "r2": "success", "r3": "success"})
    assert (
        u["post_failure"]["retrievals"] == 1 and u["post_failure"]["success_when_retrieved"] == 1.0
    )
    assert u["post_success"]["stored"] == 2 and u["post_success"]["useful_per_stored"] == 0.5
    assert u["ratio_post_failure_to_post_success"] == pytest.approx(2.0)


def test_precision_at_k() -> None:
    ranked = {"q1": ["a", "b", "x"], "q2": ["y", "z", "c"]}
    labelled = [{"query": "q1", "relevant": ["a", "b"]}, {"query": "q2", "relevant": ["c"]}]
    out = precision_at_k(lambda q: ranked[q], labelled, k=2)
    assert out["precision"] == pytest.approx((1.0 + 0.0) / 2)
