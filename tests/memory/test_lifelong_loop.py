"""Lifelong memory in the real runner, on the toy benchmark with the scripted model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.core.state import Services
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.memory.lifelong import (
    GatingPolicy,
    LifelongMemory,
    ReflectionJudge,
    ReflectionStore,
    RetrievalConfig,
)
from reflexion_bench.memory.lifelong.report import format_report, lifelong_report
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies.base import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer

LESSON = "Say exactly the word that the task prompt names, nothing else."
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]


def responder(messages: Sequence[Message], config: GenerateConfig) -> str:
    text = messages[-1].content
    if text.startswith("Reflect"):
        return LESSON
    if "Grade the lesson" in text:
        return '{"specificity": 0.8, "actionability": 1, "transferability": 0.5, "accuracy": 0.3}'
    if "Lesson from a similar past task" in text or "[Reflection" in text:
        return text.split("Say the word ")[1].split(".")[0]  # the lesson helps: right answer
    return "wrong"


def run_toy(
    tmp: Path, policy: str = "gated", share_from: Sequence[Path] = (), judge: bool = False,
    words: Sequence[str] = WORDS, store_name: str = "store", max_trials: int = 2,
) -> tuple[RunContext, LifelongMemory, MockModel]:  # fmt: skip
    import asyncio

    model = MockModel(responder=responder)
    mem = LifelongMemory(
        store=tmp / store_name,
        agent=store_name,
        share_from=list(share_from),
        retrieval=RetrievalConfig(mode="bm25", k=2),
        gating=GatingPolicy(policy),
        reflector=ToyReflector(),
        judge=ReflectionJudge() if judge else None,
        events_path=tmp / "run" / "memory_events.jsonl",
    )
    ctx = RunContext(
        tasks=ToyEnvironment(words=list(words)).load_tasks(),
        roles=Roles(
            ToyActor(), ToyEvaluator(), ToyReflector(), ToyScorer(), Strategy(max_trials=max_trials)
        ),
        services=Services(model=model),
        memory_factory=mem,
        memory_window=1,
        benchmark="toy",
        run_dir=tmp / "run",
        show_progress=False,
    )
    asyncio.run(execute(ctx))
    return ctx, mem, model


def _events(tmp: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in (tmp / "run" / "memory_events.jsonl").read_text().splitlines()
    ]


def test_lessons_reach_later_tasks_first_trial(tmp_path: Path) -> None:
    _ctx, mem, model = run_toy(tmp_path)
    recs = load_run_records(tmp_path / "run")
    first = [r for r in recs if r["task_id"] == "toy/0"]
    later = [r for r in recs if r["task_id"] == "toy/3"]
    # Task 0 has nothing to retrieve: it fails once, then the in-task reflection helps.
    assert first[0]["memory_shown"] == [] and not first[0]["hidden"]["passed"]
    # Task 3's first trial already shows a lesson from an earlier task, and passes.
    assert "lesson" in later[0]["extra"]["memory_kinds"]
    assert LESSON in later[0]["memory_shown"]
    assert later[0]["hidden"]["passed"]
    assert (
        LESSON
        in model.prompts[next(i for i, p in enumerate(model.prompts) if "Say the word delta" in p)]
    )
    # The store holds files with the reflection and its metadata.
    assert len(mem.store) >= 1
    assert any(LESSON in p.read_text() for p in mem.store.files_dir.rglob("*.md"))
    ev = _events(tmp_path)
    begins = [e for e in ev if e["event"] == "begin_task"]
    assert begins[3]["retrieved"] and begins[3]["retrieved"][0]["id"].startswith("r")
    # Retrieval counts went into the files.
    hit_id = begins[3]["retrieved"][0]["id"]
    assert mem.store.get(hit_id).retrieval_count >= 1


def test_gating_counts_for_every_policy_are_logged(tmp_path: Path) -> None:
    _, mem_always, _ = run_toy(tmp_path / "a", policy="always")
    _, mem_fail, _ = run_toy(tmp_path / "f", policy="failures")
    ends_a = [e for e in _events(tmp_path / "a") if e["event"] == "end_task"]
    ends_f = [e for e in _events(tmp_path / "f") if e["event"] == "end_task"]
    # Only task 0 fails (the lesson fixes the rest): "failures" writes 1, "always" 6.
    assert sum(e["wrote"] for e in ends_f) == 1
    assert sum(e["wrote"] for e in ends_a) == len(WORDS)
    assert len(mem_always.store) == len(WORDS) and len(mem_fail.store) == 1
    for e in ends_f:
        assert set(e["decisions"]) == {"always", "failures", "low_confidence", "novel", "gated"}
    assert [e["decisions"]["failures"] for e in ends_f] == [True] + [False] * (len(WORDS) - 1)
    outcomes = sorted(r.outcome for r in mem_always.store.all())
    # Task 0 failed, then passed with its in-task reflection: "partial".
    assert outcomes == ["partial"] + ["success"] * (len(WORDS) - 1)
    # The post-task reflector calls are accounted in the events log.
    calls = [c for e in ends_a for c in e["model_calls"]]
    assert calls and all(c["role"] == "reflector" for c in calls)


def test_novel_policy_stops_after_three_of_a_type(tmp_path: Path) -> None:
    run_toy(tmp_path, policy="novel")
    ends = [e for e in _events(tmp_path) if e["event"] == "end_task"]
    assert [e["wrote"] for e in ends] == [1, 1, 1, 0, 0, 0]


def test_judge_scores_are_stored_beside_the_reflection(tmp_path: Path) -> None:
    _, mem, _ = run_toy(tmp_path, policy="failures", judge=True)
    ref = mem.store.all()[0]
    assert ref.quality == {
        "specificity": 0.75,
        "actionability": 1.0,
        "transferability": 0.5,
        "accuracy": 0.25,
    }
    ends = [e for e in _events(tmp_path) if e["event"] == "end_task"]
    assert any(c["role"] == "judge" for e in ends for c in e["model_calls"])


def test_shared_store_is_read_but_never_written(tmp_path: Path) -> None:
    run_toy(tmp_path / "x", policy="always", store_name="agent-a")
    a_dir = tmp_path / "x" / "agent-a"
    before = {str(p): p.read_bytes() for p in a_dir.rglob("*") if p.is_file() and p.suffix == ".md"}
    _, mem_b, _ = run_toy(
        tmp_path / "y", policy="failures", share_from=[a_dir], store_name="agent-b"
    )
    ev = _events(tmp_path / "y")
    # Agent b's very first task already gets agent a's lessons.
    assert ev[0]["retrieved"] and ev[0]["retrieved"][0]["agent"] == "agent-a"
    after = {str(p): p.read_bytes() for p in a_dir.rglob("*") if p.is_file() and p.suffix == ".md"}
    assert after == before  # retrieval counts are not written into another agent's store
    assert all(r.source_agent == "agent-b" for r in mem_b.store.all())
    assert mem_b.shared[0].read_only


def test_report_shows_curve_repeat_failures_and_gating(tmp_path: Path) -> None:
    run_toy(tmp_path, policy="gated")
    rep = lifelong_report(tmp_path / "run", store=tmp_path / "store")
    assert rep["n_tasks"] == len(WORDS)
    pts = rep["learning_curve"]["points"]
    # Task 0 is solved at its second trial; every later task at its first (lessons).
    assert [p["first_try"] for p in pts] == [False] + [True] * (len(WORDS) - 1)
    assert all(p["success"] for p in pts)
    assert rep["gating"]["would_reflect"]["always"] == len(WORDS)
    assert rep["gating"]["written"] == len(ReflectionStore(tmp_path / "store", read_only=True))
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    assert "repeat-failure" in format_report(rep)


def test_store_persists_across_runs(tmp_path: Path) -> None:
    _, mem1, _ = run_toy(tmp_path, policy="always", words=["alpha"], max_trials=1)
    first_id = mem1.store.all()[0].id
    mem1.close()
    (tmp_path / "run").rename(tmp_path / "run1")
    # Same store folder; task toy/1 of the new run finds the lesson of the old run.
    _, mem, _ = run_toy(tmp_path, policy="always", words=["alpha", "beta"], max_trials=1)
    ev = {e["task_id"]: e for e in _events(tmp_path) if e["event"] == "begin_task"}
    assert first_id in [h["id"] for h in ev["toy/1"]["retrieved"]]
    # A task never sees its own lessons (toy/0 exists from the old run).
    assert all(h["task_id"] != "toy/0" for h in ev["toy/0"]["retrieved"])
    assert {r.task_id for r in mem.store.all()} == {"toy/0", "toy/1"}
    assert first_id in {r.id for r in mem.store.all()}


def test_baseline_run_without_memory_events_gets_the_same_similarity(tmp_path: Path) -> None:
    import asyncio

    from reflexion_bench.memory.base import WindowMemory

    ctx = RunContext(
        tasks=ToyEnvironment(words=WORDS).load_tasks(),
        roles=Roles(
            ToyActor(), ToyEvaluator(), ToyReflector(), ToyScorer(), Strategy(max_trials=2)
        ),
        services=Services(model=MockModel(responder=responder)),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="toy",
        run_dir=tmp_path,
        show_progress=False,
    )
    asyncio.run(execute(ctx))
    (tmp_path / "config.yaml").write_text(
        f"env:\n  _target_: tests.toy.ToyEnvironment\n  words: {json.dumps(WORDS)}\n"
    )
    rep = lifelong_report(tmp_path)
    assert rep["repeat_failure"]["similarity"].startswith("tfidf")
    # Without lessons every task fails its first trial the same way: all repeats.
    rf = rep["repeat_failure"]
    assert rf["exposed"] > 0 and rf["repeats"] == rf["exposed"]
    assert "gating" not in rep
