"""``reflexion-bench rescore``: re-judge a finished run's programs under the plus tests.

    reflexion-bench rescore RUN_DIR... --tests plus [--data DIR] [--jobs N]
                            [--sandbox auto|local|docker] [--force]

RUN_DIR may be a run folder or a study/sweep folder (every run under it, as ``report``
finds them). Every program the run's scorer judged (each trial's ``candidate`` with a
hidden verdict: what pass@1 and the per-trial curves count) is judged with the plus
tests (HumanEval+ inputs shipped in the package; MBPP+ from ``DIR/evalplus/``), no model
is called, and one verdict row per program is appended to ``RUN_DIR/rescore_plus.jsonl``
(format: :mod:`reflexion_bench.analysis.rescore`). A second run judges only what is not
judged yet under the same settings (and the programs whose judgment errored);
``--force`` judges everything again. ``reflexion-bench report`` then shows the plus
columns of every run that has the file.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.rescore import Judge, RunResult


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench rescore",
        description="Re-judge the logged programs of finished runs under stronger hidden "
        "tests, without calling any model; verdicts go to RUN_DIR/rescore_plus.jsonl.",
    )
    p.add_argument("run_dirs", nargs="+", type=Path, help="run folders or study/sweep folders")
    p.add_argument(
        "--tests",
        required=True,
        choices=("plus",),
        help="the tests to judge with: plus (HumanEval+ / MBPP+ inputs)",
    )
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="benchmark data folder holding evalplus/MbppPlus-v1.jsonl (default: "
        "REFLEXION_BENCH_DATA or ../shared/data)",
    )
    p.add_argument("--jobs", type=int, default=2, help="programs judged at once (sandbox.jobs)")
    p.add_argument("--sandbox", default="auto", help="auto | local | docker (configs/sandbox)")
    p.add_argument("--force", action="store_true", help="judge programs already judged again")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    return p


def _build(sandbox: str, jobs: int) -> Any:
    from reflexion_bench.commands.evaluate import build_benchmark

    def build(benchmark: str, overrides: tuple[str, ...]) -> Judge:
        bench = build_benchmark(benchmark, None, sandbox, jobs, None, overrides)
        env_timeout = next(
            (float(o.split("=", 1)[1]) for o in overrides if o.startswith("env.timeout_s=")),
            None,
        )
        return Judge(
            benchmark=benchmark,
            tasks=bench.tasks,
            scorer=bench.scorer,
            sandbox=bench.sandbox,
            env_timeout_s=env_timeout,
        )

    return build


class _Progress:
    """A rich bar on a terminal; otherwise a plain line every 30 s and per run."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.errors = 0
        self.started = time.monotonic()
        self.last = self.started
        self.bar: Any = None
        self.task_id: Any = None
        self.enabled = enabled
        if enabled and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("rescore plus"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("errors {task.fields[errors]}"),
                TimeElapsedColumn(),
                transient=True,
            )
            self.bar.start()
            self.task_id = self.bar.add_task("programs", total=total, errors=0)

    def program(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.errors += row.get("status") == "error"
        if self.bar is not None:
            self.bar.update(self.task_id, completed=self.done, errors=self.errors)
        elif self.enabled and time.monotonic() - self.last >= 30:
            self.last = time.monotonic()
            print(
                f"rescore: {self.done}/{self.total} programs, {self.errors} errors, "
                f"{self.last - self.started:.0f}s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _summary_line(res: RunResult) -> str:
    from reflexion_bench.analysis.metrics import summarize
    from reflexion_bench.analysis.rescore import with_rescore
    from reflexion_bench.core.runlog import load_run_records

    if res.note:
        return f"{res.run_dir}: {res.note}"
    head = (
        f"{res.run_dir}: {res.programs} programs, {res.judged} judged now, {res.skipped} "
        f"already judged, {res.errors} errors ({res.seconds:.1f}s)"
    )
    s = summarize(with_rescore(load_run_records(res.run_dir), res.run_dir))
    plus = s.get("plus")
    if not plus:
        return head

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f}%"

    return (
        f"{head}\n    pass@1 base {pct(s.get('final'))} -> plus {pct(plus.get('final'))}; "
        f"first try base {pct(s.get('first_try'))} -> plus {pct(plus.get('first_try'))}; "
        f"submitted base pass / plus fail {plus['base_pass_plus_fail']}; "
        f"self-tests + base pass, plus fail {plus['unseen_fp']} trials"
        + (f"; {plus['unjudged']} base passes not judged under plus" if plus["unjudged"] else "")
    )


def main(argv: list[str]) -> int:
    from reflexion_bench.analysis.rescore import judged_records, rescore_runs
    from reflexion_bench.analysis.runs import find_run_dirs
    from reflexion_bench.core.errors import ConfigError
    from reflexion_bench.core.runlog import load_run_records
    from reflexion_bench.core.shards import expand_shards
    from reflexion_bench.runner.provenance import _git, sandbox_info

    args = _parser().parse_args(argv)
    if args.jobs < 1:
        print("error: --jobs must be >= 1", file=sys.stderr)
        return 2
    if args.data is not None and not args.data.is_dir():
        print(f"error: --data {args.data} is not a folder", file=sys.stderr)
        return 2
    try:
        # Each shard of a sharded experiment keeps its own rescore_plus.jsonl.
        run_dirs = expand_shards(find_run_dirs(args.run_dirs))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    total = sum(len(judged_records(load_run_records(d))) for d in run_dirs)
    progress = _Progress(total, enabled=not args.quiet)
    root = Path(__file__).resolve().parents[2]
    provenance: dict[str, Any] = {
        "code": _git(root),
        "command": "reflexion-bench rescore " + shlex.join(argv),
    }
    build = _build(args.sandbox, args.jobs)

    def built(benchmark: str, overrides: tuple[str, ...]) -> Judge:
        judge: Judge = build(benchmark, overrides)
        provenance["sandbox"] = sandbox_info(judge.sandbox)
        return judge

    def on_run(res: RunResult) -> None:
        print(_summary_line(res), flush=True)

    started = time.perf_counter()
    try:
        results = asyncio.run(
            rescore_runs(
                run_dirs,
                built,
                data_dir=args.data,
                force=args.force,
                jobs=args.jobs,
                provenance=provenance,
                on_program=progress.program,
                on_run=on_run,
            )
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        progress.close()
    errors = sum(r.errors for r in results)
    for r in results:
        for detail in r.error_details[:5]:
            print(f"error row: {r.run_dir}: {detail}", file=sys.stderr)
    print(
        f"{len(results)} runs, {sum(r.judged for r in results)} programs judged, "
        f"{sum(r.skipped for r in results)} already judged, {errors} errors in "
        f"{time.perf_counter() - started:.1f}s; sandbox: "
        f"{(provenance.get('sandbox') or {}).get('isolation', 'not started')}"
        + ("; run again to retry the errored programs" if errors else "")
    )
    return 1 if errors else 0
