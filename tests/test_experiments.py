"""Every experiment file composes, instantiates every configured object, and smoke-runs
end to end with the debug preset and a scripted model (lightning-hydra-template style).

The scripted model answers every call with the same unhelpful text, so the smoke run
exercises each benchmark's failure paths (unparsable code, invalid actions) as well.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.runner.run import build_context

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))
# Experiments whose objects need optional extras or a prior source run.
NEEDS = {
    "alfworld_reflexion": "alfworld",
    "lifelong_code": "sentence_transformers",
}


def _marked(names: list[str]) -> list[object]:
    """alfworld is a required component (tests/components.py): a failure under CI=true."""
    return [
        pytest.param(n, marks=pytest.mark.requires("alfworld")) if NEEDS.get(n) == "alfworld" else n
        for n in names
    ]


MOCK = ["model=mock", "model.responses=[I am not sure.]", "model.cycle=true"]


def _skip_without(name: str) -> None:
    mod = NEEDS.get(name)
    # find_spec, not importorskip: importing alfworld sets ALFWORLD_DATA process-wide.
    if mod and importlib.util.find_spec(mod) is None:
        pytest.skip(f"experiment {name} needs the `{mod}` package")


def test_there_are_paper_experiments() -> None:
    for name in (
        "table1_humaneval_py",
        "table1_mbpp_py",
        "table3_rust_ablation",
        "alfworld_reflexion",
        "hotpotqa_reflexion",
        "memory_controls_humaneval",
        "quickstart",
    ):
        assert name in EXPERIMENTS


@pytest.mark.parametrize("name", _marked(EXPERIMENTS))
def test_experiment_composes_and_instantiates(name: str, shared_data: Path, tmp_path: Path) -> None:
    _skip_without(name)
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        # As configured (real providers are built, not started: no key needed) ...
        cfg = compose(
            "config",
            overrides=[f"experiment={name}", f"paths.cache_dir={tmp_path}"],
            return_hydra_config=True,
        )
    # As in the app: `${hydra:...}` interpolations (run names, run-folder paths) resolve
    # against it; compose() leaves the output dir unset, so point it at tmp_path.
    with open_dict(cfg):
        cfg.hydra.runtime.output_dir = str(tmp_path)
    HydraConfig.instance().set_config(cfg)
    ctx = build_context(cfg, tmp_path)
    assert ctx.tasks, name
    assert ctx.roles.strategy.max_trials >= 1
    if ctx.services.sandbox is not None:
        import asyncio

        asyncio.run(ctx.services.sandbox.aclose())


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", _marked([e for e in EXPERIMENTS if e != "memory_controls_humaneval"])
)
def test_experiment_smoke_runs_with_debug_limits(
    name: str, shared_data: Path, tmp_path: Path
) -> None:
    _skip_without(name)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            f"experiment={name}",
            "debug=default",
            *MOCK,
            f"run_dir={tmp_path / 'run'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_tasks"] >= 1
    assert summary["totals"]["trials"] <= 2 * summary["n_tasks"]  # the debug cap holds
