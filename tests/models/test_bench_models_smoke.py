"""scripts/bench_models.py part 6 end to end at smoke size (smollm2, one task, one
trial): every variant named in the JSON, each a real quickstart run. The variant names
hold '=' and '+', which once reached Hydra inside a run_dir override and failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_server_options_part_runs_every_variant(tmp_path: Path) -> None:
    out = tmp_path / "server_options.json"
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "bench_models.py"),
        "--embedded",
        "--skip-layer",
        "--models",
        "smollm2",
        "--parts",
        "6",
        "--tasks",
        "1",
        "--rounds",
        "1",
        "--settle-s",
        "0",
        "--variants",
        "kv_unified+n_cache_reuse=256,n_parallel=6",
        "--quickstart-extra",
        "generate.max_tokens=32 strategy.max_trials=1 model.n_threads=1",
        "--json",
        str(out),
    ]
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, env={**os.environ}
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    data = json.loads(out.read_text())
    part = data["results"]["server_options"]["smollm2"]
    assert set(part["tasks_per_h"]) == {"defaults", "kv_unified+n_cache_reuse=256", "n_parallel=6"}
    assert all(v > 0 for v in part["tasks_per_h"].values())
    runs = {r["variant"]: r for r in part["runs"]}
    # The slot override reached the run (its saved config), the defaults did not take it.
    assert "/6 slot/" in runs["n_parallel=6"]["resolved"]
    assert "/6 slot/" not in runs["defaults"]["resolved"]
    assert part["ratio_vs_defaults"]["defaults"] == 1.0


@pytest.mark.network_local
def test_pool_part_measures_one_two_three_servers_in_one_run(tmp_path: Path) -> None:
    out = tmp_path / "model_pool.json"
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "bench_models.py"),
        "--skip-layer",
        "--pool",
        "--pool-rounds",
        "1",
        "--pool-calls",
        "6",
        "--pool-latency",
        "0.1",
        "--json",
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    data = json.loads(out.read_text())
    assert {"command", "date", "machine", "load_before", "load_after"} <= set(data)
    part = data["results"]["model_pool"]
    assert [r["servers"] for r in part["runs"]] == [1, 2, 3]
    for run in part["runs"]:
        # Every timed call was served, spread over exactly the pool's servers.
        assert sum(run["calls_by_endpoint"]) == run["calls"] == 6 * run["servers"]
        assert len(run["calls_by_endpoint"]) == run["servers"]
    assert part["ratio_vs_1"]["1"] == 1.0
    assert part["ratio_vs_1"]["3"] == round(part["calls_per_s"]["3"] / part["calls_per_s"]["1"], 3)
