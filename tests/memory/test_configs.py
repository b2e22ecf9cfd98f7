"""The memory configs compose and build: lifelong memory, reflectors, strategy, experiment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.memory.lifelong import LifelongMemory, TaskLifelongMemory
from reflexion_bench.memory.lifelong.retrieval import RetrievalConfig


@pytest.fixture(autouse=True)
def _clear_hydra() -> Iterator[None]:
    GlobalHydra.instance().clear()
    yield
    GlobalHydra.instance().clear()


def _compose(*overrides: str) -> DictConfig:
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_lifelong_bm25_memory_builds_a_factory(tmp_path: Path) -> None:
    cfg = _compose(
        "env=humaneval",
        "memory=lifelong_bm25",
        f"memory.store={tmp_path}/store",
        "memory.events_path=null",
        "memory.gating.policy=failures",
    )
    factory = build(cfg.memory, "memory")
    assert isinstance(factory, LifelongMemory)
    assert isinstance(factory.retrieval, RetrievalConfig) and factory.retrieval.mode == "bm25"
    assert factory.gating.policy == "failures" and factory.decay.archive_after_days == 90
    assert factory.retrieval.salience.archived == 0.3
    # The env's reflector is built again for post-task lessons.
    assert type(factory.reflector).__name__ == "CodeReflector"
    assert isinstance(factory(window=1), TaskLifelongMemory)
    assert (tmp_path / "store" / "reflections").is_dir()


def test_bad_retrieval_mode_is_a_config_error(tmp_path: Path) -> None:
    from reflexion_bench.core.errors import ConfigError

    cfg = _compose(
        "memory=lifelong_bm25",
        f"memory.store={tmp_path}",
        "memory.events_path=null",
        "memory.retrieval.mode=cosine",
    )
    with pytest.raises(ConfigError, match=r"memory\.retrieval\.mode"):
        build(cfg.memory, "memory")


@pytest.mark.parametrize(
    ("option", "variant"), [("structured", "why_rule"), ("structured_repro", "repro")]
)
def test_structured_reflector_configs(option: str, variant: str) -> None:
    cfg = _compose("env=humaneval", f"reflector={option}")
    assert build(cfg.reflector, "reflector").variant == variant


def test_circuit_breaker_config() -> None:
    cfg = _compose("strategy=circuit_breaker", "strategy.max_trials=4")
    s = build(cfg.strategy, "strategy")
    assert (s.name, s.max_trials, s.probe_after, s.stop_after) == ("circuit_breaker", 4, 2, 3)


def test_lifelong_experiment_streams_humaneval_and_mbpp(
    shared_data: Path, project_root: Path
) -> None:
    cfg = _compose(
        "experiment=lifelong_code",
        "per_env_limit=3",
        f"paths.data_dir={shared_data}",
    )
    assert cfg.max_concurrent_tasks == 1
    assert cfg.memory._target_.endswith("LifelongMemory") and cfg.memory.retrieval.mode == "hybrid"
    assert cfg.actor._target_.endswith("CodeActor") and cfg.scorer._target_.endswith("CodeScorer")
    env = build(cfg.env, "env")
    tasks = env.load_tasks()
    assert len(tasks) == 6 and {t.benchmark for t in tasks} == {"humaneval", "mbpp"}
    again = build(
        _compose(
            "experiment=lifelong_code", "per_env_limit=3", f"paths.data_dir={shared_data}"
        ).env,
        "env",
    ).load_tasks()
    assert [t.id for t in again] == [t.id for t in tasks]  # a fixed seeded order


def test_baseline_experiment_is_the_same_stream_with_window_memory() -> None:
    cfg = _compose("experiment=lifelong_code_baseline")
    assert cfg.memory._target_.endswith("WindowMemory")
    assert cfg.env._target_.endswith("StreamEnvironment") and cfg.max_concurrent_tasks == 1
