"""Figures: written as PNG and PDF, and distinguishable without colour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.colors import to_rgb

from reflexion_bench.analysis import plots


def group(label: str, curve: list[float], fixed: int, broken: int) -> dict[str, Any]:
    pts = [{"estimate": v, "low": max(0.0, v - 0.1), "high": min(1.0, v + 0.1)} for v in curve]
    return {
        "benchmark": "b",
        "model": "m",
        "label": label,
        "n_tasks": 10,
        "success_at_trial": pts,
        "solved_by_trial": pts,
        "first_to_final": {"fixed": fixed, "broken": broken},
        "spend_curves": {"tokens": [100.0 * (i + 1) for i in range(len(curve))]},
        "self_test": {
            "confusion": {"tp": 5, "fp": 1, "fn": 2, "tn": 3},
            "rates": {"tp": 5 / 6, "fp": 1 / 6, "fn": 0.4, "tn": 0.6},
        },
    }


GROUPS = [
    group("reflexion", [0.5, 0.7, 0.8], 3, 0),
    group("retry", [0.5, 0.55, 0.6], 1, 0),
    group("wrong_reflection", [0.5, 0.5, 0.55], 1, 1),
]


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures the plot functions save (inspected before they are closed)."""
    figs: list[Any] = []
    real_save = plots._save

    def save(fig: Any, stem: Path) -> list[Path]:
        figs.append(fig)
        return real_save(fig, stem)

    monkeypatch.setattr(plots, "_save", save)
    monkeypatch.setattr(plt, "close", lambda *_: None)
    return figs


def _achromatic(color: Any) -> bool:
    r, g, b = to_rgb(color)
    return abs(r - g) < 1e-6 and abs(g - b) < 1e-6


def test_trial_curves_tell_series_apart_in_colour_and_in_grey_scale(
    tmp_path: Path, captured: list[Any]
) -> None:
    paths = plots.plot_trial_curves(GROUPS, tmp_path / "curves_qwen2.5-coder-0.5b")
    assert [p.name for p in paths] == [
        "curves_qwen2.5-coder-0.5b.png",
        "curves_qwen2.5-coder-0.5b.pdf",
    ]
    assert paths[0].read_bytes()[:4] == b"\x89PNG" and paths[1].read_bytes()[:4] == b"%PDF"
    (fig,) = captured
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3
    # Each series its own colour of the colour-blind-safe palette, and, for a reader in
    # grey scale, its own marker and line style.
    assert len({to_rgb(line.get_color()) for line in lines}) == 3
    assert {to_rgb(line.get_color()) for line in lines} <= {to_rgb(c) for c in plots.PALETTE}
    assert len({line.get_linestyle() for line in lines}) == 3
    assert len({line.get_marker() for line in lines}) == 3
    assert len(fig.axes[0].collections) == 3  # one CI band per strategy
    assert list(lines[0].get_ydata()) == [0.5, 0.7, 0.8]


def test_other_figures(tmp_path: Path, captured: list[Any]) -> None:
    plots.plot_fix_break(GROUPS, tmp_path / "fb")
    plots.plot_success_vs_budget(GROUPS, tmp_path / "budget", axis="tokens")
    plots.plot_self_test_confusion(GROUPS[0], tmp_path / "conf")
    fb, budget, conf = captured
    bars = fb.axes[0].patches
    assert [int(b.get_height()) for b in bars] == [3, 1, 1, 0, 0, 1]
    assert {b.get_hatch() for b in bars} == {None, "//"}  # broken bars are hatched
    # Tasks, named as the tables name them: not the main table's fixes between trials.
    assert fb.axes[0].get_legend_handles_labels()[1] == [
        "fixed from trial 1",
        "broken from trial 1",
    ]
    assert all(_achromatic(b.get_facecolor()) for b in bars)
    assert list(budget.axes[0].get_lines()[0].get_xdata()) == [100.0, 200.0, 300.0]
    texts = [t.get_text() for t in conf.axes[0].texts]
    assert "FP\n1\n(16.7%)" in texts and "TP\n5\n(83.3%)" in texts
    for stem in ("fb", "budget", "conf"):
        assert (tmp_path / f"{stem}.pdf").exists()


def test_failure_types_by_trial(tmp_path: Path, captured: list[Any]) -> None:
    counts = {
        1: {"hallucination": 10, "inefficient planning": 20},
        2: {"hallucination": 6, "inefficient planning": 9},
        3: {"hallucination": 5},
    }
    plots.plot_failure_types(counts, tmp_path / "ft", title="ALFWorld")
    (fig,) = captured
    bars = fig.axes[0].patches
    # (trial, bottom, height): each trial's stack, bottom up.
    stacks = sorted((round(b.get_x() + b.get_width() / 2), b.get_y(), b.get_height()) for b in bars)
    assert [(t, round(y), round(h)) for t, y, h in stacks] == [
        (1, 0, 10),
        (1, 10, 20),
        (2, 0, 6),
        (2, 6, 9),
        (3, 0, 5),
        (3, 5, 0),
    ]
    assert len({b.get_hatch() for b in bars}) == 2
    plots.plot_failure_types(counts, tmp_path / "ft_share", normalise=True)
    shares = [b.get_height() for b in captured[-1].axes[0].patches]
    assert shares[0] == pytest.approx(10 / 30) and shares[2] == pytest.approx(1.0)


# Issue 49: figures a paper can use.


def _series_and_intervals(fig: Any) -> list[tuple[Any, Any, list[Any]]]:
    """(axes, curve line, its interval artists) for every curve of ``fig``: a curve's
    line has gid ``series:<label>``, its interval (band, bars, error bars) the gid
    ``interval:<label>`` on the same axes."""
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            gid = str(line.get_gid())
            if gid.startswith("series:"):
                label = gid.removeprefix("series:")
                found = [c for c in ax.collections if c.get_gid() == f"interval:{label}"]
                out.append((ax, line, found))
    return out


def _many(n: int) -> list[dict[str, Any]]:
    return [group(f"s{i}", [0.3 + 0.04 * i, 0.5, 0.6 + 0.02 * i], i, 0) for i in range(n)]


@pytest.mark.parametrize("n", [1, 3, 4, 5, 10])
def test_every_curve_has_its_interval_and_more_than_four_are_small_multiples(
    tmp_path: Path, captured: list[Any], n: int
) -> None:
    groups = _many(n)
    plots.plot_trial_curves(groups, tmp_path / "c")
    plots.plot_success_vs_budget(groups, tmp_path / "b", axis="tokens")
    curves = {
        g["label"]: [
            {"budget": 100.0 * k, "estimate": 0.1 * k, "low": 0.05 * k, "high": 0.12 * k}
            for k in range(8)
        ]
        for g in groups
    }
    plots.plot_pass_at_budget(curves, tmp_path / "p", budget=300.0)
    assert len(captured) == 3
    for fig in captured:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        # Small multiples (one panel per series) above four series, one axes up to four.
        assert len(panels) == (n if n > plots.MAX_OVERLAID else 1)
        pairs = _series_and_intervals(fig)
        assert len(pairs) == n
        for ax, line, intervals in pairs:
            assert len(intervals) == 1, line.get_gid()
            if n > plots.MAX_OVERLAID:
                assert [ln for ln in ax.get_lines() if ln is line] and len(
                    [p for p in pairs if p[0] is ax]
                ) == 1  # one series per panel, the others grey context
            # Steps, never slopes between measured points.
            assert line.get_drawstyle().startswith("steps"), line.get_drawstyle()


def test_trial_curves_are_steps_everywhere(
    tmp_path: Path, captured: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reflexion_bench.analysis.report import plot_trial_curve

    real = plots.save_figure

    def save(fig: Any, path: Path, **kwargs: Any) -> None:  # a run's curve.png, too
        captured.append(fig)
        real(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save_figure", save)

    for n in (1, 4, 10):
        plots.plot_trial_curves(_many(n), tmp_path / f"c{n}")
    summary = {
        "benchmark": "humaneval",
        "strategy": "reflexion",
        "n_tasks": 10,
        "success_at_trial": [0.5, 0.6],
        "solved_by_trial": [0.5, 0.7],
        "success_counts_at_trial": [5, 6],
        "solved_counts_by_trial": [5, 7],
    }
    plot_trial_curve(summary, tmp_path / "curve.png")
    figs = list({id(f): f for f in captured}.values())  # each saved as PNG and PDF
    assert len(figs) == 4
    for fig in figs:
        lines = [ln for _, ln, _ in _series_and_intervals(fig)]
        assert lines
        # The viewer draws trial curves as steps: so does every figure (a task's
        # verdict holds between trials; a slope would draw values never measured).
        assert {ln.get_drawstyle() for ln in lines} == {"steps-mid"}


def test_a_one_trial_run_still_shows_its_interval(tmp_path: Path, captured: list[Any]) -> None:
    plots.plot_trial_curves([group("simple", [0.5], 0, 0)], tmp_path / "c")
    ((_, _, (band,)),) = _series_and_intervals(captured[0])
    xs = [float(x) for x, _ in band.get_paths()[0].vertices]
    assert min(xs) == pytest.approx(0.5) and max(xs) == pytest.approx(1.5)  # the whole trial


def test_legends_use_the_label_map_with_raw_ids_as_fallback(
    tmp_path: Path, captured: list[Any]
) -> None:
    names = plots.labels()
    assert plots.strategy_label("best_of_n") == names["strategies"]["best_of_n"] == "Best-of-n"
    assert plots.strategy_label("no_such_strategy") == "no_such_strategy"
    # A row the report named after its folders keeps them.
    assert plots.strategy_label("retry (run_a, run_b)") == "Retry (run_a, run_b)"
    for ev in ("self_tests", "visible_tests", "oracle", "oracle_verdict", "noisy_oracle"):
        assert plots.evaluator_label(ev) in names["evaluators"].values()
        assert plots.evaluator_label(ev) != ev or ev == "oracle"
    assert plots.evaluator_label("no_such_evaluator") == "no_such_evaluator"
    gs = [
        dict(group("best_of_n", [0.5, 0.6], 0, 0), evaluator="self_tests"),
        dict(group("best_of_n", [0.5, 0.7], 0, 0), evaluator="oracle"),
        dict(group("mystery", [0.5, 0.5], 0, 0), evaluator="self_tests"),
    ]
    plots.plot_trial_curves(gs, tmp_path / "c")
    plots.plot_fix_break(gs, tmp_path / "fb")
    legend = [t.get_text() for t in captured[0].legends[0].get_texts()]
    # Evaluators named where the rows differ in evaluator; the unknown id as it is.
    assert legend[0].startswith("Best-of-n, self-tests (n=10)")
    assert legend[1].startswith("Best-of-n, oracle (hidden tests) (n=10)")
    assert legend[2].startswith("mystery, self-tests (n=10)")
    ticks = [t.get_text() for t in captured[1].axes[0].get_xticklabels()]
    assert ticks[0] == "Best-of-n, self-tests" and ticks[2] == "mystery, self-tests"
