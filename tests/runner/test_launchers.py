"""Launcher configs compose and instantiate without a cluster; Ray runs a tiny sweep
when its separate environment exists (hydra-ray-launcher pins cloudpickle<3, so it
cannot live in the main environment)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.runner.sweep import job_counts, read_index

ROOT = Path(__file__).resolve().parents[2]
RAY_PYTHON = Path(
    os.environ.get("REFLEXION_BENCH_RAY_PYTHON", ROOT / ".venv-ray" / "bin" / "python")
)


def launcher_cfg(option: str):  # type: ignore[no-untyped-def]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"hydra/launcher={option}"], return_hydra_config=True)
    return cfg.hydra.launcher


def test_slurm_launcher_composes_and_instantiates() -> None:
    node = launcher_cfg("slurm")
    assert node.cpus_per_task == 4 and node.timeout_min == 240
    launcher = instantiate(node)
    assert type(launcher).__name__ == "SlurmLauncher"


def test_local_parallel_launcher_instantiates() -> None:
    node = launcher_cfg("local_parallel")
    assert node.n_jobs == 2
    assert type(instantiate(node)).__name__ == "JoblibLauncher"


def test_ray_launcher_config_composes() -> None:
    node = launcher_cfg("ray_local")
    assert node._target_.endswith("RayLauncher")
    assert node.ray.init.address == "local"  # never joins a cluster already running here


def test_ray_cluster_launcher_config_composes() -> None:
    # For a running cluster: `auto` joins one and never starts a local Ray; Ray refuses
    # num_cpus and object_store_memory when it joins one (hydra-ray-launcher adds the
    # latter unless set).
    node = launcher_cfg("ray_cluster")
    assert node._target_.endswith("RayLauncher")
    assert node.ray.init.address == "auto"
    assert node.ray.init.num_cpus is None and node.ray.init.object_store_memory is None
    assert node.ray.remote.max_calls == 1


@pytest.mark.slow
def test_local_ray_sweep(tmp_path: Path) -> None:
    if not RAY_PYTHON.exists():
        pytest.skip(f"no Ray environment at {RAY_PYTHON} (bash scripts/setup.sh --ray creates it)")
    out = subprocess.run(
        [
            str(RAY_PYTHON),
            "-m",
            "reflexion_bench.cli",
            "run",
            "-m",
            "hydra/launcher=ray_local",
            f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
            "env=toy",
            "model=toy",
            "sandbox=none",
            "strategy=simple,reflexion",
            f"paths.results_dir={tmp_path}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    sweep = tmp_path / "sweeps" / "default"
    assert len(list(sweep.glob("*/log.jsonl"))) == 2
    assert job_counts(read_index(sweep))["done"] == 2
