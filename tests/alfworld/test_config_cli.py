"""The ALFWorld configs compose and build, and `reflexion-bench run env=alfworld` runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from reflexion_bench.actors.alfworld import AlfWorldReActActor
from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.alfworld import AlfWorldEnvironment

ROOT = Path(__file__).resolve().parents[2]


def cfg(*overrides: str) -> DictConfig:
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_env_config_selects_the_alfworld_roles(shared_data: Path) -> None:
    c = cfg("env=alfworld", f"paths.data_dir={shared_data}", "limit=2")
    env = build(c.env, "env")
    assert isinstance(env, AlfWorldEnvironment) and env.version == "v2.1.2"
    assert env.memory_window == 3 and env.max_steps == 50 and env.max_repeats == 3
    assert len(env.load_tasks()) == 2
    actor = build(c.actor, "actor")
    assert isinstance(actor, AlfWorldReActActor) and actor.version == "v2.1.2"
    for key in ("evaluator", "scorer", "reflector"):
        assert type(build(c[key], key)).__module__.endswith(".alfworld")
    # The CLI can still pick another role.
    assert cfg("env=alfworld", "actor=react").actor._target_ != c.actor._target_


def test_v211_variant_and_the_paper_pack(shared_data: Path) -> None:
    c = cfg("env=alfworld_v211", f"paths.data_dir={shared_data}", "limit=1")
    env = build(c.env, "env")
    assert env.version == "v2.1.1" and env.load_tasks()[0].data["game_version"] == "v2.1.1"
    assert build(c.actor, "actor").version == "v2.1.1"
    pack = shared_data / "reflexion-original-prompts" / "alfworld_3prompts.json"
    ok = cfg("env=alfworld_v211", f"paths.data_dir={shared_data}", f"actor.prompts={pack}")
    assert build(ok.actor, "actor").external
    bad = cfg("env=alfworld", f"paths.data_dir={shared_data}", f"actor.prompts={pack}")
    with pytest.raises(ConfigError, match=r"actor\.prompts"):
        build(bad.actor, "actor")


@pytest.mark.slow
@pytest.mark.requires("alfworld")
def test_cli_run_writes_log_summary_curve(shared_data: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "env=alfworld",
            "model=mock",
            "model.responses=[inventory,inventory,inventory,Check the desks.]",
            "model.cycle=true",
            "sandbox=none",
            "limit=2",
            "strategy.max_trials=2",
            f"paths.data_dir={shared_data}",
            f"run_dir={run}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    recs = [json.loads(x) for x in (run / "log.jsonl").read_text().splitlines()]
    assert len(recs) == 4 and {r["benchmark"] for r in recs} == {"alfworld"}
    assert all(r["extra"]["alfworld"]["stop_reason"] == "repeated_action" for r in recs)
    assert [r["reflection"] for r in recs if r["trial"] == 1] == ["Check the desks."] * 2
    assert (run / "summary.json").is_file() and (run / "curve.png").stat().st_size > 0
    assert json.loads((run / "summary.json").read_text())["n_tasks"] == 2
