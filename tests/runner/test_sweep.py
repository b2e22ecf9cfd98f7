"""Sweeps: Hydra multirun with the joblib launcher, the sweep index, and SIGKILL/resume."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.runner.sweep import job_counts, read_index

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
WORDS = "[" + ",".join(f"w{i:02d}" for i in range(24)) + ",zeta]"


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "reflexion_bench.cli", *args]


GRID = [
    "env=toy",
    "model=toy",
    "sandbox=none",
    "strategy=simple,reflexion",
    "seed=0,1",
    "limit=2,3",
]


def run_grid(results: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli("run", "-m", *extra, SEARCH, *GRID, f"paths.results_dir={results}", "progress=false"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_joblib_multirun_2x2x2_gives_8_run_folders_and_index(tmp_path: Path) -> None:
    out = run_grid(tmp_path, "hydra/launcher=local_parallel")
    assert out.returncode == 0, out.stderr[-3000:]
    sweep = tmp_path / "sweeps" / "default"
    runs = sorted(p.parent for p in sweep.glob("*/log.jsonl"))
    assert len(runs) == 8
    # Folder names come from the overrides, so a re-run finds the same jobs.
    assert (sweep / "env=toy,limit=3,model=toy,sandbox=none,seed=1,strategy=simple").is_dir()
    index = read_index(sweep)
    assert job_counts(index) == {"done": 8, "running": 0, "failed": 0}
    for run in runs:
        summary = json.loads((run / "summary.json").read_text())
        limit = 2 if "limit=2" in run.name else 3
        assert summary["n_tasks"] == limit
        assert summary["strategy"] == ("simple" if "strategy=simple" in run.name else "reflexion")

    # Re-running the same sweep (basic launcher this time) resumes every job and redoes
    # nothing: no log gains a line.
    logs_before = {run: (run / "log.jsonl").read_bytes() for run in runs}
    again = run_grid(tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {run: (run / "log.jsonl").read_bytes() for run in runs} == logs_before


def essence(run_dir: Path) -> list[tuple[object, ...]]:
    return sorted(
        (
            r["task_id"],
            r["trial"],
            r["candidate"],
            r["hidden"]["passed"],
            r["reflection"],
            r["final"],
        )
        for r in load_run_records(run_dir)
    )


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_matches_uninterrupted_run(tmp_path: Path) -> None:
    common = [
        "run",
        SEARCH,
        "env=toy",
        "model=toy",
        "sandbox=none",
        f"env.words={WORDS}",
        "model.latency_s=0.03",
        "max_concurrent_tasks=4",
        "strategy.max_trials=3",
        "progress=false",
    ]
    ref = tmp_path / "reference"
    done = subprocess.run(
        cli(*common, f"run_dir={ref}"), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    n_lines = len((ref / "log.jsonl").read_text().splitlines())

    rng = random.Random(1234)
    run = tmp_path / "killed"
    kills = 0
    for point in sorted(rng.sample(range(2, n_lines - 2), 3)):
        proc = subprocess.Popen(
            cli(*common, f"run_dir={run}"),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        log = run / "log.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if log.exists() and len(log.read_text().splitlines()) >= point:
                os.kill(proc.pid, signal.SIGKILL)
                kills += 1
                break
            time.sleep(0.005)
        proc.wait(timeout=60)
    assert kills >= 1
    final = subprocess.run(
        cli(*common, f"run_dir={run}"), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert final.returncode == 0, final.stderr[-3000:]
    assert essence(run) == essence(ref)
