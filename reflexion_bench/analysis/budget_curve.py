"""Budget curves: each paired difference of pass@1 at every budget, not at one.

A strategy compared at one budget answers for that budget only; the same logs answer
every lower one, because a run at a cap also ran every smaller budget: at budget B a
task submits the last trial whose verdict was paid for within B
(:func:`reflexion_bench.analysis.equal_budget.task_budget_points` and
:func:`~reflexion_bench.analysis.equal_budget.verdicts_at_budget`, the one definition
the ``strategies`` table uses too; with ``--submit best_own_tests`` the log is first
rewritten by :func:`reflexion_bench.analysis.submission.apply_submission`).

*Arms and references.* Runs of one benchmark x model x in-loop evaluator are compared
as the ``strategies`` table compares them: every strategy against each reference
(``retry``, ``reflexion``) of its own seed, on the tasks both ran. Runs whose evaluators
differ (self-written tests, visible tests, an oracle, a noisy oracle at another noise
rate: :func:`reflexion_bench.analysis.runs.evaluator_arm`) are never compared or pooled:
the evaluator decides when a loop stops, so it is part of the arm. Logs that name no
evaluator ran self-tests (``self_tests``).

*Grid.* :data:`GRID_POINTS` budgets, evenly spaced from the median cost of a first
verdict (over every task of every arm; below it most tasks have no verdict yet) to the
runs' cap: the per-task budget in their logs where they all name the same one (so the
last point is the ``strategies`` table's budget and its number), else the largest cost
of any logged verdict.

*Bands.* One bootstrap draw of tasks (``n_resamples`` multinomial counts, ``seed``)
serves every budget of a curve, so the curve's points move together. Pointwise: the
interval every table prints for a paired difference, at each budget
(:func:`reflexion_bench.analysis.stats.paired_difference_interval`: Newcombe's score
interval on the 0/1 verdicts, coverage measured in ``tests/analysis``). Simultaneous:
the max-|t| bootstrap band: with se_j the bootstrap standard error at budget j, c is the
``level`` quantile over resamples of max_j |d*_j - d_j| / se_j, and the band is
d_j +/- c se_j; it covers the whole curve with probability ``level``, not each point.
Where a pointwise interval reaches past it, the band is widened to the pointwise one
(only wider: its coverage holds).

*Answers.* A difference is called significant at a budget where the simultaneous band
excludes 0: the budgets where it starts and stops are then read off one family of
statements, not off twenty separate tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reflexion_bench.analysis.equal_budget import (
    REFERENCES,
    run_budget,
    task_budget_points,
    verdicts_at_budget,
)
from reflexion_bench.analysis.runs import DEFAULT_EVALUATOR, arm_name, same_seed
from reflexion_bench.analysis.stats import DEFAULT_RESAMPLES, paired_difference_interval

#: ``report --budget-unit`` choices.
UNITS = ("tokens", "completion_tokens", "dollars", "wall_s")
UNIT_LABELS = {
    "tokens": "tokens per task",
    "completion_tokens": "completion tokens per task",
    "dollars": "US$ per task",
    "wall_s": "wall seconds per task",
}
GRID_POINTS = 20
#: The columns of ``table_budget_curve.csv``, in order (the first ten are the issue's).
CSV_COLUMNS = (
    "benchmark",
    "strategy",
    "reference",
    "evaluator",
    "budget",
    "diff",
    "lo",
    "hi",
    "simultaneous_lo",
    "simultaneous_hi",
    "model",
    "unit",
    "submit",
    "n_common",
    "pass_at_budget",
    "reference_pass_at_budget",
)


def check_unit(unit: str) -> None:
    if unit not in UNITS:
        raise ValueError(f"unknown budget unit {unit!r} (allowed: {', '.join(UNITS)})")


def _in_unit(rec: Mapping[str, Any], unit: str) -> dict[str, Any]:
    """The record with its calls' cost in ``unit`` put where ``task_budget_points`` reads
    tokens, so that the single definition of "paid for within B" serves every unit."""
    if unit == "completion_tokens":
        calls = [{**c, "prompt_tokens": 0} for c in rec.get("model_calls") or []]
    else:  # wall_s
        # The log times a trial as a whole, not per call: its verdict is charged its whole
        # trial (with the reflection it writes for the next one, a slight overcharge).
        wall = float(rec.get("wall_time_s") or 0.0)
        calls = [{"role": "actor", "prompt_tokens": wall, "completion_tokens": 0}]
    return {**rec, "model_calls": calls}


def unit_points(
    records: Sequence[Mapping[str, Any]], unit: str
) -> dict[str, list[tuple[float, bool | None]]]:
    """Per task, per trial: (cost in ``unit`` of the trial's verdict, the verdict)."""
    check_unit(unit)
    if unit in ("tokens", "dollars"):
        return task_budget_points(records, unit)
    return task_budget_points([_in_unit(r, unit) for r in records], "tokens")


def _round(x: float, unit: str) -> float:
    # Budgets a reader can type: whole tokens, tenths of seconds, micro-dollars.
    digits = {"tokens": 0, "completion_tokens": 0, "wall_s": 1, "dollars": 6}[unit]
    return float(round(x, digits))


def budget_grid(
    points: Sequence[Mapping[str, Sequence[tuple[float, bool | None]]]],
    cap: float | None,
    unit: str,
    n: int = GRID_POINTS,
) -> list[float]:
    """``n`` budgets from the median cost of a first verdict to ``cap`` (else the
    largest verdict cost), the cap itself last (see the module docstring)."""
    firsts = [pts[0][0] for p in points for pts in p.values() if pts]
    costs = [c for p in points for pts in p.values() for c, _ in pts]
    if not firsts:
        return []
    top = cap if cap is not None else max(costs)
    start = float(np.median(firsts))
    if top <= start:
        return [float(top)]
    grid = [_round(float(x), unit) for x in np.linspace(start, top, n)[:-1]]
    return sorted(set(grid) | {float(top)})


def _bands(
    a: np.ndarray, b: np.ndarray, *, level: float, n_resamples: int, seed: int
) -> tuple[list[dict[str, float]], float]:
    """Pointwise and simultaneous bands of the paired difference of the tasks x budgets
    verdict matrices ``a`` and ``b`` (module docstring); returns them and c. Pointwise:
    the interval every table prints for a paired difference (Newcombe's score interval
    on 0/1 verdicts; its coverage is measured in tests/analysis), so the curve at the
    cap carries the strategies table's interval."""
    d = a - b
    n = d.shape[0]
    pointwise = [
        paired_difference_interval(a[:, j], b[:, j], level=level, seed=seed)
        for j in range(d.shape[1])
    ]
    # The simultaneous band needs the joint distribution over budgets: one bootstrap
    # draw of tasks for the whole grid.
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)
    means = counts @ d / n
    est = d.mean(axis=0)
    se = means.std(axis=0, ddof=1)
    varies = se > 1e-12
    if varies.any():
        t = np.abs(means[:, varies] - est[varies]) / se[varies]
        c = float(np.quantile(t.max(axis=1), level, method="higher"))
    else:
        c = 0.0
    out = []
    for j, iv in enumerate(pointwise):
        lo = max(-1.0, float(est[j] - c * se[j]))
        hi = min(1.0, float(est[j] + c * se[j]))
        out.append(
            {
                "diff": float(est[j]),
                "lo": iv.low,
                "hi": iv.high,
                "simultaneous_lo": min(lo, iv.low),
                "simultaneous_hi": max(hi, iv.high),
            }
        )
    return out, c


def segments(budgets: Sequence[float], pts: Sequence[Mapping[str, float]]) -> list[dict[str, Any]]:
    """Runs of consecutive budgets with one state: ``1`` (the strategy ahead: the
    simultaneous band above 0), ``-1`` (the reference ahead), ``0`` (no difference shown)."""
    out: list[dict[str, Any]] = []
    for b, p in zip(budgets, pts, strict=True):
        state = 1 if p["simultaneous_lo"] > 0 else -1 if p["simultaneous_hi"] < 0 else 0
        if out and out[-1]["state"] == state:
            out[-1]["to"] = b
        else:
            out.append({"state": state, "from": b, "to": b})
    return out


def _num(x: float, unit: str) -> str:
    if unit == "dollars":
        return f"${x:.4g}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _without_arm(name: str, evaluator: str) -> str:
    """A row label without the evaluator arm it names (``reflexion (oracle)`` ->
    ``reflexion``) where the curve's evaluator is said once already."""
    tail = f" ({evaluator})"
    return name[: -len(tail)] if name.endswith(tail) else name


def sentence(curve: Mapping[str, Any], unit: str) -> str:
    """The curve's answer in words, one clause per budget range."""
    evaluator = str(curve["evaluator"])
    name = _without_arm(curve["strategy"], evaluator)
    ref = _without_arm(curve["reference"], evaluator)
    words = UNIT_LABELS[unit].replace(" per task", "")
    clauses = []
    for s in curve["segments"]:
        span = (
            f"at {_num(s['from'], unit)} {words}"
            if s["from"] == s["to"]
            else f"from {_num(s['from'], unit)} to {_num(s['to'], unit)} {words}"
        )
        if s["state"] == 0:
            clauses.append(f"no difference shown {span}")
        else:
            clauses.append(f"{name if s['state'] > 0 else ref} ahead {span}")
    return (
        f"{curve['benchmark']} / {curve['model']} ({curve['evaluator']}), {name} vs {ref} "
        f"(n={curve['n_common']}): " + "; ".join(clauses) + "."
    )


def budget_curve_section(
    groups: Sequence[Any],
    *,
    unit: str = "tokens",
    submit: str = "last",
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    n_points: int = GRID_POINTS,
) -> dict[str, Any]:
    """Every comparison's difference curve with its bands and answer (module
    docstring). ``groups``: :class:`~reflexion_bench.analysis.runs.Group` objects whose
    records already follow the submission rule ``submit`` (recorded here, not applied)."""
    check_unit(unit)
    clusters: dict[tuple[str, str, str], list[Any]] = {}
    for g in groups:
        # The evaluator arm: a noisy oracle's noise rates are part of it (runs.evaluator_arm).
        evaluator = arm_name(g.evaluator)
        clusters.setdefault((g.benchmark, g.model, evaluator), []).append(g)
    curves: list[dict[str, Any]] = []
    for (bench, model, evaluator), gs in clusters.items():
        refs = {r: [g for g in gs if g.strategy == r] for r in REFERENCES}
        if not any(refs.values()):
            continue
        points = {id(g): unit_points(g.records, unit) for g in gs}
        caps = {run_budget(g.records, unit) if unit in ("tokens", "dollars") else None for g in gs}
        cap = caps.pop() if len(caps) == 1 else None
        grid = budget_grid(list(points.values()), cap, unit, n_points)
        if not grid:
            continue
        at = {id(g): [verdicts_at_budget(points[id(g)], b) for b in grid] for g in gs}
        said: set[frozenset[str]] = set()
        for g in gs:
            for candidates in refs.values():
                ref = same_seed(g, candidates) if candidates else None
                if ref is None or ref is g:
                    continue
                common = sorted(set(points[id(g)]) & set(points[id(ref)]))
                if not common:
                    continue
                a = np.array([[float(bool(v[t])) for v in at[id(g)]] for t in common])
                b = np.array([[float(bool(v[t])) for v in at[id(ref)]] for t in common])
                bands, c = _bands(a, b, level=level, n_resamples=n_resamples, seed=seed)
                pts = [
                    {
                        "budget": x,
                        **band,
                        "pass_at_budget": float(a[:, j].mean()),
                        "reference_pass_at_budget": float(b[:, j].mean()),
                    }
                    for j, (x, band) in enumerate(zip(grid, bands, strict=True))
                ]
                pair = frozenset({g.name, ref.name})
                curve: dict[str, Any] = {
                    "benchmark": bench,
                    "model": model,
                    "evaluator": evaluator,
                    "strategy": g.name,
                    "reference": ref.name,
                    "n_common": len(common),
                    "cap": cap,
                    "critical_value": c,
                    # The mirror of a pair already compared (retry vs reflexion after
                    # reflexion vs retry): in the table, not again in words or figures.
                    "mirror": pair in said,
                    "points": pts,
                    "segments": segments(grid, pts),
                }
                said.add(pair)
                curve["sentence"] = sentence(curve, unit)
                curves.append(curve)
    return {
        "unit": unit,
        "submit": submit,
        "level": level,
        "n_resamples": n_resamples,
        "seed": seed,
        "curves": curves,
    }


def budget_curve_frame(section: Mapping[str, Any]) -> pd.DataFrame:
    """``table_budget_curve.csv``: one row per comparison x budget (:data:`CSV_COLUMNS`)."""
    rows = [
        {
            **{k: c[k] for k in ("benchmark", "strategy", "reference", "evaluator", "model")},
            **p,
            "unit": section["unit"],
            "submit": section["submit"],
            "n_common": c["n_common"],
        }
        for c in section.get("curves") or []
        for p in c["points"]
    ]
    return pd.DataFrame(rows, columns=list(CSV_COLUMNS))


def budget_curve_markdown(section: Mapping[str, Any]) -> str:
    """The answers in words under a heading, for report.md ('' without curves)."""
    curves = [c for c in section.get("curves") or [] if not c["mirror"]]
    if not curves:
        return ""
    level = round(100 * float(section["level"]))
    lines = [
        "",
        f"## Budget curves ({UNIT_LABELS[section['unit']]}, submitted: {section['submit']})",
        "",
        *[f"- {c['sentence']}" for c in curves],
        "",
        f"- A difference counts where its {level}% simultaneous band (max-|t| bootstrap over "
        "tasks and the budget grid) excludes 0; 'no difference shown' is not evidence of "
        "none. Every budget's numbers: table_budget_curve.csv; figures: "
        "figures/budget_curve_*.",
        "",
    ]
    return "\n".join(lines)


def plot_budget_curves(
    section: Mapping[str, Any], out_dir: Path, *, style_name: str = "paper"
) -> list[Path]:
    """One figure per benchmark x model x evaluator: each comparison's difference as
    steps (a verdict changes only where a trial's cost is crossed) with its pointwise
    (darker) and simultaneous (lighter) band; one panel per reference, at most four
    series in a panel (small multiples beyond)."""
    from reflexion_bench.analysis.plots import _plt, use_style

    # matplotlib's defaults, not a user's matplotlibrc: as write_plots, for byte-equal files.
    with _plt().style.context("default"), use_style(style_name):
        return _plot_budget_curves(section, out_dir)


def _plot_budget_curves(section: Mapping[str, Any], out_dir: Path) -> list[Path]:
    from reflexion_bench.analysis.plots import (
        _plt,
        _slug,
        evaluator_label,
        figure_title,
        save_figure,
        series_style,
        set_title,
        strategy_label,
        style,
    )

    plt = _plt()
    unit = str(section["unit"])
    by_fig: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for c in section.get("curves") or []:
        if not c["mirror"]:
            by_fig.setdefault((c["benchmark"], c["model"], c["evaluator"]), []).append(c)
    names = list(dict.fromkeys(c["strategy"] for c in section.get("curves") or []))
    written: list[Path] = []
    for (bench, model, evaluator), curves in by_fig.items():

        def name(row: str, evaluator: str = evaluator) -> str:
            # A row's display name (configs/labels.yaml); the figure is one evaluator's,
            # named in its title, so a row label naming that arm drops it.
            return strategy_label(_without_arm(row, evaluator))

        panels: list[tuple[str, list[Mapping[str, Any]]]] = []
        for ref in dict.fromkeys(c["reference"] for c in curves):
            mine = [c for c in curves if c["reference"] == ref]
            panels += [(ref, mine[i : i + 4]) for i in range(0, len(mine), 4)]
        st = style()
        fig, axes = plt.subplots(
            len(panels),
            1,
            figsize=(st.width_in, st.height_in * len(panels)),
            sharex=True,
            squeeze=False,
            layout="constrained",
        )
        for ax, (ref, series) in zip(axes[:, 0], panels, strict=True):
            for c in series:
                s = series_style(names.index(c["strategy"]))
                xs = [p["budget"] for p in c["points"]]
                for lo, hi, alpha in (
                    ("simultaneous_lo", "simultaneous_hi", 0.12),
                    ("lo", "hi", 0.3),
                ):
                    ax.fill_between(
                        xs,
                        [100 * p[lo] for p in c["points"]],
                        [100 * p[hi] for p in c["points"]],
                        step="post",
                        color=s["color"],
                        alpha=alpha,
                        linewidth=0,
                    )
                ax.plot(
                    xs,
                    [100 * p["diff"] for p in c["points"]],
                    color=s["color"],
                    linestyle=s["linestyle"],
                    marker=s["marker"],
                    markevery=max(1, len(xs) // 5),
                    drawstyle="steps-post",
                    label=f"{name(c['strategy'])} - {name(ref)}",
                )
            ax.axhline(0, color="0.3", linewidth=0.6)
            ax.set_ylabel(f"pass@1 - {name(ref)} (points)")
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel(UNIT_LABELS[unit] + " (budget, as run live)")
        what = "paired difference at each budget, 95% pointwise (dark) and simultaneous bands"
        if evaluator != DEFAULT_EVALUATOR:
            what += f", evaluator: {evaluator_label(evaluator)}"
        set_title(axes[0, 0], figure_title(bench, model, what))
        # Below the panels, never on the data (as every figure of the report).
        handles = [h for ax in axes[:, 0] for h in ax.get_legend_handles_labels()[0]]
        fig.legend(handles=handles, loc="outside lower center", ncol=1, frameon=False)
        slug = _slug(bench, model) + (
            "" if evaluator == DEFAULT_EVALUATOR else f"_{_slug(evaluator).strip('-')}"
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = [out_dir / f"budget_curve_{unit}_{slug}.{ext}" for ext in ("png", "pdf")]
        save_figure(fig, paths[0], dpi=st.dpi)
        save_figure(fig, paths[1])
        plt.close(fig)
        written += paths
    return written
