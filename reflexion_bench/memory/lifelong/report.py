"""The lifelong report of a run folder: learning curve, repeat failures, gating, usefulness.

Everything is recomputed from ``log.jsonl`` (the trials), ``memory_events.jsonl``
(retrievals and gating decisions) and the reflection store named in the run's
``config.yaml``. A run without lifelong memory (a baseline on the same stream) gets
the learning curve and the repeat-failure rate too, so the two can be compared.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import yaml

from reflexion_bench.core.runlog import load_run_records
from reflexion_bench.memory.lifelong.memory import EVENTS_NAME
from reflexion_bench.memory.lifelong.metrics import (
    gating_counts,
    learning_curve,
    load_events,
    outcome_index,
    repeat_failure_rate,
    same_benchmark_neighbours,
    store_growth,
    task_rows,
    tfidf_neighbours,
    usefulness,
)
from reflexion_bench.memory.lifelong.record import OUTCOMES
from reflexion_bench.memory.lifelong.store import ReflectionStore

log = logging.getLogger(__name__)

REPORT_JSON = "lifelong_report.json"
CURVE_PNG = "learning_curve.png"


def _store_of(run_dir: Path) -> Path | None:
    cfg_path = run_dir / "config.yaml"
    if not cfg_path.exists():
        return None
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8")) or {}
    store = (cfg.get("memory") or {}).get("store")
    if not store:
        return None
    path = Path(str(store))
    return path if path.is_absolute() or path.exists() else run_dir / path


def lifelong_report(
    run_dir: Path,
    window: int = 10,
    min_sim: float = 0.2,
    neighbours: int = 5,
    signature_source: str = "hidden",
    store: Path | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """Compute (and by default write ``lifelong_report.json`` and ``learning_curve.png``).

    Args:
        run_dir: A run folder.
        window: Rolling-mean window of the learning curve (tasks).
        min_sim: TF-IDF cosine above which an earlier task counts as similar.
        neighbours: Similar earlier tasks considered per task.
        signature_source: ``hidden`` or ``self_test`` failure text for signatures.
        store: The reflection store (default: the one in the run's config).
        write: Write the JSON and PNG into the run folder.
    """
    records = load_run_records(run_dir)
    rows = task_rows(records, source=signature_source)
    events = load_events(run_dir / EVENTS_NAME)
    # A stream logs its own name as the benchmark; the memory events know each task's.
    kinds = {str(e["task_id"]): str(e["task_type"]) for e in events if e.get("task_type")}
    for row in rows:
        row.benchmark = kinds.get(row.task_id, row.benchmark)
    texts = {
        str(e["task_id"]): str(e["task_text"])
        for e in events
        if e.get("event") == "begin_task" and e.get("task_text")
    }
    if rows and not all(r.task_id in texts for r in rows):
        texts = {**_task_texts_from_config(run_dir), **texts}
    if texts and all(r.task_id in texts for r in rows):
        near = tfidf_neighbours(texts, [r.task_id for r in rows], min_sim, neighbours)
        similarity = f"tfidf>={min_sim} (top {neighbours} earlier tasks)"
    else:
        near = same_benchmark_neighbours(rows)
        similarity = "same benchmark (task texts not logged)"
    report: dict[str, Any] = {
        "run_dir": str(run_dir),
        "n_tasks": len(rows),
        "final_success": sum(r.success for r in rows) / len(rows) if rows else None,
        "first_try_success": sum(r.first_try for r in rows) / len(rows) if rows else None,
        "learning_curve": {"window": window, "points": learning_curve(rows, window)},
        "repeat_failure": {
            "similarity": similarity,
            "signature_source": signature_source,
            **repeat_failure_rate(rows, near),
        },
    }
    halves = _halves(rows)
    if halves:
        report["success_by_half"] = halves
    store_path = store or _store_of(run_dir)
    outcome_of: dict[str, str] = {}
    if store_path is not None and store_path.exists():
        with ReflectionStore(store_path, read_only=True) as st:
            outcome_of = outcome_index(st.index_rows())
            report["store"] = {
                "path": str(store_path),
                "size": len(st),
                "active": st.count(active_only=True),
                "by_outcome": {o: sum(1 for v in outcome_of.values() if v == o) for o in OUTCOMES},
            }
    if events:
        ends = [e for e in events if e.get("event") == "end_task"]
        begins = [e for e in events if e.get("event") == "begin_task"]
        latencies = sorted(float(e["latency_ms"]) for e in begins if "latency_ms" in e)
        calls = [c for e in ends for c in e.get("model_calls") or []]
        report["gating"] = gating_counts(events)
        report["store_growth"] = store_growth(events)
        report["usefulness"] = usefulness(events, rows, outcome_of)
        report["retrieval"] = {
            "tasks_with_lessons": sum(1 for e in begins if e.get("retrieved")),
            "lessons_shown": sum(len(e.get("retrieved") or []) for e in begins),
            "p50_ms": _pct(latencies, 50),
            "p95_ms": _pct(latencies, 95),
            "errors": sum(1 for e in [*begins, *ends] if e.get("error")),
        }
        quality = [j["scores"] for e in ends for j in e.get("judged") or [] if j.get("scores")]
        if quality:
            report["quality"] = {
                "judged": len(quality),
                "mean": {c: sum(q[c] for q in quality) / len(quality) for c in quality[0]},
            }
        report["post_loop_model_calls"] = {
            "calls": len(calls),
            "by_role": {
                r: sum(1 for c in calls if c.get("role") == r)
                for r in {c.get("role") for c in calls}
            },
            "tokens": sum(
                int(c.get("prompt_tokens", 0)) + int(c.get("completion_tokens", 0)) for c in calls
            ),
        }
    report["circuit_breaker"] = _breaker_stats(records)
    if write:
        (run_dir / REPORT_JSON).write_text(json.dumps(report, indent=2), encoding="utf-8")
        if rows:
            plot_learning_curve(report, run_dir / CURVE_PNG)
    return report


def _task_texts_from_config(run_dir: Path) -> dict[str, str]:
    """Task prompts of a run without memory events (e.g. a baseline with window
    memory), from the environment in its saved config; empty if it cannot be built."""
    cfg_path = run_dir / "config.yaml"
    if not cfg_path.exists():
        return {}
    try:
        from omegaconf import OmegaConf

        from reflexion_bench.config import build

        cfg = OmegaConf.load(cfg_path)
        tasks = build(cfg.env, "env").load_tasks()
    except Exception as exc:  # the dataset may be elsewhere now: fall back, say why
        log.warning("task texts of %s unavailable (%s): similar = same benchmark", run_dir, exc)
        return {}
    return {t.id: t.prompt for t in tasks}


def _halves(rows: list[Any]) -> dict[str, float] | None:
    if len(rows) < 4:
        return None
    mid = len(rows) // 2
    first, second = rows[:mid], rows[mid:]
    return {
        "first_half": sum(r.success for r in first) / len(first),
        "second_half": sum(r.success for r in second) / len(second),
    }


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return round(float(np.percentile(values, q)), 2)


def _breaker_stats(records: list[dict[str, Any]]) -> dict[str, int]:
    probes = sum(
        1
        for r in records
        if "new_evidence_required" in ((r.get("extra") or {}).get("memory_kinds") or [])
    )
    stops = sum(1 for r in records if str(r.get("error") or "").startswith("CircuitBreakerOpen"))
    return {"trials_told_to_gather_evidence": probes, "tasks_stopped_for_review": stops}


def plot_learning_curve(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = report["learning_curve"]["points"]
    xs = [p["index"] + 1 for p in pts]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(
        xs,
        [p["rolling_success"] for p in pts],
        "-",
        color="black",
        label=f"final, rolling {report['learning_curve']['window']}",
    )
    ax.plot(
        xs, [p["rolling_first_try"] for p in pts], "--", color="grey", label="first try, rolling"
    )
    ax.plot(
        xs, [p["cumulative_success"] for p in pts], ":", color="black", label="final, cumulative"
    )
    ax.scatter(xs, [int(p["success"]) for p in pts], s=8, color="black", alpha=0.4)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("task index in the stream")
    ax.set_ylabel("success")
    ax.set_ylim(-0.05, 1.05)
    rf = report["repeat_failure"]["rate"]
    title = f"lifelong learning curve (n={report['n_tasks']}"
    title += f", repeat-failure {rf:.2f})" if rf is not None else ")"
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def format_report(report: dict[str, Any]) -> str:
    """A compact text rendering of :func:`lifelong_report`."""
    lines = [f"lifelong report: {report['run_dir']}", f"tasks              {report['n_tasks']}"]
    if report["n_tasks"]:
        lines.append(
            f"success            final {report['final_success']:.3f}  first-try {report['first_try_success']:.3f}"
        )
    if "success_by_half" in report:
        h = report["success_by_half"]
        lines.append(f"by half            {h['first_half']:.3f} -> {h['second_half']:.3f}")
    pts = report["learning_curve"]["points"]
    if pts:
        lines.append(
            f"learning curve     rolling({report['learning_curve']['window']}): "
            + " ".join(f"{p['rolling_success']:.2f}" for p in pts)
        )
    rf = report["repeat_failure"]
    rate = "n/a" if rf["rate"] is None else f"{rf['rate']:.3f}"
    lines.append(
        f"repeat-failure     {rate} ({rf['repeats']}/{rf['exposed']} exposed tasks; {rf['similarity']})"
    )
    if "gating" in report:
        g = report["gating"]
        wr = g["would_reflect"]
        red = g["reduction_vs_always"]
        lines.append(
            f"gating             active={g['active_policy']} written={g['written']}  would reflect: "
            + ", ".join(
                f"{k}={wr.get(k, 0)}"
                for k in ("always", "failures", "low_confidence", "novel", "gated")
            )
            + (f"  (reduction vs always {red:.0%})" if red is not None else "")
        )
    if "store" in report:
        s = report["store"]
        lines.append(
            f"store              {s['size']} reflections, {s['active']} active, by outcome {s['by_outcome']}"
        )
    growth = report.get("store_growth") or []
    if growth:
        lines.append(
            "store over tasks   size "
            + " ".join(str(g["size"]) for g in growth)
            + " | active "
            + " ".join(str(g["active"]) for g in growth)
        )
    if "retrieval" in report:
        r = report["retrieval"]
        lines.append(
            f"retrieval          {r['lessons_shown']} lessons over {r['tasks_with_lessons']} tasks; "
            f"p50 {r['p50_ms']} ms p95 {r['p95_ms']} ms; errors {r['errors']}"
        )
    if "usefulness" in report:
        u = report["usefulness"]
        for kind in ("post_failure", "post_success", "unknown_outcome"):
            k = u.get(kind)
            if k is None or (kind == "unknown_outcome" and not k["stored"]):
                continue
            lines.append(
                f"{kind:<18} stored {k['stored']} retrieved {k['retrievals']}x, success when retrieved "
                f"{_f(k['success_when_retrieved'])}, useful/stored {_f(k['useful_per_stored'])}"
            )
    if "quality" in report:
        q = report["quality"]
        lines.append(
            f"quality (judge)    n={q['judged']} "
            + " ".join(f"{k}={v:.2f}" for k, v in q["mean"].items())
        )
    cb = report["circuit_breaker"]
    if any(cb.values()):
        lines.append(f"circuit breaker    {cb}")
    return "\n".join(lines)


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"
