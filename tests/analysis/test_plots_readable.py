"""Plots a reader can trust: CI bands as steps over whole trials, overlapping series
kept apart, and a budget plot in dollars that says when nothing cost anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from reflexion_bench.analysis import plots
from tests.analysis.test_plots import GROUPS, group


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    figs: list[Any] = []
    real_save = plots._save

    def save(fig: Any, stem: Path) -> list[Path]:
        figs.append(fig)
        return real_save(fig, stem)

    monkeypatch.setattr(plots, "_save", save)
    monkeypatch.setattr(plt, "close", lambda *_: None)
    return figs


def test_ci_bands_are_flat_over_each_trial(tmp_path: Path, captured: list[Any]) -> None:
    plots.plot_trial_curves([GROUPS[0]], tmp_path / "c")
    (band,) = captured[0].axes[0].collections
    verts = {(round(float(x), 3), round(float(y), 3)) for x, y in band.get_paths()[0].vertices}
    # Each trial's bounds are held flat over it and change in one vertical step half-way
    # to the next trial: at x = 1.5 the upper edge goes straight from trial 1's 0.6 to
    # trial 2's 0.8 (an interpolated band has no vertex there, only a slope).
    assert {(1.5, 0.6), (1.5, 0.8)} <= verts
    assert {(2.5, 0.8), (2.5, 0.9)} <= verts
    assert {(1.5, 0.4), (1.5, 0.6)} <= verts  # the lower edge too


def test_identical_series_stay_distinguishable(tmp_path: Path, captured: list[Any]) -> None:
    same = [group("a", [0.0, 0.0, 1.0], 0, 0), group("b", [0.0, 0.0, 1.0], 0, 0)]
    plots.plot_trial_curves(same, tmp_path / "c")
    a, b = captured[0].axes[0].get_lines()
    # Side by side, not on top of each other; one filled and one hollow marker.
    assert all(xa != xb for xa, xb in zip(a.get_xdata(), b.get_xdata(), strict=True))
    assert max(abs(xa - round(xa)) for xa in a.get_xdata()) <= 0.1
    assert a.get_markerfacecolor() != b.get_markerfacecolor()


def test_budget_in_dollars_with_no_cost_says_so(tmp_path: Path, captured: list[Any]) -> None:
    free = [dict(g, spend_curves={"dollars": [0.0, 0.0, 0.0]}) for g in GROUPS]
    plots.plot_success_vs_budget(free, tmp_path / "b", axis="dollars")
    ax = captured[0].axes[0]
    assert ax.get_lines() == []  # no vertical smear at $0
    assert any("no cost" in t.get_text() for t in ax.texts)
    paid = [dict(g, spend_curves={"dollars": [0.0, 0.01, 0.02]}) for g in GROUPS]
    plots.plot_success_vs_budget(paid, tmp_path / "b2", axis="dollars")
    assert len(captured[1].axes[0].get_lines()) == 3


def pareto_points() -> list[dict[str, Any]]:
    """Eight runs crowded at similar costs, two of them the same run (one marker)."""

    def pt(name: str, cost: float, acc: float, front: bool = False) -> dict[str, Any]:
        return {
            "strategy": name,
            "cost": cost,
            "accuracy": acc,
            "low": acc - 0.1,
            "high": acc + 0.1,
            "on_front": front,
            "answer_key": "clean",
        }

    return [
        pt("self_refine", 830.0, 0.75, True),
        pt("retry", 1878.2, 0.80),
        pt("best_of_n", 1878.2, 0.80),  # the same run twice: one marker, one label
        pt("retry_escalate", 1790.3, 0.80, True),
        pt("raw_log", 2039.3, 0.675),
        pt("reflexion", 2207.9, 0.675),
        pt("irrelevant_text", 2299.7, 0.675),
        pt("wrong_reflection", 2295.6, 0.66),
    ]


def test_pareto_names_each_run_once_and_prints_nothing_over_the_data(
    tmp_path: Path, captured: list[Any]
) -> None:
    points = pareto_points()
    plots.plot_pareto(points, tmp_path / "p")
    fig = captured[0]
    # Named in the legend below the axes (labels beside markers overlapped as soon as
    # runs crowded), the same run twice as one entry, by the names of configs/labels.yaml.
    assert [t for t in fig.axes[0].texts if t.get_text()] == []
    names = [t.get_text().removesuffix(" (frontier)") for t in fig.legends[0].get_texts()]
    assert sorted(names) == sorted(
        [
            "Self-Refine",
            "Best-of-n = Retry",
            "Retry, escalating",
            "Raw log",
            "Reflexion",
            "Irrelevant text",
            "Wrong reflection",
            "Pareto frontier",
        ]
    )
