"""Figures from a report (see :func:`reflexion_bench.analysis.tables.build_report`).

Made to go into a paper as they are (``--style paper``, the default: 3.4 inches wide, a
two-column paper's column, 7-point type, PNG at 300 dpi and vector PDF; ``--style
screen`` for slides and notebooks). Up to 12 series stay apart: each has its own colour
from a colour-blind-safe palette (:data:`PALETTE`) *and* its own marker (and one of four
line styles), so they also read in grey scale. Legends sit outside the data, below the
axes; titles and axis names are words (``HumanEval, <model>``, ``pass@1``, ``tokens per
task``), not raw ids. One figure per benchmark x model for the per-strategy plots.

A figure rebuilt from the same report is the same file (:func:`save_figure`): no
creation date and no matplotlib version in its metadata, SVG ids from a fixed salt,
and :func:`write_plots` draws with matplotlib's default style (plus ours), whatever
matplotlibrc the user or the current folder has.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.answer_key import label_text
from reflexion_bench.analysis.budget import AXIS_LABELS

#: Series colours, colour-blind safe: Okabe & Ito's (black first; their yellow left out,
#: too pale on white), then Paul Tol's muted indigo, wine, olive, teal and purple.
PALETTE = (
    "#000000",
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#332288",
    "#882255",
    "#999933",
    "#44AA99",
    "#AA4499",
)
#: One marker per series (12, as many as colours): a series is told apart by its marker
#: alone in grey scale.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p")
#: Four dash patterns that print distinctly (ten could not be told apart).
LINESTYLES = ("-", "--", "-.", ":")
_HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--"]

#: Benchmark ids as a paper names them.
BENCHMARK_NAMES = {
    "humaneval": "HumanEval",
    "humaneval_rs": "HumanEval-rs",
    "humaneval_rs_hard50": "HumanEval-rs (hardest 50)",
    "mbpp": "MBPP",
    "mbpp_rs": "MBPP-rs",
    "leetcode_hard": "LeetcodeHard",
    "leetcode_hard_py": "LeetcodeHard",
    "leetcode_hard_rs": "LeetcodeHard-rs",
    "alfworld": "ALFWorld",
    "hotpotqa": "HotpotQA",
}
#: Benchmarks judged by tests: their success rate is pass@1.
_CODE = ("humaneval", "mbpp", "leetcode", "multiple")


@dataclass(frozen=True)
class FigureStyle:
    """Size and type of the saved figures."""

    name: str
    width_in: float
    height_in: float
    font_pt: float
    dpi: int


STYLES = {
    "paper": FigureStyle("paper", 3.4, 2.3, 7.0, 300),
    "screen": FigureStyle("screen", 6.4, 4.0, 10.0, 150),
}
_current: list[FigureStyle] = [STYLES["paper"]]


def style() -> FigureStyle:
    """The style figures are drawn in now (see :func:`use_style`)."""
    return _current[-1]


@contextlib.contextmanager
def use_style(name: str) -> Iterator[FigureStyle]:
    """Draw in the style ``name`` (``paper`` or ``screen``): sizes, type, resolution."""
    if name not in STYLES:
        raise ValueError(f"unknown figure style {name!r}: choose one of {sorted(STYLES)}")
    st = STYLES[name]
    rc: dict[str, Any] = {
        "font.size": st.font_pt,
        "axes.titlesize": st.font_pt,
        "axes.labelsize": st.font_pt,
        "xtick.labelsize": st.font_pt - 1,
        "ytick.labelsize": st.font_pt - 1,
        "legend.fontsize": st.font_pt - 1,
        "lines.linewidth": 1.1 if name == "paper" else 1.5,
        "lines.markersize": 4.0 if name == "paper" else 6.0,
        "axes.linewidth": 0.6,
        "pdf.fonttype": 42,  # TrueType in the PDF: text stays text for the publisher
    }
    import matplotlib

    _current.append(st)
    try:
        with matplotlib.rc_context(rc):  # type: ignore[arg-type]
            yield st
    finally:
        _current.pop()


def series_style(i: int) -> dict[str, Any]:
    """Colour, marker and line style of series ``i`` (distinct for i < 12)."""
    return {
        "color": PALETTE[i % len(PALETTE)],
        "marker": MARKERS[i % len(MARKERS)],
        "linestyle": LINESTYLES[i % len(LINESTYLES)],
    }


def benchmark_name(benchmark: str) -> str:
    return BENCHMARK_NAMES.get(benchmark, benchmark)


def rate_label(benchmark: str) -> str:
    """``pass@1`` for benchmarks judged by tests, ``success rate`` for the others."""
    return "pass@1" if str(benchmark).startswith(_CODE) else "success rate"


def figure_title(benchmark: str, model: str, what: str = "") -> str:
    """``HumanEval, <model>`` (and ``: what``): the words a caption would use."""
    return f"{benchmark_name(benchmark)}, {model}" + (f": {what}" if what else "")


def set_title(ax: Any, title: str) -> None:
    """``ax``'s title, wrapped until it lies inside the figure (a column-wide figure cut
    off a title of more than about 60 characters). The title is centred on the axes,
    not the figure, and the axes sit off-centre (the y label takes the left margin), so
    what must fit is the title's extent within the figure's edges, not its width; and
    the constrained layout moves the axes whenever a label or legend is added, so
    :func:`save_figure` fits the title again once the figure is complete."""
    ax._reflexion_bench_title = title
    _fit_title(ax, title)


def _fit_title(ax: Any, title: str) -> None:
    import textwrap

    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    margin = 0.02 * fig.bbox.width
    width = max(len(part) for part in title.split("\n"))
    while True:
        ax.set_title("\n".join(textwrap.fill(part, width) for part in title.split("\n")))
        fig.draw_without_rendering()  # the layout places the axes (and so the title)
        box = ax.title.get_window_extent(renderer)
        inside = box.x0 >= fig.bbox.x0 + margin and box.x1 <= fig.bbox.x1 - margin
        if inside or width <= 12:
            return
        width = int(width * 0.9)


def _figure(n_series: int = 0, *, width: float | None = None, ncol: int | None = None) -> Any:
    """A figure of one axes in the current style; :func:`_legend_below` grows its height
    by the legend's rows, so the axes keep their size however many series there are.
    (``n_series`` and ``ncol`` are accepted for the callers' clarity; the legend decides.)"""
    st = style()
    fig = _plt().figure(figsize=(width or st.width_in, st.height_in), layout="constrained")
    fig.add_subplot()
    return fig


def _legend_below(fig: Any, ax: Any, *, ncol: int | None = None) -> Any:
    """The axes' legend outside the data: below the axes, centred, no frame, in two
    columns when two fit the figure's width (else one), the figure made taller by its
    height so that nothing is squeezed or cut off."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    renderer = fig.canvas.get_renderer()
    width_px = fig.get_size_inches()[0] * fig.dpi
    for cols in [ncol] if ncol else ([2, 1] if len(handles) > 3 else [1]):
        legend = fig.legend(handles, labels, loc="outside lower center", ncol=cols, frameon=False)
        box = legend.get_window_extent(renderer)
        if box.width <= 0.98 * width_px or cols == 1:
            break
        legend.remove()
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + box.height / fig.dpi + 0.05)
    return legend


def _index(name: str, order: Sequence[str], default: int) -> int:
    """The series index of ``name``: its place in ``order`` (the report's groups), so one
    strategy is one colour and marker in every figure; ``default`` if not there."""
    return list(order).index(name) if name in order else default


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


def save_figure(
    fig: Any, path: Path, *, metadata: Mapping[str, str] | None = None, **kwargs: Any
) -> None:
    """``fig.savefig(path)`` with fixed metadata (:data:`SAVE_METADATA`, plus
    ``metadata``), so that the same figure gives the same bytes on every run, on any day,
    from any folder."""
    import matplotlib

    for ax in fig.axes:
        if getattr(ax, "_reflexion_bench_title", None):
            _fit_title(ax, ax._reflexion_bench_title)  # the layout is final now
    fmt = path.suffix.lstrip(".").lower()
    meta: dict[str, str | None] = {**SAVE_METADATA.get(fmt, {}), **(metadata or {})}
    # svg.hashsalt: SVG clip-path and glyph ids are otherwise random per run.
    with matplotlib.rc_context({"svg.hashsalt": "reflexion-bench"}):
        fig.savefig(path, format=fmt, metadata=meta or None, **kwargs)


def _save(fig: Any, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    # Not with_suffix: model names such as "qwen2.5-coder" hold dots.
    paths = [stem.parent / f"{stem.name}.png", stem.parent / f"{stem.name}.pdf"]
    save_figure(fig, paths[0], dpi=style().dpi)
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
    ax: Any,
    groups: Sequence[dict[str, Any]],
    *,
    kind: str = "submitted",
    legend: str = "right",
) -> None:
    """Success vs trial on ``ax``, one line per group, with 95% CIs: step bands, or
    bars side by side from four series on (see :func:`plot_trial_curves`; the
    notebooks draw their panels with it). ``legend``:
    ``right`` (outside the axes, beside them), or ``none`` (the caller places it)."""
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
        st = series_style(i)
        # From four series on, each trial's intervals are thin vertical bars side by side
        # (spread over half a trial), not bands: ten overlapping bands of one trial are
        # a grey block in which no series' interval can be read.
        many = n >= 4
        xs = [k + _dodge(i, n, 0.5 if many else 0.16) for k in ks]
        ax.plot(
            xs,
            est,
            **st,
            # Every other series hollow: two series on the same point stay visible.
            markerfacecolor=st["color"] if i % 2 == 0 else "white",
            zorder=3 + i,
            label=f"{g['label']} (n={g['n_tasks']}){_answer_note(g)}",
        )
        if all("low" in pts[k - 1] for k in ks) and many:
            ax.vlines(
                xs,
                [pts[k - 1]["low"] for k in ks],
                [pts[k - 1]["high"] for k in ks],
                colors=st["color"],
                linewidth=1.2,
                alpha=0.6,
                zorder=2 + i,
            )
        elif all("low" in pts[k - 1] for k in ks):
            # Trials are whole numbers: each trial's interval is a flat step over it,
            # not a slope interpolated between trials.
            ax.fill_between(
                xs,
                [pts[k - 1]["low"] for k in ks],
                [pts[k - 1]["high"] for k in ks],
                step="mid",
                color=st["color"],
                alpha=0.08,
                linewidth=0,
            )
    bench = str(groups[0].get("benchmark", "")) if groups else ""
    ax.set_xlabel("trial")
    ax.set_ylabel(rate_label(bench) if kind == "submitted" else "solved at any trial")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(range(1, k_max + 1))
    ax.grid(alpha=0.3)
    if legend == "right" and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, borderaxespad=0)


def plot_trial_curves(
    groups: Sequence[dict[str, Any]], stem: Path, *, kind: str = "submitted", title: str = ""
) -> list[Path]:
    """Success vs trial, one line per strategy, with 95% CIs where known (bands;
    side-by-side bars from four series on)."""
    fig = _figure(len(groups))
    ax = fig.axes[0]
    draw_trial_curves(ax, groups, kind=kind, legend="none")
    _legend_below(fig, ax)
    if title:
        set_title(ax, title)
    return _save(fig, stem)


def plot_success_vs_budget(
    groups: Sequence[dict[str, Any]], stem: Path, *, axis: str = "tokens", title: str = ""
) -> list[Path]:
    """Success after k trials against the mean spend per task after k trials."""
    fig = _figure(len(groups))
    ax = fig.axes[0]
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
        st = series_style(i)
        ax.plot(
            [x for x, _ in pts],
            [y for _, y in pts],
            **st,
            markerfacecolor=st["color"] if i % 2 == 0 else "white",
            zorder=3 + i,
            label=f"{g['label']}{_answer_note(g)}",
        )
    bench = str(groups[0].get("benchmark", "")) if groups else ""
    ax.set_xlabel(AXIS_LABELS.get(axis, axis) + " (mean, after k trials)")
    ax.set_ylabel(rate_label(bench))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if drawn:
        _legend_below(fig, ax)
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
        set_title(ax, title)
    return _save(fig, stem)


def plot_fix_break(groups: Sequence[dict[str, Any]], stem: Path, *, title: str = "") -> list[Path]:
    """Per strategy: tasks fixed from trial 1 (wrong at trial 1, right when submitted)
    and broken from trial 1, named as the tables name them (docs/reports.md, Metrics)."""
    labels = [g["label"] for g in groups]
    fixed = [(g.get("first_to_final") or {}).get("fixed") or 0 for g in groups]
    broken = [(g.get("first_to_final") or {}).get("broken") or 0 for g in groups]
    st = style()
    fig = _figure(2, width=max(st.width_in, 0.32 * len(groups) + 1.2), ncol=2)
    ax = fig.axes[0]
    xs = list(range(len(groups)))
    w = 0.38
    b1 = ax.bar(
        [x - w / 2 for x in xs],
        fixed,
        w,
        color="0.25",
        edgecolor="black",
        label="fixed from trial 1",
    )
    b2 = ax.bar(
        [x + w / 2 for x in xs],
        broken,
        w,
        color="white",
        edgecolor="black",
        hatch="//",
        label="broken from trial 1",
    )
    for bars in (b1, b2):
        for bar in bars:
            ax.annotate(
                f"{int(bar.get_height())}",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=st.font_pt - 1.5,
            )
    top = max([*fixed, *broken, 1])
    ax.set_ylim(0, top * 1.15 + 0.5)  # room for the counts above the bars
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("tasks (trial 1 -> submitted)")
    _legend_below(fig, ax, ncol=2)
    if title:
        set_title(ax, title)
    return _save(fig, stem)


def plot_self_test_confusion(group: dict[str, Any], stem: Path) -> list[Path]:
    """2x2 matrix of self-test verdict (rows) vs hidden verdict (columns), with counts
    and the paper's per-verdict rates."""
    c = group["self_test"]["confusion"] or {}
    rates = group["self_test"]["rates"] or {}
    cells = [[("tp", "TP"), ("fp", "FP")], [("fn", "FN"), ("tn", "TN")]]
    counts = [[int(c.get(k, 0)) for k, _ in row] for row in cells]
    total = max(1, sum(map(sum, counts)))
    fig = _figure(0)
    ax = fig.axes[0]
    # Cells as vector quads (imshow would paste a raster image into the PDF).
    ax.pcolormesh(
        [-0.5, 0.5, 1.5],
        [-0.5, 0.5, 1.5],
        [[v / total for v in row] for row in counts],
        cmap="Greys",
        vmin=0,
        vmax=1.4,
        edgecolors="white",
        linewidth=1.0,
    )
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylim(1.5, -0.5)  # row 0 (self-tests pass) on top, as a confusion matrix reads
    ax.set_aspect("equal")
    for i, row in enumerate(cells):
        for j, (k, name) in enumerate(row):
            rate = rates.get(k)
            text = f"{name}\n{counts[i][j]}" + ("" if rate is None else f"\n({100 * rate:.1f}%)")
            ax.text(j, i, text, ha="center", va="center", color="black")
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["hidden pass", "hidden fail"])
    ax.set_yticks([0, 1])
    ax.set_yticklabels(["self-tests pass", "self-tests fail"])
    set_title(ax, figure_title(str(group["benchmark"]), str(group["model"]), str(group["label"])))
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
    trials = sorted(counts_by_trial)
    types = sorted({t for c in counts_by_trial.values() for t in c})
    fig = _figure(len(types))
    ax = fig.axes[0]
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
        _legend_below(fig, ax)
    if title:
        set_title(ax, title)
    return _save(fig, stem)


def plot_pass_at_budget(
    curves: Mapping[str, Sequence[Mapping[str, float]]],
    stem: Path,
    *,
    axis: str = "tokens",
    budget: float | None = None,
    title: str = "",
    order: Sequence[str] = (),
) -> list[Path]:
    """pass@1 against the per-task budget, resampled from the logs (see
    :mod:`reflexion_bench.analysis.equal_budget`), with a 95% band per strategy.
    ``order``: strategy names in the report's order, so that each keeps the colour and
    marker it has in the report's other figures."""
    fig = _figure(len(curves))
    ax = fig.axes[0]
    for i, (name, pts) in enumerate(curves.items()):
        if not pts:
            continue
        xs = [p["budget"] for p in pts]
        st = series_style(_index(name, order, i))
        # Steps: a verdict changes only where a trial's spend is crossed. Markers at a
        # few points only: at every budget step they would merge into a thick line.
        ax.plot(
            xs,
            [p["estimate"] for p in pts],
            color=st["color"],
            linestyle=st["linestyle"],
            marker=st["marker"],
            markevery=max(1, len(xs) // 6),
            markerfacecolor=st["color"] if i % 2 == 0 else "white",
            label=name,
            drawstyle="steps-post",
        )
        ax.fill_between(
            xs,
            [p["low"] for p in pts],
            [p["high"] for p in pts],
            color=st["color"],
            alpha=0.08,
            step="post",
            linewidth=0,
        )
    if budget is not None:
        ax.axvline(budget, color="0.3", linewidth=0.8, linestyle=":", label="the budget")
    ax.set_xlabel(AXIS_LABELS.get(axis, axis) + " (budget, as run live)")
    ax.set_ylabel("pass@1 within the budget")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    _legend_below(fig, ax)
    if title:
        set_title(ax, title)
    return _save(fig, stem)


def plot_pareto(
    points: Sequence[Mapping[str, Any]],
    stem: Path,
    *,
    axis: str = "tokens",
    title: str = "",
    order: Sequence[str] = (),
) -> list[Path]:
    """Cost (mean spend per task, as run live) against pass@1 with its 95% CI; the
    Pareto frontier of the clean runs drawn as a step line. Each run is named in the
    legend by its own colour and marker (labels beside the markers overlapped them and
    each other as soon as runs crowded)."""
    drawn = [p for p in points if p.get("cost") is not None and p.get("accuracy") is not None]
    # Runs at the same cost and pass@1 (e.g. retry and best_of_n replaying one another)
    # are one marker with one entry "a = b".
    merged: dict[tuple[float, float, bool], list[Mapping[str, Any]]] = {}
    for p in drawn:
        clean = not str(p.get("answer_key", "")).startswith("answer-in-loop")
        key = (round(float(p["cost"]), 1), round(float(p["accuracy"]), 4), clean)
        merged.setdefault(key, []).append(p)
    fig = _figure(len(merged) + 1)
    ax = fig.axes[0]
    ax.set_ylim(0, 1.02)
    if drawn:
        xs = [float(p["cost"]) for p in drawn]
        pad = 0.08 * ((max(xs) - min(xs)) or max(xs) or 1.0)
        ax.set_xlim(min(xs) - pad, max(xs) + pad)
    ax.set_xlabel(AXIS_LABELS.get(axis, axis) + " (mean, as run live)")
    ax.set_ylabel("pass@1 (final)")
    ax.grid(alpha=0.3)
    if title:
        set_title(ax, title)
    for i, ((_, _, clean), same) in enumerate(sorted(merged.items(), key=lambda kv: kv[0][:2])):
        p = same[0]
        x, y = float(p["cost"]), float(p["accuracy"])
        yerr = None
        if p.get("low") is not None and p.get("high") is not None:
            yerr = [[y - float(p["low"])], [float(p["high"]) - y]]
        names = sorted(str(q["strategy"]) for q in same)
        st = series_style(min(_index(n, order, i) for n in names))
        note = "" if clean else " [answer-in-loop]"
        front = " (frontier)" if any(q.get("on_front") for q in same) else ""
        ax.errorbar(
            [x],
            [y],
            yerr=yerr,
            fmt=st["marker"],
            color=st["color"],
            mfc="white" if not clean else st["color"],
            capsize=2,
            linewidth=0.8,
            label=" = ".join(names) + note + front,
        )
    front_pts = sorted(
        (float(p["cost"]), float(p["accuracy"])) for p in points if p.get("on_front")
    )
    if front_pts:
        # Extended to the costliest run: everything right of and below the line is dominated.
        right = max(float(p["cost"]) for p in points if p.get("cost") is not None)
        if right > front_pts[-1][0]:
            front_pts.append((right, front_pts[-1][1]))
        ax.step(
            [c for c, _ in front_pts],
            [a for _, a in front_pts],
            where="post",
            color="0.0",
            linewidth=0.8,
            zorder=1,
            label="Pareto frontier",
        )
    _legend_below(fig, ax)
    return _save(fig, stem)


def write_plots(
    report: dict[str, Any],
    out_dir: Path,
    *,
    axes: Sequence[str] = ("tokens", "dollars", "wall"),
    style_name: str = "paper",
) -> list[Path]:
    """Every per-report figure into ``out_dir`` in the style ``style_name``; returns the
    files written."""
    # matplotlib's defaults, not a matplotlibrc of the user or of the current folder: the
    # figures of a committed report must not depend on where the command ran.
    with _plt().style.context("default"), use_style(style_name):
        return _write_plots(report, out_dir, axes=axes)


def _write_plots(report: dict[str, Any], out_dir: Path, *, axes: Sequence[str]) -> list[Path]:
    written: list[Path] = []
    for (bench, model), gs in _clusters(report["groups"]).items():
        title = figure_title(bench, model)
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
                    title=f"{title}, {g['label']}: failed tasks by cause",
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
            order = [
                str(g["label"])
                for g in report["groups"]
                if (g["benchmark"], g["model"]) == (bench, model)
            ]
            written += plot_pass_at_budget(
                curves,
                out_dir / f"pass_at_budget_{axis}_{base}",
                axis=axis,
                budget=budget,
                title=figure_title(bench, model, "pass@1 at each budget"),
                order=order,
            )
            written += plot_pareto(
                pts,
                out_dir / f"pareto_{axis}_{base}",
                axis=axis,
                title=figure_title(bench, model, "cost and pass@1"),
                order=order,
            )
    return written
