#!/usr/bin/env python
"""Do verdicts depend on how busy the machine is? The paper's MBPP programs under plus.

Scores the paper's published GPT-4 MBPP-py programs (the Reflexion and the simple log,
from ``../shared/data``) with the plain command

    reflexion-bench evaluate --benchmark mbpp --samples S --set scorer.tests=plus

once without added load (``no_load``), then ``--repeats`` times beside ``--load``
CPU-bound processes (``while True: pass``, at the command's own priority, each in its
own session) on the same cores, and compares every verdict (status per program) with the first. The machine's
load average at the start and end of each run is recorded (other work on the machine
adds to both conditions). A timeout must be a timeout in
every condition, confirmed (``timeout_confirmed``), and nothing else may change.

Resumable: each run's results file (our verdicts, not the programs) is kept under
``--work`` and reused; the summary goes to ``--out`` (JSON) and stdout.

    python scripts/check_load_independence.py [--data ../shared/data] [--repeats 3]
        [--load 8] [--work results/plus-tests/load_runs]
        [--out results/plus-tests/load_independence.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOGS = {
    "mbpp-py reflexion": "reflexion_mbpp_py/mbpp-py._reflexion_5_gpt-4_pass_at_k_1_py.jsonl",
    "mbpp-py simple": "simple_mbpp_py2/mbpp-py._simple_1_gpt-4_pass_at_k_1_py.jsonl",
}


def samples_of(log: Path, out: Path) -> Path:
    """The log's final programs as ``evaluate`` samples (``name`` is the task id)."""
    rows = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.strip()]
    lines = [json.dumps({"task_id": r["name"], "solution": r["solution"]}) for r in rows]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def evaluate(samples: Path, out: Path, jobs: int) -> float:
    """Run the plain command; its wall time in seconds."""
    started = time.perf_counter()
    part = out.with_suffix(".part")
    cmd = [
        str(Path(sys.executable).with_name("reflexion-bench")), "evaluate",
        "--benchmark", "mbpp", "--samples", str(samples), "--set", "scorer.tests=plus",
        "--out", str(part), "--jobs", str(jobs),
    ]  # fmt: skip
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    part.replace(out)
    return time.perf_counter() - started


def verdicts(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def start_load(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` busy processes, each in a session of its own: with the kernel's autogroup
    scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) processes of one session
    share one session's CPU, so eight loops started from one shell barely slow the
    sandbox's workers (each in its own session); eight sessions do (about fivefold)."""
    cmd = [sys.executable, "-c", "while True: pass"]
    return [subprocess.Popen(cmd, start_new_session=True) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.kill()
        p.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--load", type=int, default=8, help="busy processes beside the command")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", type=Path, default=ROOT / "results/plus-tests/load_runs")
    ap.add_argument("--out", type=Path, default=ROOT / "results/plus-tests/load_independence.json")
    args = ap.parse_args(argv)
    root = args.data / "reflexion-original-repo" / "programming_runs" / "root"
    if not root.is_dir():
        print(f"error: no paper logs under {root} (--data names the shared data folder)")
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {
        "command": "python scripts/check_load_independence.py "
        + " ".join(a for a in (argv if argv is not None else sys.argv[1:]) if "/" not in a),
        "date": datetime.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_processes": args.load,
        "repeats": args.repeats,
        "logs": {},
    }
    for name, rel in LOGS.items():
        slug = name.replace(" ", "_").replace("-", "_")
        # The samples are the shared log's programs: a scratch file, never committed.
        samples = samples_of(root / rel, Path(tempfile.gettempdir()) / f"rb_{slug}.samples.jsonl")
        runs: dict[str, list[dict[str, Any]]] = {}
        walls: dict[str, Any] = {}
        for cond in ["no_load"] + [f"loaded_{i + 1}" for i in range(args.repeats)]:
            out = args.work / f"{slug}.{cond}.jsonl"
            meta = out.with_suffix(".meta.json")
            if not out.is_file():
                load = start_load(args.load) if cond != "no_load" else []
                before = os.getloadavg()[0]
                try:
                    took = round(evaluate(samples, out, args.jobs), 1)
                finally:
                    stop_load(load)
                info = {"wall_s": took, "loadavg_start": round(before, 2),
                        "loadavg_end": round(os.getloadavg()[0], 2)}  # fmt: skip
                meta.write_text(json.dumps(info, sort_keys=True) + "\n", encoding="utf-8")
                print(f"{name}: {cond} done: {info}", flush=True)
            walls[cond] = json.loads(meta.read_text()) if meta.is_file() else None
            runs[cond] = verdicts(out)
        quiet = runs["no_load"]
        diffs = []
        for cond, rows in runs.items():
            if cond == "no_load":
                continue
            for q, r in zip(quiet, rows, strict=True):
                if q["status"] != r["status"]:
                    diffs.append({"condition": cond, "task_id": q["task_id"],
                                  "no_load": q["status"], "loaded": r["status"],
                                  "detail": str(r.get("detail", ""))[:300]})  # fmt: skip
        timeouts = sorted({q["task_id"] for q in quiet if q["status"] == "timeout"})
        summary["logs"][name] = {
            "programs": len(quiet),
            "statuses_no_load": dict(sorted(Counter(q["status"] for q in quiet).items())),
            "passed_no_load": sum(bool(q["passed"]) for q in quiet),
            "passed_loaded": [
                sum(bool(r["passed"]) for r in runs[c]) for c in runs if c != "no_load"
            ],
            "runs": walls,
            "timeouts_no_load": timeouts,
            "timeouts_confirmed": sorted(
                {
                    r["task_id"]
                    for rows in runs.values()
                    for r in rows
                    if r["status"] == "timeout" and r.get("timeout_confirmed") is True
                }
            ),
            "verdicts_that_differ": diffs,
        }
        print(
            f"{name}: {len(quiet)} programs, no load {summary['logs'][name]['passed_no_load']} pass, "
            f"loaded {summary['logs'][name]['passed_loaded']}; timeouts {timeouts}; "
            f"{len(diffs)} verdicts differ",
            flush=True,
        )
    args.out.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    same = all(not v["verdicts_that_differ"] for v in summary["logs"].values())
    print("every verdict equal under load" if same else "SOME VERDICTS DIFFER UNDER LOAD")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
