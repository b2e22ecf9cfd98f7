"""Strategies at equal budget: pass@1 resampled at any budget from the logs, the
equal-budget comparison table (paired tests against the baselines, Holm-corrected),
and the cost-accuracy Pareto frontier.

*Resampling from the logs.* A strategy's trials are sequential, so "what would this run
have submitted had every task been stopped at budget B" is read off its log exactly:
per task, the last trial whose verdict was paid for within B (the cumulative spend of
every earlier trial plus this trial's ``actor`` and ``self_test`` calls, as run live;
the reflection or critique a trial writes for the *next* trial is not needed for its
own verdict), and that trial's hidden verdict; a task with no trial within B scores 0.
This needs no interpolation and gives a 0/1 verdict per task at every B, so the same
paired statistics apply at any budget. Budgets above what a run spent read its final
verdicts, so a run is never credited with trials it did not run.

*Comparisons.* At the budget B the runs were given (``budget.<axis>`` in their logs,
else ``--budget``, else the cheapest strategy's mean spend), every strategy is compared
with each reference (``retry``, ``reflexion``) on the tasks both ran: difference of
pass@1 with a paired bootstrap CI, exact McNemar p-value, and the Holm-adjusted p-value
within each reference's family of comparisons (statsmodels ``multipletests``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from reflexion_bench.analysis.answer_key import label_text
from reflexion_bench.analysis.metrics import hidden_verdict
from reflexion_bench.analysis.power import DEFAULT_MARGIN, assess
from reflexion_bench.analysis.runs import same_seed
from reflexion_bench.analysis.stats import (
    bootstrap_ci,
    bootstrap_curve_ci,
    mcnemar_exact,
    paired_bootstrap_diff,
)

#: The calls a trial's own verdict needs (the rest of a trial's calls prepare the next).
ATTEMPT_ROLES = frozenset({"actor", "self_test"})
#: Budget axes that can be resampled per task from call records.
CALL_AXES = {"tokens": None, "calls": None, "dollars": "cost_usd"}
REFERENCES = ("retry", "reflexion")


def _call_cost(call: Mapping[str, Any], axis: str) -> float:
    if axis == "tokens":
        return float(call.get("prompt_tokens") or 0) + float(call.get("completion_tokens") or 0)
    if axis == "calls":
        return 1.0
    return float(call.get("cost_usd") or 0.0)


def task_budget_points(
    records: Sequence[Mapping[str, Any]], axis: str = "tokens"
) -> dict[str, list[tuple[float, bool]]]:
    """Per task: (spend needed for this trial's verdict, hidden verdict) per trial."""
    if axis not in CALL_AXES:
        raise ValueError(f"axis {axis!r} cannot be resampled (allowed: {', '.join(CALL_AXES)})")
    tasks: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        tasks.setdefault(str(r["task_id"]), []).append(r)
    out: dict[str, list[tuple[float, bool]]] = {}
    for tid, recs in tasks.items():
        recs = sorted(recs, key=lambda r: int(r["trial"]))
        before = 0.0
        points = []
        for r in recs:
            calls = r.get("model_calls") or []
            own = sum(_call_cost(c, axis) for c in calls if c.get("role") in ATTEMPT_ROLES)
            points.append((before + own, bool(hidden_verdict(dict(r)))))
            before += sum(_call_cost(c, axis) for c in calls)
        out[tid] = points
    return out


def verdicts_at_budget(
    points: Mapping[str, list[tuple[float, bool]]], budget: float
) -> dict[str, bool]:
    """Per task: the verdict of the last trial paid for within ``budget`` (else False)."""
    out = {}
    for tid, pts in points.items():
        within = [v for cost, v in pts if cost <= budget + 1e-9]
        out[tid] = bool(within[-1]) if within else False
    return out


def budget_curve(
    records: Sequence[Mapping[str, Any]],
    budgets: Sequence[float],
    axis: str = "tokens",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict[str, float]]:
    """pass@1 at each budget, with a bootstrap band over tasks (one draw for all budgets)."""
    points = task_budget_points(records, axis)
    ids = sorted(points)
    if not ids or not budgets:
        return []
    m = np.array([[float(verdicts_at_budget(points, b)[t]) for b in budgets] for t in ids])
    bands = bootstrap_curve_ci(m, n_resamples=n_resamples, seed=seed)
    return [{"budget": float(b), **iv.to_dict()} for b, iv in zip(budgets, bands, strict=True)]


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point dominates (cost no higher and accuracy no
    lower, one of them strictly), sorted by cost."""
    front = []
    for i, (ci, ai) in enumerate(points):
        dominated = any(
            (cj <= ci and aj >= ai) and (cj < ci or aj > ai)
            for j, (cj, aj) in enumerate(points)
            if j != i
        )
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (statsmodels), in the input order."""
    if not pvalues:
        return []
    from statsmodels.stats.multitest import multipletests

    return [float(p) for p in multipletests(list(pvalues), method="holm")[1]]


def min_discordant(alpha: float = 0.05, comparisons: int = 1) -> int:
    """The fewest discordant tasks, all favouring one strategy, for which the exact
    McNemar test gives p < alpha / comparisons (Holm's strictest step): what a paired
    sample can detect at best. A difference with discordant tasks on both sides needs
    more."""
    from scipy.stats import binomtest

    d = 1
    while binomtest(d, d, 0.5).pvalue >= alpha / comparisons:
        d += 1
    return d


def run_budget(records: Sequence[Mapping[str, Any]], axis: str) -> float | None:
    """The per-task budget on ``axis`` the run was given (from its final trials), if one."""
    key = {"tokens": "tokens", "calls": "calls", "dollars": "usd"}.get(axis)
    values = {
        (r.get("extra") or {}).get("budget", {}).get(key)
        for r in records
        if r.get("final") and isinstance((r.get("extra") or {}).get("budget"), Mapping)
    }
    values.discard(None)
    return float(values.pop()) if len(values) == 1 else None


def stop_reasons(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        if r.get("final"):
            reason = str((r.get("extra") or {}).get("stop_reason") or "unrecorded")
            out[reason] = out.get(reason, 0) + 1
    return dict(sorted(out.items()))


def equal_budget_section(
    groups: Sequence[Any],
    gdata: Mapping[int, Mapping[str, Any]],
    *,
    axis: str = "tokens",
    budget: float | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    expected_tasks: int | None = None,
    margin: float = DEFAULT_MARGIN,
) -> dict[str, Any]:
    """The ``strategies`` table, the budget curves and the Pareto points (see the module
    docstring). ``groups`` are :class:`~reflexion_bench.analysis.runs.Group` objects of
    one benchmark x model cluster or several (each cluster is compared within itself)."""
    if axis not in CALL_AXES:
        return {"axis": axis, "rows": [], "curves": {}, "pareto": [], "note": "axis not resampled"}
    clusters: dict[tuple[str, str], list[Any]] = {}
    for g in groups:
        clusters.setdefault((g.benchmark, g.model), []).append(g)
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[dict[str, float]]] = {}
    pareto: list[dict[str, Any]] = []
    budgets_used: dict[str, float | None] = {}
    for (bench, model), gs in clusters.items():
        given = {run_budget(g.records, axis) for g in gs}
        b = budget
        if b is None and len(given) == 1:
            b = given.pop()
        if b is None:
            finals = [gdata[id(g)]["per_task"].get(axis) for g in gs]
            finals = [f for f in finals if f is not None]
            b = min(finals) if finals else None
        budgets_used[f"{bench} / {model}"] = b
        points = {id(g): task_budget_points(g.records, axis) for g in gs}
        at_b = {id(g): verdicts_at_budget(points[id(g)], b) for g in gs} if b is not None else {}
        max_spend = max(
            (c for g in gs for pts in points[id(g)].values() for c, _ in pts), default=0.0
        )
        grid = [float(x) for x in np.linspace(0, max_spend, 41)[1:]] if max_spend > 0 else []
        if b is not None and b not in grid:
            grid = sorted([*grid, float(b)])
        for g in gs:
            curves[f"{bench} / {g.name} / {model}"] = budget_curve(
                g.records, grid, axis, n_resamples=n_resamples, seed=seed
            )
        comparisons: dict[str, list[dict[str, Any]]] = {}
        ref_rows = {ref: [g for g in gs if g.strategy == ref] for ref in REFERENCES}
        for g in gs:
            v = at_b.get(id(g), {})
            ci = (
                bootstrap_ci([float(x) for x in v.values()], n_resamples=n_resamples, seed=seed)
                if v
                else None
            )
            data = gdata[id(g)]
            row: dict[str, Any] = {
                "benchmark": bench,
                "model": model,
                "strategy": g.name,
                "answer_key": label_text(data.get("answer_key")),
                "n": len(v),
                "partial": None,  # set below, against the cluster's largest run
                "axis": axis,
                "budget": b,
                "pass_at_budget": ci.to_dict() if ci else None,
                "final_as_run": data["final"],
                "spend_per_task": data["per_task"].get(axis),
                "trials_per_task": data["per_task"].get("trials"),
                "stop_reasons": stop_reasons(g.records),
            }
            for ref_name, candidates in ref_rows.items():
                # The reference of g's own seed: seeds are never crossed.
                ref = same_seed(g, candidates) if candidates else None
                if ref is None or ref is g:
                    continue
                rv = at_b.get(id(ref), {})
                common = sorted(t for t in v if t in rv)
                if not common:
                    continue
                xa = [v[t] for t in common]
                xb = [rv[t] for t in common]
                test = mcnemar_exact(xa, xb)
                diff = paired_bootstrap_diff(xa, xb, n_resamples=n_resamples, seed=seed)
                cmp: dict[str, Any] = {
                    "n_common": len(common),
                    "diff": diff.to_dict(),
                    "only_this": test.only_a,
                    "only_ref": test.only_b,
                    "p": test.p_value,
                    "_samples": (xa, xb),  # for the assessment after Holm; not kept
                }
                row[f"vs_{ref_name}"] = cmp
                comparisons.setdefault(ref_name, []).append(cmp)
            rows.append(row)
            pareto.append(
                {
                    "benchmark": bench,
                    "model": model,
                    "strategy": g.name,
                    "cost": data["per_task"].get(axis),
                    "accuracy": data["final"].get("estimate"),
                    "low": data["final"].get("low"),
                    "high": data["final"].get("high"),
                    "answer_key": label_text(data.get("answer_key")),
                }
            )
        biggest = max(
            (r["n"] for r in rows if (r["benchmark"], r["model"]) == (bench, model)), default=0
        )
        for r in rows:
            if (r["benchmark"], r["model"]) == (bench, model):
                r["partial"] = r["n"] < max(biggest, expected_tasks or 0)
        # Holm within each reference's family (every strategy of this cluster vs it).
        for family in comparisons.values():
            for cmp, adj in zip(family, holm([c["p"] for c in family]), strict=True):
                cmp["p_holm"] = adj
                xa, xb = cmp.pop("_samples")
                cmp["assessment"] = assess(xa, xb, p_value=adj, margin=margin)
    # The frontier per cluster, among clean runs only (an answer-in-loop run is drawn
    # but never on the frontier: its accuracy is not comparable).
    for key in {(p["benchmark"], p["model"]) for p in pareto}:
        pts = [
            p
            for p in pareto
            if (p["benchmark"], p["model"]) == key
            and p["cost"] is not None
            and p["accuracy"] is not None
            and not str(p["answer_key"]).startswith("answer-in-loop")
        ]
        for i in pareto_front([(float(p["cost"]), float(p["accuracy"])) for p in pts]):
            pts[i]["on_front"] = True
    for p in pareto:
        p.setdefault("on_front", False)
    n_family = max((sum(1 for r in rows if f"vs_{ref}" in r) for ref in REFERENCES), default=0)
    n_max = max((r["n"] for r in rows), default=0)
    return {
        "axis": axis,
        "detectable": {
            "n_tasks": n_max,
            "comparisons_per_reference": n_family,
            "min_one_sided_discordant": min_discordant(0.05, 1),
            "min_one_sided_discordant_holm": min_discordant(0.05, max(1, n_family)),
        },
        "budgets": budgets_used,
        "rows": rows,
        "curves": curves,
        "pareto": pareto,
    }
