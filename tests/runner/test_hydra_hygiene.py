"""Hydra hygiene: output-only overrides keep a sweep job's folder (it resumes), W&B
runs of a sweep are grouped by the sweep and tagged with the overrides, `+key`
overrides nothing reads are refused, and the sweep's job lines are stable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from reflexion_bench.config import CONFIG_DIR, redact_dirname
from reflexion_bench.runner.overrides import unread_additions
from reflexion_bench.trackers import sweep_tags

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
GRID = ["env=toy", "model=toy", "sandbox=none", "strategy=simple,reflexion", "limit=2"]


def sweep(results: Path, *extra: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "-m",
            SEARCH,
            *GRID,
            *extra,
            f"paths.results_dir={results}",
            "sweep_name=hyg",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stderr


def job_dirs(results: Path) -> set[str]:
    return {p.parent.name for p in (results / "sweeps" / "hyg").glob("*/log.jsonl")}


def test_output_only_overrides_keep_the_job_folders_and_resume(tmp_path: Path) -> None:
    sweep(tmp_path, "progress=false")
    first = job_dirs(tmp_path)
    assert len(first) == 2
    logs = {d: (tmp_path / "sweeps" / "hyg" / d / "log.jsonl").read_text() for d in first}
    err = sweep(
        tmp_path,
        "logger=wandb",
        "logger.mode=disabled",
        "progress=true",
        env={"WANDB_DIR": str(tmp_path / "wandb")},
    )
    assert job_dirs(tmp_path) == first  # no new job folder
    # Resumed, not re-run: the logs did not grow.
    for d in first:
        assert (tmp_path / "sweeps" / "hyg" / d / "log.jsonl").read_text() == logs[d]
    # Every progress line names its job's overrides.
    progress = [line for line in err.splitlines() if re.match(r"\[job \d+: ", line)]
    assert progress and all("strategy=" in line for line in progress)


def test_dirname_leaves_out_output_only_keys() -> None:
    name = "env=toy,logger=wandb,logger.mode=offline,+logger.tags=[a],progress=false,seed=1"
    assert redact_dirname(name) == "env=toy,seed=1"


def test_sweep_job_lines_name_the_job_and_counts_only_grow(tmp_path: Path) -> None:
    err = sweep(tmp_path, "progress=false", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    lines = [line for line in err.splitlines() if line.startswith("[sweep job ")]
    assert len(lines) == 4  # 2 jobs x (start, end)
    nums = {re.match(r"\[sweep job (\d+): ", line).group(1) for line in lines}  # type: ignore[union-attr]
    assert nums == {"0", "1"}
    done = [int(re.search(r"jobs done (\d+)", line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert done == sorted(done) and done[-1] == 2


@pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import wandb"], capture_output=True).returncode != 0,
    reason="wandb is not installed",
)
def test_wandb_runs_of_a_sweep_get_the_sweep_as_group_and_overrides_as_tags(
    tmp_path: Path,
) -> None:
    wandb_dir = tmp_path / "wandb"
    sweep(
        tmp_path,
        "progress=false",
        "logger=wandb",
        "logger.mode=offline",
        env={"WANDB_DIR": str(wandb_dir), "WANDB_SILENT": "true"},
    )
    runs = sorted(wandb_dir.rglob("*.wandb"))
    assert len(runs) == 2
    for run in runs:
        data = run.read_bytes()  # the offline run's records: group and tags in clear
        assert b"hyg" in data
        assert b"limit=2" in data and b"env=toy" in data
        assert b"logger=wandb" not in data  # output-only overrides are not tags


def test_sweep_tags_skip_output_only_overrides_and_fit_wandb() -> None:
    tags = sweep_tags(["strategy=retry", "logger=wandb", "progress=false", "x=" + "a" * 100])
    assert tags[0] == "strategy=retry" and len(tags) == 2
    assert len(tags[1]) == 64


def test_added_keys_nothing_reads_are_reported() -> None:
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=["+foo=1", "+generate.temprature=0.5", "+generate.seed=3", "+strategy.x=1"],
        )
    unread = unread_additions(
        cfg, ["+foo=1", "+generate.temprature=0.5", "+generate.seed=3", "+strategy.x=1"]
    )
    # strategy.x reaches the Strategy constructor (which refuses it, naming the key).
    assert unread == ["+foo=1", "+generate.temprature=0.5"]


def test_the_cli_refuses_a_misspelled_added_key(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            SEARCH,
            "env=toy",
            "model=toy",
            "sandbox=none",
            "+max_trails=3",
            f"run_dir={tmp_path / 'r'}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Issue 32: a warning was easy to miss and the key ended up in config.yaml as if it
    # had been used; it is now an error at start, and nothing ran.
    assert out.returncode == 2, out.stderr
    assert "error: `+max_trails=3`" in out.stderr
    assert "added a key that nothing in this run reads" in out.stderr
    assert not (tmp_path / "r" / "log.jsonl").exists()
