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
