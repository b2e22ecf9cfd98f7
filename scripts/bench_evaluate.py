#!/usr/bin/env python
"""How fast `evaluate` scores HumanEval: canonical solutions per second.

Measures, in the same run and on the same 164 programs:

- **evaluate**: :func:`reflexion_bench.commands.evaluate.score_samples` with the
  configured sandbox (default ``local``, ``--jobs 2``): the hidden-test harness,
  isolation, limits and all;
- **baseline**: a plain loop that runs each program (prompt + solution + test +
  ``check(entry_point)``) in a fresh ``python`` subprocess, one at a time, with no
  sandbox at all (the simplest correct scorer anyone would write).

and prints both rates and their ratio. Each is run ``--rounds`` times; the median is
reported. The sandbox's workers are started (one warm-up sample) before timing, the
way a long evaluation amortises them; the cold start is printed separately.

    python scripts/bench_evaluate.py [--jobs 2] [--rounds 3] [--sandbox local] [--json PATH]

``--json PATH`` also writes the figures with the command, date, machine and load average
(``scripts/_bench_common.py``) and the printed text beside it (``.txt``); the README's
come from ``python scripts/bench_evaluate.py --rounds 3 --json results/bench/evaluate.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_common import BenchOutput

from reflexion_bench.commands.evaluate import build_benchmark, score_samples
from reflexion_bench.core.types import Task


def baseline(tasks: list[Task], python: str) -> tuple[float, int]:
    """Seconds to run every program in its own subprocess, sequentially; passes."""
    passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        for t in tasks:
            path = Path(tmp) / "prog.py"
            path.write_text(
                t.prompt
                + t.data["canonical_solution"]
                + "\n\n"
                + t.data["test"]
                + "\n\n"
                + t.data["test_call"]
                + "\n",
                encoding="utf-8",
            )
            proc = subprocess.run([python, str(path)], capture_output=True, timeout=30, cwd=tmp)
            passed += proc.returncode == 0
        return time.perf_counter() - started, passed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--sandbox", default="local")
    p.add_argument(
        "--python",
        default=shutil.which("python3", path="/usr/bin") or sys.executable,
        help="interpreter of the baseline (default: the one the local sandbox runs)",
    )
    p.add_argument(
        "--json", type=Path, default=None, help="also write the figures here (and .txt beside)"
    )
    args = p.parse_args(argv)
    with BenchOutput(args.json, "bench_evaluate.py", argv) as out:
        return _run(args, out)


def _run(args: argparse.Namespace, out: BenchOutput) -> int:
    started = time.perf_counter()
    bench = build_benchmark("humaneval", sandbox=args.sandbox, jobs=args.jobs)
    tasks = list(bench.tasks.values())
    samples = [{"task_id": t.id, "completion": t.data["canonical_solution"]} for t in tasks]
    n = len(tasks)

    async def timed_rounds() -> tuple[float, list[float], list[int]]:
        await score_samples(samples[:1], bench)  # start the warm workers
        cold = time.perf_counter() - started
        times: list[float] = []
        passes: list[int] = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            results = await score_samples(samples, bench)
            times.append(time.perf_counter() - t)
            passes.append(sum(r["passed"] for r in results))
        await bench.sandbox.aclose()
        return cold, times, passes

    cold, ev_times, ev_passes = asyncio.run(timed_rounds())
    base = [baseline(tasks, args.python) for _ in range(args.rounds)]
    base_times = [b[0] for b in base]

    ev_rate = n / statistics.median(ev_times)
    base_rate = n / statistics.median(base_times)
    isolation = getattr(bench.sandbox, "isolation", "?")
    print(f"HumanEval canonical solutions: {n}, rounds: {args.rounds} (median)")
    print(
        f"evaluate  ({args.sandbox}, jobs={args.jobs}, isolation={isolation}): "
        f"{ev_rate:7.1f} solutions/s  passed {ev_passes}  (set-up incl. first sample: {cold:.2f}s)"
    )
    print(
        f"baseline  (one `{args.python}` subprocess at a time, no sandbox): "
        f"{base_rate:7.1f} solutions/s  passed {[b[1] for b in base]}"
    )
    print(f"ratio evaluate/baseline: {ev_rate / base_rate:.2f}x")
    out.write(
        {
            "problems": n,
            "rounds": args.rounds,
            "evaluate": {
                "sandbox": args.sandbox,
                "jobs": args.jobs,
                "isolation": isolation,
                "per_s": round(ev_rate, 2),
                "runs_s": [round(t, 3) for t in ev_times],
                "passed": ev_passes,
                "setup_s": round(cold, 2),
            },
            "baseline": {
                "python": args.python,
                "per_s": round(base_rate, 2),
                "runs_s": [round(t, 3) for t in base_times],
                "passed": [b[1] for b in base],
            },
            "ratio": round(ev_rate / base_rate, 4),
        }
    )
    return 0 if all(x == n for x in ev_passes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
