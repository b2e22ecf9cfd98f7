"""A 2-shard sweep on a running two-node Ray cluster through hydra-ray-launcher (issue
34): the launcher joins the cluster (never starts a Ray of its own), both shards run as
Ray tasks there, and the sweep's merged report equals the unsharded run's. The cluster
is scripts/ci/ray.sh's (scripts/test.sh starts it); the launcher lives in .venv-ray
(hydra-ray-launcher pins cloudpickle<3)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.cluster.conftest import EXPERIMENT, assert_merged_report_equals_unsharded, cli, env_for
from tests.cluster.conftest import run as run_cli
from tests.components import RAY_ADDRESS, RAY_PYTHON

#: scripts/ci/ray.sh's cluster requires Ray's token (~/.ray/auth_token); a driver that
#: joins it must be told to send it.
RAY_ENV = {"RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0"}

ALIVE_NODES = """
import json, ray
ray.init(address={address!r}, logging_level="ERROR")
print(json.dumps(sum(1 for n in ray.nodes() if n["Alive"])))
"""


def alive_nodes(env: dict[str, str]) -> int:
    proc = subprocess.run(
        [str(RAY_PYTHON), "-c", ALIVE_NODES.format(address=RAY_ADDRESS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return int(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
@pytest.mark.requires("ray")
def test_ray_shards(tmp_path: Path, unsharded: dict) -> None:
    env = env_for(tmp_path, **RAY_ENV)
    assert alive_nodes(env) == 2  # scripts/ci/ray.sh: a head and one worker node
    proc = run_cli(
        [
            *cli(RAY_PYTHON),
            "run",
            "-m",
            "hydra/launcher=ray_cluster",
            f"hydra.launcher.ray.init.address={RAY_ADDRESS}",
            "shard=0/2,1/2",
            *EXPERIMENT,
            f"paths.results_dir={tmp_path}",
            "sweep_name=sharded",
        ],
        env,
        timeout=600,
    )
    # The launcher joined the running cluster, and the jobs ran there as Ray tasks
    # (their output comes back prefixed with the remote function's name and pid).
    assert "Connected to Ray cluster" in proc.stderr, proc.stderr[-3000:]
    assert "Started a local Ray instance" not in proc.stderr
    # max_calls: 1 (ray_local.yaml): each job in a fresh worker process.
    assert len(set(re.findall(r"\(_run_job pid=(\d+)", proc.stderr))) == 2, proc.stderr[-3000:]
    assert_merged_report_equals_unsharded(tmp_path / "sweeps" / "sharded", unsharded, env)
    assert alive_nodes(env) == 2  # and left it as it was
