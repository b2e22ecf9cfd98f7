"""Run reports: ``summary.json``, the trial-curve PNG and a printed table, from the log."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.answer_key import describe, label_text, run_answer_key
from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.core.runlog import load_run_records


def load_summary(run_dir: Path) -> dict[str, Any]:
    from reflexion_bench.analysis.alfworld import summary_section
    from reflexion_bench.analysis.rescore import with_rescore
    from reflexion_bench.core.shards import is_shard_set, run_parts, shard_status

    # A sharded experiment's folder: its shards' logs together, each with its own files.
    sharded = is_shard_set(run_dir)
    dirs = run_parts(run_dir)
    # Plus verdicts of `reflexion-bench rescore` (rescore_plus.jsonl), when present.
    records = [r for d in dirs for r in with_rescore(load_run_records(d), d)]
    summary = summarize(records)
    # clean / answer-in-loop, counted from the trial log and the memory events.
    summary["answer_key"] = run_answer_key(records, dirs)
    if sharded:
        summary["shards"] = shard_status(run_dir).to_dict()
    # ALFWorld runs also get the paper's Figure 3 view (solved of N, failure causes).
    section = summary_section(records)
    if section is not None:
        summary["alfworld"] = section
    return summary


def write_run_outputs(run_dir: Path) -> dict[str, Any]:
    """Recompute the metrics of ``run_dir`` from its log; write summary.json and curve.png."""
    summary = load_summary(run_dir)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if summary.get("n_tasks"):
        plot_trial_curve(summary, run_dir / "curve.png")
    return summary


#: The drawing of a run's curve.png, written into the PNG (a text chunk): a figure drawn
#: by an older drawing is redrawn by ``report`` even when the summary is unchanged.
CURVE_VERSION = "4"  # 4: the lines drawn as steps, like their bands (issue 49)
_CURVE_KEY = "reflexion-bench-curve"


def curve_is_current(path: Path) -> bool:
    """Whether ``path`` is a curve.png of the current drawing (read without matplotlib)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return f"tEXt{_CURVE_KEY}\0{CURVE_VERSION}".encode("latin-1") in data


def plot_trial_curve(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from reflexion_bench.analysis.plots import use_style

    # Not the user's matplotlibrc (see plots.py); the paper style, as the report's.
    with plt.style.context("default"), use_style("paper"):
        _draw_trial_curve(plt, summary, path)


def _draw_trial_curve(plt: Any, summary: dict[str, Any], path: Path) -> None:
    from reflexion_bench.analysis.plots import (
        _figure,
        _legend_below,
        benchmark_name,
        rate_label,
        save_figure,
        series_style,
        set_title,
        style,
    )
    from reflexion_bench.analysis.stats import wilson_interval

    n = int(summary["n_tasks"])
    ks = list(range(1, len(summary["success_at_trial"]) + 1))
    fig = _figure(2)
    ax = fig.axes[0]
    curves = (
        ("success_at_trial", "success_counts_at_trial", "submitted candidate"),
        ("solved_by_trial", "solved_counts_by_trial", "solved at any trial"),
    )
    for i, (key, counts_key, label) in enumerate(curves):
        # Unknown points (imported logs) are gaps, not zeros.
        ys = [float("nan") if v is None else v for v in summary[key]]
        st = series_style(i)
        # Steps, flat over each trial like the band: a task's verdict holds between
        # trials, so a slope between two trials would draw values never measured.
        ax.plot(
            ks,
            ys,
            **st,
            markerfacecolor=st["color"] if i == 0 else "white",
            drawstyle="steps-mid",
            label=label,
            gid=f"series:{label}",
        )
        counts = summary.get(counts_key) or []
        known = [(k, c) for k, c in zip(ks, counts, strict=False) if c is not None]
        if known and n:
            # The run's own 95% interval at each trial (Wilson: tasks are the unit), as a
            # flat step over the trial.
            bands = [wilson_interval(int(c), n) for _, c in known]
            ax.fill_between(
                [k for k, _ in known],
                [b.low for b in bands],
                [b.high for b in bands],
                step="mid",
                color=st["color"],
                alpha=0.1,
                linewidth=0,
            )
    ax.set_xlabel("trial")
    ax.set_ylabel(rate_label(str(summary.get("benchmark"))))
    ax.set_ylim(0, 1.02)
    ax.set_xticks(ks)
    title = (
        f"{benchmark_name(str(summary.get('benchmark')))}, {summary.get('strategy')} "
        f"(n={n}; 95% Wilson bands)"
    )
    if "answer_key" in summary:
        # A reader of the figure alone must see whether the loop saw the answer key.
        title += f"\n{label_text(summary['answer_key'])}"
    set_title(ax, title)
    ax.grid(alpha=0.3)
    _legend_below(fig, ax, ncol=2)
    save_figure(fig, path, dpi=style().dpi, metadata={_CURVE_KEY: CURVE_VERSION})
    plt.close(fig)


def _f(value: Any, spec: str = ".3f", prefix: str = "", suffix: str = "") -> str:
    return "n/a" if value is None else f"{prefix}{format(value, spec)}{suffix}"


def _shard_lines(shards: dict[str, Any] | None) -> list[str]:
    if not shards:
        return []
    if shards.get("complete"):
        return [f"shards           {shards['count']}, all present and finished"]
    return [f"shards           INCOMPLETE: {'; '.join(shards.get('problems') or [])}"]


def _in_loop_name(summary: dict[str, Any]) -> str:
    # Older summaries name no evaluator: their in-loop verdicts were the self-tests'.
    name = summary.get("evaluator")
    return "self-test" if name in (None, "self_tests") else f"in-loop ({name})"


def _in_loop_lines(in_loop: dict[str, Any] | None) -> list[str]:
    """The in-loop verdicts' error rates per hidden verdict, and the no-verdict trials."""
    if not in_loop:
        return []
    r = in_loop.get("rates") or {}
    lines = [
        f"in-loop rates    false-positive {_f(r.get('fp'))} (of hidden failures called "
        f"pass), false-negative {_f(r.get('fn'))} (of hidden passes called fail), over "
        f"{in_loop.get('trials_judged', 0)} judged trials"
    ]
    if in_loop.get("no_feedback_trials"):
        lines.append(
            f"no feedback      {in_loop['no_feedback_trials']} trials of "
            f"{in_loop.get('no_feedback_tasks', 0)} tasks: the evaluator had nothing to "
            f"check ({', '.join(f'{k}: {v}' for k, v in (in_loop.get('fallbacks') or {}).items())})"
        )
    return lines


def format_table(summary: dict[str, Any]) -> str:
    """A compact human-readable table of one run's metrics (n/a where the log lacks it)."""
    if not summary.get("n_tasks"):
        return "no finished tasks in this run"
    t = summary["totals"]
    c = summary["self_test_confusion"]
    split = summary.get("self_test_fp_split") or {}
    ff = summary.get("first_to_final") or {}
    per_task = summary["per_task_mean"]
    run = summary.get("run") or {}
    elapsed = run.get("wall_time_s")
    sessions = int(run.get("sessions") or 1)
    lines = [
        f"benchmark={summary['benchmark']} strategy={summary['strategy']} "
        f"evaluator={summary.get('evaluator')} model={summary['model']}",
        f"tasks            {summary['n_tasks']}",
        f"answer key       {describe(summary.get('answer_key'))}",
        *_shard_lines(summary.get("shards")),
        f"first-try        {_f(summary['first_try'])}",
        f"final (pass@1)   {_f(summary['final'])}  over all {summary['n_tasks']} tasks, "
        "errored counted as failed",
        f"pass@1 finished  {_f(summary.get('final_finished'))}  over the "
        f"{summary.get('finished_tasks', summary['n_tasks'])} tasks that did not error",
        "success@trial    " + " ".join(_f(v) for v in summary["success_at_trial"]),
        "solved-by-trial  " + " ".join(_f(v) for v in summary["solved_by_trial"]),
        f"fixes/breaks     {summary['fixes']}/{summary['breaks']} between trials, "
        f"{ff.get('fixed', 0)}/{ff.get('broken', 0)} from trial 1 to the end"
        + (f" ({ff['unknown']} tasks unknown)" if ff.get("unknown") else ""),
        f"{_in_loop_name(summary)} TP/FP/FN/TN  {c['tp']}/{c['fp']}/{c['fn']}/{c['tn']} "
        f"(stopped on a wrong pass: {c['final_fp']}, of which before trial K: "
        f"{split.get('stopped_early', 0)})",
        *_in_loop_lines(summary.get("in_loop")),
        f"errored tasks    {summary['errored_tasks']}"
        + (" (retry_errored=true on resume redoes them)" if summary["errored_tasks"] else ""),
        f"model calls      {_f(t['model_calls'], 'd')}  tokens {_f(t['tokens'], 'd')}  "
        f"cost {_f(t['cost_usd'], '.4f', '$')}  (as run live: a call replayed from the "
        "cache counts what its live call spent)",
        f"paid now         tokens {_f(t.get('paid_tokens'), 'd')}  "
        f"cost {_f(t.get('paid_cost_usd'), '.4f', '$')}  (calls not replayed from the cache)",
        # Two different times: the wall clock from start to end, and the sum of every
        # task's own time (tasks that run at once each count theirs: the sum can exceed it).
        "run elapsed      "
        + (
            "n/a (no provenance.json times)"
            if elapsed is None
            else f"{elapsed:.1f}s ({int(elapsed // 3600)}h{int(elapsed % 3600 // 60):02d}m"
            f"{int(elapsed % 60):02d}s) wall clock"
            + (f", over {sessions} sessions" if sessions > 1 else "")
            + (", this session" if run.get("skipped") else "")
            + (f", the longest of {run['shards']} shards" if run.get("shards") else "")
        ),
        f"task time summed {_f(t['wall_time_s'], '.1f', suffix='s')} over "
        f"{summary['n_tasks']} tasks ({_f(per_task['wall_time_s'], '.1f', suffix='s')}/task; "
        "tasks that run at once each count their time: the sum can exceed the elapsed time)",
    ]
    plus = summary.get("plus")
    if plus:
        lines.append(
            f"plus tests       pass@1 {_f(plus['final'])} ({plus['final_count']}/"
            f"{plus['n_tasks']}; base {plus['base_final_count']}): {plus['base_pass_plus_fail']} "
            "submitted programs pass base but fail plus"
        )
        lines.append(
            f"self+base pass, plus fail  {plus['unseen_fp']} trials ({plus['unseen_fp_final']} "
            "submitted): false positives the base tests could not see"
        )
        weak = plus.get("weak_oracles") or []
        if weak:
            lines.append(
                f"weak plus oracles  {len(weak)} tasks where plus cannot reject a base pass: "
                + ", ".join(
                    f"{w['task']} ({w['mbpp_plus_id']}, oracle {w['oracle']})" for w in weak
                )
            )
    logged = summary.get("logged")
    if logged:
        lines.append(
            f"as logged        final {_f(logged['final'])} "
            f"(re-scored agrees on {_f(logged['rescored_agreement'])} of tasks)"
        )
    if summary.get("missing"):
        lines.append(f"missing in log   {summary['missing']}")
    if summary.get("alfworld"):
        from reflexion_bench.analysis.alfworld import format_summary_section

        lines.append(format_summary_section(summary["alfworld"]))
    return "\n".join(lines)


# --------------------------------------------------------------------------- many runs


def build_comparison(
    paths: Sequence[str | Path],
    *,
    paper: bool = False,
    axis: str = "tokens",
    budget: float | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    equivalence_margin: float = 0.05,
    budget_unit: str = "tokens",
    submit: str = "last",
) -> dict[str, Any]:
    """The multi-run report (see :mod:`reflexion_bench.analysis.tables`) of every run
    folder under ``paths`` (run folders, sweep folders or log files), with the budget
    curves in ``budget_unit`` (:mod:`reflexion_bench.analysis.budget_curve`), every
    number read under the submission rule ``submit``
    (:mod:`reflexion_bench.analysis.submission`)."""
    from reflexion_bench.analysis.budget_curve import budget_curve_section, check_unit
    from reflexion_bench.analysis.feedback import confusion_by_trial, rewrites
    from reflexion_bench.analysis.runs import load_groups
    from reflexion_bench.analysis.submission import resubmit_groups
    from reflexion_bench.analysis.tables import build_report

    check_unit(budget_unit)  # before the work, not after it
    groups = load_groups(paths)
    original = resubmit_groups(groups, submit)
    report = build_report(
        groups,
        paper=paper,
        axis=axis,
        budget=budget,
        n_resamples=n_resamples,
        seed=seed,
        equivalence_margin=equivalence_margin,
    )
    if original:
        report["settings"]["submit"] = submit  # absent under `last`: reports as before
        # Per-trial tables pair a trial's in-loop verdict with its own hidden verdict.
        for g, data in zip(groups, report["groups"], strict=True):
            data["self_test_by_trial"] = confusion_by_trial(original[id(g)])
            data["rewrites"] = rewrites(original[id(g)])
    curves = budget_curve_section(
        groups, unit=budget_unit, submit=submit, n_resamples=n_resamples, seed=seed
    )
    if curves["curves"]:  # absent without a reference strategy: such reports are unchanged
        report["budget_curves"] = curves
    return report


#: The list of files a report folder's last ``write_comparison`` wrote (see there).
MANIFEST_NAME = "manifest.txt"
_MANIFEST_HEADER = (
    "# Written by `reflexion-bench report --out`: every file of this folder that it wrote.\n"
    "# The next run replaces them and deletes those it no longer writes; other files are\n"
    "# left alone (the command warns about them).\n"
)


def read_manifest(out_dir: Path) -> set[str]:
    """The files (relative, POSIX) that the last report written into ``out_dir`` wrote.

    A folder written before manifests existed (it has a ``report.json`` but no
    manifest) owns the files named the way the report names them: ``report.*``,
    ``table_*.csv`` and ``figures/*.png|pdf``. Entries that would leave the folder are
    ignored: a manifest never makes the command delete anything outside ``out_dir``.
    """
    manifest = out_dir / MANIFEST_NAME
    if manifest.is_file():
        names = [
            line.strip()
            for line in manifest.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        ]
    elif (out_dir / "report.json").is_file():
        patterns = ("report.md", "report.tex", "report.json", "table_*.csv", "figures/*.p[nd][gf]")
        names = sorted(
            p.relative_to(out_dir).as_posix() for pat in patterns for p in out_dir.glob(pat)
        )
    else:
        return set()
    return {n for n in names if not Path(n).is_absolute() and ".." not in Path(n).parts}


def foreign_files(out_dir: Path, written: Sequence[Path]) -> list[str]:
    """Files in ``out_dir`` (relative, sorted) that the report did not write."""
    mine = {p.resolve() for p in written}
    return sorted(
        p.relative_to(out_dir).as_posix()
        for p in out_dir.rglob("*")
        if p.is_file() and p.resolve() not in mine
    )


def _relative_runs(report: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """The report with each group's run folders relative to ``out_dir``: a written report
    names its runs as seen from where it lies, never by the absolute location of the
    folder it was built in (the same report, rebuilt in a copy elsewhere, is the same)."""
    base = os.path.abspath(out_dir)

    def rel(run: str | Path) -> str:
        return Path(os.path.relpath(os.path.abspath(run), base)).as_posix()

    groups = [
        {**g, "runs": [rel(r) for r in g["runs"]]} if "runs" in g else g for g in report["groups"]
    ]
    return {**report, "groups": groups}


def write_comparison(
    report: dict[str, Any], out_dir: Path, *, style_name: str = "paper"
) -> list[Path]:
    """Write the report as report.md, report.tex, one CSV per table, report.json, and
    every figure (PNG + PDF) into ``out_dir``, and the list of them as ``manifest.txt``;
    return the files written (the manifest last). ``style_name``: the figures' style
    (:data:`reflexion_bench.analysis.plots.STYLES`).

    Every file is the same bytes when rebuilt from the same logs, in any folder: run
    folders are named relative to ``out_dir``, figures carry no date or version
    (:func:`reflexion_bench.analysis.plots.save_figure`). Files of the previous
    manifest (:func:`read_manifest`) that this call does not write, such as the figure of
    a run since removed, are deleted; files the report never wrote are left in place
    (:func:`foreign_files` names them)."""
    from reflexion_bench.analysis.plots import write_plots
    from reflexion_bench.analysis.tables import TABLES, has_table, render, tables

    out_dir.mkdir(parents=True, exist_ok=True)
    previous = read_manifest(out_dir)
    report = _relative_runs(report, out_dir)
    written = []
    for name, fmt in (("report.md", "md"), ("report.tex", "latex"), ("report.json", "json")):
        path = out_dir / name
        text = render(report, fmt)
        if fmt == "md" and report.get("budget_curves"):
            from reflexion_bench.analysis.budget_curve import budget_curve_markdown

            text += budget_curve_markdown(report["budget_curves"])
        path.write_text(text, encoding="utf-8")
        written.append(path)
    frames = tables(report)
    for name in TABLES:
        if not has_table(report, name):
            continue  # an optional table these runs do not call for: no file at all
        path = out_dir / f"table_{name}.csv"
        frames[name].to_csv(path, index=False)
        written.append(path)
    axes = tuple(dict.fromkeys((report["settings"]["axis"], "tokens", "dollars", "wall")))
    written += write_plots(report, out_dir / "figures", axes=axes, style_name=style_name)
    if report.get("budget_curves"):
        from reflexion_bench.analysis.budget_curve import budget_curve_frame, plot_budget_curves

        path = out_dir / "table_budget_curve.csv"
        budget_curve_frame(report["budget_curves"]).to_csv(path, index=False)
        written.append(path)
        written += plot_budget_curves(
            report["budget_curves"], out_dir / "figures", style_name=style_name
        )
    if (report.get("feedback") or {}).get("dose"):
        from reflexion_bench.analysis.feedback_did import plot_dose

        written += plot_dose(report["feedback"], out_dir / "figures", style_name=style_name)
    names = sorted({p.relative_to(out_dir).as_posix() for p in written})
    for stale in sorted(previous - set(names) - {MANIFEST_NAME}):
        path = out_dir / stale
        if path.is_file() or path.is_symlink():
            path.unlink()
            # A folder emptied by the clean-up goes too (never out_dir itself).
            parent = path.parent
            while parent != out_dir and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    manifest = out_dir / MANIFEST_NAME
    manifest.write_text(_MANIFEST_HEADER + "".join(f"{n}\n" for n in names), encoding="utf-8")
    return [*written, manifest]


_BLOCK = re.compile(
    r"(<!-- report:(?P<table>\w+)(?P<args>[^>]*?) -->\n)(?P<body>.*?)(<!-- /report -->)", re.S
)


def refresh_readme_blocks(report: dict[str, Any], readme: Path) -> bool:
    """Rewrite every generated block of a study's README from the report.

    A block is ``<!-- report:TABLE [columns=a,b,...] [where=col:value] -->`` ... ``<!--
    /report -->``: its body becomes that table (the chosen numeric columns, as the
    Markdown report shows them, with its note); ``<!-- report:answer -->`` becomes the
    pooled comparisons in words (``tables.pooled_answer``), ``<!-- report:budget_curves
    -->`` the budget curves' answers (one per comparison), ``<!-- report:did -->`` the
    feedback study's differences in differences and ``<!-- report:dose -->`` its
    dose-response, in words (:mod:`reflexion_bench.analysis.feedback_did`). So a study's README quotes
    its numbers from the report, never by hand, and a rebuild that changes a number
    changes the README (the committed-reports test compares it byte for byte). Returns
    whether the file changed; a README without blocks is left alone."""
    from reflexion_bench.analysis.tables import (
        TABLES,
        _md_note,
        answer_markdown,
        display_frame,
        feedback_markdown,
        select_columns,
        tables,
        to_markdown,
        why_empty,
    )

    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return False
    frames = tables(report)

    def body(m: re.Match[str]) -> str:
        name = m.group("table")
        opts = dict(a.split("=", 1) for a in m.group("args").split() if "=" in a)
        if name == "answer":
            # The pooled comparisons in words: the study's answer, from the same numbers;
            # `planned=humaneval:164,mbpp:200` (the design) keeps a short study partial;
            # `table=strategies` says it per benchmark.
            planned = {}
            for item in filter(None, opts.get("planned", "").split(",")):
                bench, _, n = item.partition(":")
                if not n.isdigit():
                    raise ValueError(
                        f"{readme}: report:answer planned= takes benchmark:tasks pairs,"
                        f" got {item!r}"
                    )
                planned[bench] = int(n)
            words = answer_markdown(report, planned, table=opts.get("table", "pooled"))
            return f"{m.group(1)}{words}\n{m.group(5)}"
        if name == "budget_curves":
            # The budget curves' answers in words, one per comparison (its budget ranges).
            curves = [
                c
                for c in (report.get("budget_curves") or {}).get("curves") or []
                if not c["mirror"]
            ]
            words = "\n".join(f"- {c['sentence']}" for c in curves) or "- (no comparison)"
            return f"{m.group(1)}{words}\n{m.group(5)}"
        if name in ("did", "dose"):
            # The feedback study's answer in words: one sentence per DiD row / benchmark.
            return f"{m.group(1)}{feedback_markdown(report, name)}\n{m.group(5)}"
        if name not in TABLES:
            raise ValueError(
                f"{readme}: unknown table {name!r} in a report block "
                f"({TABLES}, answer, budget_curves, did or dose)"
            )
        df = frames[name]
        if "where" in opts and not df.empty:
            col, value = opts["where"].split(":", 1)
            df = df[df[col].astype(str) == value]
        if "columns" in opts:
            df = select_columns(df, opts["columns"].split(","), what=f"{readme}: table {name}")
        why = ""
        if df.empty:
            # A blank block says why: the table is empty, or the filter kept no row.
            why = (
                why_empty(name, report)
                if frames[name].empty
                else f"no row with {opts['where'].replace(':', ' = ', 1)}"
            )
        md = to_markdown(display_frame(df.reset_index(drop=True)), why) + _md_note(name, report)
        return f"{m.group(1)}{md}\n{m.group(5)}"

    new = _BLOCK.sub(body, text)
    if new == text:
        return False
    readme.write_text(new, encoding="utf-8")
    return True
