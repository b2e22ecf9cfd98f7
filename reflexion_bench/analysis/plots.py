"""Figures from a report (see :func:`reflexion_bench.analysis.tables.build_report`).

Every figure is written as PNG and PDF and stays readable in grey scale: series
differ by line style, marker and grey level (and hatching for bars), never by hue
alone. One figure per benchmark x model for the per-strategy plots.

A figure rebuilt from the same report is the same file (:func:`save_figure`): no
creation date and no matplotlib version in its metadata, SVG ids from a fixed salt,
and :func:`write_plots` draws with matplotlib's default style, whatever matplotlibrc
the user or the current folder has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.answer_key import label_text
from reflexion_bench.analysis.budget import AXIS_LABELS

_STYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 3))]
_MARKERS = ["o", "s", "^", "D", "v", "x", "*", "P", "h", "<"]
_HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--"]


def _answer_note(group: Mapping[str, Any]) -> str:
    """A legend note for runs whose loop read the answer key (or whose log cannot tell)."""
    section = group.get("answer_key")
    if section and section.get("label") == "clean":
        return ""
    return f" [{label_text(section)}]"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grey(i: int, n: int) -> str:
    # From black to a mid grey: light greys vanish on paper.
    level = 0.0 if n <= 1 else 0.62 * i / (n - 1)
    return str(round(level, 3))


#: Metadata per format that matplotlib would otherwise fill with the time of writing (PDF's
#: CreationDate, SVG's Date) or its own version (PNG's Software, PDF's Creator and
#: Producer, SVG's Creator): None leaves the key out (matplotlib's documented way).
SAVE_METADATA: dict[str, dict[str, str | None]] = {
    "png": {"Software": None},
    "pdf": {"Creator": "reflexion-bench", "Producer": None, "CreationDate": None},
    "svg": {"Creator": "reflexion-bench", "Date": None},
}


def save_figure(fig: Any, path: Path, **kwargs: Any) -> None:
    """``fig.savefig(path)`` with fixed metadata (:data:`SAVE_METADATA`), so that the same
    figure gives the same bytes on every run, on any day, from any folder."""
    import matplotlib

    fmt = path.suffix.lstrip(".").lower()
    # svg.hashsalt: SVG clip-path and glyph ids are otherwise random per run.
    with matplotlib.rc_context({"svg.hashsalt": "reflexion-bench"}):
        fig.savefig(path, format=fmt, metadata=SAVE_METADATA.get(fmt), **kwargs)


def _save(fig: Any, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    # Not with_suffix: model names such as "qwen2.5-coder" hold dots.
    paths = [stem.parent / f"{stem.name}.png", stem.parent / f"{stem.name}.pdf"]
    fig.tight_layout()
    save_figure(fig, paths[0], dpi=150)
    save_figure(fig, paths[1])
    _plt().close(fig)
    return paths


def _dodge(i: int, n: int, width: float = 0.16) -> float:
    """A small horizontal offset for series ``i`` of ``n`` at integer x positions, so
    series with equal values (common: small runs, ties at 0 or 1) sit side by side
    instead of hiding each other."""
    return 0.0 if n <= 1 else (i - (n - 1) / 2) * width / (n - 1)


def _slug(*parts: str) -> str:
    text = "_".join(parts)
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)


def _clusters(groups: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for g in groups:
        out.setdefault((g["benchmark"], g["model"]), []).append(g)
    return out


def panel_grid(
    n: int, ncols: int = 2, size: tuple[float, float] = (5.2, 3.6)
) -> tuple[Any, list[Any]]:
    """A figure of ``n`` panels in rows of at most ``ncols`` (not a 1 x n strip that
    shrinks each panel to a sliver), unused cells hidden; returns (figure, axes).
    For notebooks: pyplot's own backend is kept (inline), unlike the saved figures."""
    import matplotlib.pyplot as plt

    cols = max(1, min(ncols, n))
    rows = max(1, -(-n // cols))
    fig, grid = plt.subplots(rows, cols, figsize=(size[0] * cols, size[1] * rows), squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def draw_trial_curves(
    ax: Any, groups: Sequence[dict[str, Any]], *, kind: str = "submitted"
) -> None:
    """Success vs trial on ``ax``, one line per group, with step CI bands (see
    :func:`plot_trial_curves`; the notebooks draw their panels with it)."""
    key = "success_at_trial" if kind == "submitted" else "solved_by_trial"
    k_max = 1
    n = len(groups)
    for i, g in enumerate(groups):
        pts = g[key]
        ks = [k for k, p in enumerate(pts, 1) if p.get("estimate") is not None]
        if not ks:
            continue
        k_max = max(k_max, ks[-1])
        est = [pts[k - 1]["estimate"] for k in ks]
        color = _grey(i, n)
        xs = [k + _dodge(i, n) for k in ks]
        ax.plot(
            xs,
            est,
            linestyle=_STYLES[i % len(_STYLES)],
            marker=_MARKERS[i % len(_MARKERS)],
            # Every other series hollow: two series on the same point stay visible.
            markerfacecolor=color if i % 2 == 0 else "white",
            color=color,
            zorder=3 + i,
            label=f"{g['label']} (n={g['n_tasks']}){_answer_note(g)}",
        )
        if all("low" in pts[k - 1] for k in ks):
            # Trials are whole numbers: each trial's interval is a flat step over it,
            # not a slope interpolated between trials.
            ax.fill_between(
                xs,
                [pts[k - 1]["low"] for k in ks],
                [pts[k - 1]["high"] for k in ks],
                step="mid",
                color=color,
                alpha=0.08,
                linewidth=0,
            )
    ax.set_xlabel("trial")
    ax.set_ylabel("success rate" if kind == "submitted" else "solved at any trial")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(range(1, k_max + 1))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def plot_trial_curves(
    groups: Sequence[dict[str, Any]], stem: Path, *, kind: str = "submitted", title: str = ""
) -> list[Path]:
    """Success vs trial, one line per strategy, with 95% CI bands where known."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    draw_trial_curves(ax, groups, kind=kind)
    if title:
        ax.set_title(title, fontsize=9)
    return _save(fig, stem)


def plot_success_vs_budget(
    groups: Sequence[dict[str, Any]], stem: Path, *, axis: str = "tokens", title: str = ""
) -> list[Path]:
    """Success after k trials against the mean spend per task after k trials."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    drawn = 0
    series = []
    for g in groups:
        spend = g["spend_curves"].get(axis) or []
        succ = [p.get("estimate") for p in g["success_at_trial"]]
        series.append(
            [(x, y) for x, y in zip(spend, succ, strict=False) if x is not None and y is not None]
        )
    free = any(series) and all(x == 0 for pts in series for x, _ in pts)
    for i, (g, pts) in enumerate(zip(groups, series, strict=True)):
        if not pts or free:
            continue
        drawn += 1
        color = _grey(i, len(groups))
        ax.plot(
            [x for x, _ in pts],
            [y for _, y in pts],
            linestyle=_STYLES[i % len(_STYLES)],
            marker=_MARKERS[i % len(_MARKERS)],
            markerfacecolor=color if i % 2 == 0 else "white",
            color=color,
            zorder=3 + i,
            label=f"{g['label']}{_answer_note(g)}",
        )
    ax.set_xlabel(AXIS_LABELS.get(axis, axis))
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(fontsize=7, loc="lower right")
    elif free:
        # Every point at x = 0 (a local model, or a price table without this model):
        # a plot would be a vertical smear, so the figure says what it means instead.
        what = (
            "no cost: every call was free (local model or no price)"
            if axis == "dollars"
            else f"no {axis} spent"
        )
        ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
    else:
        ax.text(0.5, 0.5, f"no {axis} recorded", ha="center", transform=ax.transAxes)
    if title:
        ax.set_title(title, fontsize=9)
    return _save(fig, stem)


def plot_fix_break(groups: Sequence[dict[str, Any]], stem: Path, *, title: str = "") -> list[Path]:
    """Per strategy: tasks fixed (wrong at trial 1, right when submitted) and broken."""
    plt = _plt()
    labels = [g["label"] for g in groups]
    fixed = [(g.get("first_to_final") or {}).get("fixed") or 0 for g in groups]
    broken = [(g.get("first_to_final") or {}).get("broken") or 0 for g in groups]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(groups) + 2), 3.4))
    xs = list(range(len(groups)))
    w = 0.38
    b1 = ax.bar([x - w / 2 for x in xs], fixed, w, color="0.25", edgecolor="black", label="fixed")
    b2 = ax.bar(
        [x + w / 2 for x in xs],
        broken,
        w,
        color="white",
        edgecolor="black",
        hatch="//",
        label="broken",
    )
    for bars in (b1, b2):
        for bar in bars:
            ax.annotate(
                f"{int(bar.get_height())}",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=7,
            )
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("tasks")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    return _save(fig, stem)


def plot_self_test_confusion(group: dict[str, Any], stem: Path) -> list[Path]:
    """2x2 matrix of self-test verdict (rows) vs hidden verdict (columns), with counts
    and the paper's per-verdict rates."""
    plt = _plt()
    c = group["self_test"]["confusion"] or {}
    rates = group["self_test"]["rates"] or {}
    cells = [[("tp", "TP"), ("fp", "FP")], [("fn", "FN"), ("tn", "TN")]]
    counts = [[int(c.get(k, 0)) for k, _ in row] for row in cells]
    total = max(1, sum(map(sum, counts)))
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    ax.imshow([[v / total for v in row] for row in counts], cmap="Greys", vmin=0, vmax=1.4)
    for i, row in enumerate(cells):
        for j, (k, name) in enumerate(row):
            rate = rates.get(k)
            text = f"{name}\n{counts[i][j]}" + ("" if rate is None else f"\n({100 * rate:.1f}%)")
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color="black")
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["hidden pass", "hidden fail"])
    ax.set_yticks([0, 1])
    ax.set_yticklabels(["self-tests pass", "self-tests fail"])
    ax.set_title(f"{group['benchmark']} / {group['label']} / {group['model']}", fontsize=8)
    return _save(fig, stem)


def plot_failure_types(
    counts_by_trial: Mapping[int, Mapping[str, int]],
    stem: Path,
    *,
    title: str = "",
    normalise: bool = False,
) -> list[Path]:
    """Stacked bars of failure types per trial (e.g. ALFWorld's hallucination vs
    inefficient planning), from ``{trial: {type: count}}``; hatched, grey-scale."""
    plt = _plt()
    trials = sorted(counts_by_trial)
    types = sorted({t for c in counts_by_trial.values() for t in c})
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    bottom = [0.0] * len(trials)
    for i, t in enumerate(types):
        vals = []
        for k in trials:
            v = float(counts_by_trial[k].get(t, 0))
            if normalise:
                tot = sum(counts_by_trial[k].values())
                v = v / tot if tot else 0.0
            vals.append(v)
        ax.bar(
            trials,
            vals,
            0.7,
            bottom=bottom,
            color=_grey(i, max(2, len(types))),
            edgecolor="black",
            hatch=_HATCHES[i % len(_HATCHES)],
            label=t,
        )
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xlabel("trial")
    ax.set_ylabel("share of failures" if normalise else "failed tasks")
    ax.set_xticks(trials)
    if types:
        ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    return _save(fig, stem)


def plot_pass_at_budget(
    curves: Mapping[str, Sequence[Mapping[str, float]]],
    stem: Path,
    *,
    axis: str = "tokens",
    budget: float | None = None,
    title: str = "",
) -> list[Path]:
    """pass@1 against the per-task budget, resampled from the logs (see
    :mod:`reflexion_bench.analysis.equal_budget`), with a 95% band per strategy."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    n = len(curves)
    for i, (name, pts) in enumerate(curves.items()):
        if not pts:
            continue
        xs = [p["budget"] for p in pts]
        # Steps: a verdict changes only where a trial's spend is crossed.
        ax.plot(
            xs,
            [p["estimate"] for p in pts],
            linestyle=_STYLES[i % len(_STYLES)],
            color=_grey(i, n),
            label=name,
            drawstyle="steps-post",
        )
        ax.fill_between(
            xs,
            [p["low"] for p in pts],
            [p["high"] for p in pts],
            color=_grey(i, n),
            alpha=0.08,
            step="post",
        )
    if budget is not None:
        ax.axvline(budget, color="0.3", linewidth=0.8, linestyle=":")
        ax.text(budget, 1.0, " budget", fontsize=7, va="top")
    ax.set_xlabel(AXIS_LABELS.get(axis, axis) + " (as run live)")
    ax.set_ylabel("pass@1 within the budget")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, loc="lower right")
    if title:
        ax.set_title(title, fontsize=9)
    return _save(fig, stem)


def plot_pareto(
    points: Sequence[Mapping[str, Any]], stem: Path, *, axis: str = "tokens", title: str = ""
) -> list[Path]:
    """Cost (mean spend per task, as run live) against pass@1 with its 95% CI; the
    Pareto frontier of the clean runs drawn as a step line."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    drawn = [p for p in points if p.get("cost") is not None and p.get("accuracy") is not None]
    # Runs at the same cost and pass@1 (e.g. retry and best_of_n replaying one another)
    # are one marker with one label "a = b": drawn separately their labels print on top
    # of each other and neither can be read.
    merged: dict[tuple[float, float, bool], list[Mapping[str, Any]]] = {}
    for p in drawn:
        clean = not str(p.get("answer_key", "")).startswith("answer-in-loop")
        key = (round(float(p["cost"]), 1), round(float(p["accuracy"]), 4), clean)
        merged.setdefault(key, []).append(p)
    ax.set_ylim(0, 1.02)
    if drawn:
        xs = [float(p["cost"]) for p in drawn]
        pad = 0.08 * ((max(xs) - min(xs)) or max(xs) or 1.0)
        # Room on the right for the labels of the costliest runs.
        ax.set_xlim(min(xs) - pad, max(xs) + 3 * pad)
    ax.set_xlabel(AXIS_LABELS.get(axis, axis) + " (mean, as run live)")
    ax.set_ylabel("pass@1 (final)")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=9)
    # The layout first, so the label boxes compared below are where they will be drawn.
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    placed: list[Any] = []  # the labels' boxes in display units
    for i, ((_, _, clean), same) in enumerate(sorted(merged.items(), key=lambda kv: kv[0][:2])):
        p = same[0]
        x, y = float(p["cost"]), float(p["accuracy"])
        yerr = None
        if p.get("low") is not None and p.get("high") is not None:
            yerr = [[y - float(p["low"])], [float(p["high"]) - y]]
        ax.errorbar(
            [x],
            [y],
            yerr=yerr,
            fmt=_MARKERS[i % len(_MARKERS)],
            color="0.0" if any(q.get("on_front") for q in same) else "0.45",
            mfc="none" if not clean else None,
            capsize=2,
            linewidth=0.8,
        )
        note = "" if clean else " [answer-in-loop]"
        label = " = ".join(sorted(str(q["strategy"]) for q in same)) + note
        # Labels of nearby runs are moved down a line at a time until none overlaps another.
        text = ax.annotate(label, (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
        for step in range(12):
            text.set_position((3, 3 - 8 * step))
            box = text.get_window_extent(renderer).padded(3)
            if not any(box.overlaps(other) for other in placed):
                break
        placed.append(box)
    front = sorted((float(p["cost"]), float(p["accuracy"])) for p in points if p.get("on_front"))
    if front:
        # Extended to the costliest run: everything right of and below the line is dominated.
        right = max(float(p["cost"]) for p in points if p.get("cost") is not None)
        if right > front[-1][0]:
            front.append((right, front[-1][1]))
        ax.step(
            [c for c, _ in front],
            [a for _, a in front],
            where="post",
            color="0.0",
            linewidth=1.0,
            label="Pareto frontier",
        )
        ax.legend(fontsize=7, loc="lower right")
    return _save(fig, stem)


def write_plots(
    report: dict[str, Any], out_dir: Path, *, axes: Sequence[str] = ("tokens", "dollars", "wall")
) -> list[Path]:
    """Every per-report figure into ``out_dir``; returns the files written."""
    # matplotlib's defaults, not a matplotlibrc of the user or of the current folder: the
    # figures of a committed report must not depend on where the command ran.
    with _plt().style.context("default"):
        return _write_plots(report, out_dir, axes=axes)


def _write_plots(report: dict[str, Any], out_dir: Path, *, axes: Sequence[str]) -> list[Path]:
    written: list[Path] = []
    for (bench, model), gs in _clusters(report["groups"]).items():
        title = f"{bench} / {model}"
        base = _slug(bench, model)
        written += plot_trial_curves(gs, out_dir / f"curve_{base}", title=title)
        if any(
            [p.get("estimate") for p in g["solved_by_trial"]]
            != [p.get("estimate") for p in g["success_at_trial"]]
            for g in gs
        ):
            written += plot_trial_curves(gs, out_dir / f"solved_{base}", kind="solved", title=title)
        for axis in axes:
            written += plot_success_vs_budget(
                gs, out_dir / f"budget_{axis}_{base}", axis=axis, title=title
            )
        written += plot_fix_break(gs, out_dir / f"fix_break_{base}", title=title)
        for g in gs:
            if g.get("failure_types_by_trial"):
                counts = {int(k): v for k, v in g["failure_types_by_trial"].items()}
                written += plot_failure_types(
                    counts,
                    out_dir / f"failure_types_{_slug(bench, g['label'], model)}",
                    title=f"{title} / {g['label']}: failed tasks by cause",
                )
            c = g["self_test"]["confusion"] or {}
            if any(c.get(k) for k in ("tp", "fp", "fn", "tn")):
                written += plot_self_test_confusion(
                    g, out_dir / f"self_tests_{_slug(bench, g['label'], model)}"
                )
    section = report.get("strategies") or {}
    if section.get("rows"):
        axis = str(section["axis"])
        for key, budget in (section.get("budgets") or {}).items():
            bench, model = key.split(" / ", 1)
            prefix = f"{bench} / "
            curves = {
                name[len(prefix) :].rsplit(" / ", 1)[0]: pts
                for name, pts in section["curves"].items()
                if name.startswith(prefix) and name.endswith(f" / {model}")
            }
            pts = [p for p in section["pareto"] if (p["benchmark"], p["model"]) == (bench, model)]
            base = _slug(bench, model)
            written += plot_pass_at_budget(
                curves,
                out_dir / f"pass_at_budget_{axis}_{base}",
                axis=axis,
                budget=budget,
                title=f"{key}: pass@1 vs budget (from the logs)",
            )
            written += plot_pareto(
                pts, out_dir / f"pareto_{axis}_{base}", axis=axis, title=f"{key}: cost vs pass@1"
            )
    return written
