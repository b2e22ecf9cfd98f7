"""Run reports: ``summary.json``, the trial-curve PNG and a printed table, from the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.runner.runlog import load_run_records


def load_summary(run_dir: Path) -> dict[str, Any]:
    return summarize(load_run_records(run_dir))


def write_run_outputs(run_dir: Path) -> dict[str, Any]:
    """Recompute the metrics of ``run_dir`` from its log; write summary.json and curve.png."""
    summary = load_summary(run_dir)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if summary.get("n_tasks"):
        plot_trial_curve(summary, run_dir / "curve.png")
    return summary


def plot_trial_curve(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = list(range(1, len(summary["success_at_trial"]) + 1))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(ks, summary["success_at_trial"], "o-", color="black", label="submitted candidate")
    ax.plot(ks, summary["solved_by_trial"], "s--", color="grey", label="solved at any trial")
    ax.set_xlabel("trial")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(ks)
    title = f"{summary.get('benchmark')} / {summary.get('strategy')} (n={summary['n_tasks']})"
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def format_table(summary: dict[str, Any]) -> str:
    """A compact human-readable table of one run's metrics."""
    if not summary.get("n_tasks"):
        return "no finished tasks in this run"
    t = summary["totals"]
    c = summary["self_test_confusion"]
    lines = [
        f"benchmark={summary['benchmark']} strategy={summary['strategy']} model={summary['model']}",
        f"tasks            {summary['n_tasks']}",
        f"first-try        {summary['first_try']:.3f}",
        f"final (pass@1)   {summary['final']:.3f}",
        "success@trial    " + " ".join(f"{v:.3f}" for v in summary["success_at_trial"]),
        "solved-by-trial  " + " ".join(f"{v:.3f}" for v in summary["solved_by_trial"]),
        f"fixes/breaks     {summary['fixes']}/{summary['breaks']}",
        f"self-test TP/FP/FN/TN  {c['tp']}/{c['fp']}/{c['fn']}/{c['tn']} (stopped on a wrong pass: {c['final_fp']})",
        f"errored tasks    {summary['errored_tasks']}",
        f"model calls      {t['model_calls']}  tokens {t['tokens']}  cost ${t['cost_usd']:.4f}",
        f"wall time        {t['wall_time_s']:.1f}s total, {summary['per_task_mean']['wall_time_s']:.1f}s/task",
    ]
    return "\n".join(lines)
