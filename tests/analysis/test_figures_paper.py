"""Figures that go into a paper as they are (issue 33): up to 12 series told apart by
colour and marker, legends outside the data, the paper's column width at 300 dpi with a
vector PDF, words for titles and axes, and an interval on every curve."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.colors import to_rgb

from reflexion_bench.analysis import plots
from reflexion_bench.analysis.report import build_comparison, plot_trial_curve
from tests.analysis.test_plots import group
from tests.analysis.test_plots_readable import pareto_points
from tests.analysis.test_report import make_sweep


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every figure saved (inspected before it is closed)."""
    figs: list[Any] = []
    real = plots.save_figure

    def save(fig: Any, path: Path, **kwargs: Any) -> None:
        if not figs or figs[-1] is not fig:
            figs.append(fig)
        real(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save_figure", save)
    monkeypatch.setattr(plt, "close", lambda *_: None)
    return figs


def twelve() -> list[dict[str, Any]]:
    return [
        group(f"strategy_{i:02d}", [0.2 + 0.05 * i, 0.3 + 0.05 * i, 0.35 + 0.05 * i], i % 3, 0)
        for i in range(12)
    ]


def _boxes(fig: Any) -> tuple[Any, list[Any]]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return renderer, [ax.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()]


def assert_legend_outside_the_data(fig: Any) -> None:
    """Every legend lies off every axes and inside the figure (nothing cut off)."""
    renderer, axes = _boxes(fig)
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert legends, "no legend"
    page = fig.bbox
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert not any(box.overlaps(a) for a in axes), (box, axes)
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, (box, page)
        assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, (box, page)


def assert_title_inside_the_figure(fig: Any) -> None:
    """Every axes title fits the figure's width (a column-wide figure cut long ones)."""
    renderer, _ = _boxes(fig)
    page = fig.bbox
    for ax in fig.axes:
        if ax.get_title():
            box = ax.title.get_window_extent(renderer)
            assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, (ax.get_title(), box, page)


def test_a_long_title_is_wrapped_to_the_column(tmp_path: Path, captured: list[Any]) -> None:
    title = plots.figure_title("humaneval", "qwen2.5-coder-0.5b-instruct", "pass@1 at each budget")
    assert len(title) > 60
    plots.plot_trial_curves(twelve()[:2], tmp_path / "c", title=title)
    (fig,) = captured
    assert "\n" in fig.axes[0].get_title()
    assert fig.axes[0].get_title().replace("\n", " ") == title
    assert_title_inside_the_figure(fig)


def test_a_title_centred_on_off_centre_axes_stays_inside(
    tmp_path: Path, captured: list[Any]
) -> None:
    """The title is centred on the axes, which the y label pushes right of the figure's
    centre: a title narrower than the figure can still run off its right edge (the
    pass@1-at-budget figure of the equal-budget study lost its last letters so)."""
    title = plots.figure_title("humaneval", "qwen2.5-coder-0.5b-instruct", "pass@1 at each budget")

    def curve(offset: float) -> list[dict[str, float]]:
        return [
            {"budget": b, "estimate": min(0.6, b / 5000 + offset), "low": 0.0, "high": 0.9}
            for b in range(0, 5600, 100)
        ]

    curves = {"reflexion": curve(0.0), "retry": curve(0.05), "wrong_reflection": curve(-0.05)}
    with plt.style.context("default"), plots.use_style("paper"):
        plots.plot_pass_at_budget(curves, tmp_path / "p", budget=3000, title=title)
    (fig,) = captured
    assert fig.axes[0].get_title().replace("\n", " ") == title
    assert_title_inside_the_figure(fig)


def series_lines(fig: Any) -> list[Any]:
    """The curves' own lines (gid ``series:<label>``), not the grey context of small
    multiples, a budget line or a legend key."""
    return [
        ln for ax in fig.axes for ln in ax.get_lines() if str(ln.get_gid()).startswith("series:")
    ]


def test_twelve_series_are_twelve_colours_and_twelve_markers(
    tmp_path: Path, captured: list[Any]
) -> None:
    plots.plot_trial_curves(twelve(), tmp_path / "c")
    (fig,) = captured
    # Above four series: small multiples, one panel per series (overlapping bands or
    # twelve bars per trial were a block no series could be read in).
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 12
    lines = series_lines(fig)
    assert len(lines) == 12 and all(len(series_lines_of(ax)) == 1 for ax in panels)
    colours = [to_rgb(line.get_color()) for line in lines]
    markers = [line.get_marker() for line in lines]
    assert len(set(colours)) == 12 and len(set(markers)) == 12
    # An interval on every curve, in its panel, in its colour.
    for ax in panels:
        (line,) = series_lines_of(ax)
        label = str(line.get_gid()).removeprefix("series:")
        (band,) = [c for c in ax.collections if c.get_gid() == f"interval:{label}"]
        assert to_rgb(band.get_facecolor()[0][:3]) == to_rgb(line.get_color())
        assert ax.get_title() == label  # the panel is named, not a legend entry
    assert_legend_outside_the_data(fig)
    assert panels[0].get_title().startswith("strategy_00 [")  # an unknown id names itself


def series_lines_of(ax: Any) -> list[Any]:
    return [ln for ln in ax.get_lines() if str(ln.get_gid()).startswith("series:")]


def test_other_many_series_figures_keep_legends_off_the_data(
    tmp_path: Path, captured: list[Any]
) -> None:
    groups = twelve()
    plots.plot_success_vs_budget(groups, tmp_path / "b", axis="tokens")
    curves = {
        g["label"]: [
            {"budget": 100.0 * k, "estimate": 0.5, "low": 0.4, "high": 0.6} for k in range(8)
        ]
        for g in groups
    }
    plots.plot_pass_at_budget(curves, tmp_path / "p", budget=300.0)
    for fig in captured:
        assert_legend_outside_the_data(fig)
        assert len([ax for ax in fig.axes if ax.get_visible()]) == 12  # small multiples
        lines = series_lines(fig)
        assert len({(to_rgb(ln.get_color()), ln.get_marker()) for ln in lines}) == 12


def test_pareto_names_runs_in_a_legend_and_no_text_covers_a_marker(
    tmp_path: Path, captured: list[Any]
) -> None:
    points = pareto_points()
    plots.plot_pareto(points, tmp_path / "p")
    (fig,) = captured
    ax = fig.axes[0]
    assert [t for t in ax.texts if t.get_text()] == []  # nothing printed over the data
    assert_legend_outside_the_data(fig)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "Best-of-n = Retry" in legend and "Pareto frontier" in legend
    assert "Self-Refine (frontier)" in legend
    # Seven markers (one per distinct run), each its own colour and marker.
    marks = [ln for ln in ax.get_lines() if ln.get_marker() in plots.MARKERS]  # not the caps
    assert len(marks) == 7
    assert len({(to_rgb(m.get_color()), m.get_marker()) for m in marks}) == 7


def _png_width(path: Path) -> int:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int(struct.unpack(">I", data[16:20])[0])


def test_paper_style_is_a_column_wide_at_300_dpi_with_a_vector_pdf(tmp_path: Path) -> None:
    report = build_comparison([make_sweep(tmp_path / "sweep")], n_resamples=200)
    written = plots.write_plots(report, tmp_path / "paper")
    pngs = [p for p in written if p.suffix == ".png"]
    pdfs = [p for p in written if p.suffix == ".pdf"]
    assert pngs and len(pngs) == len(pdfs)
    st = plots.STYLES["paper"]
    for png in pngs:
        if png.name.startswith("fix_break"):  # as wide as its bars need, never narrower
            assert _png_width(png) >= round(st.width_in * st.dpi)
        else:
            assert _png_width(png) == round(st.width_in * st.dpi), png.name
    for pdf in pdfs:
        assert b"/Subtype /Image" not in pdf.read_bytes(), pdf.name  # drawn, not pasted
    screen = plots.write_plots(report, tmp_path / "screen", style_name="screen")
    wide = next(p for p in screen if p.name.startswith("curve_") and p.suffix == ".png")
    assert _png_width(wide) == round(plots.STYLES["screen"].width_in * plots.STYLES["screen"].dpi)
    with pytest.raises(ValueError, match="unknown figure style 'poster'"):
        plots.write_plots(report, tmp_path / "x", style_name="poster")


def test_every_report_figure_has_words_for_titles_and_no_legend_on_the_data(
    tmp_path: Path, captured: list[Any]
) -> None:
    report = build_comparison([make_sweep(tmp_path / "sweep")], n_resamples=200)
    plots.write_plots(report, tmp_path / "f")
    assert captured
    for fig in captured:
        ax = fig.axes[0]
        assert " / " not in ax.get_title(), ax.get_title()  # not "bench / model" ids
        assert_title_inside_the_figure(fig)
        if fig.legends or ax.get_legend():
            assert_legend_outside_the_data(fig)


def test_a_runs_curve_png_has_its_interval_and_says_pass_at_1(
    tmp_path: Path, captured: list[Any]
) -> None:
    summary = {
        "benchmark": "humaneval",
        "strategy": "reflexion",
        "n_tasks": 40,
        "success_at_trial": [0.5, 0.6, 0.65],
        "solved_by_trial": [0.5, 0.65, 0.7],
        "success_counts_at_trial": [20, 24, 26],
        "solved_counts_by_trial": [20, 26, 28],
    }
    plot_trial_curve(summary, tmp_path / "curve.png")
    (fig,) = captured
    ax = fig.axes[0]
    assert len(ax.collections) == 2  # both curves carry their 95% band
    band = ax.collections[0].get_paths()[0].vertices
    # Wilson at 20/40 is about [0.35, 0.65]: the band spans that at trial 1.
    ys = [float(y) for x, y in band if abs(float(x) - 1.0) < 0.01]
    assert min(ys) == pytest.approx(0.352, abs=0.01) and max(ys) == pytest.approx(0.648, abs=0.01)
    assert ax.get_ylabel() == "pass@1"
    assert ax.get_title().startswith("HumanEval, reflexion (n=40")
    assert_legend_outside_the_data(fig)
    assert _png_width(tmp_path / "curve.png") == round(3.4 * 300)


def test_a_strategy_keeps_its_colour_and_marker_across_figures(
    tmp_path: Path, captured: list[Any]
) -> None:
    groups = twelve()[:5]
    order = [g["label"] for g in groups]
    plots.plot_trial_curves(groups, tmp_path / "c")
    # The Pareto plot sorts its runs by cost: the dearest first here.
    points = [
        {"strategy": name, "cost": 1000.0 - 100 * i, "accuracy": 0.5, "answer_key": "clean"}
        for i, name in enumerate(order)
    ]
    plots.plot_pareto(points, tmp_path / "p", order=order)
    curve, pareto = captured
    in_curve = {
        str(ln.get_gid()).removeprefix("series:").split(" [")[0].split(" (")[0]: (
            to_rgb(ln.get_color()),
            ln.get_marker(),
        )
        for ln in series_lines(curve)
    }
    in_pareto = {
        c.get_label(): (to_rgb(c.lines[0].get_color()), c.lines[0].get_marker())
        for c in pareto.axes[0].containers  # one errorbar per run: its marker line first
    }
    assert in_pareto == {name: in_curve[name] for name in order}
