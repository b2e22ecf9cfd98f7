"""Does Reflexion's gain over retry grow with the reliability of the in-loop feedback?
The feedback-reliability study's statistics (issue 48), from the logs only.

Arms are benchmark x model x in-loop evaluator arm x strategy
(:func:`reflexion_bench.analysis.runs.evaluator_arm`: a noisy oracle's noise rates are
part of its arm). Every verdict is pass@1 at the budget of the ``strategies`` table
(:mod:`reflexion_bench.analysis.equal_budget`: per task, the hidden verdict of the last
trial paid for within the budget, the runs' own ``budget`` where their logs name one),
so the numbers here are that table's, combined across evaluators.

**Difference in differences** (:func:`did_rows`, the ``feedback_did`` table). For an
evaluator E and the reference ``self_tests``, on the tasks all four arms have a verdict
for (R: ``reflexion``, T: ``retry``)::

    d_t = (R_E(t) - T_E(t)) - (R_self(t) - T_self(t))   in {-2, ..., 2}

and DiD = mean of d_t: how much more Reflexion gains over retry under E than under the
model's own tests (positive: more under E). One row per benchmark x model x E, and a
pooled row per model x E over the benchmarks that have it (every task weighing the
same). Each row also gives the two inner differences (R - T under E, under
``self_tests``) with Newcombe's paired score interval, as every table does.

- *Interval*: the percentile bootstrap over tasks (resampled within each benchmark when
  pooled: :func:`reflexion_bench.analysis.stats.stratified_bootstrap_ci`), 10,000
  resamples, the design's choice (results/feedback-reliability/README.md), kept because
  it covers. d_t is a bounded integer, mostly 0: the per-task contrast of four 0/1
  verdicts. Simulated at 164 and 360 tasks (``tests/analysis/test_interval_coverage.py``
  measures it), the percentile interval keeps 93.5-96% coverage in every setting tried,
  including a sparse one-sided effect (3% of tasks at +1, the rest 0), where the
  t-interval covers 87.5% at 164 tasks (and, in the simulations that chose the method,
  the bootstrap-t 85%, a MOVER combination of the two Newcombe intervals 87%, BCa and
  the empirical-likelihood interval 94%, with dips to 90% elsewhere): a skewed count
  near 0 is a binomial near 0, where Wald-type intervals fail and the bootstrap's skew
  follows the data. Where every d_t is the same (no task's contrast differs: typically
  all 0) the bootstrap is a point; the interval is then exact instead: at most a share
  u = 1 - (alpha/2)^(1/n) of tasks could differ unseen (Clopper-Pearson), each by at
  most 4, so the mean lies within ``[c - (c + 2) u, c + (2 - c) u]`` around the common
  value c. The pooled interval resamples within benchmarks, as the design fixed their
  sizes.
- *Test* of DiD = 0: the exact sign-flip (paired permutation) test on the d_t
  (:func:`reflexion_bench.analysis.stats.sign_flip_exact`, by convolution, not
  sampling). It is exact under the null that each task's contrast is as likely to be
  -d_t as d_t (as when, within each task, the evaluator's effect on Reflexion and on
  retry are exchangeable), and for the weaker null E[d_t] = 0 it is asymptotically
  exact: its permutation variance, sum d_t^2, estimates n Var(d_t) under that null. It
  is the test the study's design names (results/feedback-reliability/README.md), and
  reduces to the exact McNemar test when the self_tests arms agree on every task. The
  pooled test flips the tasks of every benchmark together (signs are flipped within a
  task, so the strata need no adjustment). ``p_holm``: Holm over every row but the
  study's one confirmatory test, the pooled ``oracle`` row (:data:`CONFIRMATORY`),
  which keeps its own p.
- *What the tasks can detect* (``detectable``): the smallest |DiD| the test finds with
  80% power at two-sided alpha 0.05, by the normal approximation with the observed
  variance of d_t held fixed: (z_0.975 + z_0.8) sd(d) / sqrt(n) (the stratified
  standard error when pooled). A simulation in the tests checks the sign-flip test's
  power there. Blank where every d_t is equal (no variance to scale by).

**Dose-response** (:func:`dose_rows`, the ``feedback_dose`` table): per benchmark x
model, Reflexion minus retry (paired, Newcombe's interval) under each evaluator arm on
the tasks both strategies have, the arms in order of designed reliability
(:func:`dose_order`: ``self_tests``, then noisy oracles from the noisiest,
``fn_rate + fp_rate`` descending, then ``oracle``); any other arm (``visible_tests``,
``oracle_verdict``...) is listed apart, not placed in the order. Each arm's measured
reliability comes with it: the in-loop verdicts of both its runs against the hidden
ones (``summary.json``'s ``in_loop`` confusion), as the false-negative rate of hidden
passes FN/(FN+TP) and the false-positive rate of hidden failures FP/(FP+TN). The
trend test (:func:`trend_test`, with three ordered arms or more): the statistic S =
sum over tasks and arms of (2 r_e - (m - 1)) (R_e(t) - T_e(t)), r_e = 0..m-1 the arm's
rank in the order, on the tasks every ordered arm has; its exact permutation
distribution permutes each task's m differences among the arms (all m! orders, tasks
independent, by convolution). The null is that within a task the Reflexion - retry
difference does not depend on the arm; a small p says the differences rise (or fall,
by S's sign) along the order, not that they rise at every step. The ranks are the
designed order, fixed before any outcome, not the measured rates (which the same runs
produce); where the measured rates disagree with the order the table shows it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reflexion_bench.analysis.equal_budget import holm, task_budget_points, verdicts_at_budget
from reflexion_bench.analysis.runs import DEFAULT_EVALUATOR, arm_name, arm_settings
from reflexion_bench.analysis.stats import (
    DEFAULT_RESAMPLES,
    Interval,
    bootstrap_ci,
    paired_difference_interval,
    sign_flip_exact,
    stratified_bootstrap_ci,
)

#: The evaluator every other one is compared with: the model's own tests.
REFERENCE = DEFAULT_EVALUATOR
#: The strategy whose gain over :data:`BASELINE` is measured.
STRATEGY = "reflexion"
BASELINE = "retry"
#: The study's one confirmatory test: the pooled DiD of this arm (its p is not adjusted).
CONFIRMATORY = "oracle"
#: Power and two-sided level of "what the tasks can detect".
POWER = 0.8
ALPHA = 0.05
#: The ``benchmark`` of a row pooled over benchmarks.
POOLED = "pooled"


# --------------------------------------------------------------------------- statistics


def did_interval(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The interval of the mean of the per-task contrasts ``d_t`` of one or several
    benchmarks (``strata``; every task weighing the same): the percentile bootstrap
    over tasks, within each stratum; the exact bound where every d_t is equal (module
    docstring)."""
    parts = [np.asarray(s, dtype=float) for s in strata]
    parts = [p for p in parts if p.size]
    if not parts:
        raise ValueError("did_interval needs at least one task")
    d = np.concatenate(parts)
    if d.min() == d.max():
        c = float(d[0])
        u = 1.0 - ((1.0 - level) / 2.0) ** (1.0 / d.size)
        return Interval(c, c - (c + 2.0) * u, c + (2.0 - c) * u, level)
    if len(parts) == 1:
        return bootstrap_ci(d, level=level, n_resamples=n_resamples, seed=seed)
    return stratified_bootstrap_ci(parts, level=level, n_resamples=n_resamples, seed=seed)


def did_p_value(d: Sequence[float] | np.ndarray) -> float:
    """The exact two-sided sign-flip test of mean(d) = 0 on integer contrasts d_t."""
    x = np.asarray(d, dtype=float)
    return sign_flip_exact(x, np.zeros_like(x)).p_value


def detectable_did(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> float | None:
    """The smallest |DiD| detected with ``power`` at two-sided ``alpha``, by the normal
    approximation with the observed variance of d_t (the stratified standard error over
    several benchmarks); None where the d_t have no variance."""
    from scipy.stats import norm

    parts = [np.asarray(s, dtype=float) for s in strata]
    parts = [p for p in parts if p.size]
    n = sum(p.size for p in parts)
    if n == 0:
        return None
    var_sum = sum(p.size * float(p.var(ddof=1)) for p in parts if p.size > 1)
    if var_sum <= 0:
        return None
    se = math.sqrt(var_sum) / n
    return float((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * se)


def _inner(a: np.ndarray, b: np.ndarray, level: float) -> dict[str, float]:
    """Newcombe's paired interval of mean(a) - mean(b) (0/1 verdicts)."""
    return paired_difference_interval(a, b, level=level).to_dict()


def did_statistics(
    strata: Sequence[np.ndarray],
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Every number of a DiD row from ``strata``: per benchmark a tasks x 4 array of 0/1
    verdicts, columns R_E, T_E, R_ref, T_ref (module docstring)."""
    mats = [np.asarray(m, dtype=float).reshape(-1, 4) for m in strata]
    mats = [m for m in mats if m.size]
    if not mats:
        raise ValueError("did_statistics needs at least one task with all four verdicts")
    ds = [m[:, 0] - m[:, 1] - m[:, 2] + m[:, 3] for m in mats]
    x = np.concatenate(mats)
    d = np.concatenate(ds)
    iv = did_interval(ds, level=level, n_resamples=n_resamples, seed=seed)
    return {
        "n": int(d.size),
        "did": float(d.mean()),
        "low": iv.low,
        "high": iv.high,
        "p_value": did_p_value(d),
        "detectable": detectable_did(ds),
        "nonzero": int(np.count_nonzero(d)),
        "diff_evaluator": _inner(x[:, 0], x[:, 1], level),
        "diff_reference": _inner(x[:, 2], x[:, 3], level),
    }


def trend_test(y: np.ndarray) -> dict[str, Any]:
    """The exact permutation test of a trend along the arms' order (module docstring).

    ``y``: tasks x m integer differences (R - T, in {-1, 0, 1}), columns in the order.
    Returns the statistic S, the slope (change in the mean difference per step of the
    order, least squares over the arms' means) and the exact two-sided p-value."""
    y = np.asarray(y, dtype=int)
    if y.ndim != 2 or y.shape[1] < 3 or y.shape[0] == 0:
        raise ValueError("trend_test needs tasks x arms differences, three arms or more")
    n, m = y.shape
    w = 2 * np.arange(m) - (m - 1)  # twice the centred rank: integers
    observed = int((y @ w).sum())
    # The null distribution of S: each task's values permuted among the arms; a task's
    # distribution depends only on the multiset of its values.
    perms = np.array(list(itertools.permutations(range(m))))
    kinds: dict[tuple[int, ...], int] = {}
    for row in y:
        key = tuple(sorted(int(v) for v in row))
        kinds[key] = kinds.get(key, 0) + 1
    offset = 0
    dist = np.array([1.0])
    for key, count in kinds.items():
        values = np.array(key)[perms] @ w  # S of the task under every permutation
        lo = int(values.min())
        pmf = np.bincount(values - lo).astype(float)
        pmf /= pmf.sum()
        for _ in range(count):
            dist = np.convolve(dist, pmf)
            offset += lo
    sums = np.arange(dist.size) + offset
    p = float(dist[np.abs(sums) >= abs(observed)].sum())
    slope = observed / (n * float((w * w).sum()) / 2.0)
    return {"statistic": observed, "slope": slope, "p_value": min(1.0, p), "n": n, "n_arms": m}


# --------------------------------------------------------------------------- arms


def dose_order(arms: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(ordered, apart)``: the arms in order of designed reliability (``self_tests``;
    noisy oracles by ``fn_rate + fp_rate`` descending, then ``fn_rate`` descending;
    ``oracle``) and the others, sorted."""
    ordered: list[tuple[tuple[float, float, float], str]] = []
    apart: list[str] = []
    for arm in set(arms):
        name, settings = arm_settings(arm)
        if arm == REFERENCE:
            ordered.append(((0.0, 0.0, 0.0), arm))
        elif arm == CONFIRMATORY:
            ordered.append(((2.0, 0.0, 0.0), arm))
        elif name == "noisy_oracle" and settings is not None:
            fn, fp = settings.get("fn"), settings.get("fp")
            if fn is None or fp is None:
                apart.append(arm)
                continue
            ordered.append(((1.0, -(fn + fp), -fn), arm))
        else:
            apart.append(arm)
    return [a for _, a in sorted(ordered)], sorted(apart)


def _cells(groups: Sequence[Any]) -> dict[tuple[str, str, str, str], list[Any]]:
    out: dict[tuple[str, str, str, str], list[Any]] = {}
    for g in groups:
        if g.strategy in (STRATEGY, BASELINE):
            key = (g.benchmark, g.model, arm_name(g.evaluator), g.strategy)
            out.setdefault(key, []).append(g)
    return out


def _reliability(gs: Sequence[Any]) -> dict[str, Any]:
    """The arm's in-loop confusion over its runs' trials, and its error rates."""
    c = {k: 0 for k in ("tp", "fp", "fn", "tn")}
    for g in gs:
        conf = (g.summary.get("in_loop") or {}).get("confusion") or g.summary.get(
            "self_test_confusion"
        )
        for k in c:
            c[k] += int((conf or {}).get(k) or 0)
    return {
        **c,
        "fn_rate": c["fn"] / (c["fn"] + c["tp"]) if c["fn"] + c["tp"] else None,
        "fp_rate": c["fp"] / (c["fp"] + c["tn"]) if c["fp"] + c["tn"] else None,
        "trials_judged": sum(c.values()),
    }


def feedback_section(
    groups: Sequence[Any],
    budgets: Mapping[str, float | None],
    *,
    axis: str = "tokens",
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any] | None:
    """The DiD and dose-response rows of ``groups`` (report groups, at the strategies
    table's ``budgets``, keyed ``"<benchmark> / <model>"``); None unless some benchmark x
    model has both strategies under two evaluator arms or more (the report then has
    neither table)."""
    cells = _cells(groups)
    arms_with_both: dict[tuple[str, str], set[str]] = {}
    for bench, model, arm, strategy in cells:
        if strategy == STRATEGY and (bench, model, arm, BASELINE) in cells:
            arms_with_both.setdefault((bench, model), set()).add(arm)
    if not any(len(a) >= 2 for a in arms_with_both.values()):
        return None
    verdicts: dict[tuple[str, str, str, str], dict[str, bool]] = {}
    skipped: list[str] = []
    for (bench, model), arms in sorted(arms_with_both.items()):
        b = budgets.get(f"{bench} / {model}")
        if b is None:
            skipped.append(f"{bench} / {model}: no budget to read pass@1 at")
            continue
        for arm in sorted(arms):
            for strategy in (STRATEGY, BASELINE):
                gs = cells[(bench, model, arm, strategy)]
                if len(gs) > 1:
                    # Seeds or replicates of one cell: which one pairs with which is not
                    # defined here; the cell is left out rather than picked.
                    skipped.append(
                        f"{bench} / {model} / {arm} / {strategy}: {len(gs)} rows "
                        f"({', '.join(g.name for g in gs)}), one expected"
                    )
                    continue
                v = verdicts_at_budget(task_budget_points(gs[0].records, axis), float(b))
                verdicts[(bench, model, arm, strategy)] = {
                    t: bool(x) for t, x in v.items() if x is not None
                }
    reliability = {
        (bench, model, arm): _reliability(
            [g for s in (STRATEGY, BASELINE) for g in cells[(bench, model, arm, s)]]
        )
        for (bench, model), arms in arms_with_both.items()
        for arm in arms
    }
    did = did_rows(verdicts, budgets, level=level, n_resamples=n_resamples, seed=seed)
    dose, trends = dose_rows(verdicts, reliability, budgets, level=level)
    return {
        "axis": axis,
        "level": level,
        "n_resamples": n_resamples,
        "seed": seed,
        "reference": REFERENCE,
        "strategy": STRATEGY,
        "baseline": BASELINE,
        "did": did,
        "dose": dose,
        "trends": trends,
        "skipped": skipped,
    }


def _both(
    verdicts: Mapping[tuple[str, str, str, str], Mapping[str, bool]],
    bench: str,
    model: str,
    arm: str,
) -> tuple[Mapping[str, bool], Mapping[str, bool]] | None:
    r = verdicts.get((bench, model, arm, STRATEGY))
    t = verdicts.get((bench, model, arm, BASELINE))
    return None if r is None or t is None else (r, t)


def did_rows(
    verdicts: Mapping[tuple[str, str, str, str], Mapping[str, bool]],
    budgets: Mapping[str, float | None],
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One DiD row per benchmark x model x evaluator arm E (E vs :data:`REFERENCE`), and
    per model x E pooled over the benchmarks that have it; ``verdicts``: per
    (benchmark, model, arm, strategy) the 0/1 verdict of each task at the budget."""
    mats: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    rows: list[dict[str, Any]] = []
    benches = sorted({(b, m) for b, m, _, _ in verdicts})
    for bench, model in benches:
        ref = _both(verdicts, bench, model, REFERENCE)
        if ref is None:
            continue
        arms = sorted({a for b, m, a, _ in verdicts if (b, m) == (bench, model)} - {REFERENCE})
        for arm in arms:
            pair = _both(verdicts, bench, model, arm)
            if pair is None:
                continue
            cols = (pair[0], pair[1], ref[0], ref[1])
            tasks = sorted(set.intersection(*(set(c) for c in cols)))
            if not tasks:
                continue
            x = np.array([[float(c[t]) for c in cols] for t in tasks])
            mats.setdefault((model, arm), {})[bench] = x
            rows.append(
                {
                    "benchmark": bench,
                    "model": model,
                    "evaluator": arm,
                    "reference_evaluator": REFERENCE,
                    "budget": budgets.get(f"{bench} / {model}"),
                    **did_statistics([x], level=level, n_resamples=n_resamples, seed=seed),
                }
            )
    for (model, arm), per in sorted(mats.items()):
        if len(per) < 2:
            continue
        stats = did_statistics(
            [per[b] for b in sorted(per)], level=level, n_resamples=n_resamples, seed=seed
        )
        rows.append(
            {
                "benchmark": POOLED,
                "model": model,
                "evaluator": arm,
                "reference_evaluator": REFERENCE,
                "budget": None,
                "n_by_benchmark": {b: int(per[b].shape[0]) for b in sorted(per)},
                **stats,
            }
        )
    secondary = [r for r in rows if not _confirmatory(r)]
    for r, p in zip(secondary, holm([r["p_value"] for r in secondary]), strict=True):
        r["p_holm"] = p
        r["role"] = "secondary"
    for r in rows:
        if _confirmatory(r):
            r["p_holm"] = None
            r["role"] = "confirmatory"
    return rows


def _confirmatory(row: Mapping[str, Any]) -> bool:
    return bool(row["benchmark"] == POOLED and row["evaluator"] == CONFIRMATORY)


def dose_rows(
    verdicts: Mapping[tuple[str, str, str, str], Mapping[str, bool]],
    reliability: Mapping[tuple[str, str, str], Mapping[str, Any]],
    budgets: Mapping[str, float | None],
    *,
    level: float = 0.95,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per benchmark x model, one row per evaluator arm with both strategies (ordered
    arms first, in order; the others apart), and the trend test over the ordered arms
    where three or more have tasks in common (module docstring)."""
    rows: list[dict[str, Any]] = []
    trends: list[dict[str, Any]] = []
    for bench, model in sorted({(b, m) for b, m, _, _ in verdicts}):
        arms = [
            a
            for a in sorted({a for b, m, a, _ in verdicts if (b, m) == (bench, model)})
            if _both(verdicts, bench, model, a) is not None
        ]
        if len(arms) < 2:
            continue
        ordered, apart = dose_order(arms)
        for rank, arm in [*enumerate(ordered, 1), *((None, a) for a in apart)]:
            r, t = _both(verdicts, bench, model, arm) or ({}, {})
            tasks = sorted(set(r) & set(t))
            if not tasks:
                continue
            a = np.array([float(r[x]) for x in tasks])
            b = np.array([float(t[x]) for x in tasks])
            rel = reliability.get((bench, model, arm)) or {}
            rows.append(
                {
                    "benchmark": bench,
                    "model": model,
                    "evaluator": arm,
                    "order": rank,
                    "n": len(tasks),
                    "budget": budgets.get(f"{bench} / {model}"),
                    "pass_strategy": float(a.mean()),
                    "pass_baseline": float(b.mean()),
                    "diff": _inner(a, b, level),
                    "fn_rate": rel.get("fn_rate"),
                    "fp_rate": rel.get("fp_rate"),
                    "trials_judged": rel.get("trials_judged"),
                }
            )
        if len(ordered) >= 3:
            both = [_both(verdicts, bench, model, arm) or ({}, {}) for arm in ordered]
            common = sorted(set.intersection(*(set(r) & set(t) for r, t in both)))
            if common:
                y = np.array([[int(r[x]) - int(t[x]) for r, t in both] for x in common])
                trends.append(
                    {"benchmark": bench, "model": model, "arms": ordered, **trend_test(y)}
                )
    return rows, trends


# --------------------------------------------------------------------------- words


def _pts(x: float | None, sign: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{100 * x:+.1f}" if sign else f"{100 * x:.1f}"


def _rates(row: Mapping[str, Any]) -> str:
    """The arm's measured error rates, ``FN 31.4%, FP 0.0%`` (n/a: nothing to count)."""

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

    return f"FN {pct(row.get('fn_rate'))}, FP {pct(row.get('fp_rate'))}"


def _p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def did_sentences(section: Mapping[str, Any]) -> list[str]:
    """One sentence per DiD row (Markdown): what a study's README quotes through a
    ``<!-- report:did -->`` block."""
    from reflexion_bench.analysis.plots import benchmark_name, evaluator_label

    rows = section.get("did") or []
    models = {r["model"] for r in rows}
    out = []
    for r in rows:
        where = (
            "Pooled ("
            + " + ".join(f"{benchmark_name(b)} {n}" for b, n in r["n_by_benchmark"].items())
            + ")"
            if r["benchmark"] == POOLED
            else benchmark_name(r["benchmark"])
        )
        if len(models) > 1:
            where += f" / {r['model']}"
        e, ref = evaluator_label(r["evaluator"]), evaluator_label(r["reference_evaluator"])
        de, dr = r["diff_evaluator"], r["diff_reference"]
        holm_text = (
            f", Holm {_p(r['p_holm'])}" if r.get("p_holm") is not None else " (confirmatory)"
        )
        det = r.get("detectable")
        out.append(
            f"**{where}, {e} vs {ref}**: DiD {_pts(r['did'])} points"
            f" [{_pts(r['low'])}, {_pts(r['high'])}], p = {_p(r['p_value'])}{holm_text},"
            f" n = {r['n']} tasks (detectable: "
            + (f"{_pts(det, sign=False)} points" if det is not None else "none: no variance")
            + f"); reflexion - retry {_pts(de['estimate'])} [{_pts(de['low'])},"
            f" {_pts(de['high'])}] under {e}, {_pts(dr['estimate'])} [{_pts(dr['low'])},"
            f" {_pts(dr['high'])}] under {ref}."
        )
    return out


def dose_sentences(section: Mapping[str, Any]) -> list[str]:
    """The dose-response in words: one line per benchmark x model, the arms in order,
    and the trend test where there is one (``<!-- report:dose -->``)."""
    from reflexion_bench.analysis.plots import benchmark_name, evaluator_label

    rows = section.get("dose") or []
    out = []
    for bench, model in dict.fromkeys((r["benchmark"], r["model"]) for r in rows):
        mine = [r for r in rows if (r["benchmark"], r["model"]) == (bench, model)]

        def arm(r: Mapping[str, Any]) -> str:
            d = r["diff"]
            return (
                f"{evaluator_label(r['evaluator'])} {_pts(d['estimate'])}"
                f" [{_pts(d['low'])}, {_pts(d['high'])}] (n = {r['n']}; {_rates(r)})"
            )

        ordered = [arm(r) for r in mine if r["order"] is not None]
        apart = [arm(r) for r in mine if r["order"] is None]
        text = (
            f"**{benchmark_name(bench)}, {model}**: reflexion - retry in points, least to"
            " most reliable feedback: " + ", then ".join(ordered)
        )
        if apart:
            text += "; apart: " + ", ".join(apart)
        trend = next(
            (
                t
                for t in section.get("trends") or []
                if (t["benchmark"], t["model"]) == (bench, model)
            ),
            None,
        )
        if trend:
            text += (
                f"; trend along the order {_pts(trend['slope'])} points per step,"
                f" exact permutation p = {_p(trend['p_value'])} (n = {trend['n']} tasks)"
            )
        else:
            text += "; no trend test (fewer than three ordered arms with common tasks)"
        out.append(text + ".")
    return out


# --------------------------------------------------------------------------- figure


def plot_dose(
    section: Mapping[str, Any], out_dir: Path, *, style_name: str = "paper"
) -> list[Path]:
    """One figure per benchmark x model of the dose table, a forest plot: Reflexion minus
    retry with its 95% interval under each evaluator arm, one row each, from the least
    reliable feedback (top) to the most, each named with its measured error rates; the
    arms apart below a dotted line, hollow."""
    from reflexion_bench.analysis.plots import _plt, use_style

    # matplotlib's defaults, not a user's matplotlibrc: as write_plots, for byte-equal files.
    with _plt().style.context("default"), use_style(style_name):
        return _plot_dose(section, out_dir)


def _plot_dose(section: Mapping[str, Any], out_dir: Path) -> list[Path]:
    from reflexion_bench.analysis.plots import (
        _legend_below,
        _plt,
        _save,
        _slug,
        evaluator_label,
        figure_title,
        series_style,
        set_title,
        strategy_label,
        style,
    )

    rows = section.get("dose") or []
    written: list[Path] = []
    st = style()
    ss = series_style(0)
    for bench, model in dict.fromkeys((r["benchmark"], r["model"]) for r in rows):
        mine = [r for r in rows if (r["benchmark"], r["model"]) == (bench, model)]
        ordered = [r for r in mine if r["order"] is not None]
        apart = [r for r in mine if r["order"] is None]
        drawn = [*ordered, *apart]
        fig = _plt().figure(figsize=(st.width_in, 0.9 + 0.32 * len(drawn)), layout="constrained")
        ax = fig.add_subplot()
        names = []
        for i, r in enumerate(drawn):
            d = r["diff"]
            hollow = r["order"] is None
            first_apart = hollow and r is apart[0]
            ax.errorbar(
                [100 * d["estimate"]],
                [i],
                xerr=[[100 * (d["estimate"] - d["low"])], [100 * (d["high"] - d["estimate"])]],
                fmt=ss["marker"],
                color=ss["color"],
                mfc="white" if hollow else ss["color"],
                capsize=2,
                linewidth=0.8,
                label=(
                    "evaluators apart (not in the order)"
                    if first_apart
                    else f"{strategy_label(STRATEGY)} - {strategy_label(BASELINE)}, 95% CI"
                    if i == 0
                    else None
                ),
            )
            names.append(f"{evaluator_label(r['evaluator'])}\n{_rates(r)}")
        if len(ordered) > 1:
            ax.plot(
                [100 * r["diff"]["estimate"] for r in ordered],
                range(len(ordered)),
                color=ss["color"],
                linewidth=0.6,
                linestyle=":",
                zorder=1,
            )
        if apart:
            ax.axhline(len(ordered) - 0.5, color="0.5", linewidth=0.6, linestyle=":")
        ax.axvline(0, color="0.3", linewidth=0.6)
        ax.set_yticks(range(len(drawn)))
        ax.set_yticklabels(names)
        ax.set_ylim(len(drawn) - 0.5, -0.5)  # the least reliable feedback on top
        ax.set_xlabel(
            f"pass@1 at budget, {strategy_label(STRATEGY)} - {strategy_label(BASELINE)} (points)"
        )
        ax.grid(alpha=0.3, axis="x")
        _legend_below(fig, ax, ncol=1)
        set_title(ax, figure_title(bench, model, "Reflexion's gain by in-loop feedback"))
        written += _save(fig, out_dir / f"feedback_dose_{_slug(bench, model)}")
    return written
