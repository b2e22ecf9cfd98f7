"""The answer-key label from the logs: W&B gets it, and logs that cannot tell are never
called clean."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from reflexion_bench.analysis.answer_key import answer_key_summary, run_answer_key
from reflexion_bench.analysis.report import write_run_outputs
from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.evaluators.exact_match import GoldExactMatchEvaluator
from reflexion_bench.strategies import Strategy
from reflexion_bench.trackers import make_tracker
from tests.analysis.wandb_offline import read_offline_run
from tests.strategies.toyrun import SCRIPTS, run_toy


def _trials_by_script() -> int:
    """Trials each toy task takes under K=5 when the in-loop check is exact match:
    up to and including the first right answer of its script (or all K)."""
    total = 0
    for word, script in SCRIPTS.items():
        right = [i for i, reply in enumerate(script) if reply == word]
        total += right[0] + 1 if right else 5
    return total


def test_wandb_summary_carries_the_label_and_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = tmp_path / "run"
    # The real gold-answer evaluator in the toy loop (the toy tasks hold an `answer`).
    _, records = asyncio.run(
        run_toy(run_dir, Strategy(name="reflexion"), evaluator=GoldExactMatchEvaluator())
    )
    expected = _trials_by_script()
    assert len(records) == expected
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(run_dir))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    cfg = OmegaConf.create({"logger": OmegaConf.load(CONFIG_DIR / "logger" / "wandb.yaml")})
    tracker = make_tracker(cfg, run_dir)
    summary = write_run_outputs(run_dir)
    try:
        tracker.log_run(run_dir, summary)
    finally:
        tracker.close()
    got = read_offline_run(run_dir)["summary"]
    assert got["answer_key/label"] == "answer-in-loop"
    assert got["answer_key/uses"] == expected
    assert got["answer_key/by_source/evaluator.gold_answer"] == expected


def _rec(task: str, trial: int, **fields: Any) -> dict[str, Any]:
    return {"type": "trial", "task_id": task, "trial": trial, "final": True, **fields}


def test_logs_from_before_the_counting_are_inferred_or_unknown(tmp_path: Path) -> None:
    # The gold evaluator's details (em/f1) identify it in an old log.
    old_hotpot = [_rec("q1", 1, self_test={"passed": False, "details": {"em": 0.0, "f1": 0.2}})]
    ak = answer_key_summary(old_hotpot)
    assert ak["label"] == "answer-in-loop" and ak["inferred_trials"] == 1
    # So do the ALFWorld evaluator's.
    old_alf = [
        _rec("g", 1, self_test={"passed": True, "details": {"won": True, "stop_reason": "won"}})
    ]
    assert answer_key_summary(old_alf)["by_source"] == {"evaluator.env_success": 1}
    # Without a count or a mark (imported logs, old simple runs): unknown, not clean.
    assert answer_key_summary([_rec("t", 1, self_test=None)])["label"] == "unknown"
    # Counted and zero: clean.
    assert answer_key_summary([_rec("t", 1, answer_key_uses={})])["label"] == "clean"


def test_memory_events_count_for_the_tasks_in_the_log(tmp_path: Path) -> None:
    records = [_rec("t1", 1, answer_key_uses={}), _rec("t2", 1, answer_key_uses={})]
    events = [
        # An earlier attempt of t1 (e.g. before a resume): replaced by the last event.
        {
            "type": "memory",
            "event": "end_task",
            "task_id": "t1",
            "answer_key_uses": {"memory.hidden_verdict": 4},
        },
        {
            "type": "memory",
            "event": "end_task",
            "task_id": "t1",
            "answer_key_uses": {"memory.hidden_verdict": 1},
        },
        {"type": "memory", "event": "end_task", "task_id": "t2", "answer_key_uses": {}},
        # A task not in the log is not this run's number.
        {
            "type": "memory",
            "event": "end_task",
            "task_id": "t9",
            "answer_key_uses": {"memory.hidden_verdict": 7},
        },
        {"type": "memory", "event": "begin_task", "task_id": "t2"},
    ]
    (tmp_path / "memory_events.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    ak = run_answer_key(records, [tmp_path])
    assert ak["label"] == "answer-in-loop"
    assert ak["by_source"] == {"memory.hidden_verdict": 1}
    assert ak["memory_events"] == 2 and ak["tasks_with_uses"] == 1
    # An old lifelong run's events (no count) could have read the hidden verdict.
    (tmp_path / "memory_events.jsonl").write_text(
        json.dumps({"type": "memory", "event": "end_task", "task_id": "t1"}) + "\n"
    )
    assert run_answer_key(records, [tmp_path])["label"] == "unknown"
