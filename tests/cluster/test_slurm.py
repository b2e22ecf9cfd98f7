"""A 2-shard sweep on a real (single-node) SLURM cluster through hydra-submitit-launcher
(issue 34): both shards run as jobs of one SLURM array, and the sweep's merged report
equals the unsharded run's. The cluster is scripts/ci/slurm.sh's (scripts/test.sh
starts it as root)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.conftest import EXPERIMENT, assert_merged_report_equals_unsharded, cli, env_for
from tests.cluster.conftest import run as run_cli


def slurm_config() -> dict[str, str]:
    """``scontrol show config`` as a dict (``JobCompType``, ``JobCompLoc``, ...)."""
    out = subprocess.run(
        ["scontrol", "show", "config"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^(\w+)\s*=\s*(.*)$", out, re.M)}


@pytest.mark.slow
@pytest.mark.requires("slurm")
def test_slurm_shards(tmp_path: Path, unsharded: dict) -> None:
    env = env_for(tmp_path)
    run_cli(
        [
            *cli(sys.executable),  # submitit runs each job with this same interpreter
            "run",
            "-m",
            "hydra/launcher=slurm",
            "hydra.launcher.partition=debug",
            "hydra.launcher.cpus_per_task=1",
            "hydra.launcher.mem_gb=1",
            "hydra.launcher.timeout_min=10",
            "shard=0/2,1/2",
            *EXPERIMENT,
            f"paths.results_dir={tmp_path}",
            "sweep_name=sharded",
        ],
        env,
        timeout=600,
    )
    sweep = tmp_path / "sweeps" / "sharded"
    assert_merged_report_equals_unsharded(sweep, unsharded, env)

    # The jobs really ran under SLURM: submitit's folder holds one SLURM array's two
    # tasks, each with the job's own log (written by the job on the node) and result.
    jobs = sorted(p for p in (sweep / ".submitit").iterdir() if re.fullmatch(r"\d+_\d+", p.name))
    assert [p.name.split("_")[1] for p in jobs] == ["0", "1"], jobs
    (array_id,) = {p.name.split("_")[0] for p in jobs}
    for job in jobs:
        log = (job / f"{job.name}_0_log.out").read_text(encoding="utf-8")
        assert f"Starting with JobEnvironment(job_id={job.name}," in log, log[:2000]
        assert (job / f"{job.name}_0_result.pkl").is_file()
    # ... and SLURM itself recorded both as completed (scripts/ci/slurm.sh's cluster keeps
    # a job completion log; accounting, hence sacct, is off there).
    config = slurm_config()
    if config.get("JobCompType") == "jobcomp/filetxt":
        done = Path(config["JobCompLoc"]).read_text(encoding="utf-8").splitlines()
        tasks = {
            m.group(1)
            for line in done
            if f"ArrayJobId={array_id} " in line and "JobState=COMPLETED" in line
            for m in [re.search(r"ArrayTaskId=(\d+)", line)]
            if m
        }
        assert tasks == {"0", "1"}, [line for line in done if f"ArrayJobId={array_id} " in line]
