"""Figures from earlier runs' logs: what ``--estimate`` and the progress's first ETA use
instead of a token cap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reflexion_bench.runner.reference_logs import expected_tokens_per_task, logged_figures


def trial(
    task: str, n: int, final: bool, calls: list[tuple[str, int]], **kw: Any
) -> dict[str, Any]:
    return {
        "type": "trial",
        "task_id": task,
        "attempt_id": kw.get("attempt", "a-" + task),
        "trial": n,
        "final": final,
        "benchmark": kw.get("benchmark", "humaneval"),
        "model": kw.get("model", "qwen"),
        "strategy": kw.get("strategy", "reflexion"),
        "model_calls": [{"role": r, "completion_tokens": t} for r, t in calls],
    }


def write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_pooled_means_per_role_per_task_and_the_trials_a_task_took(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write(
        results / "study" / "a" / "log.jsonl",
        [
            trial("t/0", 1, True, [("actor", 100), ("self_test", 50)]),
            trial("t/1", 1, False, [("actor", 200), ("self_test", 70)]),
            trial("t/1", 2, True, [("reflector", 30), ("actor", 300)]),
        ],
    )
    # Another model, a mock run and a user's own runs/ folder are not this model's figures.
    write(results / "study" / "b" / "log.jsonl", [trial("t/0", 1, True, [("actor", 9)], model="x")])
    write(
        results / "study" / "c" / "log.jsonl", [trial("t/0", 1, True, [("actor", 9)], model="mock")]
    )
    write(results / "runs" / "r" / "log.jsonl", [trial("t/0", 1, True, [("actor", 9)])])
    figures = logged_figures(results, "humaneval", "qwen", "reflexion")
    assert figures is not None
    assert figures.sources == ["results/study/a/log.jsonl"]
    assert figures.completion == {
        "actor": (200.0, 3),
        "reflector": (30.0, 1),
        "self_test": (60.0, 2),
    }
    assert figures.completion_per_task == (150 + 600) / 2
    assert figures.unsolved_before == [1.0, 0.5]
    found = expected_tokens_per_task(results, "humaneval", "qwen", "reflexion")
    assert found is not None and found[0] == 375.0
    assert expected_tokens_per_task(results, "mbpp", "qwen", "reflexion") is None
    assert expected_tokens_per_task(results, "humaneval", "qwen", "retry") is None
    anyone = logged_figures(results, "humaneval")  # any real model: the mock's still left out
    assert anyone is not None and anyone.models == ["qwen", "x"]


def test_an_abandoned_attempt_is_not_counted(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write(
        results / "s" / "log.jsonl",
        [
            trial("t/0", 1, False, [("actor", 1000)], attempt="old"),  # interrupted
            trial("t/0", 1, True, [("actor", 10)], attempt="new"),
        ],
    )
    found = expected_tokens_per_task(results, "humaneval", "qwen", "reflexion")
    assert found is not None and found[0] == 10.0
