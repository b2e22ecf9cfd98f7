"""The frozen-first-attempt protocol: every variant gets the source run's trial 1."""

from __future__ import annotations

from pathlib import Path

from reflexion_bench.strategies import (
    FrozenFirstAttemptActor,
    FrozenFirstFeedbackEvaluator,
    IrrelevantTextStrategy,
    Strategy,
    WrongReflectionStrategy,
)
from tests.strategies.toyrun import SCRIPTS, actor_prompts, by_task, run_toy
from tests.toy import ToyActor, ToyEvaluator

# What the actor would answer live in the variant runs: if trial 1 were not frozen,
# trial 1 would differ from the source (each script lost its first reply).
LIVE_SCRIPTS = {w: s[1:] or s for w, s in SCRIPTS.items()}


def variants(source: Path) -> dict[str, Strategy]:
    return {
        "retry": Strategy(name="retry", memory_content="none"),
        "raw_log": Strategy(name="raw_log", memory_content="raw_log"),
        "reflexion": Strategy(name="reflexion", memory_content="reflection"),
        "raw_log_and_reflexion": Strategy(
            name="raw_log_and_reflexion", memory_content="raw_log_and_reflection"
        ),
        "wrong_reflection": WrongReflectionStrategy(source_run=str(source)),
        "irrelevant_text": IrrelevantTextStrategy(),
    }


def first_trial_view(rec: dict) -> tuple:  # type: ignore[type-arg]
    return (
        rec["task_id"],
        rec["candidate"],
        rec["prompt"],
        rec["self_test"]["passed"],
        rec["self_test"]["text"],
        rec["hidden"]["passed"],
    )


async def test_every_variant_starts_from_the_same_first_attempt(tmp_path: Path) -> None:
    source = tmp_path / "source"
    _, src_records = await run_toy(source, Strategy(name="reflexion"))
    src_first = {r["task_id"]: r for r in src_records if r["trial"] == 1}

    firsts: dict[str, dict[str, tuple]] = {}  # type: ignore[type-arg]
    for name, strategy in variants(source).items():
        model, records = await run_toy(
            tmp_path / name,
            strategy,
            scripts=LIVE_SCRIPTS,
            actor=FrozenFirstAttemptActor(ToyActor(), source),
            evaluator=FrozenFirstFeedbackEvaluator(ToyEvaluator(), source),
        )
        per_task = by_task(records)
        # Logged under the inner evaluator's name: the controls are in the arm of the
        # source run, whose feedback they replay (reports compare within an arm).
        assert {r["evaluator"] for r in records} == {r["evaluator"] for r in src_records}
        firsts[name] = {tid: first_trial_view(recs[0]) for tid, recs in per_task.items()}
        for tid, recs in per_task.items():
            first = recs[0]
            assert first["extra"]["frozen"] is True
            # The replayed actor call is counted (cached) with the source's tokens.
            (call,) = [c for c in first["model_calls"] if c["role"] == "actor"]
            (src_call,) = [c for c in src_first[tid]["model_calls"] if c["role"] == "actor"]
            assert call["cached"] is True
            assert call["prompt_tokens"] == src_call["prompt_tokens"]
            assert call["completion_tokens"] == src_call["completion_tokens"]
            # ...and what it cost and took when it ran live (as run live, not 0).
            assert call["latency_s"] == src_call["latency_s"]
            assert call["cost_usd"] == src_call["cost_usd"]
            # No live actor call for trial 1: one actor prompt per later trial.
            word = {"toy/0": "alpha", "toy/1": "beta", "toy/2": "gamma", "toy/3": "delta"}[tid]
            assert len(actor_prompts(model, word)) == len(recs) - 1
        # Trial 2 differs by variant but is built on the frozen failure.
        beta2 = per_task["toy/1"][1]
        if name == "retry":
            assert beta2["memory_shown"] == []
        if name == "raw_log":
            assert "wrongB1" in beta2["memory_shown"][0]

    reference = {tid: first_trial_view(r) for tid, r in src_first.items()}
    for name, view in firsts.items():
        assert view == reference, name


async def test_logged_feedback_wins_over_a_different_live_verdict(tmp_path: Path) -> None:
    # The source's strict check failed "bogus"; the variant's lenient check (first
    # letter right) would pass it live: the logged verdict must be the one used.
    source = tmp_path / "source"
    await run_toy(
        source, Strategy(name="reflexion"), words=["beta"], scripts={"beta": ["bogus", "beta"]}
    )
    _, records = await run_toy(
        tmp_path / "variant",
        Strategy(name="retry", memory_content="none"),
        words=["beta"],
        scripts={"beta": ["beta"]},
        actor=FrozenFirstAttemptActor(ToyActor(), source),
        evaluator=FrozenFirstFeedbackEvaluator(ToyEvaluator(lenient=True), source),
    )
    first = records[0]
    assert first["candidate"] == "bogus"
    assert first["self_test"]["passed"] is False  # as logged, although the live check passed
    assert first["self_test"]["details"]["live_passed"] is True
    assert first["self_test"]["details"]["live_matches_logged"] is False
    assert len(records) == 2 and records[1]["candidate"] == "beta"


async def test_tasks_missing_from_the_source_run_live_or_fail(tmp_path: Path) -> None:
    source = tmp_path / "source"
    await run_toy(source, Strategy(name="reflexion"), words=["alpha", "beta"])
    _, records = await run_toy(
        tmp_path / "live",
        Strategy(name="retry", memory_content="none"),
        actor=FrozenFirstAttemptActor(ToyActor(), source),
        evaluator=FrozenFirstFeedbackEvaluator(ToyEvaluator(), source),
    )
    firsts = {r["task_id"]: r for r in records if r["trial"] == 1}
    assert firsts["toy/0"]["extra"]["frozen"] is True
    assert firsts["toy/2"]["extra"]["frozen"] is False
    assert firsts["toy/2"]["candidate"] == "gamma"  # ran live

    _, records = await run_toy(
        tmp_path / "strict",
        Strategy(name="retry", memory_content="none"),
        actor=FrozenFirstAttemptActor(ToyActor(), source, require=True),
        evaluator=FrozenFirstFeedbackEvaluator(ToyEvaluator(), source),
    )
    errors = {r["task_id"]: r["error"] for r in records if r["error"]}
    assert set(errors) == {"toy/2", "toy/3"}
    assert "no usable trial 1 for toy/2" in errors["toy/2"]


async def test_source_read_again_after_it_grows(tmp_path: Path) -> None:
    """In a sequential multirun the source folder is written by an earlier job of the
    same process; a later job must see it (no stale per-process cache)."""
    source = tmp_path / "source"
    actor = FrozenFirstAttemptActor(ToyActor(), source)
    _, first = await run_toy(
        tmp_path / "before",
        Strategy(name="retry", memory_content="none"),
        actor=actor,
        words=["alpha"],
    )
    assert first[0]["extra"]["frozen"] is False
    await run_toy(source, Strategy(name="reflexion"), words=["alpha"])
    _, second = await run_toy(
        tmp_path / "after",
        Strategy(name="retry", memory_content="none"),
        actor=actor,
        words=["alpha"],
        scripts=LIVE_SCRIPTS,
    )
    assert second[0]["extra"]["frozen"] is True
    assert second[0]["candidate"] == "wrongA"
