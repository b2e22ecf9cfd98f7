#!/usr/bin/env python
"""What each step of a candidate's box costs (issue 47), against a plain fork.

A box (``sandbox/_box.spawn_box``) is a second fork (the box's init) in a new PID
namespace, a mount namespace with a fresh ``/proc``, ``/sys`` covered, and a cgroup of
its own. This forks and ends boxes with one more step at a time, in rounds (so that a
slow moment of the machine hits every variant alike), and prints each variant's median
milliseconds per box and what each step adds; the baseline, measured in the same run,
is a plain fork that exits. Also measured: moving a process into a fresh cgroup
(``cgroup.procs``), back to back and after a pause (when the kernel waits for an RCU
grace period first): why the zygote moves itself into the next box's cgroup after
answering instead of each box moving its init before the candidate starts.

Needs root (namespaces, mounts, a cgroup v1 ``cpuacct`` or v2 hierarchy); run it on a
quiet machine:

    python scripts/bench_box.py [--rounds 5] [--per-round 100] [--json results/bench/box_steps.json]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import select
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reflexion_bench.sandbox import _box  # noqa: E402

CGROUP_ROOTS = ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup")


def _cgroup_parent() -> str:
    for root in CGROUP_ROOTS:
        if os.path.exists(os.path.join(root, "cgroup.procs")):
            path = os.path.join(root, "rb-bench-box")
            os.makedirs(path, exist_ok=True)
            return path
    raise SystemExit("no writable cgroup hierarchy (cgroup v1 cpuacct or v2) here")


def _wait_gone(pid: int) -> None:
    fd = os.pidfd_open(pid)
    try:
        select.select([fd], [], [])
    finally:
        os.close(fd)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def variant(steps: int, parent: str) -> Callable[[], None]:
    """A box with the first ``steps`` steps: 1 second fork (the init), 2 PID
    namespace, 3 mount namespace, 4 fresh /proc, 5 /sys covered, 6 own cgroup."""
    libc = _box._libc()
    own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)

    def one() -> None:
        cg = None
        if steps >= 6:
            cg = os.path.join(parent, "b" + os.urandom(6).hex())
            os.mkdir(cg)
        if steps >= 2:
            libc.unshare(_box._CLONE_NEWPID)
        pid = os.fork()
        if pid and steps >= 2:
            libc.setns(own, _box._CLONE_NEWPID)
        if pid == 0:
            if steps >= 3:
                libc.unshare(_box._CLONE_NEWNS)
                _box._sys_mount(None, "/", None, _box._MS_REC | _box._MS_PRIVATE, None)
            if steps >= 4:
                flags = _box._MS_NOSUID | _box._MS_NODEV | _box._MS_NOEXEC
                _box._sys_mount("proc", "/proc", "proc", flags, None)
            if cg:
                with open(os.path.join(cg, "cgroup.procs"), "w") as fh:
                    fh.write("0")
            if steps >= 5:
                _box._box_hide("/sys")
            if steps >= 1:
                child = os.fork()
                if child == 0:
                    os._exit(0)
                os.waitpid(child, 0)
            os._exit(0)
        _wait_gone(pid)
        if cg:
            _box.remove_cgroup(cg, 1.0)

    return one


STEPS = (
    "plain fork",
    "+ the init (a second fork)",
    "+ PID namespace",
    "+ mount namespace",
    "+ fresh /proc",
    "+ /sys covered",
    "+ own cgroup (the init moves in)",
)


def cgroup_move_ms(parent: str, rounds: int, pause_s: float) -> list[float]:
    """Milliseconds a fresh fork takes to move itself into a fresh cgroup."""
    out = []
    for _ in range(rounds):
        time.sleep(pause_s)
        cg = os.path.join(parent, "m" + os.urandom(6).hex())
        os.mkdir(cg)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            t = time.perf_counter()
            with open(os.path.join(cg, "cgroup.procs"), "w") as fh:
                fh.write("0")
            os.write(w, str((time.perf_counter() - t) * 1e3).encode())
            os._exit(0)
        os.close(w)
        out.append(float(os.read(r, 64)))
        os.close(r)
        _wait_gone(pid)
        _box.remove_cgroup(cg, 1.0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-round", type=int, default=100)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("needs root (namespaces, mounts, cgroups)")
    parent = _cgroup_parent()
    load_before = list(os.getloadavg())
    fns = [variant(i, parent) for i in range(len(STEPS))]
    per: list[list[float]] = [[] for _ in STEPS]
    for _ in range(args.rounds):
        for i, fn in enumerate(fns):
            fn()  # warm
            t = time.perf_counter()
            for _ in range(args.per_round):
                fn()
            per[i].append((time.perf_counter() - t) / args.per_round * 1e3)
    med = [statistics.median(v) for v in per]
    back_to_back = cgroup_move_ms(parent, 30, 0.0)
    after_pause = cgroup_move_ms(parent, 10, 0.2)
    print(f"{'box with':40} {'ms/box':>8} {'adds ms':>8}  rounds")
    for i, name in enumerate(STEPS):
        add = med[i] - med[i - 1] if i else 0.0
        rounds = ", ".join(f"{x:.2f}" for x in per[i])
        print(f"{name:40} {med[i]:8.2f} {add:8.2f}  [{rounds}]")
    ratio = med[-1] / med[0]
    print(
        f"\na whole box: {med[-1]:.2f} ms = {ratio:.2f}x a plain fork ({med[0]:.2f} ms), same run"
    )
    b2b, paused = statistics.median(back_to_back), statistics.median(after_pause)
    print(
        f"a process's move into a fresh cgroup: {b2b:.2f} ms back to back, "
        f"{paused:.2f} ms after a 0.2 s pause (median; the RCU grace period)"
    )
    with contextlib.suppress(OSError):
        os.rmdir(parent)  # empty now: every box's cgroup was removed
    if args.json:
        out = {
            "command": "python scripts/bench_box.py " + " ".join(argv or sys.argv[1:]),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "machine": {
                "kernel": platform.release(),
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
            },
            "load_before": load_before,
            "load_after": list(os.getloadavg()),
            "steps_ms": {name: round(m, 3) for name, m in zip(STEPS, med, strict=True)},
            "adds_ms": {name: round(med[i] - med[i - 1], 3) for i, name in enumerate(STEPS) if i},
            "box_vs_fork": round(ratio, 2),
            "cgroup_move_ms": {
                "back_to_back": round(b2b, 3),
                "after_pause": round(paused, 3),
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
