"""Lifelong memory and the answer key: the hidden verdict is read only with
``memory.label_from_hidden=true`` (then counted and the run labelled answer-in-loop);
without an in-loop verdict the outcome is ``unknown`` and the reflector's own reading
is stored. The real runner and memory, the toy benchmark with the scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.report import load_summary
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState, TrialRecord
from reflexion_bench.core.types import Attempt, Feedback, GenerateConfig, Message, Task
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.memory.lifelong import (
    GatingPolicy,
    LifelongMemory,
    ReflectionStore,
    RetrievalConfig,
)
from reflexion_bench.models.mock import MockModel
from reflexion_bench.reflectors.structured import StructuredReflector
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.strategies.base import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyScorer

WORDS = ["alpha", "beta", "gamma"]
SIMPLE = Strategy(name="simple", max_trials=1, self_test=False, memory_content="none")


class RecordingReflector:
    """Writes a reflection through the model and keeps the feedback it was given."""

    def __init__(self) -> None:
        self.feedback: list[Feedback] = []

    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        self.feedback.append(feedback)
        out = await state.generate(
            "reflector", [Message("user", f"Reflect on {attempt.candidate}")]
        )
        return out.text


def responder(messages: Sequence[Message], config: GenerateConfig) -> str:
    text = messages[-1].content
    if text.startswith("Reflect on"):
        return "I am not sure the word was the one asked for; read the prompt again."
    return "wrong"  # every task fails the hidden scorer


def _run(tmp: Path, strategy: Strategy, **mem_kw: Any) -> tuple[LifelongMemory, RecordingReflector]:
    reflector = RecordingReflector()
    mem = LifelongMemory(
        store=tmp / "store",
        retrieval=RetrievalConfig(mode="bm25", k=2),
        gating=GatingPolicy("always"),
        reflector=reflector,
        events_path=tmp / "run" / "memory_events.jsonl",
        **mem_kw,
    )
    ctx = RunContext(
        tasks=ToyEnvironment(words=WORDS).load_tasks(),
        roles=Roles(ToyActor(), ToyEvaluator(), reflector, ToyScorer(), strategy),
        services=Services(model=MockModel(responder=responder)),
        memory_factory=mem,
        memory_window=1,
        benchmark="toy",
        run_dir=tmp / "run",
        show_progress=False,
    )
    try:
        asyncio.run(execute(ctx))
    finally:
        mem.close()
    return mem, reflector


def _ends(tmp: Path) -> list[dict[str, Any]]:
    lines = (tmp / "run" / "memory_events.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == "end_task"]


def test_simple_stores_unknown_from_the_reflector_and_reads_no_verdict(tmp_path: Path) -> None:
    _, reflector = _run(tmp_path, SIMPLE)
    ends = _ends(tmp_path)
    assert len(ends) == len(WORDS)
    for e in ends:
        assert "error" not in e
        assert e["outcome"] == "unknown" and e["verdict_source"] == "none"
        assert e["answer_key_uses"] == {}
    # The reflector judged each attempt without a verdict, and its text was stored.
    assert len(reflector.feedback) == len(WORDS)
    assert all(fb.passed is None for fb in reflector.feedback)
    with ReflectionStore(tmp_path / "store", read_only=True) as st:
        stored = list(st.all())
    assert sorted(r.outcome for r in stored) == ["unknown"] * len(WORDS)
    assert all("not sure" in r.text for r in stored)
    summary = load_summary(tmp_path / "run")
    assert summary["answer_key"]["label"] == "clean"
    assert summary["answer_key"]["memory_events"] == len(WORDS)


class _Tripwire:
    """A hidden verdict that fails the test if anything looks at it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the hidden verdict was read ({name})")


def _finished_state(mem: LifelongMemory, trials: int) -> TaskState:
    state = TaskState(
        task=Task(id="t/0", prompt="Say the word alpha.", benchmark="toy"),
        strategy="simple",
        max_trials=trials,
        memory=mem(window=1),
        services=Services(model=MockModel(responder=responder)),
    )
    for k in range(1, trials + 1):
        rec = TrialRecord(trial=k, candidate="wrong")
        rec.hidden = _Tripwire()  # type: ignore[assignment]
        state.trials.append(rec)
    return state


def test_without_the_key_the_memory_never_touches_the_hidden_verdict(tmp_path: Path) -> None:
    reflector = RecordingReflector()
    mem = LifelongMemory(
        store=tmp_path / "store",
        retrieval=RetrievalConfig(mode="bm25"),
        gating=GatingPolicy("always"),
        reflector=reflector,
        events_path=tmp_path / "events.jsonl",
    )
    state = _finished_state(mem, trials=2)
    try:
        asyncio.run(state.memory.end_task(state))  # type: ignore[attr-defined]
    finally:
        mem.close()
    (end,) = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert "error" not in end, end.get("error")
    assert end["outcome"] == "unknown" and end["answer_key_uses"] == {}
    assert end["written"] and end["written"][0]["outcome"] == "unknown"


def test_label_from_hidden_is_counted_and_labels_the_run(tmp_path: Path) -> None:
    _run(tmp_path, Strategy(name="reflexion", max_trials=2), label_from_hidden=True)
    ends = _ends(tmp_path)
    # Every trial's hidden verdict was read once, after the task, for its label.
    from reflexion_bench.runner.runlog import load_run_records

    records = load_run_records(tmp_path / "run")
    per_task: dict[str, int] = {}
    for r in records:
        per_task[r["task_id"]] = per_task.get(r["task_id"], 0) + 1
    assert {e["task_id"]: e["answer_key_uses"] for e in ends} == {
        t: {"memory.hidden_verdict": n} for t, n in per_task.items()
    }
    assert all(e["verdict_source"] == "hidden" for e in ends)
    summary = load_summary(tmp_path / "run")
    ak = summary["answer_key"]
    assert ak["label"] == "answer-in-loop"
    assert ak["by_source"] == {"memory.hidden_verdict": len(records)}
    # The memory's reads happen after each task's last trial record: they are in the
    # events, not in the trial records (the toy roles count nothing).
    assert all(r["answer_key_uses"] == {} for r in records)


def test_the_old_key_is_refused_with_the_new_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="label_from_hidden"):
        LifelongMemory(store=tmp_path / "s", outcome_source="hidden")
    with pytest.raises(ConfigError, match=r"memory\.label_from_hidden"):
        LifelongMemory(store=tmp_path / "s", label_from_hidden="yes")  # type: ignore[arg-type]


def test_structured_reflector_is_not_told_an_unchecked_attempt_failed() -> None:
    state = TaskState(
        task=Task(id="t/0", prompt="Say the word alpha.", benchmark="toy"),
        strategy="simple",
        max_trials=1,
        memory=WindowMemory(1),
        services=Services(model=MockModel(responder=responder)),
    )
    attempt = Attempt(candidate="wrong", trajectory="wrong")
    unchecked = StructuredReflector().messages(state, attempt, Feedback(None))[-1].content
    failed = StructuredReflector().messages(state, attempt, Feedback(False, "x"))[-1].content
    assert "FAILED" not in unchecked and "Nothing checked this attempt" in unchecked
    assert "FAILED" in failed
