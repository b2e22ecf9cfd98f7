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
with each reference (``retry``, ``reflexion``) of its own in-loop evaluator arm
(:func:`reflexion_bench.analysis.runs.evaluator_arm`) on the tasks both ran: difference of
pass@1 with Newcombe's paired score CI, exact McNemar p-value, and the Holm-adjusted
p-value over one family: every distinct test of the table (a strategy vs ``retry`` in its
row and ``retry`` vs it in the reference's row are one test; statsmodels
``multipletests``).

*Plus verdicts.* Where a run's candidates were re-judged by the stronger tests
(``reflexion-bench rescore --tests plus``, or ``scorer.tests=both|plus``), pass@1 at the
budget is also read with the plus verdict of the same trial (a base failure is a plus
failure; a base pass never judged under plus leaves the cell blank).

*Pooled over benchmarks.* Runs of one strategy and model on several benchmarks (each at
its own budget) are pooled: every task of every benchmark weighs the same, and the
intervals are the Wilson and Newcombe intervals of the pooled counts (their binomial
variance is at least the stratified one: the benchmarks' sizes are fixed by design, so
this errs wide), McNemar's exact test runs on the discordant tasks of all
benchmarks together (under the null each benchmark's are Binomial(d, 1/2), so their sum
is Binomial(sum d, 1/2): exact under stratification too), the equivalence test on the
per-task differences of all benchmarks (ignoring the strata, which can only widen its
variance: conservative), and Holm runs over one family: every distinct pooled test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from reflexion_bench.analysis.answer_key import label_text
from reflexion_bench.analysis.metrics import base_verdict, hidden_verdict, plus_verdict
from reflexion_bench.analysis.power import DEFAULT_MARGIN, assess
from reflexion_bench.analysis.runs import arm_name, same_seed
from reflexion_bench.analysis.stats import (
    mcnemar_exact,
    paired_difference_interval,
    proportion_curve_intervals,
    proportion_interval,
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


def plus_or_base_failure(rec: Mapping[str, Any]) -> bool | None:
    """A trial's plus verdict; False where its base verdict failed (plus tests come on
    top of the base tests) and none was needed; None for a base pass never judged."""
    plus = plus_verdict(dict(rec))
    if plus is not None:
        return plus
    return False if base_verdict(dict(rec)) is False else None


def has_plus(records: Sequence[Mapping[str, Any]]) -> bool:
    return any(plus_verdict(dict(r)) is not None for r in records)


def _hidden(rec: Mapping[str, Any]) -> bool:
    return bool(hidden_verdict(dict(rec)))


def task_budget_points(
    records: Sequence[Mapping[str, Any]],
    axis: str = "tokens",
    verdict: Callable[[Mapping[str, Any]], bool | None] = _hidden,
) -> dict[str, list[tuple[float, bool | None]]]:
    """Per task: (spend needed for this trial's verdict, its verdict) per trial; the
    hidden verdict unless ``verdict`` reads another (:func:`plus_or_base_failure`)."""
    if axis not in CALL_AXES:
        raise ValueError(f"axis {axis!r} cannot be resampled (allowed: {', '.join(CALL_AXES)})")
    tasks: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        tasks.setdefault(str(r["task_id"]), []).append(r)
    out: dict[str, list[tuple[float, bool | None]]] = {}
    for tid, recs in tasks.items():
        recs = sorted(recs, key=lambda r: int(r["trial"]))
        before = 0.0
        points: list[tuple[float, bool | None]] = []
        for r in recs:
            calls = r.get("model_calls") or []
            own = sum(_call_cost(c, axis) for c in calls if c.get("role") in ATTEMPT_ROLES)
            points.append((before + own, verdict(r)))
            before += sum(_call_cost(c, axis) for c in calls)
        out[tid] = points
    return out


def verdicts_at_budget(
    points: Mapping[str, Sequence[tuple[float, bool | None]]], budget: float
) -> dict[str, bool | None]:
    """Per task: the verdict of the last trial paid for within ``budget`` (False when
    none is; None where that trial's verdict is unknown)."""
    out: dict[str, bool | None] = {}
    for tid, pts in points.items():
        within = [v for cost, v in pts if cost <= budget + 1e-9]
        out[tid] = (None if within[-1] is None else bool(within[-1])) if within else False
    return out


def budget_rule(
    records: Sequence[Mapping[str, Any]],
    *,
    trial: int = 2,
    round_to: float = 500.0,
    axis: str = "tokens",
) -> dict[str, Any]:
    """The per-task budget that pays for a strategy's ``trial``-th verdict, from a log of
    it: per task that reached that trial, the spend its verdict needed (every call of
    the earlier trials, including the reflection written for it, plus this trial's
    actor and self-test calls, as run live); the median over those tasks, rounded up to
    a multiple of ``round_to``. With a Reflexion log and ``trial=2`` this is the rule of
    the equal-budget studies: Reflexion's second verdict is paid for on at least half
    the tasks that need one (its third trial starts under the budget and overshoots).
    The medians of each role's calls per trial come with it, to show where it goes."""
    if trial < 1:
        raise ValueError(f"trial must be >= 1, got {trial}")
    if round_to <= 0:
        raise ValueError(f"round_to must be > 0, got {round_to}")
    points = task_budget_points(records, axis)
    needed = [pts[trial - 1][0] for pts in points.values() if len(pts) >= trial]
    if not needed:
        raise ValueError(f"no task of this log reached trial {trial}")
    roles: dict[str, list[float]] = {}
    for r in records:
        for c in r.get("model_calls") or []:
            key = f"trial {int(r['trial'])} {c.get('role')}"
            roles.setdefault(key, []).append(_call_cost(c, axis))
    median = float(np.median(needed))
    return {
        "axis": axis,
        "trial": trial,
        "tasks": len(points),
        "tasks_reaching_trial": len(needed),
        "median": median,
        "quartiles": [float(np.percentile(needed, 25)), float(np.percentile(needed, 75))],
        "round_to": round_to,
        "budget": float(math.ceil(median / round_to) * round_to),
        "role_medians": {
            k: {"calls": len(v), "median": float(np.median(v))}
            for k, v in sorted(roles.items(), key=lambda kv: (int(kv[0].split()[1]), kv[0]))
        },
    }


def budget_curve(
    records: Sequence[Mapping[str, Any]],
    budgets: Sequence[float],
    axis: str = "tokens",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[dict[str, float]]:
    """pass@1 at each budget, with a Wilson interval at each (0/1 verdicts per task)."""
    points = task_budget_points(records, axis)
    ids = sorted(points)
    if not ids or not budgets:
        return []
    m = np.array([[float(bool(verdicts_at_budget(points, b)[t])) for b in budgets] for t in ids])
    bands = proportion_curve_intervals(m, n_resamples=n_resamples, seed=seed)
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


def pooled_rows(
    runs: Mapping[tuple[str, str], Mapping[str, Mapping[str, Any]]],
    pairs: Mapping[tuple[str, str, str], Mapping[str, tuple[Sequence[bool], Sequence[bool]]]],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
) -> list[dict[str, Any]]:
    """One row per model x strategy run on two or more benchmarks: pass@1 at each
    benchmark's budget pooled over them, stratified by benchmark, and the pooled paired
    comparisons with each reference (Holm within each model x reference family; see the
    module docstring)."""
    out: list[dict[str, Any]] = []
    tests: list[tuple[Any, dict[str, Any]]] = []
    for (model, name), per in sorted(runs.items()):
        benches = sorted(b for b in per if per[b]["verdicts"])
        if len(benches) < 2:
            continue
        strata = [[float(bool(x)) for x in per[b]["verdicts"].values()] for b in benches]
        n = sum(len(x) for x in strata)
        # Every task weighted alike over the benchmarks: one share of all of them, with
        # its Wilson interval (the binomial variance is at least the stratified one).
        ci = proportion_interval(
            [x for st in strata for x in st], n_resamples=n_resamples, seed=seed
        )
        plus = [per[b]["plus"] for b in benches]
        plus_ci = (
            proportion_interval(
                [float(bool(x)) for p in plus for x in p.values()],
                n_resamples=n_resamples,
                seed=seed,
            )
            if all(p for p in plus)
            else None
        )
        spends = [per[b]["spend"] for b in benches]
        spend = (
            sum(float(sp) * len(st) for sp, st in zip(spends, strata, strict=True)) / n
            if all(sp is not None for sp in spends)
            else None
        )
        row: dict[str, Any] = {
            "model": model,
            "strategy": name,
            "benchmarks": benches,
            "n": n,
            "n_by_benchmark": {b: len(st) for b, st in zip(benches, strata, strict=True)},
            "budgets": {b: per[b]["budget"] for b in benches},
            "partial": any(bool(per[b]["row"].get("partial")) for b in benches),
            "pass_at_budget": ci.to_dict(),
            "pass_at_budget_plus": plus_ci.to_dict() if plus_ci else None,
            "spend_per_task": spend,
            "answer_key": ", ".join(sorted({str(per[b]["row"]["answer_key"]) for b in benches})),
        }
        for ref in REFERENCES:
            got = pairs.get((model, name, ref)) or {}
            common = sorted(b for b in got if got[b][0])
            if len(common) < 2:
                continue  # one benchmark's comparison is that benchmark's row
            xa = [x for b in common for x in got[b][0]]
            xb = [x for b in common for x in got[b][1]]
            test = mcnemar_exact(xa, xb)
            diff = paired_difference_interval(
                [float(x) for x in xa], [float(x) for x in xb], n_resamples=n_resamples, seed=seed
            )
            cmp: dict[str, Any] = {
                "n_common": len(xa),
                "n_by_benchmark": {b: len(got[b][0]) for b in common},
                "diff": diff.to_dict(),
                "only_this": test.only_a,
                "only_ref": test.only_b,
                "p": test.p_value,
                "_samples": (xa, xb),
            }
            row[f"vs_{ref}"] = cmp
            tests.append(((model, frozenset((name, ref))), cmp))
        out.append(row)
    holm_family(tests, margin=margin)
    return out


def holm_family(tests: Sequence[tuple[Any, dict[str, Any]]], *, margin: float) -> int:
    """Holm over one table's comparisons as one family; returns its size.

    ``tests`` pairs each comparison (a dict with its McNemar ``p`` and ``_samples``) with
    a key of the runs it compares: a test listed twice (A vs B in A's row, B vs A in
    B's) counts once in the family and carries the same adjusted p in both places,
    so no test has two adjusted p-values. Each comparison gets ``p_holm`` and its
    assessment at that p.
    """
    distinct: dict[Any, float] = {}
    for key, cmp in tests:
        distinct.setdefault(key, float(cmp["p"]))
    adjusted = dict(zip(distinct, holm(list(distinct.values())), strict=True))
    for key, cmp in tests:
        cmp["p_holm"] = adjusted[key]
        xa, xb = cmp.pop("_samples")
        cmp["assessment"] = assess(xa, xb, p_value=adjusted[key], margin=margin)
    return len(distinct)


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
    # For the pooled rows: per (model, strategy) each benchmark's verdicts at its budget,
    # and per (model, strategy, reference) each benchmark's paired samples.
    pool_runs: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    pool_pairs: dict[tuple[str, str, str], dict[str, tuple[list[bool], list[bool]]]] = {}
    # Every comparison of the table, keyed by the two runs it compares: one Holm family.
    tests: list[tuple[Any, dict[str, Any]]] = []
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
        # Hidden verdicts are never unknown here (task_budget_points reads a missing one
        # as a failure), so these are plain booleans.
        at_b = (
            {
                id(g): {t: bool(x) for t, x in verdicts_at_budget(points[id(g)], b).items()}
                for g in gs
            }
            if b is not None
            else {}
        )
        plus_at_b = {
            id(g): verdicts_at_budget(task_budget_points(g.records, axis, plus_or_base_failure), b)
            for g in gs
            if b is not None and has_plus(g.records)
        }
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
        ref_rows = {ref: [g for g in gs if g.strategy == ref] for ref in REFERENCES}
        for g in gs:
            v = at_b.get(id(g), {})
            ci = (
                proportion_interval(
                    [float(x) for x in v.values()], n_resamples=n_resamples, seed=seed
                )
                if v
                else None
            )
            data = gdata[id(g)]
            pv = plus_at_b.get(id(g))
            plus_known = pv is not None and v and all(x is not None for x in pv.values())
            plus_ci = (
                proportion_interval(
                    [float(bool(x)) for x in pv.values()], n_resamples=n_resamples, seed=seed
                )
                if plus_known and pv
                else None
            )
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
                # With the plus tests' verdict of the same trials (blank: none, or some
                # base pass never judged under plus: `plus_unjudged` of them).
                "pass_at_budget_plus": plus_ci.to_dict() if plus_ci else None,
                "plus_unjudged": (
                    sum(1 for x in pv.values() if x is None) if pv is not None else None
                ),
                "final_as_run": data["final"],
                "spend_per_task": data["per_task"].get(axis),
                "trials_per_task": data["per_task"].get("trials"),
                "stop_reasons": stop_reasons(g.records),
            }
            for ref_name, all_candidates in ref_rows.items():
                # The reference of g's own seed and in-loop evaluator arm: neither is
                # ever crossed (oracle reflexion is not compared with self-test retry).
                candidates = [
                    c for c in all_candidates if arm_name(c.evaluator) == arm_name(g.evaluator)
                ]
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
                diff = paired_difference_interval(xa, xb, n_resamples=n_resamples, seed=seed)
                cmp: dict[str, Any] = {
                    "n_common": len(common),
                    "diff": diff.to_dict(),
                    "only_this": test.only_a,
                    "only_ref": test.only_b,
                    "p": test.p_value,
                    "_samples": (xa, xb),  # for the assessment after Holm; not kept
                }
                row[f"vs_{ref_name}"] = cmp
                # A vs B in A's row and B vs A in B's are one test (same runs, same p).
                tests.append((frozenset((id(g), id(ref))), cmp))
                pool_pairs.setdefault((model, g.name, ref_name), {})[bench] = (xa, xb)
            rows.append(row)
            pool_runs.setdefault((model, g.name), {})[bench] = {
                "verdicts": v,
                "plus": pv if plus_known else None,
                "spend": data["per_task"].get(axis),
                "budget": b,
                "row": row,
            }
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
    n_family = holm_family(tests, margin=margin)
    n_max = max((r["n"] for r in rows), default=0)
    return {
        "axis": axis,
        "pooled": pooled_rows(
            pool_runs, pool_pairs, n_resamples=n_resamples, seed=seed, margin=margin
        ),
        "detectable": {
            "n_tasks": n_max,
            "holm_family": n_family,
            "min_one_sided_discordant": min_discordant(0.05, 1),
            "min_one_sided_discordant_holm": min_discordant(0.05, max(1, n_family)),
        },
        "budgets": budgets_used,
        "rows": rows,
        "curves": curves,
        "pareto": pareto,
    }
