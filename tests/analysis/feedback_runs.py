"""Synthetic run folders laid out as the feedback-reliability study lays them out
(``<benchmark>/<evaluator>/<strategy>``), each task's verdict at the budget set by the
test, for tests/analysis/test_feedback_did.py and test_evaluator_arms.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The per-task token budget every synthetic run names.
BUDGET = 1000


def _trial(
    bench: str,
    evaluator: str,
    strategy: str,
    task: str,
    k: int,
    *,
    passed: bool,
    own: bool | None,
    final: bool,
) -> dict[str, Any]:
    return {
        "type": "trial",
        "task_id": task,
        "attempt_id": f"{evaluator}-{strategy}-{task}",
        "benchmark": bench,
        "strategy": strategy,
        "evaluator": evaluator,
        "model": "mock",
        "trial": k,
        "final": final,
        "hidden": {"passed": passed},
        "self_test": None if own is None else {"passed": own},
        # 600 tokens a trial: trial 1's verdict is paid for within the budget, trial 2's
        # (1,200 tokens by then) is not.
        "model_calls": [
            {"role": "actor", "prompt_tokens": 300, "completion_tokens": 200},
            {"role": "self_test", "prompt_tokens": 60, "completion_tokens": 40},
        ],
        "wall_time_s": 1.0,
        "error": None,
        "extra": {"budget": {"tokens": BUDGET}} if final else {},
    }


def write_arm(
    root: Path,
    bench: str,
    folder: str,
    strategy: str,
    verdicts: Mapping[str, bool],
    *,
    evaluator: str | None = None,
    settings: Mapping[str, float] | None = None,
    in_loop: Mapping[str, bool] | None = None,
) -> Path:
    """A run folder whose task t has the verdict ``verdicts[t]`` at the budget: trial 1
    (in the budget) has it, trial 2 (past the budget) the opposite one, so a reader
    ignoring the budget gets every number wrong. ``in_loop``: trial 1's in-loop verdict
    (else the hidden one)."""
    evaluator = evaluator or folder
    d = root / bench / folder / strategy
    d.mkdir(parents=True)
    lines = []
    for t, v in verdicts.items():
        own = (in_loop or {}).get(t, v)
        lines.append(_trial(bench, evaluator, strategy, t, 1, passed=v, own=own, final=False))
        lines.append(_trial(bench, evaluator, strategy, t, 2, passed=not v, own=None, final=True))
    (d / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    if settings is not None:
        config = {"seed": 0, "evaluator": {"name": evaluator, **settings}}
        (d / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    return d


def task_ids(n: int, prefix: str = "T") -> list[str]:
    return [f"{prefix}{i:03d}" for i in range(n)]


def verdicts(tasks: list[str], ones: range | list[int]) -> dict[str, bool]:
    on = set(ones)
    return {t: i in on for i, t in enumerate(tasks)}
