"""The per-worker cgroups and the per-box cgroups under them are removed, by the worker's
own teardown and, for runs that died without one, by the next sandbox's start-up sweep.

On the real cgroup filesystem (root only: nobody else may make cgroups here). A box
cgroup left under a worker's cgroup used to keep the worker's cgroup too, for good: the
sweep's rmdir of the worker alone fails while a box is under it, and every later
sandbox start walked the pile (thousands of dirs on a machine that ran the tests often).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from reflexion_bench.sandbox import _host

V1_CPU = Path("/sys/fs/cgroup/cpuacct")
V2 = Path("/sys/fs/cgroup")


def _cpu_parent() -> Path:
    """The ``reflexion-bench`` dir the sandbox makes its workers' CPU cgroups in."""
    if os.geteuid() != 0:
        pytest.skip("needs root: only root makes cgroups here")
    if (V1_CPU / "cpuacct.usage").exists():
        return V1_CPU / "reflexion-bench"
    if (V2 / "cgroup.controllers").exists():
        return V2 / "reflexion-bench"
    pytest.skip("no cgroup v1 cpuacct or v2 hierarchy on this machine")


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert not Path(f"/proc/{proc.pid}").exists()
    return proc.pid


def test_the_sweep_removes_a_dead_runs_worker_cgroup_with_its_boxes() -> None:
    parent = _cpu_parent()
    parent.mkdir(exist_ok=True)
    stale = parent / f"{_dead_pid()}-0-1990999"
    live = parent / f"{os.getpid()}-0-1990998"  # this harness is alive: left alone
    for worker in (stale, live):
        (worker / "b0123456789abcdef").mkdir(parents=True)
        (worker / "bfedcba9876543210").mkdir()
    try:
        _host.sweep_stale_cgroups()
        assert not stale.exists()
        assert sorted(p.name for p in live.iterdir() if p.is_dir()) == [
            "b0123456789abcdef",
            "bfedcba9876543210",
        ]
    finally:
        for worker in (stale, live):
            _host._remove_cgroup_tree(worker)
    assert not live.exists()


def test_a_workers_teardown_removes_a_box_whose_process_it_just_killed() -> None:
    """``Cgroup.remove`` kills what is left in a box and removes the box once the
    process has exited (the kernel refuses the rmdir until then), then the worker's."""
    _cpu_parent()
    cg = _host.Cgroup(f"{os.getpid()}-9-1990997", memory_mb=256, pids=64, uid=None)
    if cg.cpu_dir is None:
        pytest.skip("no CPU cgroup for a worker on this machine")
    worker_dirs = [cg.cpu_dir, *cg.dirs]
    box = cg.cpu_dir / "b00000000000000aa"
    box.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (box / "cgroup.procs").write_text(str(sleeper.pid))
        assert (box / "cgroup.procs").read_text().split() == [str(sleeper.pid)]
        started = time.monotonic()
        cg.remove()
        assert sleeper.wait(timeout=5) == -9
        assert not box.exists()
        assert [d for d in worker_dirs if d.exists()] == []
        assert time.monotonic() - started < 5
    finally:
        sleeper.kill()
        sleeper.wait()
