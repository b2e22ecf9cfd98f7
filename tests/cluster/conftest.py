"""Shared by the cluster tests: the toy experiment's command, the unsharded reference
run, and the one comparison of a sharded sweep's merged report with it.

The experiment is the test configs' toy benchmark (tests/configs: env=toy model=toy
sandbox=none, deterministic), 4 tasks with the reflexion strategy. A cluster test runs
it as a 2-shard sweep (``-m shard=0/2,1/2``) through a launcher; the reference is the
same experiment unsharded, run once per session on this machine with the basic launcher.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_CONFIGS = ROOT / "tests" / "configs"
N_TASKS = 4

#: The experiment, as overrides: what both the sharded sweeps and the reference run.
EXPERIMENT = [
    f"hydra.searchpath=[file://{TEST_CONFIGS}]",
    f"limit={N_TASKS}",
    "env=toy",
    "model=toy",
    "sandbox=none",
    "strategy=reflexion",
    "progress=false",
]

#: Keys of a report group that describe where and how fast a run ran, not its results.
VOLATILE = {"runs", "elapsed_s", "wall", "wall_time_s"}


def cli(python: Path | str) -> list[str]:
    """``reflexion-bench`` with ``python`` (``-m``: the project root, with tests.toy, is on
    sys.path because it is the working folder)."""
    return [str(python), "-m", "reflexion_bench.cli"]


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a run: the response cache (and any assembled model file) in
    ``tmp``, never the user's; PYTHONPATH for jobs that start in another folder."""
    env = dict(os.environ)
    env["REFLEXION_BENCH_CACHE"] = str(tmp / "cache")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def run(
    argv: Sequence[str], env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run a command in the project root; a non-zero exit fails with its output's tail."""
    proc = subprocess.run(
        list(argv), cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"exit {proc.returncode}: {' '.join(argv)}\n"
        f"--- stdout (tail)\n{proc.stdout[-3000:]}\n--- stderr (tail)\n{proc.stderr[-5000:]}"
    )
    return proc


def report_json(folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """``reflexion-bench report FOLDER --format json``, parsed."""
    proc = run([*cli(sys.executable), "report", str(folder), "--format", "json"], env, 300)
    return dict(json.loads(proc.stdout))


def verdicts(folder: Path) -> dict[str, list[tuple[int, bool | None]]]:
    """Per task: (trial, hidden verdict) of each trial, from every run log under
    ``folder`` (a run folder, or an experiment folder of shards). A task in two logs
    fails: shards are disjoint."""
    out: dict[str, dict[int, bool | None]] = {}
    owner: dict[str, Path] = {}
    for log in sorted(folder.rglob("log.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("type") != "trial":
                continue
            task = str(record["task_id"])
            assert owner.setdefault(task, log) == log, f"{task} in {owner[task]} and {log}"
            out.setdefault(task, {})[int(record["trial"])] = record["hidden"]["passed"]
    return {task: sorted(trials.items()) for task, trials in sorted(out.items())}


def _results(value: Any) -> Any:
    """A report group without the keys of :data:`VOLATILE` (at any depth)."""
    if isinstance(value, dict):
        return {k: _results(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_results(v) for v in value]
    return value


@pytest.fixture(scope="session")
def unsharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference: the experiment in one process, unsharded (basic launcher), its
    report's one group and its per-task verdicts."""
    tmp = tmp_path_factory.mktemp("unsharded")
    env = env_for(tmp)
    run_dir = tmp / "unsharded"
    run([*cli(sys.executable), "run", *EXPERIMENT, f"run_dir={run_dir}"], env)
    report = report_json(run_dir, env)
    (group,) = report["groups"]
    assert group["n_tasks"] == N_TASKS
    return {"group": group, "verdicts": verdicts(run_dir), "dir": run_dir}


def shard_folders(sweep: Path, count: int = 2) -> list[Path]:
    """The ``shard-I-of-N`` run folders of a sharded sweep: one experiment folder holding
    exactly ``count`` of them, each with its run log."""
    found = sorted(p for p in sweep.rglob("shard-*-of-*") if p.is_dir())
    assert [p.name for p in found] == [f"shard-{i}-of-{count}" for i in range(count)], found
    assert len({p.parent for p in found}) == 1, f"the shards are not in one folder: {found}"
    for p in found:
        assert (p / "log.jsonl").is_file(), f"no run log in {p}"
    return found


def assert_merged_report_equals_unsharded(
    sweep: Path, reference: dict[str, Any], env: dict[str, str]
) -> dict[str, Any]:
    """The sweep's report shows its shards as ONE run of all the tasks, and that run's
    results (every statistic of the group but where and how fast it ran) and per-task
    verdicts are the unsharded run's. Returns the sweep's report."""
    shards = shard_folders(sweep)
    report = report_json(sweep, env)
    assert not report.get("shard_warnings"), report["shard_warnings"]
    assert len(report["groups"]) == 1, [g["runs"] for g in report["groups"]]
    (group,) = report["groups"]
    assert len(group["runs"]) == 1, group["runs"]
    assert group["n_tasks"] == N_TASKS
    # A shard set's group also says whether every shard is there and finished
    # (`complete`, `shards`): the unsharded run's keys are the results compared.
    assert group.get("complete", True) is True, group.get("shards")
    expected = _results(reference["group"])
    assert _results({k: group.get(k) for k in expected}) == expected
    got = verdicts(sweep)
    assert got == reference["verdicts"]
    assert len(got) == N_TASKS
    # Each shard ran its own tasks: none ran all of them.
    per_shard = [set(verdicts(p)) for p in shards]
    assert all(0 < len(s) < N_TASKS for s in per_shard), per_shard
    return report
