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
import functools
import math
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
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

#: The names figures print for strategy and evaluator ids (``strategies:`` and
#: ``evaluators:`` maps). Found beside the package, as ``config.CONFIG_DIR`` finds the
#: configs; not imported from there, since ``config`` imports upper layers (STYLE.md).
LABELS_FILE = Path(__file__).resolve().parents[2] / "configs" / "labels.yaml"


@functools.lru_cache(maxsize=1)
def labels() -> dict[str, dict[str, str]]:
    """The label map of :data:`LABELS_FILE`, read once; empty maps where the file is
    absent (an installed package without ``configs/``): figures then print raw ids."""
    import yaml

    try:
        data = yaml.safe_load(LABELS_FILE.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        data = {}
    return {
        kind: {str(k): str(v) for k, v in (data.get(kind) or {}).items()}
        for kind in ("strategies", "evaluators")
    }


def strategy_label(name: str) -> str:
    """The human name of a strategy id (``best_of_n`` -> ``Best-of-n``). A row label the
    report made from the id (``retry (run_a, run_b)``: runs kept apart) keeps its tail;
    an unknown id is returned as it is."""
    names = labels()["strategies"]
    if name in names:
        return names[name]
    head, sep, tail = name.partition(" (")
    return f"{names[head]}{sep}{tail}" if sep and head in names else name


def evaluator_label(name: str) -> str:
    """The human name of an evaluator id (``visible_tests`` -> ``visible tests``) or
    arm id (``noisy_oracle(fn=0.3,fp=0)`` -> ``noisy oracle (fn=0.3, fp=0)``: its
    settings kept, see :func:`reflexion_bench.analysis.runs.evaluator_arm`)."""
    names = labels()["evaluators"]
    if name in names:
        return names[name]
    head, sep, tail = name.partition("(")
    if sep and head in names:
        return f"{names[head]} ({tail.replace(',', ', ')}"
    return name


def group_label(group: Mapping[str, Any], groups: Sequence[Mapping[str, Any]] = ()) -> str:
    """A report row's name in a legend: its strategy's human name, and its evaluator's
    where the rows of the figure (``groups``) differ in evaluator (one strategy under
    several in-loop signals would otherwise print one name twice)."""
    label = str(group["label"])
    evaluators = {g.get("evaluator") for g in groups}
    if len(evaluators) > 1 and group.get("evaluator"):
        evaluator = str(group["evaluator"])
        # A row the report named by its arm (``retry (oracle)``) is named once by it.
        tail = f" ({evaluator})"
        if label.endswith(tail):
            label = label[: -len(tail)]
        return f"{strategy_label(label)}, {evaluator_label(evaluator)}"
    return strategy_label(label)


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


def _legend_below(fig: Any, ax: Any, *, ncol: int | None = None, title: str | None = None) -> Any:
    """The axes' legend outside the data: below the axes, centred, no frame, in two
    columns when two fit the figure's width (else one), the figure made taller by its
    height so that nothing is squeezed or cut off. ``title``: a line above the entries
    (small multiples put their shared x label there, see :func:`small_multiples`)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    renderer = fig.canvas.get_renderer()
    width_px = fig.get_size_inches()[0] * fig.dpi
    for cols in [ncol, 1] if ncol else ([2, 1] if len(handles) > 3 else [1]):
        legend = fig.legend(
            handles, labels, loc="outside lower center", ncol=cols, frameon=False, title=title
        )
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


#: A curve figure with more series than this is small multiples (one panel per series,
#: the others in light grey behind it): more overlapping bands than four are a grey
#: block in which no series' interval can be read.
MAX_OVERLAID = 4


@dataclass(frozen=True)
class Series:
    """One curve of a figure: its legend name, style index, points and 95% interval
    (``low``/``high`` empty where the report has none, e.g. imported logs)."""

    label: str
    index: int
    xs: list[float]
    est: list[float]
    low: list[float]
    high: list[float]


def draw_series(
    ax: Any,
    s: Series,
    *,
    step: str,
    interval: str = "band",
    hollow: bool = False,
    label: str | None = None,
    markevery: int | None = None,
    zorder: float = 3,
) -> None:
    """``s`` on ``ax`` as steps (``step``: ``mid`` for trials, whole numbers, each value
    flat over its trial; ``post`` for budgets, a value holding until the next spend is
    reached), never slopes between measured points, with its interval: ``band``
    (stepped like the line), ``bars`` (a thin vertical bar per point) or ``errorbar``
    (the same, for a curve whose last point a ``post`` band would reduce to nothing).
    The line's gid is ``series:<label>`` and its interval's ``interval:<label>``, so a
    test can pair them."""
    st = series_style(s.index)
    ax.plot(
        s.xs,
        s.est,
        color=st["color"],
        linestyle=st["linestyle"],
        marker=st["marker"],
        markevery=markevery,
        # Every other series hollow: two series on the same point stay visible.
        markerfacecolor="white" if hollow else st["color"],
        drawstyle=f"steps-{step}",
        zorder=zorder,
        label=label,
        gid=f"series:{s.label}",
    )
    if not s.low or len(s.low) != len(s.xs):
        return
    gid = f"interval:{s.label}"
    if interval == "band":
        xs, low, high = s.xs, s.low, s.high
        if step == "mid":
            # Each trial's interval flat over the whole trial, the first and last too
            # (steps-mid stops at the outer points: a one-trial run had no band at all);
            # at the trial itself, not the series' dodged x, so that every series' band
            # steps at the same place (offset edges read as more bands than there are).
            xs = [float(round(x)) for x in xs]
            xs = [xs[0] - 0.5, *xs, xs[-1] + 0.5]
            low, high = [low[0], *low, low[-1]], [high[0], *high, high[-1]]
        ax.fill_between(
            xs, low, high, step=step, color=st["color"], alpha=0.1, linewidth=0, gid=gid
        )
    elif interval == "bars":
        ax.vlines(
            s.xs, s.low, s.high, colors=st["color"], linewidth=1.2, alpha=0.6, zorder=zorder - 1
        ).set_gid(gid)
    else:
        bars = ax.errorbar(
            s.xs,
            s.est,
            yerr=[
                [e - lo for e, lo in zip(s.est, s.low, strict=True)],
                [hi - e for e, hi in zip(s.est, s.high, strict=True)],
            ],
            fmt="none",
            ecolor=st["color"],
            elinewidth=0.8,
            capsize=0,  # no cap lines: only the data line is a Line2D of the series
            alpha=0.7,
            zorder=zorder - 1,
        )
        bars.lines[2][0].set_gid(gid)


def _fit_suptitle(fig: Any, title: str) -> None:
    """The figure's title, wrapped until it lies within the figure's width (centred on
    the figure, unlike an axes title, so one fit holds whatever the layout does)."""
    renderer = fig.canvas.get_renderer()
    width = max(len(part) for part in title.split("\n"))
    while True:
        text = fig.suptitle(
            "\n".join(textwrap.fill(p, width) for p in title.split("\n")),
            fontsize=style().font_pt,  # as an axes title: not matplotlib's "large"
        )
        box = text.get_window_extent(renderer)
        if box.width <= 0.96 * fig.bbox.width or width <= 12:
            return
        width = int(width * 0.9)


def small_multiples(
    series: Sequence[Series],
    *,
    step: str,
    interval: str,
    xlabel: str,
    ylabel: str,
    title: str = "",
    panel_titles: Sequence[str] = (),
    markevery: int | None = None,
    context: str = "the other strategies",
    decorate: Callable[[Any], None] | None = None,
) -> Any:
    """A figure of one panel per series in rows of two (a column's width: two panels of
    1.6 inches still read at 7 points), the panels sharing both axes; each panel draws
    its series in its own colour and marker with its interval, over the other series in
    thin light grey (a reader compares one series with the field, panel by panel).
    ``decorate(ax)`` adds what every panel shows (a budget line). The legend below says
    what grey and the band are; the panel titles name the series."""
    st = style()
    cols = 2
    rows = max(1, math.ceil(len(series) / cols))
    fig = _plt().figure(
        figsize=(st.width_in, 0.3 + rows * 0.4 * st.height_in), layout="constrained"
    )
    grid = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for i, ax in enumerate(axes):
        if i >= len(series):
            ax.set_visible(False)
            # The panel above an empty cell is the lowest of its column: it shows the
            # x tick labels that sharex gives the bottom row only.
            axes[i - cols].xaxis.set_tick_params(labelbottom=True)
            continue
        for j, other in enumerate(series):
            if j != i:
                ax.plot(
                    other.xs,
                    other.est,
                    color="0.78",
                    linewidth=0.6,
                    drawstyle=f"steps-{step}",
                    zorder=1,
                    label=context if (i == 0 and not ax.get_lines()) else None,
                    gid="context",
                )
        draw_series(ax, series[i], step=step, interval=interval, markevery=markevery)
        name = panel_titles[i] if panel_titles else series[i].label
        ax.set_title(name, fontsize=st.font_pt - 1, pad=2)
        ax.grid(alpha=0.3)
        ax.set_ylim(0, 1.02)
        ax.tick_params(labelsize=st.font_pt - 2)
        if decorate is not None:
            decorate(ax)
    fig.supylabel(ylabel, fontsize=st.font_pt)
    first = axes[0]
    # Half a step apart: 0, 0.5 and 1 are enough for a panel an inch high.
    first.set_yticks([0, 0.5, 1])
    if any(s.low for s in series):
        # The interval's key in grey (its meaning, not one series' colour), drawn as the
        # panels draw it: a patch for bands, a vertical bar for bars.
        if interval == "band":
            first.fill_between(
                [], [], [], color="0.5", alpha=0.3, linewidth=0, label="95% interval"
            )
        else:
            first.plot(
                [],
                [],
                linestyle="none",
                marker="|",
                markersize=7,
                color="0.4",
                label="95% interval",
            )
    # The shared x label is the legend's title, just under the panels: the constrained
    # layout puts a supxlabel and a legend below the axes at the same place.
    if _legend_below(fig, first, ncol=3, title=xlabel) is None:
        fig.supxlabel(xlabel, fontsize=st.font_pt)
    if title:
        _fit_suptitle(fig, title)
    return fig


def _trial_series(
    groups: Sequence[dict[str, Any]], kind: str, *, dodge: float = 0.0, with_n: bool = True
) -> list[Series]:
    key = "success_at_trial" if kind == "submitted" else "solved_by_trial"
    out = []
    n = len(groups)
    for i, g in enumerate(groups):
        pts = g[key]
        ks = [k for k, p in enumerate(pts, 1) if p.get("estimate") is not None]
        known = bool(ks) and all("low" in pts[k - 1] for k in ks)
        name = group_label(g, groups) + (f" (n={g['n_tasks']})" if with_n else "")
        out.append(
            Series(
                label=name + _answer_note(g),
                index=i,
                xs=[k + _dodge(i, n, dodge) for k in ks],
                est=[pts[k - 1]["estimate"] for k in ks],
                low=[pts[k - 1]["low"] for k in ks] if known else [],
                high=[pts[k - 1]["high"] for k in ks] if known else [],
            )
        )
    return out


def draw_trial_curves(
    ax: Any,
    groups: Sequence[dict[str, Any]],
    *,
    kind: str = "submitted",
    legend: str = "right",
) -> None:
    """Success vs trial on ``ax``, one step line per group, with 95% CIs: step bands, or
    bars side by side from four series on (see :func:`plot_trial_curves`; the
    notebooks draw their panels with it). ``legend``:
    ``right`` (outside the axes, beside them), or ``none`` (the caller places it)."""
    # From four series on, each trial's intervals are thin vertical bars side by side
    # (spread over half a trial), not bands: four overlapping bands hide each other.
    many = len(groups) >= 4
    k_max = 1
    for s in _trial_series(groups, kind, dodge=0.5 if many else 0.16):
        if not s.xs:
            continue
        k_max = max(k_max, round(s.xs[-1]))
        draw_series(
            ax,
            s,
            step="mid",
            interval="bars" if many else "band",
            hollow=s.index % 2 == 1,
            label=s.label,
            zorder=3 + s.index,
        )
    bench = str(groups[0].get("benchmark", "")) if groups else ""
    ax.set_xlabel("trial")
    ax.set_ylabel(rate_label(bench) if kind == "submitted" else "solved at any trial")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(range(1, k_max + 1))
    ax.grid(alpha=0.3)
    if legend == "right" and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, borderaxespad=0)


def _same_n(groups: Sequence[Mapping[str, Any]]) -> int | None:
    ns = {g.get("n_tasks") for g in groups}
    (only,) = ns if len(ns) == 1 else (None,)
    return int(only) if only is not None else None


def plot_trial_curves(
    groups: Sequence[dict[str, Any]], stem: Path, *, kind: str = "submitted", title: str = ""
) -> list[Path]:
    """Success vs trial, one step line per strategy, with 95% CIs where known (bands;
    side-by-side bars at four series; small multiples above :data:`MAX_OVERLAID`)."""
    if len(groups) > MAX_OVERLAID:
        n = _same_n(groups)
        series = _trial_series(groups, kind, with_n=n is None)
        bench = str(groups[0].get("benchmark", ""))
        fig = small_multiples(
            series,
            step="mid",
            interval="band",
            xlabel="trial" + (f" (n={n} tasks each)" if n is not None else ""),
            ylabel=rate_label(bench) if kind == "submitted" else "solved at any trial",
            title=title,
        )
        k_max = max([round(s.xs[-1]) for s in series if s.xs] or [1])
        # Every tick on ten trials crowds a 1.6-inch panel: about five.
        fig.axes[0].set_xticks(range(1, k_max + 1, max(1, math.ceil(k_max / 5))))
        return _save(fig, stem)
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
    """Success after k trials against the mean spend per task after k trials: steps
    (k trials' success holds until the spend of trial k + 1), each point with its 95%
    interval over tasks; small multiples above :data:`MAX_OVERLAID` series."""
    series = []
    for i, g in enumerate(groups):
        spend = g["spend_curves"].get(axis) or []
        pts = [
            (x, p)
            for x, p in zip(spend, g["success_at_trial"], strict=False)
            if x is not None and p.get("estimate") is not None
        ]
        known = bool(pts) and all(p.get("low") is not None for _, p in pts)
        series.append(
            Series(
                label=group_label(g, groups) + _answer_note(g),
                index=i,
                xs=[x for x, _ in pts],
                est=[p["estimate"] for _, p in pts],
                low=[p["low"] for _, p in pts] if known else [],
                high=[p["high"] for _, p in pts] if known else [],
            )
        )
    free = any(s.xs for s in series) and all(x == 0 for s in series for x in s.xs)
    bench = str(groups[0].get("benchmark", "")) if groups else ""
    xlabel = AXIS_LABELS.get(axis, axis) + " (mean, after k trials)"
    drawn = [s for s in series if s.xs]
    if len(drawn) > MAX_OVERLAID and not free:
        fig = small_multiples(
            drawn,
            step="post",
            interval="errorbar",
            xlabel=xlabel,
            ylabel=rate_label(bench),
            title=title,
        )
        return _save(fig, stem)
    fig = _figure(len(groups))
    ax = fig.axes[0]
    if not free:
        for s in drawn:
            draw_series(
                ax,
                s,
                step="post",
                interval="errorbar",
                hollow=s.index % 2 == 1,
                label=s.label,
                zorder=3 + s.index,
            )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(rate_label(bench))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if drawn and not free:
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
    labels = [group_label(g, groups) for g in groups]
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
    name = group_label(group)
    set_title(ax, figure_title(str(group["benchmark"]), str(group["model"]), name))
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
    :mod:`reflexion_bench.analysis.equal_budget`), with a 95% band per strategy; small
    multiples above :data:`MAX_OVERLAID` strategies (ten bands over one another were a
    grey block). ``order``: strategy names in the report's order, so that each keeps the
    colour and marker it has in the report's other figures."""
    series = [
        Series(
            label=strategy_label(name),
            index=_index(name, order, i),
            xs=[p["budget"] for p in pts],
            est=[p["estimate"] for p in pts],
            low=[p["low"] for p in pts],
            high=[p["high"] for p in pts],
        )
        for i, (name, pts) in enumerate(curves.items())
        if pts
    ]
    # Markers at a few points only: at every budget step they would merge into a line.
    every = max(1, max((len(s.xs) for s in series), default=1) // 6)
    xlabel = AXIS_LABELS.get(axis, axis) + " (budget, as run live)"

    def budget_line(ax: Any) -> None:
        if budget is not None:
            # Named once in the legend: from the first panel (or the only axes).
            first = ax is ax.figure.axes[0]
            ax.axvline(
                budget,
                color="0.3",
                linewidth=0.8,
                linestyle=":",
                label="the budget" if first else None,
            )

    if len(series) > MAX_OVERLAID:
        fig = small_multiples(
            series,
            step="post",
            interval="band",
            xlabel=xlabel,
            ylabel="pass@1 within the budget",
            title=title,
            markevery=every,
            decorate=budget_line,
        )
        return _save(fig, stem)
    fig = _figure(len(curves))
    ax = fig.axes[0]
    for s in series:
        # Steps: a verdict changes only where a trial's spend is crossed.
        draw_series(ax, s, step="post", hollow=s.index % 2 == 1, label=s.label, markevery=every)
    budget_line(ax)
    ax.set_xlabel(xlabel)
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
            label=" = ".join(strategy_label(n) for n in names) + note + front,
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
                    title=f"{title}, {group_label(g, gs)}: failed tasks by cause",
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
