#!/usr/bin/env python
"""Render time of ``reflexion-bench view``'s run page for a 164-task x 5-trial run.

Builds a synthetic run log of HumanEval's size (164 tasks x 5 trials, every trial with
realistic contents: a ~1 KB program, the prompt, six self-tests with outputs, the
hidden verdict with its failing assert, a reflection, the memory shown, three model
calls each with its request and reply as every call is logged since issue 33; ~22 MB
of log), then measures in headless Chromium (Debian's,
over the DevTools protocol) the time from navigation start to the page rendered (the
page's own mark after its content is built and laid out), for:

* ``served run page``: ``reflexion-bench view`` over 127.0.0.1, the run page (summary,
  curve, task table; a task's trials load when it is opened), cold (the server's
  first request, which reads the log and computes the report's numbers) and warm;
* ``served task page``: one task's five trials, loaded on demand;
* ``exported file``: ``view --export`` (every trial embedded, each task parsed when
  opened), its run page from file://;
* baseline, measured in the same run: ``naive static page``, every trial of every
  task rendered into one HTML page (what generating a static page from the log
  without on-demand loading gives), from file://.

Prints the median of ``--repeat`` loads of each (each in a fresh document) and the
ratio of the baseline to the served run page. Target: the run page under 2 s.

    python scripts/bench_view.py [--tasks 164] [--trials 5] [--repeat 5] [--json PATH]

``--json PATH`` also writes the figures with the command, date, machine and load average
(``scripts/_bench_common.py``), and the printed text beside it (``.txt``); the README's
come from ``python scripts/bench_view.py --repeat 5 --json results/bench/viewer.json``.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _bench_common import BenchOutput  # noqa: E402

from reflexion_bench.testing.chromium import Browser  # noqa: E402
from reflexion_bench.view.data import Catalog, dumps  # noqa: E402
from reflexion_bench.view.page import write_export  # noqa: E402
from reflexion_bench.view.server import ViewServer  # noqa: E402

WORDS = [
    "numbers",
    "threshold",
    "result",
    "value",
    "index",
    "items",
    "count",
    "total",
    "left",
    "right",
    "node",
    "string",
    "prefix",
    "suffix",
    "window",
    "stack",
    "queue",
    "sorted",
    "merge",
    "carry",
    "digit",
    "parity",
]


def _program(rng: random.Random, task: int, trial: int) -> str:
    lines = [f"def solve_{task}(numbers: list[int], threshold: float) -> list[int]:"]
    lines.append(f'    """Task {task}: {" ".join(rng.choices(WORDS, k=30))}."""')
    for i in range(28):
        w = rng.choice(WORDS)
        lines.append(f"    {w}_{i} = [x for x in numbers if x > threshold * {i + trial}]  # {w}")
    lines.append("    return result_0")
    return "\n".join(lines) + "\n"


def _reflection(rng: random.Random) -> str:
    return "The implementation failed because " + " ".join(rng.choices(WORDS, k=90)) + "."


def _record(rng: random.Random, task: int, trial: int, k: int, memory: list[str]) -> dict[str, Any]:
    passed = trial == k and rng.random() < 0.6
    program = _program(rng, task, trial)
    tests = [f"assert solve_{task}([{i}, {i + 1}, {i + 2}], 0.{i}) == [{i + 1}]" for i in range(6)]
    results = [
        {"test": t, "status": "pass" if (passed or i % 2) else "fail", "output": f"[{i}, {i + 2}]"}
        for i, t in enumerate(tests)
    ]
    reflection = None if trial == k else _reflection(rng)
    user = (
        f"[previous impl]:\n{program}\n[unit test results]:\n"
        + "\n".join(tests)
        + "\n[reflection]:\n"
        + "\n".join(memory)
    )
    system = "You are a Python writing assistant. " * 20
    # Every call logged in full, as the runner writes it since issue 33 (core/calllog.py):
    # each role's request and reply (one call per role per trial here, so each request
    # is logged whole).
    requests = {
        "actor": (
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "Here is the implementation.\n```python\n" + program + "```",
        ),
        "self_test": (
            [{"role": "user", "content": "Write six unit tests for:\n" + program}],
            "\n".join(tests),
        ),
        "reflector": (
            [{"role": "user", "content": user + "\nWhy did it fail?"}],
            reflection or "",
        ),
    }
    calls = [
        {
            "role": role,
            "messages": requests[role][0],
            "reply": requests[role][1],
            "model": "gpt-4",
            "prompt_tokens": rng.randint(400, 2500),
            "completion_tokens": rng.randint(50, 400),
            "latency_s": rng.random() * 4,
            "finish_reason": "stop",
            "cost_usd": rng.random() / 100,
            "cached": rng.random() < 0.2,
            "retries": 0,
            "error": None,
        }
        for role in ("actor", "self_test" if trial == 1 else "actor", "reflector")
    ]
    return {
        "schema": 1,
        "type": "trial",
        "run_id": "bench",
        "attempt_id": f"a{task}",
        "task_id": f"HumanEval/{task}",
        "benchmark": "humaneval",
        "strategy": "reflexion",
        "model": "gpt-4",
        "final": trial == k,
        "trial": trial,
        "candidate": program,
        "trajectory": "Here is the implementation.\n```python\n" + program + "```",
        "prompt": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
        "self_test": {
            "passed": passed,
            "text": "Tested passed:\n"
            + "\n".join(tests[1::2])
            + "\n\nTests failed:\n"
            + "\n".join(tests[::2]),
            "details": {
                "n_tests": 6,
                "results": results,
                "n_passed": sum(r["status"] == "pass" for r in results),
                **(
                    {"generated": {"raw": "\n".join(tests), "parsed": 6, "dropped_examples": []}}
                    if trial == 1
                    else {}
                ),
            },
        },
        "hidden": {
            "passed": passed,
            "status": "pass" if passed else "fail",
            "value": float(passed),
            "detail": ""
            if passed
            else f"AssertionError: assert candidate([1, 2, 3], 0.{task % 9}) == [2] at hidden_test.py:{task % 40}",
            "extra": {"duration_s": 0.05},
        },
        "reflection": reflection,
        "memory_shown": list(memory),
        "model_calls": calls,
        "wall_time_s": rng.random() * 10,
        "error": None,
        "extra": {"memory_kinds": ["reflection"] * len(memory)},
    }


def build_log(run_dir: Path, n_tasks: int, k: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "log.jsonl").open("w", encoding="utf-8") as fh:
        for task in range(n_tasks):
            memory: list[str] = []
            for trial in range(1, k + 1):
                rec = _record(rng, task, trial, k, memory[-1:])
                fh.write(json.dumps(rec) + "\n")
                if rec["reflection"]:
                    memory.append(rec["reflection"])
    return (run_dir / "log.jsonl").stat().st_size


def naive_page(run_dir: Path, out: Path) -> None:
    """The baseline: every trial of every task rendered into one static HTML page."""
    from reflexion_bench.runner.runlog import load_run_records

    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>naive</title></head><body>"]
    for r in load_run_records(run_dir):
        e = html.escape
        st = r.get("self_test") or {}
        rows = "".join(
            f"<tr><td><pre>{e(t['test'])}</pre></td><td>{e(t['status'])}</td><td><pre>{e(t['output'])}</pre></td></tr>"
            for t in (st.get("details") or {}).get("results", [])
        )
        calls = "".join(
            f"<tr><td>{e(c['role'])}</td><td>{c['prompt_tokens']}/{c['completion_tokens']}</td>"
            f"<td>{c['latency_s']:.2f}</td><td>{c['cost_usd']:.4f}</td><td>{c['cached']}</td></tr>"
            for c in r.get("model_calls") or []
        )
        parts.append(
            f"<section><h2>{e(r['task_id'])} trial {r['trial']}</h2>"
            f"<pre>{e(r.get('candidate') or '')}</pre><table>{rows}</table>"
            f"<pre>{e(st.get('text') or '')}</pre><pre>{e((r.get('hidden') or {}).get('detail') or '')}</pre>"
            f"<blockquote>{e(r.get('reflection') or '')}</blockquote>"
            f"<ol>{''.join(f'<li>{e(m)}</li>' for m in r.get('memory_shown') or [])}</ol>"
            f"<table>{calls}</table></section>"
        )
    # The same mark as the viewer's: after the content is built and laid out.
    parts.append(
        "<script>void document.body.offsetHeight; document.body.dataset.rbReady = 'run';"
        " window.rbReadyAt = performance.now();</script></body></html>"
    )
    out.write_text("".join(parts), encoding="utf-8")


def measure(b: Browser, url: str, ready: str, repeat: int, intervals: bool = False) -> list[float]:
    """Seconds from navigation start to the page's rendered mark (``intervals``: to the
    mark set once the bootstrap intervals are filled in), one fresh document each."""
    times = []
    for _ in range(repeat):
        b.navigate("about:blank")
        b.wait_for("document.readyState === 'complete' && location.href === 'about:blank'")
        b.navigate(url, ready=ready, timeout_s=120)
        if intervals:
            b.wait_for("document.body.dataset.rbIntervals === '1'", timeout_s=120)
            times.append(float(b.evaluate("window.rbIntervalsAt")) / 1000)
        else:
            times.append(float(b.evaluate("window.rbReadyAt")) / 1000)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=164)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--json", type=Path, default=None, help="also write the figures here (and .txt beside)"
    )
    args = ap.parse_args(argv)
    with BenchOutput(args.json, "bench_view.py", argv) as out:
        figures = _run(args)
        print(f"load average after: {os.getloadavg()}")
        out.write(figures)
    return 0


def _run(args: argparse.Namespace) -> dict[str, Any]:
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        run_dir = Path(tmp) / "run"
        size = build_log(run_dir, args.tasks, args.trials)
        print(f"synthetic run: {args.tasks} tasks x {args.trials} trials, log {size / 1e6:.1f} MB")
        export = Path(tmp) / "export.html"
        naive = Path(tmp) / "naive.html"
        t0 = time.perf_counter()
        write_export(Catalog([run_dir]), export)
        export_s = time.perf_counter() - t0
        print(f"export written in {export_s:.1f} s: {export.stat().st_size / 1e6:.1f} MB")
        naive_page(run_dir, naive)
        print(f"naive static page: {naive.stat().st_size / 1e6:.1f} MB")

        rows: list[tuple[str, list[float]]] = []
        with ViewServer(Catalog([run_dir])) as server, Browser() as b:
            rows.append(
                (
                    "served run page, cold (first request)",
                    measure(b, server.url + "#/run/0", "run", 1),
                )
            )
            # The same cold load, its intervals (the report's bootstrap) filled in.
            cold = Catalog([run_dir])
            with ViewServer(cold) as server2:
                rows.append(
                    (
                        "  cold, bootstrap intervals filled in",
                        measure(b, server2.url + "#/run/0", "run", 1, intervals=True),
                    )
                )
            rows.append(
                ("served run page, warm", measure(b, server.url + "#/run/0", "run", args.repeat))
            )
            run_json = len(dumps(server.catalog.run_page(0)).encode())
            task_url = server.url + "#/run/0/task/HumanEval%2F" + str(args.tasks // 2)
            rows.append(
                (
                    "served task page (5 trials, on demand)",
                    measure(b, task_url, "task", args.repeat),
                )
            )
            rows.append(
                (
                    "exported file, run page",
                    measure(b, export.resolve().as_uri() + "#/run/0", "run", args.repeat),
                )
            )
            rows.append(
                (
                    "baseline: naive static page (all trials)",
                    measure(b, naive.resolve().as_uri(), "run", args.repeat),
                )
            )
        print(f"run page data fetched by the served page: {run_json / 1e3:.0f} kB")
        print()
        print(f"{'page':<44} {'median s':>9} {'min s':>7} {'max s':>7}")
        med = {}
        for name, ts in rows:
            med[name] = statistics.median(ts)
            print(f"{name:<44} {med[name]:>9.3f} {min(ts):>7.3f} {max(ts):>7.3f}")
        served = med["served run page, warm"]
        base = med["baseline: naive static page (all trials)"]
        cold_s = med["served run page, cold (first request)"]
        print()
        print(f"baseline / served run page: {base / served:.1f}x")
        print(f"run page under 2 s: {'yes' if max(cold_s, served) < 2 else 'NO'}")
        return {
            "tasks": args.tasks,
            "trials": args.trials,
            "repeat": args.repeat,
            "log_bytes": size,
            "export_bytes": export.stat().st_size,
            "export_write_s": round(export_s, 3),
            "naive_page_bytes": naive.stat().st_size,
            "run_page_json_bytes": run_json,
            # Seconds from navigation start to the page's rendered mark, per load.
            "pages": {
                name.strip(): {
                    "median_s": round(med[name], 4),
                    "min_s": round(min(ts), 4),
                    "max_s": round(max(ts), 4),
                    "runs_s": [round(t, 4) for t in ts],
                }
                for name, ts in rows
            },
            "served_warm_s": round(served, 4),
            "served_cold_s": round(cold_s, 4),
            "baseline_naive_s": round(base, 4),
            "baseline_over_served_warm": round(base / served, 3),
            "target_s": 2.0,
            "run_page_under_target": max(cold_s, served) < 2,
        }


if __name__ == "__main__":
    raise SystemExit(main())
