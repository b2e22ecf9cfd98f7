#!/usr/bin/env python
"""Is the scoring path CPU-bound or waiting? CPU per judgment against wall time per
judgment, with ``jobs`` workers (issue 47's speed question).

Scores the 164 HumanEval canonical solutions through the judge (the scorer's own path,
as ``scripts/bench_sandbox.py``'s "judge (scoring path)" row) on a warm pool, in rounds,
and reads around each measured round:

- ``cpu_ms``: CPU of the whole machine outside niced processes (``/proc/stat``: user,
  system, irq and softirq), per judgment. Every process of a judgment counts there, the
  kernel's work for it too (forks, copy-on-write faults, exits, namespaces), wherever
  it is charged; a niced background job (a study at ``nice -n 19``) does not, except its
  own kernel time. Other un-niced work on the machine does: run it quiet.
- ``boxes_ms``: what the boxes' CPU cgroups counted (the candidates and their inits;
  the judge and the keeper are not in them), per judgment.
- ``host_ms``: this process (the harness side of the pool), per judgment.
- ``wall_ms``: wall time per judgment, and ``busy``: ``cpu_ms`` over the core time the
  round had (``wall_ms`` times the usable cores). Near 1: the cores are the limit, and
  only less CPU per judgment makes the path faster; well below 1: the workers wait,
  and more of them (``sandbox.jobs``) would fill the cores.

    python scripts/bench_judge_cpu.py [--jobs 1,2,4] [--rounds 3] [--json results/bench/judge_cpu.json]

Needs the local sandbox's ``bwrap`` level (root for the cgroup figure; without one
``boxes_ms`` is null).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import BenchOutput  # noqa: E402
from bench_sandbox import _tasks, make_backend, programs  # noqa: E402

#: The parent of every worker's CPU cgroup (sandbox/_host.Cgroup), v1 then v2.
BOX_CGROUPS = (
    Path("/sys/fs/cgroup/cpuacct/reflexion-bench/cpuacct.usage"),
    Path("/sys/fs/cgroup/reflexion-bench/cpu.stat"),
)


def machine_cpu_s() -> float:
    """Seconds of CPU outside niced processes since boot (all cores)."""
    fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()
    user, system, irq, softirq = (int(fields[i]) for i in (1, 3, 6, 7))
    return (user + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def boxes_cpu_s() -> float | None:
    """Seconds of CPU the boxes' cgroups have counted (None: no such cgroup here)."""
    from reflexion_bench.sandbox._box import read_cgroup_cpu_s

    for path in BOX_CGROUPS:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            return read_cgroup_cpu_s(fd)
        finally:
            os.close(fd)
    return None


def host_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def measure(jobs: int, rounds: int) -> dict[str, Any]:
    from reflexion_bench.environments.code_python import PythonLanguage

    problems, _ = programs()
    lang = PythonLanguage()
    tasks = _tasks(problems)
    sources = {t.id: t.prompt + problems[t.id]["canonical_solution"] for t in tasks}
    sb = make_backend("bwrap", jobs)

    async def one_round() -> int:
        outs = await asyncio.gather(*(lang.run_hidden(sb, sources[t.id], t, 10.0) for t in tasks))
        return sum(o.passed for o in outs)

    try:
        await one_round()  # warm: every worker started, the judge compiled
        per_round: list[dict[str, Any]] = []
        for _ in range(rounds):
            m0, b0, h0, w0 = machine_cpu_s(), boxes_cpu_s(), host_cpu_s(), time.perf_counter()
            passed = await one_round()
            m1, b1, h1, w1 = machine_cpu_s(), boxes_cpu_s(), host_cpu_s(), time.perf_counter()
            n = len(tasks)
            wall_ms = (w1 - w0) / n * 1e3
            cpu_ms = (m1 - m0) / n * 1e3
            per_round.append(
                {
                    "passed": passed,
                    "wall_ms": wall_ms,
                    "cpu_ms": cpu_ms,
                    "boxes_ms": None if b0 is None or b1 is None else (b1 - b0) / n * 1e3,
                    "host_ms": (h1 - h0) / n * 1e3,
                    "busy": cpu_ms / (wall_ms * len(os.sched_getaffinity(0))),
                }
            )
    finally:
        await sb.aclose()

    def med(key: str) -> float | None:
        vals = [r[key] for r in per_round if r[key] is not None]
        return round(statistics.median(vals), 3) if vals else None

    return {
        "jobs": jobs,
        "judgments_per_round": len(tasks),
        "all_passed": all(r["passed"] == len(tasks) for r in per_round),
        **{k: med(k) for k in ("wall_ms", "cpu_ms", "boxes_ms", "host_ms", "busy")},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", default="1,2,4", help="comma list of pool sizes")
    ap.add_argument("--rounds", type=int, default=3, help="measured rounds per pool size")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    sizes = [int(j) for j in args.jobs.split(",") if j]
    if not sizes or min(sizes) < 1 or args.rounds < 1:
        ap.error("--jobs needs positive pool sizes and --rounds at least 1")
    with BenchOutput(args.json, "bench_judge_cpu.py", argv) as out:
        rows = [asyncio.run(measure(j, args.rounds)) for j in sizes]
        print(
            f"{'jobs':>4}  {'wall ms':>8}  {'CPU ms':>7}  {'boxes ms':>8}  {'host ms':>7}  "
            f"{'busy':>5}  (per judgment, median of {args.rounds} rounds of 164)"
        )
        for r in rows:
            boxes = "-" if r["boxes_ms"] is None else f"{r['boxes_ms']:.2f}"
            print(
                f"{r['jobs']:>4}  {r['wall_ms']:8.2f}  {r['cpu_ms']:7.2f}  {boxes:>8}  "
                f"{r['host_ms']:7.2f}  {r['busy']:5.2f}"
            )
        out.write({"rows": rows, "usable_cores": len(os.sched_getaffinity(0))})
    return 0 if all(r["all_passed"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
