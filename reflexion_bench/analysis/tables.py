"""Paper-style comparison tables over many runs, from their logs only.

:func:`build_report` turns grouped runs into a JSON-friendly dict (every number with
its interval) and numeric pandas tables; :func:`render` prints those tables as
Markdown, LaTeX, CSV or JSON. Shares are fractions in the data and percentages in
Markdown/LaTeX; intervals are 95% Wilson intervals of a share of tasks and Newcombe's
paired score intervals of a difference (a task bootstrap for per-task means over
several seeds: :mod:`reflexion_bench.analysis.stats`); paired tests compare strategies
on the tasks both ran, within one benchmark x model.

Tables:
- ``main``: first-try and final success with CIs, fix/break counts, cost per task.
  ``final`` (pass@1) is over all tasks, an errored task (no verdict) counted as failed:
  the headline. ``errored`` counts those tasks and ``final_finished`` is pass@1 over
  the tasks that did not error, so errors are never hidden in a low score.
  Tokens and dollars are shown "as run live" (a call replayed from the response cache
  counts what its live call spent) and "paid now" (only the calls not replayed).
- ``curve``: success of the submitted candidate after k trials, with CIs (and the
  "solved at any trial" curve where it differs).
- ``paired``: final success of strategy A vs B on common tasks: difference with
  Newcombe's paired CI, discordant counts, exact McNemar p-value, and that p-value
  Holm-adjusted over one family: every pair of the table (each table that tests is one
  Holm family, stated once in its note).
- ``self_tests``: the paper's Table 2: self-test verdict vs hidden verdict, rates
  per self-test verdict, and false positives that stopped a task early.
- ``controls``: per strategy, tasks failed at trial 1, fixed and broken by the end,
  and whether trial 1 is identical to the reference variant's (frozen protocol).
- ``budget``: success at an equal budget (tokens, calls, dollars or wall time per
  task; see :mod:`reflexion_bench.analysis.budget`) and the spend per task.
- ``self_test_trials``: the ``self_tests`` confusion split by trial index.
- ``rewrites``: what became of correct programs the self-tests rejected (false
  negatives): rewritten into a wrong one, into another right one, or submitted anyway;
  fixes, breaks and tasks lost (see :mod:`reflexion_bench.analysis.feedback`).
- ``elapsed``: each row's wall-clock time with a trial in flight (from its log) and
  tasks solved per hour.
- ``feedback_did`` and ``feedback_dose`` (only in reports whose runs have retry and
  reflexion under two in-loop evaluators or more, :data:`OPTIONAL_TABLES`): the
  difference in differences of Reflexion's gain over retry between an evaluator and the
  model's own tests, and that gain by evaluator in order of reliability (see
  :mod:`reflexion_bench.analysis.feedback_did`).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from reflexion_bench.analysis.answer_key import label_text
from reflexion_bench.analysis.budget import (
    AXES,
    best_of_n_for_budget,
    spend_curve,
    success_at_budget,
    verdict_matrix,
)
from reflexion_bench.analysis.equal_budget import equal_budget_section, holm
from reflexion_bench.analysis.feedback import confusion_by_trial, elapsed_s, rewrites
from reflexion_bench.analysis.feedback_did import did_sentences, dose_sentences, feedback_section
from reflexion_bench.analysis.paper import (
    SOURCE,
    canonical_benchmark,
    published_for,
    unpublished_note,
)
from reflexion_bench.analysis.power import DEFAULT_MARGIN, assess
from reflexion_bench.analysis.runs import Group, SeedSet, arm_name, same_seed, seed_sets
from reflexion_bench.analysis.seeds import seed_row, seed_warnings, verdict_table
from reflexion_bench.analysis.seeds import task_verdicts as _task_verdicts
from reflexion_bench.analysis.stats import (
    DEFAULT_RESAMPLES,
    Interval,
    mcnemar_exact,
    paired_difference_interval,
    proportion_curve_intervals,
    sign_flip_exact,
)

TABLES = (
    "main",
    "curve",
    "paired",
    "self_tests",
    "controls",
    "budget",
    "self_test_trials",
    "rewrites",
    "elapsed",
    "strategies",
    "pooled",
    "seeds",
    "feedback_did",
    "feedback_dose",
)
#: Tables a report has only where its runs call for them (written, printed and named in
#: the manifest only then): a report of runs under one evaluator is unchanged by them.
OPTIONAL_TABLES = frozenset({"feedback_did", "feedback_dose"})
TITLES = {
    "main": "Success (first try, final), fixes/breaks and cost",
    "curve": "Success of the submitted candidate after k trials",
    "paired": "Paired comparisons on common tasks (final success)",
    "self_tests": "In-loop feedback quality (each evaluator's verdict vs hidden tests)",
    "controls": "Memory-content controls: what trials 2..K fixed and broke",
    "budget": "Success at an equal budget",
    "self_test_trials": "Self-test quality by trial (self-test verdict vs hidden tests)",
    "rewrites": "Correct programs the self-tests rejected: what the loop made of them",
    "elapsed": "Wall-clock time with trials in flight, and tasks solved per hour",
    "strategies": "Strategies at equal budget: pass@1 at the budget, paired tests vs retry and reflexion (Holm)",
    "pooled": "Pooled over benchmarks (stratified): pass@1 at each benchmark's budget, paired tests vs retry and reflexion (Holm)",
    "seeds": "Configurations over seeds: pass@1 mean ± sd across seeds, task-level interval, pass^k",
    "feedback_did": "Feedback reliability: difference in differences of reflexion - retry, each evaluator vs self-tests (pass@1 at budget, paired by task)",
    "feedback_dose": "Feedback reliability: reflexion - retry by in-loop evaluator, least to most reliable (pass@1 at budget)",
}


# --------------------------------------------------------------------------- data


def _interval(iv: Interval | None) -> dict[str, float] | None:
    return None if iv is None else iv.to_dict()


def _column_ci(values: list[bool | None], n_resamples: int, seed: int) -> Interval | None:
    if not values or any(v is None for v in values):
        return None
    column = np.array([[float(bool(v))] for v in values])
    return proportion_curve_intervals(column, n_resamples=n_resamples, seed=seed)[0]


def _group_data(group: Group, *, n_resamples: int, seed: int) -> dict[str, Any]:
    s = group.summary
    k_max = len(s.get("success_at_trial") or [])
    sub = verdict_matrix(group.records, k_max, kind="submitted")
    solved = verdict_matrix(group.records, k_max, kind="solved")
    curve_ci = (
        proportion_curve_intervals(sub[1], n_resamples=n_resamples, seed=seed) if sub else None
    )
    solved_ci = (
        proportion_curve_intervals(solved[1], n_resamples=n_resamples, seed=seed)
        if solved
        else None
    )
    # First-try and final intervals from the task verdicts directly (known even where
    # intermediate trials are not, as in imported logs); Wilson intervals of the same
    # counts, so they equal the curve's first and last columns.
    verdicts = _task_verdicts(group)
    first_ci = _column_ci([v[0] for v in verdicts.values()], n_resamples, seed)
    final_ci = _column_ci([v[1] for v in verdicts.values()], n_resamples, seed)
    errored = set(s.get("errored_task_ids") or ())
    finished_ci = _column_ci(
        [v[1] for t, v in verdicts.items() if t not in errored], n_resamples, seed
    )
    per_task = s.get("per_task_mean") or {}
    data: dict[str, Any] = {
        "benchmark": group.benchmark,
        "strategy": group.strategy,
        # The evaluator arm (a noisy oracle with its noise rates; None: the log names none).
        "evaluator": group.evaluator,
        "model": group.model,
        "label": group.name,
        "runs": [str(r.path) for r in group.runs],
        "n_tasks": s.get("n_tasks", 0),
        "first_try": _interval(first_ci) or {"estimate": s.get("first_try")},
        "final": _interval(final_ci) or {"estimate": s.get("final")},
        "success_at_trial": [iv.to_dict() for iv in curve_ci]
        if curve_ci
        else [{"estimate": v} for v in s.get("success_at_trial") or []],
        "solved_by_trial": [iv.to_dict() for iv in solved_ci]
        if solved_ci
        else [{"estimate": v} for v in s.get("solved_by_trial") or []],
        "success_counts_at_trial": s.get("success_counts_at_trial"),
        "solved_counts_by_trial": s.get("solved_counts_by_trial"),
        "fixes": s.get("fixes"),
        "breaks": s.get("breaks"),
        "first_to_final": s.get("first_to_final"),
        "errored_tasks": s.get("errored_tasks"),
        "finished_tasks": s.get("finished_tasks"),
        "final_finished": _interval(finished_ci) or {"estimate": s.get("final_finished")},
        "answer_key": s.get("answer_key"),
        "self_test": {
            "confusion": s.get("self_test_confusion"),
            "rates": s.get("self_test_rates"),
            "fp_split": s.get("self_test_fp_split"),
            # The same confusion named by its evaluator, with rates per hidden verdict.
            "in_loop": s.get("in_loop"),
        },
        "per_task": {
            "trials": per_task.get("trials"),
            "tokens": per_task.get("tokens"),
            "calls": per_task.get("model_calls"),
            "dollars": per_task.get("cost_usd"),
            "wall": per_task.get("wall_time_s"),
            # Paid now (calls not replayed from the cache); the above are as run live.
            "paid_tokens": per_task.get("paid_tokens"),
            "paid_dollars": per_task.get("paid_cost_usd"),
        },
        "totals": s.get("totals"),
        "spend_curves": {axis: spend_curve(group.records, axis, k_max) for axis in AXES},
    }
    for key in ("logged", "missing", "plus"):
        if key in s:
            data[key] = s[key]
    shards = {str(r.path): r.summary["shards"] for r in group.runs if r.summary.get("shards")}
    if shards:
        # A sharded experiment is complete only when every shard is there and finished.
        data["shards"] = shards
        data["complete"] = all(v.get("complete") for v in shards.values())
    failures = _failure_types(group)
    if failures:
        data["failure_types_by_trial"] = failures
    data["self_test_by_trial"] = confusion_by_trial(group.records)
    data["rewrites"] = rewrites(group.records)
    # A call replayed from the cache takes no model time: a run with replays is faster
    # than it ran live, which every per-hour figure must say.
    calls = [c for r in group.records for c in (r.get("model_calls") or [])]
    data["replayed_calls"] = {
        "replayed": sum(1 for c in calls if c.get("cached")),
        "calls": len(calls),
    }
    # Pooled shards ran apart: their times add up (None if any log lacks times).
    spans = [elapsed_s(r.records) for r in group.runs]
    data["elapsed_s"] = None if not spans or None in spans else sum(s for s in spans if s)
    bon = best_of_n_for_budget(group.records) if group.strategy.startswith("reflexion") else None
    if bon:
        data["best_of_n_equal_tokens"] = bon
    return data


def _failure_types(group: Group) -> dict[int, dict[str, int]] | None:
    """ALFWorld failure causes per trial (the ALFWorld classifier's Figure-3 table), for
    runs that logged their episodes (imported paper logs do not)."""
    if group.benchmark != "alfworld" or not any(
        isinstance((r.get("extra") or {}).get("alfworld"), dict) for r in group.records
    ):
        return None
    try:
        from reflexion_bench.analysis.alfworld import figure3_table
    except ImportError:  # the ALFWorld analysis is optional here
        return None
    out: dict[int, dict[str, int]] = {}
    for row in figure3_table(group.records):
        out[int(row["trial"])] = {
            k.replace("_", " "): int(row[k])
            for k in ("hallucination", "inefficient_planning", "errored")
            if k in row
        }
    return out or None


def _clusters(groups: Sequence[Group]) -> dict[tuple[str, str], list[Group]]:
    out: dict[tuple[str, str], list[Group]] = {}
    for g in groups:
        out.setdefault((g.benchmark, g.model), []).append(g)
    return out


def _set_clusters(sets: Sequence[SeedSet]) -> dict[tuple[str, str], list[SeedSet]]:
    out: dict[tuple[str, str], list[SeedSet]] = {}
    for st in sets:
        out.setdefault((st.benchmark, st.model), []).append(st)
    return out


def _paired(
    sets: Sequence[SeedSet], *, n_resamples: int, seed: int, margin: float = DEFAULT_MARGIN
) -> list[dict[str, Any]]:
    """Every pair of configurations of one benchmark x model, paired by task over all
    their seeds (a configuration of one seed is one run: McNemar's exact test)."""
    rows = []
    # One Holm family for the whole table: every pair it tests, over every benchmark x
    # model (a reader scanning the table for p < 0.05 scans all of them at once).
    family: list[dict[str, Any]] = []
    samples: list[tuple[np.ndarray, np.ndarray]] = []
    for (bench, model), sts in _set_clusters(sets).items():
        tables_ = {id(st): verdict_table(st) for st in sts}
        for a, b in itertools.combinations(sts, 2):
            (ta, xa_all), (tb, xb_all) = tables_[id(a)], tables_[id(b)]
            index_b = {t: i for i, t in enumerate(tb)}
            common = [(i, index_b[t]) for i, t in enumerate(ta) if t in index_b]
            if not common:
                continue
            xa = xa_all[[i for i, _ in common]]
            xb = xb_all[[j for _, j in common]]
            ma, mb = xa.mean(axis=1), xb.mean(axis=1)
            diff = paired_difference_interval(ma, mb, n_resamples=n_resamples, seed=seed)
            row: dict[str, Any] = {
                "benchmark": bench,
                "model": model,
                "a": a.name,
                "b": b.name,
                "n_common": len(common),
                "seeds_a": a.n_seeds,
                "seeds_b": b.n_seeds,
                "final_a": float(ma.mean()),
                "final_b": float(mb.mean()),
                "diff": diff.to_dict(),
            }
            if a.n_seeds == b.n_seeds == 1:
                mc = mcnemar_exact([bool(v) for v in xa[:, 0]], [bool(v) for v in xb[:, 0]])
                row["mcnemar"] = mc.to_dict()
                row["test"] = {
                    "name": "mcnemar_exact",
                    "p_value": mc.p_value,
                    "favour_a": mc.only_a,
                    "favour_b": mc.only_b,
                }
            else:
                sf = sign_flip_exact(xa, xb)
                row["test"] = {
                    "name": "sign_flip_exact",
                    "p_value": sf.p_value,
                    "favour_a": int((ma > mb).sum()),
                    "favour_b": int((ma < mb).sum()),
                }
            rows.append(row)
            family.append(row)
            samples.append((xa, xb))
    adjusted = holm([r["test"]["p_value"] for r in family])
    for row, adj, (xa, xb) in zip(family, adjusted, samples, strict=True):
        row["holm"] = {"p": adj, "family": "every pair of this table", "m": len(family)}
        # "different" only where the family-wise test says so.
        row["assessment"] = assess(xa, xb, p_value=adj, margin=margin)
    return rows


def _trial1_identity(groups: Sequence[Group]) -> dict[int, dict[str, Any]]:
    """Per group: how many common tasks have the same trial-1 candidate as the reference
    variant of its benchmark x model (``reflexion`` if present, else the first)."""
    out: dict[int, dict[str, Any]] = {}
    for gs in _clusters(groups).values():
        if len(gs) < 2:
            continue
        refs = [g for g in gs if g.strategy == "reflexion"] or [gs[0]]
        for g in gs:
            # The reference under g's own in-loop evaluator where there is one.
            ref = same_seed(g, _same_arm(g, refs) or refs)
            if ref is None:
                continue
            ref_v = _task_verdicts(ref)
            v = _task_verdicts(g)
            common = [
                t for t in v if t in ref_v and v[t][2] is not None and ref_v[t][2] is not None
            ]
            same = sum(v[t][2] == ref_v[t][2] for t in common)
            out[id(g)] = {"reference": ref.name, "same": same, "common": len(common)}
    return out


def _same_arm(g: Group, candidates: Sequence[Group]) -> list[Group]:
    return [c for c in candidates if arm_name(c.evaluator) == arm_name(g.evaluator)]


def _budget_rows(
    groups: Sequence[Group], gdata: dict[int, dict[str, Any]], axis: str, budget: float | None
) -> list[dict[str, Any]]:
    rows = []
    for (bench, model), gs in _clusters(groups).items():
        spends = {id(g): gdata[id(g)]["spend_curves"][axis] for g in gs}
        if budget is not None:
            b: float | None = budget
        else:
            # The cheapest strategy's full spend: every strategy is read at what the
            # cheapest one needed on average.
            finals = [sp[-1] for sp in spends.values() if sp and sp[-1] is not None]
            b = min(finals) if finals else None
        for g in gs:
            succ = [iv.get("estimate") for iv in gdata[id(g)]["success_at_trial"]]
            value = None if b is None else success_at_budget(spends[id(g)], succ, b)
            rows.append(
                {
                    "benchmark": bench,
                    "model": model,
                    "strategy": g.name,
                    "axis": axis,
                    "budget": b,
                    "success_at_budget": value,
                    # An empty cell says why (the report's table drops this column when
                    # every strategy has a value).
                    "why_blank": None if value is not None else _why_blank(spends[id(g)], b, axis),
                    "final": gdata[id(g)]["final"].get("estimate"),
                    **{f"{k}_per_task": v for k, v in gdata[id(g)]["per_task"].items()},
                }
            )
    return rows


def _why_blank(spend: Sequence[float | None], budget: float | None, axis: str) -> str:
    known = [float(x) for x in spend if x is not None]
    if budget is None or not known:
        return f"no {axis} spend in the log"

    def num(x: float) -> str:
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"

    return (
        f"the budget ({num(budget)}) is below this strategy's mean spend by trial 1 "
        f"({num(known[0])} {axis}/task): no trial of it fits"
    )


def build_report(
    groups: Sequence[Group],
    *,
    paper: bool = False,
    axis: str = "tokens",
    budget: float | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    equivalence_margin: float = DEFAULT_MARGIN,
) -> dict[str, Any]:
    """Everything the tables show, JSON-friendly (see the module docstring)."""
    if not 0 < equivalence_margin < 1:
        raise ValueError(
            f"the equivalence margin is a fraction of tasks in (0, 1), got {equivalence_margin}"
        )
    if axis not in AXES:
        raise ValueError(f"unknown budget axis {axis!r} (allowed: {', '.join(AXES)})")
    gdata = {id(g): _group_data(g, n_resamples=n_resamples, seed=seed) for g in groups}
    identity = _trial1_identity(groups)
    for g in groups:
        if id(g) in identity:
            gdata[id(g)]["trial1_identity"] = identity[id(g)]
    sets = seed_sets(groups)
    # The seeds table exists where some configuration ran under several seeds; then
    # every configuration has a row (one seed: n_seeds 1, no spread).
    seed_rows = (
        [seed_row(st, n_resamples=n_resamples, seed=seed) for st in sets]
        if any(st.n_seeds > 1 for st in sets)
        else []
    )
    for g in groups:
        gdata[id(g)]["seed"] = g.seed
    report: dict[str, Any] = {
        "groups": [gdata[id(g)] for g in groups],
        "seeds": seed_rows,
        "seed_warnings": seed_warnings(seed_rows),
        "paired": _paired(sets, n_resamples=n_resamples, seed=seed, margin=equivalence_margin),
        "budget": _budget_rows(groups, gdata, axis, budget),
        "strategies": equal_budget_section(
            groups,
            gdata,
            axis=axis,
            budget=budget,
            n_resamples=n_resamples,
            seed=seed,
            margin=equivalence_margin,
        ),
        "settings": {
            "level": 0.95,
            "n_resamples": n_resamples,
            "seed": seed,
            "axis": axis,
            "equivalence_margin": equivalence_margin,
        },
    }
    feedback = feedback_section(
        groups,
        report["strategies"].get("budgets") or {},
        axis=axis,
        n_resamples=n_resamples,
        seed=seed,
    )
    if feedback is not None:  # absent otherwise: reports of one evaluator are unchanged
        report["feedback"] = feedback
    if paper:
        benches = {canonical_benchmark(g.benchmark) for g in groups}
        rows = published_for(benches)
        report["published"] = [{**p.__dict__, "source": f"{SOURCE} ({p.table})"} for p in rows]
        # Never the rows of other benchmarks: a benchmark without any says why.
        report["published_missing"] = {
            b: unpublished_note(b) or "no published figure"
            for b in sorted(benches)
            if not any(p.benchmark == b for p in rows)
        }
    return report


# --------------------------------------------------------------------------- tables


def _est(d: dict[str, Any] | None) -> float | None:
    return None if not d else d.get("estimate")


def tables(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Numeric tables (intervals as ``*_low``/``*_high`` columns)."""
    groups = report["groups"]
    published = report.get("published") or []
    main_rows = []
    for g in groups:
        ff = g.get("first_to_final") or {}
        main_rows.append(
            {
                "benchmark": g["benchmark"],
                "strategy": g["label"],
                "model": g["model"],
                "n": g["n_tasks"],
                "first_try": _est(g["first_try"]),
                "first_try_low": g["first_try"].get("low"),
                "first_try_high": g["first_try"].get("high"),
                "final": _est(g["final"]),
                "final_low": g["final"].get("low"),
                "final_high": g["final"].get("high"),
                "errored": g.get("errored_tasks"),
                "final_finished": _est(g.get("final_finished")),
                "final_finished_low": (g.get("final_finished") or {}).get("low"),
                "final_finished_high": (g.get("final_finished") or {}).get("high"),
                # clean / answer-in-loop (N uses): did the loop see the answer key?
                "answer_key": label_text(g.get("answer_key")),
                "logged_final": (g.get("logged") or {}).get("final"),
                # Under the plus tests (scorer.tests=both|plus, or `rescore --tests plus`):
                # first try, pass@1, solved by trial K; submitted programs that pass base
                # and fail plus; trials whose self-tests and base pass and plus fails.
                "first_try_plus": (g.get("plus") or {}).get("first_try"),
                "final_plus": (g.get("plus") or {}).get("final"),
                "solved_plus": ((g.get("plus") or {}).get("solved_by_trial") or [None])[-1],
                "base_pass_plus_fail": (g.get("plus") or {}).get("base_pass_plus_fail"),
                "self_base_pass_plus_fail": (g.get("plus") or {}).get("unseen_fp"),
                "fixes": g["fixes"],
                "breaks": g["breaks"],
                "fixed_from_first": ff.get("fixed"),
                "broken_from_first": ff.get("broken"),
                "trials_per_task": g["per_task"]["trials"],
                "tokens_per_task": g["per_task"]["tokens"],
                "paid_tokens_per_task": g["per_task"].get("paid_tokens"),
                "calls_per_task": g["per_task"]["calls"],
                "dollars_total": (g.get("totals") or {}).get("cost_usd"),
                "dollars_paid_total": (g.get("totals") or {}).get("paid_cost_usd"),
                "wall_s_per_task": g["per_task"]["wall"],
                "source": "this run",
            }
        )
    for p in published:
        if p["metric"] == "final":
            main_rows.append(
                {
                    "benchmark": p["benchmark"],
                    "strategy": p["strategy"],
                    "model": p["model"],
                    "final": p["value"],
                    "source": p["source"] + (f"; {p['note']}" if p.get("note") else ""),
                }
            )
    main = pd.DataFrame(main_rows)
    if not any(r.get("logged_final") is not None for r in main_rows) and not main.empty:
        main = main.drop(columns=["logged_final"])
    if not any(g.get("plus") for g in groups) and not main.empty:
        main = main.drop(columns=[c for c in _PLUS_COLS if c in main.columns])

    k_max = max((len(g["success_at_trial"]) for g in groups), default=0)
    curve_rows = []
    for g in groups:
        for kind, key in (("submitted", "success_at_trial"), ("solved", "solved_by_trial")):
            vals = g[key]
            if kind == "solved" and (
                [_est(v) for v in vals] == [_est(v) for v in g["success_at_trial"]]
                or all(_est(v) is None for v in vals)
            ):
                continue
            row: dict[str, Any] = {
                "benchmark": g["benchmark"],
                "strategy": g["label"],
                "model": g["model"],
                "curve": kind,
            }
            for k in range(1, k_max + 1):
                # Blank past this run's own K: it never ran those trials.
                v = vals[k - 1] if k <= len(vals) else None
                row[f"k{k}"] = _est(v)
                row[f"k{k}_low"] = None if v is None else v.get("low")
                row[f"k{k}_high"] = None if v is None else v.get("high")
            curve_rows.append(row)
    for p in published:
        if p["metric"] == "success_at_trial":
            curve_rows.append(
                {
                    "benchmark": p["benchmark"],
                    "strategy": p["strategy"],
                    "model": p["model"],
                    "curve": f"{p['source']}: {p['note']}",
                    **({f"k{p['trial']}": p["value"]} if p["trial"] <= k_max else {}),
                }
            )
    curve = pd.DataFrame(curve_rows)

    multi_seed = any(
        int(r.get("seeds_a") or 1) > 1 or int(r.get("seeds_b") or 1) > 1 for r in report["paired"]
    )
    paired = pd.DataFrame(
        [
            {
                "benchmark": r["benchmark"],
                "model": r["model"],
                "a": r["a"],
                "b": r["b"],
                "n": r["n_common"],
                "final_a": r["final_a"],
                "final_b": r["final_b"],
                "diff": r["diff"]["estimate"],
                "diff_low": r["diff"]["low"],
                "diff_high": r["diff"]["high"],
                **(
                    {"seeds_a": r.get("seeds_a"), "seeds_b": r.get("seeds_b")} if multi_seed else {}
                ),
                "only_a": r["test"]["favour_a"],
                "only_b": r["test"]["favour_b"],
                "mcnemar_p": r["test"]["p_value"],
                "mcnemar_p_holm": (r.get("holm") or {}).get("p"),
                "holm_m": (r.get("holm") or {}).get("m"),
                "verdict": (r.get("assessment") or {}).get("verdict"),
                "detectable": (r.get("assessment") or {}).get("detectable_difference"),
            }
            for r in report["paired"]
        ]
    )

    st_rows = []
    for g in groups:
        c = g["self_test"]["confusion"] or {}
        if not any(c.get(k) for k in ("tp", "fp", "fn", "tn")):
            continue
        rates = g["self_test"]["rates"] or {}
        split = g["self_test"]["fp_split"] or {}
        in_loop_rates = (g["self_test"].get("in_loop") or {}).get("rates") or {}
        st_rows.append(
            {
                "benchmark": g["benchmark"],
                "strategy": g["label"],
                "evaluator": g.get("evaluator"),
                "model": g["model"],
                "final": _est(g["final"]),
                "tp_rate": rates.get("tp"),
                "fn_rate": rates.get("fn"),
                "fp_rate": rates.get("fp"),
                "tn_rate": rates.get("tn"),
                "tp": c.get("tp"),
                "fn": c.get("fn"),
                "fp": c.get("fp"),
                "tn": c.get("tn"),
                # Per hidden verdict: the feedback's own error rates (a noisy oracle's
                # fp_rate / fn_rate are these), beside the paper's per-verdict ones.
                "fpr_of_failures": in_loop_rates.get("fp"),
                "fnr_of_passes": in_loop_rates.get("fn"),
                "no_feedback_trials": (g["self_test"].get("in_loop") or {}).get(
                    "no_feedback_trials"
                ),
                "fp_stopped_early": split.get("stopped_early"),
                "fp_at_last_trial": split.get("at_last_trial"),
                # The third verdict: self-tests and base pass, the plus tests fail.
                "self_base_pass_plus_fail": (g.get("plus") or {}).get("unseen_fp"),
                "source": "this run",
            }
        )
    # The paper's Table 2: one row per benchmark x strategy x model, its FP rate (per
    # self-test pass) and FN rate (per self-test failure) side by side.
    paper_rates: dict[tuple[str, str, str], dict[str, Any]] = {}
    for p in published:
        if p["metric"] in ("self_test_fp_rate", "self_test_fn_rate"):
            row = paper_rates.setdefault(
                (p["benchmark"], p["strategy"], p["model"]),
                {"benchmark": p["benchmark"], "strategy": p["strategy"], "model": p["model"]},
            )
            if p["metric"] == "self_test_fp_rate":
                row.update(fp_rate=p["value"], tp_rate=1 - p["value"])
            else:
                row.update(fn_rate=p["value"], tn_rate=1 - p["value"])
            row["source"] = p["source"]
    st_rows.extend(paper_rates.values())
    self_tests = pd.DataFrame(st_rows)

    ctrl_rows = []
    for g in groups:
        ff = g.get("first_to_final") or {}
        counts = g.get("success_counts_at_trial") or [None]
        ident = g.get("trial1_identity") or {}
        failed_first = None if counts[0] is None else g["n_tasks"] - counts[0]
        ctrl_rows.append(
            {
                "benchmark": g["benchmark"],
                "model": g["model"],
                "strategy": g["label"],
                "n": g["n_tasks"],
                "failed_at_trial_1": failed_first,
                "fixed": ff.get("fixed"),
                "broken": ff.get("broken"),
                "net": None
                if ff.get("fixed") is None
                else int(ff.get("fixed", 0)) - int(ff.get("broken", 0)),
                "final": _est(g["final"]),
                "trial_1_same": ident.get("same"),
                "trial_1_common": ident.get("common"),
                "reference": ident.get("reference"),
            }
        )
    controls = pd.DataFrame(ctrl_rows)
    budget = pd.DataFrame(report["budget"])

    trial_rows = []
    rewrite_rows = []
    elapsed_rows = []
    for g in groups:
        ident = {"benchmark": g["benchmark"], "strategy": g["label"], "model": g["model"]}
        by_trial = g.get("self_test_by_trial") or []
        if any(r["tp"] + r["fp"] + r["fn"] + r["tn"] for r in by_trial):
            for r in by_trial:
                own_pass, own_fail = r["tp"] + r["fp"], r["fn"] + r["tn"]
                trial_rows.append(
                    {
                        **ident,
                        "trial": r["trial"],
                        "trials": r["trials"],
                        "hidden_pass": r["hidden_pass"],
                        "tp_rate": r["tp"] / own_pass if own_pass else None,
                        "fn_rate": r["fn"] / own_fail if own_fail else None,
                        "fp_rate": r["fp"] / own_pass if own_pass else None,
                        "tn_rate": r["tn"] / own_fail if own_fail else None,
                        "tp": r["tp"],
                        "fn": r["fn"],
                        "fp": r["fp"],
                        "tn": r["tn"],
                    }
                )
            rw = g.get("rewrites") or {}
            rewrite_rows.append(
                {
                    **ident,
                    "n": g["n_tasks"],
                    "tests_per_task": rw.get("tests_per_task"),
                    "fn": rw.get("fn"),
                    "fn_to_wrong": rw.get("fn_to_wrong"),
                    "fn_to_right": rw.get("fn_to_right"),
                    "fn_submitted": rw.get("fn_submitted"),
                    "fixes": rw.get("fixes"),
                    "breaks": rw.get("breaks"),
                    "breaks_other": rw.get("breaks_other"),
                    "tasks_ever_right": rw.get("tasks_ever_right"),
                    "tasks_lost": rw.get("tasks_lost"),
                    "final": _est(g["final"]),
                }
            )
        span = g.get("elapsed_s")
        counts = g.get("success_counts_at_trial") or []
        solved = None
        final = _est(g["final"])
        if final is not None:
            solved = round(final * g["n_tasks"])
        elapsed_rows.append(
            {
                **ident,
                "n": g["n_tasks"],
                "final": final,
                "solved": solved,
                "solved_at_trial_1": counts[0] if counts else None,
                "elapsed_min": None if span is None else span / 60,
                "min_per_task": None if not span or not g["n_tasks"] else span / 60 / g["n_tasks"],
                "solved_per_hour": None if not span or solved is None else solved / (span / 3600),
                # Blank (so the column is left out) where every call ran live.
                "replayed_share": (rc["replayed"] / rc["calls"])
                if (rc := g.get("replayed_calls") or {}).get("replayed")
                else None,
            }
        )
    return {
        "main": main,
        "curve": curve,
        "paired": paired,
        "self_tests": self_tests,
        "controls": controls,
        "budget": budget,
        "self_test_trials": pd.DataFrame(trial_rows),
        "rewrites": pd.DataFrame(rewrite_rows),
        "elapsed": pd.DataFrame(elapsed_rows),
        "strategies": _strategies_frame(report),
        "pooled": _pooled_frame(report),
        "seeds": _seeds_frame(report),
        "feedback_did": _did_frame(report),
        "feedback_dose": _dose_frame(report),
    }


def has_table(report: dict[str, Any], name: str) -> bool:
    """Whether the report has table ``name`` at all (an optional table only where its
    section exists: :data:`OPTIONAL_TABLES`)."""
    if name not in OPTIONAL_TABLES:
        return True
    return report.get("feedback") is not None


def _did_frame(report: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for r in (report.get("feedback") or {}).get("did") or []:
        de, dr = r["diff_evaluator"], r["diff_reference"]
        rows.append(
            {
                "benchmark": r["benchmark"],
                "model": r["model"],
                "evaluator": r["evaluator"],
                "reference_evaluator": r["reference_evaluator"],
                "n": r["n"],
                "did": r["did"],
                "did_low": r["low"],
                "did_high": r["high"],
                "p_value": r["p_value"],
                "p_holm": r.get("p_holm"),
                "role": r.get("role"),
                "detectable": r.get("detectable"),
                "diff_evaluator": de["estimate"],
                "diff_evaluator_low": de["low"],
                "diff_evaluator_high": de["high"],
                "diff_reference": dr["estimate"],
                "diff_reference_low": dr["low"],
                "diff_reference_high": dr["high"],
                "nonzero": r.get("nonzero"),
                "budget": r.get("budget"),
                "benchmarks": " + ".join(
                    f"{b} ({n})" for b, n in (r.get("n_by_benchmark") or {}).items()
                )
                or None,
            }
        )
    return pd.DataFrame(rows)


def _dose_frame(report: dict[str, Any]) -> pd.DataFrame:
    section = report.get("feedback") or {}
    trends = {(t["benchmark"], t["model"]): t for t in section.get("trends") or []}
    rows = []
    for r in section.get("dose") or []:
        trend = trends.get((r["benchmark"], r["model"])) if r["order"] is not None else None
        rows.append(
            {
                "benchmark": r["benchmark"],
                "model": r["model"],
                "evaluator": r["evaluator"],
                "order": r["order"],
                "n": r["n"],
                "pass_reflexion": r["pass_strategy"],
                "pass_retry": r["pass_baseline"],
                "reflexion_minus_retry": r["diff"]["estimate"],
                "reflexion_minus_retry_low": r["diff"]["low"],
                "reflexion_minus_retry_high": r["diff"]["high"],
                "fnr_of_passes": r["fn_rate"],
                "fpr_of_failures": r["fp_rate"],
                "trials_judged": r["trials_judged"],
                "trend_slope": None if trend is None else trend["slope"],
                "trend_p": None if trend is None else trend["p_value"],
                "budget": r["budget"],
            }
        )
    return pd.DataFrame(rows)


def _seeds_frame(report: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for r in report.get("seeds") or []:
        p1, hat, at = r.get("pass1") or {}, r.get("pass_hat_k") or {}, r.get("pass_at_k") or {}
        rows.append(
            {
                "benchmark": r["benchmark"],
                "model": r["model"],
                "strategy": r["strategy"],
                "n_seeds": r["n_seeds"],
                "seeds": ", ".join(map(str, r["seeds"])),
                "n": r["n_tasks"],
                "pass1_mean": r.get("pass1_mean"),
                "pass1_sd": r.get("pass1_sd"),
                "pass1_task": p1.get("estimate"),
                "pass1_task_low": p1.get("low"),
                "pass1_task_high": p1.get("high"),
                "pass_hat_k": hat.get("estimate"),
                "pass_hat_k_low": hat.get("low"),
                "pass_hat_k_high": hat.get("high"),
                "pass_at_k": at.get("estimate"),
                "pass_at_k_low": at.get("low"),
                "pass_at_k_high": at.get("high"),
                "first_try_mean": r.get("first_try_mean"),
                "first_try_sd": r.get("first_try_sd"),
                "cannot_differ": r.get("cannot_differ"),
            }
        )
    return pd.DataFrame(rows)


def _strategies_frame(report: dict[str, Any]) -> pd.DataFrame:
    section = report.get("strategies") or {}
    rows = []
    for r in section.get("rows") or []:
        pab = r.get("pass_at_budget") or {}
        row: dict[str, Any] = {
            "benchmark": r["benchmark"],
            "strategy": r["strategy"] + (" (partial)" if r.get("partial") else ""),
            "model": r["model"],
            "n": r["n"],
            "budget": r["budget"],
            "pass_at_budget": pab.get("estimate"),
            "pass_at_budget_low": pab.get("low"),
            "pass_at_budget_high": pab.get("high"),
            "pass_at_budget_plus": _est(r.get("pass_at_budget_plus")),
            "final": _est(r["final_as_run"]),
            "spend_per_task": r["spend_per_task"],
            "trials_per_task": r["trials_per_task"],
        }
        row.update(_reference_columns(r))
        row["answer_key"] = r["answer_key"]
        row["stop_reasons"] = ", ".join(
            f"{k} {v}" for k, v in (r.get("stop_reasons") or {}).items()
        )
        rows.append(row)
    return _without_empty_plus(pd.DataFrame(rows))


def _reference_columns(r: dict[str, Any]) -> dict[str, Any]:
    """A strategies or pooled row's comparison with each reference, as columns."""
    row: dict[str, Any] = {}
    for ref in ("retry", "reflexion"):
        cmp = r.get(f"vs_{ref}") or {}
        diff = cmp.get("diff") or {}
        row[f"diff_vs_{ref}"] = diff.get("estimate")
        row[f"diff_vs_{ref}_low"] = diff.get("low")
        row[f"diff_vs_{ref}_high"] = diff.get("high")
        row[f"p_vs_{ref}"] = cmp.get("p")
        row[f"p_holm_vs_{ref}"] = cmp.get("p_holm")
        row[f"verdict_vs_{ref}"] = (cmp.get("assessment") or {}).get("verdict")
        row[f"detectable_vs_{ref}"] = (cmp.get("assessment") or {}).get("detectable_difference")
    return row


def _pooled_frame(report: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for r in (report.get("strategies") or {}).get("pooled") or []:
        pab = r.get("pass_at_budget") or {}
        row: dict[str, Any] = {
            "strategy": r["strategy"] + (" (partial)" if r.get("partial") else ""),
            "model": r["model"],
            "benchmarks": " + ".join(f"{b} ({n})" for b, n in r["n_by_benchmark"].items()),
            "n": r["n"],
            "budgets": ", ".join(f"{b} {_num('budget', v)}" for b, v in r["budgets"].items()),
            "pass_at_budget": pab.get("estimate"),
            "pass_at_budget_low": pab.get("low"),
            "pass_at_budget_high": pab.get("high"),
            "pass_at_budget_plus": _est(r.get("pass_at_budget_plus")),
            "spend_per_task": r["spend_per_task"],
        }
        row.update(_reference_columns(r))
        for ref in ("retry", "reflexion"):
            row[f"n_vs_{ref}"] = (r.get(f"vs_{ref}") or {}).get("n_common")
        row["answer_key"] = r["answer_key"]
        rows.append(row)
    return _without_empty_plus(pd.DataFrame(rows))


def pooled_answer(
    report: dict[str, Any], planned: dict[str, int] | None = None, *, table: str = "pooled"
) -> list[str]:
    """The strategy comparisons in words, one sentence each (Markdown), from the same
    numbers as the ``pooled`` table (or, ``table="strategies"``, the per-benchmark one):
    what a study's README states as its answer, through a ``<!-- report:answer -->``
    block, so that the answer cannot drift from the report.

    Each strategy against each reference it was compared with, a mirror pair once
    (``reflexion vs retry``, not also ``retry vs reflexion``). A comparison where either
    arm is partial (fewer tasks than another arm of its benchmark), or that has fewer
    paired tasks on a benchmark than ``planned`` (the study's design, e.g. ``{"humaneval":
    164, "mbpp": 200}``), says so first and draws no conclusion: its figures move as the
    arms grow."""
    if table not in ("pooled", "strategies"):
        raise ValueError(f"an answer is written from the pooled or strategies table, not {table!r}")
    rows = (report.get("strategies") or {}).get("pooled" if table == "pooled" else "rows") or []

    def where(r: dict[str, Any]) -> tuple[str, str]:
        # A pooled row spans benchmarks; a strategies row is one benchmark's.
        return (str(r.get("benchmark", "")), str(r["model"]))

    by_key = {(*where(r), r["strategy"]): r for r in rows}
    margin = 100 * float(report["settings"].get("equivalence_margin", DEFAULT_MARGIN))
    said: set[tuple[str, str, frozenset[str]]] = set()
    out: list[tuple[tuple[str, str], str]] = []
    for ref in ("retry", "reflexion"):
        for r in rows:
            cmp = r.get(f"vs_{ref}")
            pair = (*where(r), frozenset((r["strategy"], ref)))
            if not cmp or r["strategy"] == ref or pair in said:
                continue
            said.add(pair)
            other = by_key.get((*where(r), ref)) or {}
            n_by = cmp.get("n_by_benchmark") or {r.get("benchmark", ""): cmp["n_common"]}
            benches = " + ".join(f"{b} ({n})" for b, n in n_by.items())
            head = (
                f"**{r['strategy']} vs {ref}** ({r['model']}; {benches}:"
                f" {cmp['n_common']} paired tasks)"
            )
            short = {b: n for b, n in (planned or {}).items() if b in n_by and n_by[b] < n}
            if table == "pooled":
                # A benchmark of the design that no pooled comparison has yet is short too.
                short |= {b: n for b, n in (planned or {}).items() if b not in n_by}
            partial = [x["strategy"] for x in (r, other) if x.get("partial")]
            lead = ""
            if short:
                have = ", ".join(f"{b} {n_by.get(b, 0)} of {n}" for b, n in short.items())
                lead = f"*partial ({have} planned tasks): no conclusion*; so far "
            elif partial:
                lead = (
                    f"*partial ({' and '.join(partial)}: fewer tasks than another arm):"
                    " no conclusion*; so far "
                )
            words = _comparison_words(r["strategy"], ref, cmp, margin)
            out.append((where(r), f"{head}: {lead}{words}"))
    # One benchmark's comparisons together (sorted is stable: vs retry before vs reflexion).
    return [text for _, text in sorted(out, key=lambda x: x[0])]


def _comparison_words(name: str, ref: str, cmp: dict[str, Any], margin: float) -> str:
    """One comparison's difference, tests, verdict and power, in words."""
    diff = cmp.get("diff") or {}
    ass = cmp.get("assessment") or {}
    eq = ass.get("equivalence") or {}
    est = 100 * float(diff.get("estimate") or 0.0)
    text = f"pass@1 at budget differs by {est:+.1f} points"
    if diff.get("low") is not None and diff.get("high") is not None:
        text += f" [{100 * float(diff['low']):+.1f}, {100 * float(diff['high']):+.1f}]"
    text += (
        f"; exact McNemar p {_num('p_vs_', cmp.get('p'))},"
        f" Holm {_num('p_holm_vs_', cmp.get('p_holm'))}"
    )
    verdict = ass.get("verdict") or "inconclusive"
    tost_p = f"{float(eq['p_value']):.3g}" if eq else ""
    if verdict == "different":
        text += f": **different**, {name if est > 0 else ref} higher"
        # The equivalence verdict is owed for every comparison, not only for those that
        # show no difference: a difference can also lie within the margin.
        if eq.get("equivalent"):
            text += (
                f" (and within ±{margin:g} points by TOST, p {tost_p}:"
                " a real difference smaller than the margin)"
            )
        elif eq:
            text += f", not equivalent within ±{margin:g} points (TOST p {tost_p})"
    elif verdict == "equivalent":
        text += (
            f": **equivalent** within ±{margin:g} points (TOST p {tost_p},"
            f" 90% CI [{100 * float(eq['low']):+.1f}, {100 * float(eq['high']):+.1f}])"
        )
    else:
        text += (
            ": **inconclusive**, neither a difference nor equivalence within"
            f" ±{margin:g} points is shown" + (f", TOST p {tost_p}" if eq else "")
        )
    det = ass.get("detectable_difference")
    return text + (
        f"; these tasks detect {100 * float(det):.1f} points with 80% power."
        if det is not None
        else "; these tasks cannot reach 80% power at any difference."
    )


def answer_markdown(
    report: dict[str, Any], planned: dict[str, int] | None = None, *, table: str = "pooled"
) -> str:
    """:func:`pooled_answer` as a Markdown list, or why there is nothing to say."""
    lines = pooled_answer(report, planned, table=table)
    if not lines:
        return why_empty(table, report)
    return "\n".join(f"- {line}" for line in lines)


#: Columns a table leaves out when no row has a value (a README block may still name
#: them: a study's plus verdicts arrive after its first logs).
DROPPED_WHEN_EMPTY = frozenset({"pass_at_budget_plus"})


def _without_empty_plus(df: pd.DataFrame) -> pd.DataFrame:
    """No plus column where no run has plus verdicts (most reports)."""
    if "pass_at_budget_plus" in df.columns and df["pass_at_budget_plus"].isna().all():
        return df.drop(columns=["pass_at_budget_plus"])
    return df


# --------------------------------------------------------------------------- rendering

_PLUS_COLS = (
    "first_try_plus",
    "final_plus",
    "solved_plus",
    "base_pass_plus_fail",
    "self_base_pass_plus_fail",
)
_SHARE_COLS = {
    "replayed_share",
    "first_try_plus",
    "final_plus",
    "solved_plus",
    "first_try",
    "final",
    "final_finished",
    "logged_final",
    "final_a",
    "final_b",
    "diff",
    "tp_rate",
    "fn_rate",
    "fp_rate",
    "tn_rate",
    "fpr_of_failures",
    "fnr_of_passes",
    "success_at_budget",
    "pass_at_budget",
    "pass_at_budget_plus",
    "diff_vs_retry",
    "diff_vs_reflexion",
    "detectable",
    "detectable_vs_retry",
    "detectable_vs_reflexion",
    "pass1_mean",
    "pass1_sd",
    "pass1_task",
    "pass_hat_k",
    "pass_at_k",
    "first_try_mean",
    "first_try_sd",
    "did",
    "diff_evaluator",
    "diff_reference",
    "pass_reflexion",
    "pass_retry",
    "reflexion_minus_retry",
    "trend_slope",
}
#: Where every metric name of the tables, figures, ``compare`` and the viewer is defined.
GLOSSARY = "metric names: docs/reports.md#metrics"

_HEADERS = {
    "first_try_plus": "first try (plus)",
    "final_plus": "final (plus)",
    "solved_plus": "solved by K (plus)",
    "base_pass_plus_fail": "submitted base pass, plus fail",
    "self_base_pass_plus_fail": "self+base pass, plus fail",
    "first_try": "first try",
    "final": "final (errored = failed)",
    "final_finished": "final of finished",
    "logged_final": "final (as logged)",
    "fixes": "fixes",
    "breaks": "breaks",
    "fixed_from_first": "fixed from trial 1",
    "broken_from_first": "broken from trial 1",
    # The controls table's keys for the same task counts (kept: CSV columns).
    "fixed": "fixed from trial 1",
    "broken": "broken from trial 1",
    "trials_per_task": "trials/task",
    "tokens_per_task": "tokens/task (as run live)",
    "paid_tokens_per_task": "tokens/task paid now",
    "paid_dollars_per_task": "$/task paid now",
    "calls_per_task": "calls/task",
    "dollars_total": "$ total (as run live)",
    "dollars_paid_total": "$ paid now",
    "wall_s_per_task": "wall s/task",
    "answer_key": "answer key",
    "diff": "A - B",
    "mcnemar_p": "McNemar p",
    "mcnemar_p_holm": "Holm p",
    "holm_m": "Holm family size",
    "only_a": "only A",
    "only_b": "only B",
    "final_a": "final A",
    "final_b": "final B",
    "tp_rate": "TP",
    "fn_rate": "FN",
    "fp_rate": "FP",
    "tn_rate": "TN",
    "fpr_of_failures": "FP of hidden fails",
    "fnr_of_passes": "FN of hidden passes",
    "no_feedback_trials": "no-feedback trials",
    "tp": "#TP",
    "fn": "#FN",
    "fp": "#FP",
    "tn": "#TN",
    "fp_stopped_early": "FP stopped early",
    "fp_at_last_trial": "FP at trial K",
    "failed_at_trial_1": "failed at trial 1",
    "trial_1_same": "trial 1 same",
    "success_at_budget": "success at budget",
    "why_blank": "why blank",
    "pass_at_budget": "pass@1 at budget",
    "pass_at_budget_plus": "pass@1 at budget (plus)",
    "n_vs_retry": "paired tasks vs retry",
    "n_vs_reflexion": "paired tasks vs reflexion",
    "spend_per_task": "spend/task (as run live)",
    "diff_vs_retry": "diff vs retry",
    "p_vs_retry": "McNemar p vs retry",
    "p_holm_vs_retry": "Holm p vs retry",
    "diff_vs_reflexion": "diff vs reflexion",
    "p_vs_reflexion": "McNemar p vs reflexion",
    "p_holm_vs_reflexion": "Holm p vs reflexion",
    "verdict": "verdict",
    "detectable": "detectable difference",
    "verdict_vs_retry": "verdict vs retry",
    "detectable_vs_retry": "detectable difference vs retry",
    "verdict_vs_reflexion": "verdict vs reflexion",
    "detectable_vs_reflexion": "detectable difference vs reflexion",
    "stop_reasons": "why tasks stopped",
    "n_seeds": "seeds (n)",
    "pass1_mean": "pass@1 mean over seeds",
    "pass1_sd": "pass@1 sd across seeds",
    "pass1_task": "pass@1 over tasks",
    "pass_hat_k": "pass^k (every seed)",
    "pass_at_k": "pass@k (some seed)",
    "first_try_mean": "first try mean",
    "first_try_sd": "first try sd",
    "cannot_differ": "cannot differ",
    "seeds_a": "seeds A",
    "seeds_b": "seeds B",
    "dollars_per_task": "$/task",
    "wall_per_task": "wall s/task",
    "trial_1_common": "common tasks",
    "hidden_pass": "hidden pass",
    "tests_per_task": "self-tests/task",
    "fn_to_wrong": "FN -> wrong next",
    "fn_to_right": "FN -> right next",
    "fn_submitted": "FN submitted",
    "breaks_other": "breaks not after FN",
    "tasks_ever_right": "tasks ever right",
    "tasks_lost": "tasks lost",
    "solved_at_trial_1": "solved at trial 1",
    "elapsed_min": "elapsed min",
    "min_per_task": "min/task",
    "solved_per_hour": "solved/hour",
    "replayed_share": "calls replayed from the cache",
    "reference_evaluator": "reference",
    "did": "DiD",
    "p_value": "sign-flip p",
    "p_holm": "Holm p",
    "role": "test",
    "diff_evaluator": "reflexion - retry, evaluator",
    "diff_reference": "reflexion - retry, reference",
    "nonzero": "tasks with d != 0",
    "pass_reflexion": "reflexion pass@1 at budget",
    "pass_retry": "retry pass@1 at budget",
    "reflexion_minus_retry": "reflexion - retry",
    "trials_judged": "trials judged",
    "trend_slope": "trend per step",
    "trend_p": "trend p (exact permutation)",
}


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _num(col: str, v: Any) -> str:
    if _missing(v):
        return ""
    if col in _SHARE_COLS or (col.startswith("k") and col[1:].isdigit()):
        return f"{100 * float(v):.1f}"
    if col in ("mcnemar_p", "mcnemar_p_holm", "p_value", "p_holm", "trend_p") or col.startswith(
        ("p_vs_", "p_holm_vs_")
    ):
        return f"{float(v):.3g}"
    if col.startswith(("dollars", "paid_dollars")):
        return f"{float(v):.4f}"
    if isinstance(v, float) and not float(v).is_integer():
        return f"{float(v):.1f}" if abs(v) >= 10 else f"{float(v):.2f}"
    if isinstance(v, float):
        return str(int(v))
    return str(v)


#: Differences of two shares: in percentage points, not percent (a header says so).
_POINT_COLS = frozenset(
    {
        "diff",
        "diff_vs_retry",
        "diff_vs_reflexion",
        "detectable",
        "detectable_vs_retry",
        "detectable_vs_reflexion",
        "did",
        "diff_evaluator",
        "diff_reference",
        "reflexion_minus_retry",
        "trend_slope",
    }
)


def select_columns(df: pd.DataFrame, columns: Sequence[str], *, what: str) -> pd.DataFrame:
    """``df`` with ``columns`` first, in that order (each with its ``_low``/``_high``
    interval columns), and nothing else; a name the table lacks is an error naming what
    it has, unless the table drops it while empty (:data:`DROPPED_WHEN_EMPTY`)."""
    if df.empty:
        return df
    unknown = [c for c in columns if c not in df.columns and c not in DROPPED_WHEN_EMPTY]
    if unknown:
        have = [c for c in df.columns if not c.endswith(("_low", "_high"))]
        raise ValueError(f"{what} has no column(s) {unknown}; it has: {', '.join(have)}")
    cols = [c for c in columns if c in df.columns]
    bounds = [b for c in cols for b in (f"{c}_low", f"{c}_high") if b in df.columns]
    return df[cols + bounds]


def display_frame(df: pd.DataFrame, *, drop_empty: bool = True) -> pd.DataFrame:
    """Strings for reading: shares in %, differences in points, ``x [low, high]`` for
    intervals; a column with no value in any row left out (``drop_empty``), so a table
    shows what its runs have rather than columns that are always blank for them."""
    if df.empty:
        return df
    cols = [c for c in df.columns if not c.endswith(("_low", "_high"))]
    out = {}
    for c in cols:
        low, high = f"{c}_low", f"{c}_high"
        vals = []
        for i in range(len(df)):
            v = df[c].iloc[i]
            text = _num(c, v)
            if low in df.columns and text and not _missing(df[low].iloc[i]):
                text += f" [{_num(c, df[low].iloc[i])}, {_num(c, df[high].iloc[i])}]"
            vals.append(text)
        if drop_empty and not any(vals):
            continue
        header = _HEADERS.get(c, c)
        if c in _POINT_COLS:
            header += " (points)"
        elif c in _SHARE_COLS or (c.startswith("k") and c[1:].isdigit()):
            header += " %"
        out[header] = vals
    return pd.DataFrame(out)


def to_markdown(df: pd.DataFrame, why: str = "") -> str:
    if df.empty:
        return f"(none: {why})" if why else "(none)"
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(text: Any) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def to_latex(df: pd.DataFrame, caption: str = "", why: str = "") -> str:
    if df.empty:
        return f"% {caption}: (none{': ' + why if why else ''})"
    cols = [str(c) for c in df.columns]
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{" + "l" * len(cols) + "}",
        r"\toprule",
        " & ".join(_tex(c) for c in cols) + r" \\",
        r"\midrule",
    ]
    for row in df.itertuples(index=False):
        lines.append(" & ".join(_tex(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + _tex(caption) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def render(
    report: dict[str, Any],
    fmt: str = "md",
    which: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
) -> str:
    """The report as text: ``md``, ``latex``, ``csv`` (numeric; one table, or each
    table preceded by a ``# table: NAME`` line) or ``json``. ``columns``: only these,
    in this order, in every table rendered (each must be in one of them); md and
    LaTeX leave out columns empty in every row, CSV keeps its full schema. ``json``
    without ``which`` or ``columns`` is the whole report; with either, it is
    ``{table: [row, ...]}`` with the CSV's keys (so ``--columns`` holds in every format)."""
    if fmt == "json" and not (which or columns):
        return json.dumps(report, indent=2, default=_json_default)
    frames = tables(report)
    # An optional table is printed where the report has it, or when asked for by name.
    names = list(which or [n for n in TABLES if has_table(report, n)])
    unknown = [n for n in names if n not in frames]
    if unknown:
        raise ValueError(f"unknown table(s) {unknown} (allowed: {', '.join(TABLES)})")
    if columns:
        have = {c for n in names for c in frames[n].columns} | DROPPED_WHEN_EMPTY
        missing = [c for c in columns if c not in have]
        if missing:
            listed = sorted(
                {c for n in names for c in frames[n].columns if not c.endswith(("_low", "_high"))}
            )
            raise ValueError(
                f"no table of {names} has column(s) {missing}; they have: {', '.join(listed)}"
            )
    parts = []
    rows: dict[str, Any] = {}
    for name in names:
        df = frames[name]
        if columns and not df.empty:
            df = select_columns(df, [c for c in columns if c in df.columns], what=f"table {name}")
        if fmt == "json":
            if columns and not which and not any(c in frames[name].columns for c in columns):
                continue  # a table with none of the columns asked for, named by no --table
            # NaN is not JSON: a missing value is null, as in report.json.
            rows[name] = [
                {k: None if _json_missing(v) else v for k, v in rec.items()}
                for rec in df.to_dict(orient="records")
            ]
        elif fmt == "csv":
            body = df.to_csv(index=False).rstrip("\n")
            parts.append(body if len(names) == 1 else f"# table: {name}\n{body}")
        elif fmt == "latex":
            why = why_empty(name, report) if df.empty else ""
            parts.append(to_latex(display_frame(df), TITLES[name] + _note(name, report), why))
        elif fmt == "md":
            why = why_empty(name, report) if df.empty else ""
            words = ""
            if name == "pooled" and not df.empty:
                words = f"\n\nIn words (the pooled comparisons):\n\n{answer_markdown(report)}"
            elif name in OPTIONAL_TABLES and not df.empty:
                kind = "did" if name == "feedback_did" else "dose"
                words = f"\n\nIn words:\n\n{feedback_markdown(report, kind)}"
            parts.append(
                f"### {TITLES[name]}\n\n{to_markdown(display_frame(df), why)}"
                f"{_md_note(name, report)}{words}"
            )
        else:
            raise ValueError(f"unknown format {fmt!r} (allowed: md, latex, csv, json)")
    if fmt == "json":
        return json.dumps(rows, indent=2, default=_json_default) + "\n"
    return "\n\n".join(parts) + "\n"


def feedback_markdown(report: dict[str, Any], which: str) -> str:
    """The DiD rows (``which="did"``) or the dose-response (``"dose"``) in words, as a
    Markdown list (a study README's ``<!-- report:did -->`` / ``<!-- report:dose -->``
    block), or why there is nothing to say."""
    section = report.get("feedback")
    table = "feedback_did" if which == "did" else "feedback_dose"
    if not section:
        return f"- (none: {why_empty(table, report)})"
    lines = did_sentences(section) if which == "did" else dose_sentences(section)
    if not lines:
        return f"- (none: {why_empty(table, report)})"
    return "\n".join(f"- {line}" for line in lines)


def why_empty(name: str, report: dict[str, Any]) -> str:
    """Why table ``name`` has no row in this report (a blank table must say so)."""
    groups = report.get("groups") or []
    if not groups:
        return "no run with a finished task"
    if name == "paired":
        by: dict[tuple[str, str], list[str]] = {}
        for g in groups:
            by.setdefault((str(g["benchmark"]), str(g["model"])), []).append(str(g["label"]))
        rows = "; ".join(f"{b} / {m}: {', '.join(v)}" for (b, m), v in sorted(by.items()))
        return (
            "no two rows share a benchmark and a model, which a paired comparison needs "
            f"(the same tasks under one model): {rows}"
        )
    if name == "pooled":
        return "no strategy x model was run on more than one benchmark: nothing to pool"
    if name == "seeds":
        return "no configuration was run under more than one seed (runs whose config differs only in `seed`)"
    if name == "strategies":
        note = (report.get("strategies") or {}).get("note")
        return (
            str(note)
            if note
            else "no benchmark x model has runs of several strategies to read at one budget"
        )
    if name == "self_tests":
        return "no trial has both a self-test verdict and a hidden verdict"
    if name in OPTIONAL_TABLES:
        section = report.get("feedback")
        skipped = "; ".join((section or {}).get("skipped") or [])
        if section is None:
            return (
                "no benchmark x model has both retry and reflexion under two in-loop"
                " evaluators or more"
            )
        if name == "feedback_did":
            return (
                "no evaluator has retry and reflexion on common tasks with retry and"
                " reflexion under self_tests (the reference) on its benchmark"
                + (f" ({skipped})" if skipped else "")
            )
        return "no benchmark x model has two evaluators with both strategies" + (
            f" ({skipped})" if skipped else ""
        )
    return "nothing in these runs for this table"


def _note(name: str, report: dict[str, Any]) -> str:
    if name == "budget" and report["budget"]:
        axis = report["settings"]["axis"]
        return (
            f" (axis: {axis} per task; budget = the cheapest strategy's mean spend unless --budget)"
        )
    if name == "strategies" and (report.get("strategies") or {}).get("rows"):
        return (
            " (pass@1 at budget: per task, the verdict of the last trial paid for within the"
            " budget, resampled from the log; final: pass@1 as the run ended, which may"
            " overshoot the budget by the last trial; diff: pass@1 at budget minus the"
            " reference's on common tasks, Newcombe's paired score 95% CI; exact McNemar p"
            " and Holm-adjusted p over one family: "
            + _strategy_family(report)
            + "; partial: fewer tasks than the largest run"
            + _detectable(report)
            + "; "
            + _verdict_note(report)
            + ")"
        )
    if name == "pooled" and (report.get("strategies") or {}).get("pooled"):
        return (
            " (one row per strategy x model run on several benchmarks, each at its own"
            " budget (budgets); pooled over the benchmarks' tasks, every task weighing the"
            " same; pass@1 at budget: Wilson 95% CI and diff: Newcombe's paired score 95%"
            " CI, of the pooled counts (wider than stratified, never narrower);"
            " McNemar p: exact, on the discordant tasks of all benchmarks;"
            f" Holm p over one family: the {_pooled_family(report)} distinct pooled tests of"
            " this table (a pair listed in both its rows counted once); the"
            " equivalence test runs on the per-task differences of all benchmarks"
            " together, which is conservative under stratification; plus: the same"
            " trials' plus-test verdicts (blank: not every run re-judged under plus);"
            " paired tasks: tasks both runs finished, over all benchmarks; "
            + _verdict_note(report)
            + ")"
        )
    if name == "paired" and report["paired"]:
        m = len(report["paired"])
        return (
            " (A - B: final pass@1 of A minus B's on the tasks both ran, Newcombe's paired"
            " score 95% CI (a paired bootstrap where a side has several seeds); McNemar p:"
            " exact test on the discordant tasks; Holm p: McNemar p Holm-adjusted over one"
            f" family, the {m} pairs of this table; "
            + _seeds_note(report)
            + _verdict_note(report)
            + ")"
        )
    if name == "seeds" and report.get("seeds"):
        return (
            " (one row per configuration: runs whose config differs only in the seed;"
            " pass@1 mean ± sd: each seed's pass@1 averaged over seeds, sd across seeds;"
            " pass@1 over tasks: each task's mean verdict over seeds, 95% bootstrap CI"
            " resampling tasks (the task is the unit, not task x seed); pass^k: tasks"
            " every seed solves; pass@k: tasks some seed solves (Wilson 95% CIs); over the"
            " tasks every seed finished with a verdict; cannot differ: why the seeds repeat"
            " one another)"
        )
    if name == "main":
        return (
            " (final: pass@1 over all tasks, an errored task counted as failed; final of "
            "finished: pass@1 over the tasks that did not error; errored: tasks without a "
            "verdict, redone by a resume with retry_errored=true; fixes/breaks: trial pairs "
            "between trials, wrong->right / right->wrong; fixed/broken from trial 1: tasks "
            f"wrong at trial 1 and right when submitted / the reverse; {GLOSSARY})"
        )
    if name == "controls":
        # The controls count tasks, not trial pairs: say so where "fixed" could be read
        # as the main table's "fixes".
        return (
            " (fixed/broken from trial 1: tasks wrong at trial 1 and right when submitted /"
            f" the reverse; net: fixed minus broken; {GLOSSARY})"
        )
    if name == "rewrites":
        return f" (fixes/breaks: between trials, as in the main table; {GLOSSARY})"
    if name == "self_tests":
        return (
            " (in-loop verdict of each row's evaluator vs hidden verdict; TP/FN/FP/TN: rates"
            " per in-loop verdict, as in the paper's Table 2: TP+FP = 1, FN+TN = 1; FP of"
            " hidden fails = FP/(FP+TN), FN of hidden passes = FN/(FN+TP); no-feedback"
            " trials: the evaluator had nothing to check and gave no verdict)"
        )
    if name == "feedback_did" and (report.get("feedback") or {}).get("did"):
        return (
            " (DiD: mean over the tasks all four arms have of d = (reflexion - retry under"
            " the evaluator) - (reflexion - retry under the reference, self_tests), pass@1"
            " at each benchmark's budget as in the strategies table; positive: reflexion"
            " gains more over retry under the evaluator. Interval: percentile bootstrap"
            " over tasks (within benchmarks when pooled), exact where every d is equal;"
            " sign-flip p: exact paired permutation test of DiD = 0 on the per-task d;"
            " Holm p over every row but the confirmatory one (pooled oracle); detectable:"
            " the |DiD| found with 80% power at alpha 0.05, normal approximation with the"
            " observed variance of d; inner differences: Newcombe's paired score 95% CI;"
            " evaluator arms include their settings (a noisy oracle's fn/fp rates); "
            + GLOSSARY
            + _feedback_skipped(report)
            + ")"
        )
    if name == "feedback_dose" and (report.get("feedback") or {}).get("dose"):
        return (
            " (reflexion - retry: pass@1 at budget on the tasks both ran under that"
            " evaluator, Newcombe's paired score 95% CI; order: the designed reliability,"
            " self_tests, noisy oracles from the noisiest, oracle; blank: an arm apart, not"
            " ordered; FN of hidden passes and FP of hidden fails: the arm's in-loop"
            " verdicts vs hidden verdicts over both runs' trials; trend: the mean"
            " difference's change per step of the order, exact permutation test"
            " permuting each task's differences among the ordered arms, on the tasks all"
            " of them have (three arms or more); " + GLOSSARY + _feedback_skipped(report) + ")"
        )
    if name == "elapsed" and any(
        (g.get("replayed_calls") or {}).get("replayed") for g in report["groups"]
    ):
        return (
            " (a call replayed from the cache takes no model time: the elapsed time and"
            " solved/hour of a row with calls replayed from the cache are not its live speed)"
        )
    return ""


def _feedback_skipped(report: dict[str, Any]) -> str:
    skipped = (report.get("feedback") or {}).get("skipped") or []
    return "; left out: " + "; ".join(skipped) if skipped else ""


def _seeds_note(report: dict[str, Any]) -> str:
    if not any(
        int(r.get("seeds_a") or 1) > 1 or int(r.get("seeds_b") or 1) > 1 for r in report["paired"]
    ):
        return ""
    return (
        "a configuration run under several seeds is one row, paired with another by task"
        " over all their seeds: A and B are each task's mean verdict over seeds, only A /"
        " only B the tasks whose mean favours A / B, and the p-value the exact sign-flip"
        " test on the per-task mean differences (McNemar's exact test where both have one"
        " seed); "
    )


def _verdict_note(report: dict[str, Any]) -> str:
    margin = float(report["settings"].get("equivalence_margin", DEFAULT_MARGIN))
    return (
        "verdict: different where the Holm-adjusted p < 0.05; equivalent where two one-sided"
        f" paired t-tests (TOST, alpha 0.05) put the difference within ±{100 * margin:g} points"
        " (--equivalence-margin); otherwise inconclusive: the data can tell neither, which is"
        " not evidence of no difference; detectable difference: the smallest paired"
        " difference these tasks detect with 80% power at alpha 0.05 given the observed"
        " share of discordant tasks (the exact McNemar test's power; reflexion-bench plan),"
        " blank where these tasks cannot reach that power at any difference: no discordant"
        " task, or so few that even all of them on one side would not reach it"
    )


def _strategy_family(report: dict[str, Any]) -> str:
    """The strategies table's one Holm family, e.g. ``the 17 distinct tests of this table
    (a pair listed in both its rows counted once)``."""
    m = int(((report.get("strategies") or {}).get("detectable") or {}).get("holm_family") or 0)
    return f"the {m} distinct tests of this table (a pair listed in both its rows counted once)"


def _pooled_family(report: dict[str, Any]) -> int:
    tests = {
        (r["model"], frozenset((r["strategy"], ref)))
        for r in (report.get("strategies") or {}).get("pooled") or []
        for ref in ("retry", "reflexion")
        if r.get(f"vs_{ref}")
    }
    return len(tests)


def _detectable(report: dict[str, Any]) -> str:
    det = (report.get("strategies") or {}).get("detectable") or {}
    if not det.get("n_tasks"):
        return ""
    n = int(det["n_tasks"])
    d1 = int(det["min_one_sided_discordant"])
    dh = int(det["min_one_sided_discordant_holm"])
    m = int(det.get("holm_family") or 0)
    one = (
        f"; what {n} paired tasks can detect: an exact McNemar p < 0.05 needs at least {d1}"
        f" discordant tasks all favouring one side ({100 * d1 / n:.1f} points of pass@1)"
    )
    if m < 2:  # no family to correct (one run, or one comparison): Holm adds nothing
        return one + "; discordant tasks on both sides need more"
    return (
        one + f", and under Holm across {m} comparisons the smallest p must be below"
        f" 0.05/{m}: at least {dh} one-sided discordant tasks ({100 * dh / n:.1f} points);"
        " discordant tasks on both sides need more"
    )


def _md_note(name: str, report: dict[str, Any]) -> str:
    lines = []
    note = _note(name, report).strip(" ()")
    if note:
        lines.append(note)
    if name == "seeds":
        for warning in report.get("seed_warnings") or []:
            lines.append(f"**{warning}**")
    if name == "main":
        lines.append(
            "Shares in %, [95% Wilson CI over tasks]; published rows are the paper's printed"
            " figures."
        )
        for bench, why in (report.get("published_missing") or {}).items():
            lines.append(f"No published figure for {bench}: {why}.")
        if any(g.get("plus") for g in report["groups"]):
            lines.append(
                "(plus) columns: first try, final and solved by trial K with the plus tests' "
                "verdict (HumanEval+ / MBPP+ inputs after the base tests; from the log under "
                "scorer.tests=both|plus, or from the run's rescore_plus.jsonl written by "
                "`reflexion-bench rescore --tests plus`); submitted base pass, plus fail: "
                "tasks whose submitted program passes base and fails plus; self+base pass, "
                "plus fail: trials whose self-tests and base tests passed and plus fails. "
                "Blank where a run has no plus verdicts"
            )
        for g in report["groups"]:
            if (g.get("plus") or {}).get("unjudged"):
                lines.append(
                    f"**{g['label']} on {g['benchmark']}: {g['plus']['unjudged']} base passes "
                    "never judged under plus**; plus shares that depend on them are blank "
                    "(`reflexion-bench rescore` judges them)"
                )
        for g in report["groups"]:
            if g.get("errored_tasks"):
                lines.append(
                    f"**{g['label']} on {g['benchmark']}: {g['errored_tasks']} of "
                    f"{g['n_tasks']} tasks errored**; its final counts them as failed"
                )
        # Set by `reflexion-bench report` from each run's provenance.json.
        for warning in report.get("provenance_warnings") or []:
            lines.append(f"**warning: {warning}**")
        for note in report.get("provenance_notes") or []:
            lines.append(f"note: {note}")
        for warning in report.get("shard_warnings") or []:
            lines.append(f"**warning: {warning}; not a complete run**")
        if any(
            (g.get("answer_key") or {}).get("label") == "answer-in-loop" for g in report["groups"]
        ):
            lines.append(
                "answer key: `answer-in-loop` rows fed the gold answer / the environment's "
                "success signal / the hidden verdict back into the loop (N = reads logged); "
                "they are not comparable with `clean` rows"
            )
        for g in report["groups"]:
            bon = g.get("best_of_n_equal_tokens")
            if bon:
                lines.append(
                    f"best_of_n with the token budget of {g['label']} on {g['benchmark']}: "
                    f"n = {bon['n']} ({bon['worst_case_tokens_per_task']:.0f} tokens for a task using all "
                    f"{bon['max_trials']} trials, {bon['tokens_per_sample']:.0f} per sample)"
                )
            if g.get("missing"):
                lines.append(
                    f"{g['label']} on {g['benchmark']}: missing in the log: {g['missing']}"
                )
    return "" if not lines else "\n\n" + "\n".join(f"- {line}" for line in lines)


def _json_missing(v: Any) -> bool:
    """NaN, None or pandas' NA (a missing cell of any column dtype); never a list."""
    return not isinstance(v, (list, tuple, dict)) and bool(pd.isna(v))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return str(obj)
