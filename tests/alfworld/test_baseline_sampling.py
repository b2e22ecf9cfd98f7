"""The ALFWorld baseline samples (issue 32): with the response cache on and the run's
temperature 0, a retry with no memory that stayed greedy would replay trial 1 every
trial and could not improve by construction. The experiments' retries sample, each
trial its own cache key, so a later trial can differ from the first."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.core.state import Services
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies.base import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ("alfworld_reflexion", "alfworld_paper")


def strategy_of(experiment: str, strategy: str) -> Strategy:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={experiment}", f"strategy={strategy}"])
    built = build(cfg.strategy, "strategy")
    assert isinstance(built, Strategy)
    return built


def sampled_reply(messages: Sequence[Message], config: GenerateConfig) -> str:
    # A model whose greedy answer is wrong; a sample may be right (here: the third).
    if config.temperature == 0:
        return "wrong"
    return "alpha" if config.sample_index == 2 else f"wrong{config.sample_index}"


async def run_retry(strategy: Strategy, run_dir: Path) -> list[dict[str, Any]]:
    model = ModelLayer(
        MockModel(responder=sampled_reply),
        cache="read_write",
        cache_path=str(run_dir.parent / f"{run_dir.name}.sqlite"),
    )
    ctx = RunContext(
        tasks=ToyEnvironment(["alpha"]).load_tasks(),
        roles=Roles(
            actor=ToyActor(),
            evaluator=ToyEvaluator(),
            reflector=ToyReflector(),
            scorer=ToyScorer(),
            strategy=strategy,
        ),
        services=Services(model=model, budget=TaskBudget()),
        memory_factory=WindowMemory,
        memory_window=3,
        benchmark="toy",
        run_dir=run_dir,
        max_concurrent_tasks=1,
        show_progress=False,
    )
    await execute(ctx)
    await model.aclose()
    return sorted(load_run_records(run_dir), key=lambda r: int(r["trial"]))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_the_baseline_is_retry_and_samples_its_retries(experiment: str) -> None:
    s = strategy_of(experiment, "retry")
    assert s.name == "retry" and s.memory_content == "none" and s.max_trials > 1
    assert s.retry_temperature is not None and s.retry_temperature > 0
    # Both arms sample alike: they differ in the memory only.
    assert strategy_of(experiment, "reflexion").retry_temperature == s.retry_temperature


@pytest.mark.parametrize("experiment", EXPERIMENTS)
async def test_the_baseline_can_improve_where_a_greedy_one_replays(
    experiment: str, tmp_path: Path
) -> None:
    sampled = strategy_of(experiment, "retry")
    greedy = Strategy(**{**vars(sampled), "retry_temperature": None})
    replayed = await run_retry(greedy, tmp_path / "greedy")
    # Greedy with the cache on: every retry is trial 1's request again, answered from
    # the cache, the same wrong answer K times.
    assert len(replayed) == sampled.max_trials
    assert {r["candidate"] for r in replayed} == {"wrong"}
    assert all(c["cached"] for r in replayed[1:] for c in r["model_calls"])
    improved = await run_retry(sampled, tmp_path / "sampled")
    # Sampled: each retry is a live call of its own, and the third trial is right.
    assert [r["candidate"] for r in improved] == ["wrong", "wrong1", "alpha"]
    assert improved[-1]["hidden"]["passed"] is True
    assert not any(c["cached"] for r in improved for c in r["model_calls"])
    assert [(r.get("extra") or {}).get("actor_temperature") for r in improved] == [
        None,
        sampled.retry_temperature,
        sampled.retry_temperature,
    ]


@pytest.mark.requires("alfworld")
def test_alfworld_retry_run_samples_later_trials(shared_data: Path, tmp_path: Path) -> None:
    """The experiment itself, on a real game with the mock model: trials 2..K of the
    baseline's actor are sampled, each trial with its own sample index."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "experiment=alfworld_reflexion",
            "strategy=retry",
            "model=mock",
            "limit=1",
            "max_trials_cap=3",
            "env.workers=1",
            "max_concurrent_tasks=1",
            f"run_dir={tmp_path / 'run'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    records = sorted(load_run_records(tmp_path / "run"), key=lambda r: int(r["trial"]))
    assert [r["trial"] for r in records] == [1, 2, 3]
    # Trial 1: the run's own (greedy) setting; trials 2..K: sampled, own sample indexes.
    assert "actor_temperature" not in json.dumps(records[0].get("extra") or {})
    indexes = []
    for r in records[1:]:
        assert r["extra"]["actor_temperature"] > 0
        indexes.append(r["extra"]["actor_sample_index"])
    assert len(set(indexes)) == len(indexes)
