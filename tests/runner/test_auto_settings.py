"""`auto` settings of the embedded model and of max_concurrent_tasks (models/resources.py,
runner/auto.py): what they resolve to, and that the run records the numbers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.models.resources import (
    THREADS_ENV,
    auto_threads,
    available_cores,
    resolve_server,
)
from reflexion_bench.runner.auto import resolve_auto

OLD = [
    "model.n_threads=1",
    "model.n_parallel=1",
    "model.max_connections=1",
    "max_concurrent_tasks=1",
]
# The measured setting of the 0.5B on this 2-core machine (results/bench/server_options.json:
# 6 slots beat 4 and 8); the study runs pass these, and the defaults must equal them.
TWO_CORES = {"n_threads": 2, "n_parallel": 6, "n_ctx": 24576, "max_connections": 6}


def compose_cfg(*overrides: str) -> DictConfig:
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_two_quiet_cores_resolve_to_the_measured_setting() -> None:
    model = compose_cfg().model
    s = resolve_server(cores=2, environ={}, load=0.2, slots_per_core=model.slots_per_core)
    got = {k: getattr(s, k) for k in TWO_CORES}
    assert got == TWO_CORES
    # The benchmark's winner is what the default config says.
    import json

    bench = json.loads(
        (Path(__file__).resolve().parents[2] / "results/bench/server_options.json").read_text()
    )
    fastest = bench["results"]["server_options"]["embedded"]["fastest"]
    assert fastest == f"n_parallel={TWO_CORES['n_parallel']}"
    # Models the benchmark did not measure keep the generic 2 per core.
    for other in ("embedded_1_5b", "smollm2"):
        cfg = compose_cfg(f"model={other}").model
        assert (
            resolve_server(
                cores=2, environ={}, load=0.2, slots_per_core=cfg.slots_per_core
            ).n_parallel
            == 4
        )


@pytest.mark.parametrize(
    ("cores", "environ", "load", "threads"),
    [
        (2, {}, 0.0, 2),
        (8, {}, 3.0, 8),
        (2, {}, 2.3, 1),  # every core already busy: llama.cpp collapses with 2
        (1, {}, 5.0, 1),
        (4, {"CI": "true"}, 0.0, 1),
        (4, {THREADS_ENV: "3", "CI": "true"}, 9.0, 3),  # the variable wins
    ],
)
def test_auto_threads(cores: int, environ: dict[str, str], load: float, threads: int) -> None:
    assert auto_threads(cores, environ, load)[0] == threads


def test_slots_grow_with_cores_and_the_context_with_the_slots() -> None:
    small = resolve_server(cores=1, environ={}, load=0.0)
    big = resolve_server(cores=16, environ={}, load=0.0)
    assert (small.n_parallel, small.n_ctx) == (2, 8192)
    assert (big.n_parallel, big.n_ctx) == (8, 32768)  # capped at 8 slots
    three = resolve_server(cores=2, environ={}, load=0.0, slots_per_core=3)
    assert (three.n_parallel, three.n_ctx) == (6, 24576)
    with pytest.raises(ConfigError, match=r"model\.slots_per_core"):
        resolve_server(cores=2, slots_per_core=0)
    # Explicit slots: the context still follows them.
    assert resolve_server(n_parallel=3, cores=2, environ={}, load=0.0).n_ctx == 3 * 4096


def test_explicit_values_are_kept_and_bad_ones_name_the_key() -> None:
    s = resolve_server(n_threads=1, n_parallel=1, n_ctx=4096, max_connections=1, cores=2)
    assert (s.n_threads, s.n_parallel, s.n_ctx, s.max_connections) == (1, 1, 4096, 1)
    with pytest.raises(ConfigError, match=r"model\.n_parallel"):
        resolve_server(n_parallel=0, cores=2)
    with pytest.raises(ConfigError, match=THREADS_ENV):
        auto_threads(2, {THREADS_ENV: "two"}, 0.0)


def test_pytest_runs_the_embedded_model_on_one_thread() -> None:
    # tests/conftest.py sets the variable: tests share the cores.
    assert os.environ.get(THREADS_ENV) == "1"
    cfg = compose_cfg()
    resolve_auto(cfg)
    assert cfg.model.n_threads == 1
    assert cfg.model.n_parallel == min(8, 3 * available_cores())


def test_defaults_resolve_to_the_old_setting_when_asked() -> None:
    cfg = compose_cfg("experiment=quickstart", *OLD)
    resolve_auto(cfg)
    assert (cfg.model.n_threads, cfg.model.n_parallel, cfg.model.n_ctx) == (1, 1, 4096)
    assert (cfg.model.max_connections, cfg.max_concurrent_tasks) == (1, 1)


def test_concurrent_tasks_follow_the_slots_of_the_embedded_model() -> None:
    cfg = compose_cfg("experiment=quickstart", "model.n_parallel=3")
    resolve_auto(cfg)
    assert cfg.model.max_connections == 3
    assert cfg.max_concurrent_tasks == 3
    mock = compose_cfg("model=mock")
    resolve_auto(mock)
    assert mock.max_concurrent_tasks == 1  # other models: what the provider allows is the user's


@pytest.mark.parametrize(
    "overrides",
    [
        ["experiment=lifelong_code"],
        ["memory=lifelong"],
        ["env=alfworld"],
        ["experiment=memory_controls_humaneval"],
    ],
)
def test_sequential_experiments_keep_one_task_at_a_time(overrides: list[str]) -> None:
    cfg = compose_cfg(*overrides, "model.n_parallel=4")
    resolve_auto(cfg)
    assert cfg.max_concurrent_tasks == 1
    assert cfg.model.n_parallel == 4  # the server keeps its slots (the reflector may use them)


def test_a_model_built_directly_resolves_auto_the_same_way() -> None:
    model = build(compose_cfg("model.n_parallel=3").model, "model")
    assert model.client.n_parallel == 3
    assert model.client.n_ctx == 3 * 4096
    assert model.max_connections == 3
    # The cache key sees the resolved numbers.
    assert model.client.identity()["server"]["n_ctx"] == 3 * 4096


def test_auto_connections_are_only_for_the_embedded_model() -> None:
    cfg = compose_cfg("model=openai", "model.max_connections=auto")
    with pytest.raises(ConfigError, match=r"model\.max_connections"):
        resolve_auto(cfg)


def test_the_run_records_the_resolved_numbers(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    run_dir = tmp_path / "r"
    # `limit=0` selects no task: the run stops at its first check, after the config
    # (resolved) is saved, without loading the model. A folder that held a file before
    # the run is kept when the run fails at start (a fresh one would be removed).
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("kept\n")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "experiment=quickstart",
            "limit=0",
            f"run_dir={run_dir}",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, THREADS_ENV: "1"},
    )
    assert out.returncode == 2, out.stderr
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    cores = available_cores()
    assert saved["model"]["n_threads"] == 1
    assert saved["model"]["n_parallel"] == min(8, 3 * cores)
    assert saved["model"]["n_ctx"] == 4096 * min(8, 3 * cores)
    assert saved["max_concurrent_tasks"] == saved["model"]["max_connections"]
    assert "settings: model: n_threads=1" in out.stderr


def test_poll_is_a_server_setting_not_an_identity() -> None:
    base = build(compose_cfg().model, "model").client
    polled = build(compose_cfg("model.poll=0").model, "model").client
    assert polled.poll == 0 and base.poll is None
    assert polled.identity() == base.identity()  # speed only: the cache key is the same
    with pytest.raises(ConfigError, match=r"model\.poll"):
        build(compose_cfg("model.poll=101").model, "model")
