"""``reflexion-bench report RUN_DIR...``: recompute metrics and compare runs, from their logs.

    reflexion-bench report RUN_DIR [--json]                 # one run's summary (as before)
    reflexion-bench report RUN_DIR... [--format md|latex|csv|json] [--paper]
                           [--table NAME ...] [--axis tokens|calls|dollars|wall|trials]
                           [--budget X] [--out DIR]
                           [--budget-unit tokens|completion_tokens|dollars|wall_s]
                           [--submit last|best_own_tests]

RUN_DIR may be a run folder, a sweep folder (searched recursively for log.jsonl) or
a log file. Runs are grouped by benchmark x strategy x model into paper-style tables
with 95% intervals (Wilson for a share, Newcombe's for a paired difference) and paired
tests (Holm-adjusted, one family per table); ``--paper`` adds the
paper's published figures as labelled reference rows; ``--out`` also writes every
table, the JSON and the figures (PNG + PDF) into DIR, with ``manifest.txt`` listing
them. Each run folder's summary.json and curve.png are refreshed on the way, the figure
only when its summary changed or it is missing (``--no-write`` to leave run folders
untouched).

What ``--out`` writes is reproducible: the same logs give byte-identical files on every
run and from any folder (no dates, versions or absolute paths; run folders are named
relative to DIR). DIR ends up holding exactly what the command writes: files of the
previous manifest that it no longer writes are deleted, and any other file found in DIR
(one the command never wrote, e.g. a hand-written README) is left alone with a warning.

With ``--out DIR``, the README.md beside DIR (DIR/../README.md, a study's) has its
generated blocks refreshed: ``<!-- report:TABLE [columns=a,b] [where=col:value] -->``
... ``<!-- /report -->`` become that table of this report, so the study's prose never
types a number the report computes (``report:answer``, ``report:budget_curves``,
``report:did`` and ``report:dose`` give the answers in words).

Runs of retry and reflexion under two in-loop evaluators or more (the feedback study)
also get the ``feedback_did`` and ``feedback_dose`` tables and the dose figure
(docs/reports.md); other reports are unchanged by them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.budget import AXES
from reflexion_bench.analysis.budget_curve import UNITS as BUDGET_UNITS
from reflexion_bench.analysis.submission import SUBMIT_RULES
from reflexion_bench.analysis.tables import TABLES


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench report",
        description="Recompute metrics of run folders and compare runs, from their logs.",
    )
    p.add_argument("run_dirs", nargs="+", type=Path, help="run folders, sweep folders or log files")
    p.add_argument("--json", action="store_true", help="print each run's summary as JSON")
    p.add_argument(
        "--format",
        choices=("md", "latex", "csv", "json"),
        help="print the comparison report in this format (default: md; one run: its table)",
    )
    p.add_argument("--paper", action="store_true", help="add the paper's published figures")
    p.add_argument(
        "--table",
        action="append",
        choices=TABLES,
        help="only these tables (repeatable; csv prints `main` unless given)",
    )
    p.add_argument(
        "--columns",
        type=lambda text: [c.strip() for c in text.split(",") if c.strip()],
        metavar="COL,COL...",
        help="only these columns, in this order, in every format (the CSV header's names; "
        "an interval column brings its bounds); e.g. --table main --columns "
        "strategy,first_try,final",
    )
    p.add_argument("--axis", default="tokens", choices=tuple(AXES), help="equal-budget axis")
    p.add_argument("--budget", type=float, help="budget per task on --axis (default: cheapest)")
    p.add_argument("--out", type=Path, help="also write tables, report.json and figures here")
    # Checked in main, not by argparse `choices`: a bad value is one line naming the flag.
    p.add_argument(
        "--budget-unit",
        default="tokens",
        metavar="|".join(BUDGET_UNITS),
        help="unit of the budget curves (default tokens: prompt + completion, as run live)",
    )
    p.add_argument(
        "--submit",
        default="last",
        metavar="|".join(SUBMIT_RULES),
        help="submitted trial per task: last (default, as run) or best_own_tests (most "
        "in-loop tests passed, earliest on ties), from the logged in-loop results",
    )
    p.add_argument(
        "--style",
        default="paper",
        choices=("paper", "screen"),
        help="figures for --out: paper (default; 3.4 in wide, one column of a two-column "
        "paper, 300 dpi PNG + vector PDF) or screen (6.4 in, larger type)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=10_000,
        help="bootstrap resamples (intervals of per-task means over seeds)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument(
        "--equivalence-margin",
        type=float,
        default=5.0,
        help="equivalence margin of the paired comparisons, in points of pass@1 (default 5)",
    )
    p.add_argument("--no-write", action="store_true", help="do not refresh run folders' summaries")
    return p


def _elapsed(run_dir: Path) -> dict[str, Any]:
    """The run's wall-clock time from provenance.json: end minus start of each session
    (resumed runs have several), summed; {} when a session lacks its times."""
    from datetime import datetime

    from reflexion_bench.core.shards import is_shard_set, shard_dirs
    from reflexion_bench.runner.provenance import read_provenance

    if is_shard_set(run_dir):
        # Shards run side by side (on other machines): the experiment took as long as
        # its longest shard.
        times = [_elapsed(d) for d in shard_dirs(run_dir)]
        if not times or not all(times):
            return {}
        longest = max(times, key=lambda t: float(t["wall_time_s"]))
        return {**longest, "shards": len(times)}
    record = read_provenance(run_dir)
    if record is None:
        return {}
    sessions = [*record.get("previous_sessions", []), record]
    total = 0.0
    for session in sessions:
        try:
            start = datetime.fromisoformat(str(session["start_time"]))
            end = datetime.fromisoformat(str(session["end_time"]))
        except (KeyError, TypeError, ValueError):
            return {}
        total += (end - start).total_seconds()
    return {"wall_time_s": total, "sessions": len(sessions)}


def refresh_run_outputs(run_dir: Path) -> dict[str, Any]:
    """:func:`~reflexion_bench.analysis.report.write_run_outputs`, drawing curve.png only
    when the summary it is drawn from changed (or the figure is missing, or of an older
    drawing): rendering a figure per run folder was most of the time of ``report`` on a
    small sweep."""
    from reflexion_bench.analysis.report import curve_is_current, load_summary, plot_trial_curve

    summary = load_summary(run_dir)
    text = json.dumps(summary, indent=2)
    path, curve = run_dir / "summary.json", run_dir / "curve.png"
    try:
        same = path.read_text(encoding="utf-8") == text
    except OSError:
        same = False
    if not same:
        path.write_text(text, encoding="utf-8")
    # Redrawn also when the figure is of an older drawing (the PNG says which).
    if summary.get("n_tasks") and not (same and curve_is_current(curve)):
        plot_trial_curve(summary, curve)
    return summary


def main(argv: list[str]) -> int:
    from reflexion_bench.analysis.report import (
        build_comparison,
        format_table,
        load_summary,
        write_comparison,
    )
    from reflexion_bench.analysis.runs import find_run_dirs

    args = _parser().parse_args(argv)
    for flag, value, allowed in (
        ("--budget-unit", args.budget_unit, BUDGET_UNITS),
        ("--submit", args.submit, SUBMIT_RULES),
    ):
        if value not in allowed:
            print(
                f"error: {flag} must be one of {', '.join(allowed)}, got {value!r}",
                file=sys.stderr,
            )
            return 2
    if not 0 < args.equivalence_margin < 100:
        print(
            f"error: --equivalence-margin is in points of pass@1, between 0 and 100 "
            f"(e.g. 5), got {args.equivalence_margin}",
            file=sys.stderr,
        )
        return 2
    if args.out is not None and not args.json:
        from reflexion_bench.commands._out import folder_problem

        # Before the report is computed: a bad --out found after it loses the work.
        problem = folder_problem(args.out)
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    try:
        run_dirs = find_run_dirs(args.run_dirs)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    # Runs compared in one table must come from the same code, libraries, data, model,
    # sandbox and kind of machine, or the table says so (provenance.json of each run).
    from reflexion_bench.core.shards import expand_shards, shard_warnings
    from reflexion_bench.runner.provenance import check_provenance

    # The shards of one experiment ran apart: each has its own provenance.
    provenance = check_provenance(expand_shards(run_dirs))
    provenance_warnings = provenance.warnings
    for warning in provenance_warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in provenance.notes + provenance.console:
        print(f"note: {note}", file=sys.stderr)
    # An experiment with a shard missing, unfinished or overlapping is not complete.
    incomplete = shard_warnings(run_dirs)
    for warning in incomplete:
        print(f"warning: {warning}", file=sys.stderr)

    summaries = []
    for run_dir in run_dirs:
        if args.no_write:
            summary = load_summary(run_dir)
        else:
            try:
                summary = refresh_run_outputs(run_dir)
            except OSError as exc:  # a read-only run folder is still reportable
                print(f"warning: could not write into {run_dir}: {exc}", file=sys.stderr)
                summary = load_summary(run_dir)
        summary["run_dir"] = str(run_dir)
        summaries.append(summary)

    if args.json:
        print(json.dumps(summaries[0] if len(summaries) == 1 else summaries, indent=2))
        return 0
    if args.format is None and len(summaries) == 1 and not (args.paper or args.out or args.table):
        print(format_table({**summaries[0], "run": _elapsed(run_dirs[0])}))
        return 0

    from reflexion_bench.analysis.tables import render

    report = build_comparison(
        run_dirs,
        paper=args.paper,
        axis=args.axis,
        budget=args.budget,
        n_resamples=args.resamples,
        seed=args.seed,
        equivalence_margin=args.equivalence_margin / 100,
        budget_unit=args.budget_unit,
        submit=args.submit,
    )
    report["provenance_warnings"] = provenance_warnings
    if provenance.notes:  # absent otherwise: reports of runs without a code digest are as before
        report["provenance_notes"] = provenance.notes
    if incomplete:  # absent otherwise: reports of unsharded runs are as before
        report["shard_warnings"] = incomplete
    for warning in report.get("seed_warnings") or []:
        print(warning, file=sys.stderr)
    fmt = args.format or "md"
    which = args.table or (["main"] if fmt == "csv" else None)
    try:
        text = render(report, fmt, which, columns=args.columns)
    except ValueError as exc:  # a column no chosen table has: say which it has
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if fmt == "md" and which is None and report.get("budget_curves"):
        from reflexion_bench.analysis.budget_curve import budget_curve_markdown

        text += budget_curve_markdown(report["budget_curves"])
    sys.stdout.write(text)
    if args.out:
        from reflexion_bench.analysis.report import foreign_files, refresh_readme_blocks
        from reflexion_bench.commands._out import write_error

        try:
            written = write_comparison(report, args.out, style_name=args.style)
        except OSError as exc:  # e.g. the disk filled up after the check above
            print(f"error: {write_error(exc, args.out)}", file=sys.stderr)
            return 2
        print(f"wrote {len(written)} files into {args.out}", file=sys.stderr)
        # The study's README beside the report quotes its numbers from generated blocks.
        readme = args.out.parent / "README.md"
        try:
            if refresh_readme_blocks(report, readme):
                print(f"refreshed the report blocks of {readme}", file=sys.stderr)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        # The folder should be exactly what the command writes; the report's own stale
        # files are already gone (manifest.txt), anyone else's are named, never deleted.
        for name in foreign_files(args.out, written):
            print(
                f"warning: {args.out / name} was not written by this command (left in place;"
                " keep hand-written files outside the report folder)",
                file=sys.stderr,
            )
    return 0
