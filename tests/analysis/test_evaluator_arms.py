"""In-loop evaluator arms (issue 48): a noisy oracle's noise rates are part of its arm,
so runs at two rates are never pooled or compared as one (group_runs, the strategies
table, budget curves, the self-tests table), and figures name arms and strategies by
configs/labels.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis import plots
from reflexion_bench.analysis.report import build_comparison
from reflexion_bench.analysis.runs import (
    arm_settings,
    evaluator_arm,
    find_run_dirs,
    group_runs,
    load_run,
)
from reflexion_bench.analysis.tables import tables
from tests.analysis.feedback_runs import task_ids, verdicts, write_arm

RESAMPLES = 500


def test_a_noisy_oracle_arm_is_named_by_its_noise_rates() -> None:
    def config(fn: float, fp: float) -> dict[str, Any]:
        return {"evaluator": {"name": "noisy_oracle", "fn_rate": fn, "fp_rate": fp}}

    assert evaluator_arm("noisy_oracle", config(0.3, 0.0)) == "noisy_oracle(fn=0.3,fp=0)"
    assert evaluator_arm("noisy_oracle", config(0.6, 0.1)) == "noisy_oracle(fn=0.6,fp=0.1)"
    # Without a config naming them the settings are unknown: never pooled with known ones.
    assert evaluator_arm("noisy_oracle", None) == "noisy_oracle(settings unknown)"
    # Evaluators whose settings do not make another arm, and logs naming none.
    assert evaluator_arm("oracle", config(0.3, 0.0)) == "oracle"
    assert evaluator_arm(None, None) is None
    assert arm_settings("noisy_oracle(fn=0.3,fp=0)") == ("noisy_oracle", {"fn": 0.3, "fp": 0.0})
    assert arm_settings("oracle") == ("oracle", None)
    assert arm_settings("noisy_oracle(settings unknown)") == ("noisy_oracle", None)
    assert plots.evaluator_label("noisy_oracle(fn=0.3,fp=0)") == "noisy oracle (fn=0.3, fp=0)"


@pytest.fixture(scope="module")
def two_rates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HumanEval, 30 tasks: retry and reflexion under self-tests and under noisy oracles
    at fn 0.3 and 0.6 (one evaluator name, ``noisy_oracle``, in every trial record).
    Reflexion - retry: +10 tasks at fn 0.3, -5 at fn 0.6, 0 under self-tests."""
    root = tmp_path_factory.mktemp("arms")
    tasks = task_ids(30)
    design = {
        ("noisy_oracle_fn0.3", 0.3): (range(0, 20), range(0, 10)),
        ("noisy_oracle_fn0.6", 0.6): (range(0, 5), range(0, 10)),
    }
    for (folder, fn), (refl, retry) in design.items():
        for strategy, ones in (("reflexion", refl), ("retry", retry)):
            write_arm(
                root,
                "humaneval",
                folder,
                strategy,
                verdicts(tasks, ones),
                evaluator="noisy_oracle",
                settings={"fn_rate": fn, "fp_rate": 0.0},
            )
    for strategy, ones in (("reflexion", range(0, 12)), ("retry", range(0, 12))):
        write_arm(root, "humaneval", "self_tests", strategy, verdicts(tasks, ones))
    return root


@pytest.fixture(scope="module")
def two_rates_report(two_rates: Path) -> dict[str, Any]:
    return build_comparison([two_rates], n_resamples=RESAMPLES)


def test_noisy_oracles_at_two_noise_rates_are_two_arms_everywhere(
    two_rates: Path, two_rates_report: dict[str, Any]
) -> None:
    groups = group_runs([load_run(p) for p in find_run_dirs([two_rates])])
    arms = {(g.strategy, g.evaluator) for g in groups}
    assert len(groups) == 6 and len(arms) == 6
    labels = {g.name for g in groups}
    assert "retry (noisy_oracle(fn=0.3,fp=0))" in labels
    assert "retry (noisy_oracle(fn=0.6,fp=0))" in labels
    assert "retry (self_tests)" in labels

    report = two_rates_report
    # The strategies table pairs each reflexion with the retry of its own arm.
    rows = {r["strategy"]: r for r in report["strategies"]["rows"]}
    for fn, expected in (("0.3", 10 / 30), ("0.6", -5 / 30)):
        cmp = rows[f"reflexion (noisy_oracle(fn={fn},fp=0))"]["vs_retry"]
        assert cmp["diff"]["estimate"] == pytest.approx(expected)
        assert cmp["n_common"] == 30
    assert rows["reflexion (self_tests)"]["vs_retry"]["diff"]["estimate"] == 0
    # Budget curves: one cluster per arm, each comparing within it.
    curves = report["budget_curves"]["curves"]
    assert {c["evaluator"] for c in curves} == {
        "self_tests",
        "noisy_oracle(fn=0.3,fp=0)",
        "noisy_oracle(fn=0.6,fp=0)",
    }
    for c in curves:
        assert c["strategy"].endswith(f"({c['evaluator']})")
        assert c["reference"].endswith(f"({c['evaluator']})")
    # The self-tests table names each arm.
    evaluators = set(tables(report)["self_tests"]["evaluator"])
    assert {"noisy_oracle(fn=0.3,fp=0)", "noisy_oracle(fn=0.6,fp=0)"} <= evaluators
    # So do the DiD rows, one per noisy arm, each with its own difference.
    did = {r["evaluator"]: r for r in report["feedback"]["did"]}
    assert did["noisy_oracle(fn=0.3,fp=0)"]["did"] == pytest.approx(10 / 30)
    assert did["noisy_oracle(fn=0.6,fp=0)"]["did"] == pytest.approx(-5 / 30)


def test_budget_curve_legends_and_titles_use_the_label_map(
    two_rates_report: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reflexion_bench.analysis.budget_curve import plot_budget_curves

    figs: list[Any] = []
    real = plots.save_figure

    def save(fig: Any, path: Path, **kw: Any) -> None:
        figs.append(fig)
        real(fig, path, **kw)

    monkeypatch.setattr(plots, "save_figure", save)
    keep = {"self_tests", "noisy_oracle(fn=0.3,fp=0)"}
    section = dict(two_rates_report["budget_curves"])
    section["curves"] = [c for c in section["curves"] if c["evaluator"] in keep]
    written = plot_budget_curves(section, tmp_path)
    # Human names (configs/labels.yaml), the arm said once, in the title.
    legends = {t.get_text() for fig in figs for leg in fig.legends for t in leg.get_texts()}
    assert legends == {"Reflexion - Retry"}
    ylabels = {ax.get_ylabel() for fig in figs for ax in fig.axes}
    assert ylabels == {"pass@1 - Retry (points)"}
    titles = [" ".join(ax.get_title().split()) for fig in figs for ax in fig.axes]
    assert any("evaluator: noisy oracle (fn=0.3, fp=0)" in t for t in titles)
    assert {p.name for p in written} >= {
        "budget_curve_tokens_humaneval_mock_noisy_oracle-fn-0.3-fp-0.png",
        "budget_curve_tokens_humaneval_mock.png",
    }


def test_runs_of_one_noisy_arm_with_disjoint_tasks_pool_and_other_rates_do_not(
    tmp_path: Path,
) -> None:
    paths = [
        write_arm(
            tmp_path / name,
            "humaneval",
            "n",
            "retry",
            verdicts(task_ids(5, name), [0]),
            evaluator="noisy_oracle",
            settings={"fn_rate": fn, "fp_rate": 0.0},
        )
        for name, fn in (("A", 0.3), ("B", 0.3), ("C", 0.6))  # A and B: shards of one arm
    ]
    groups = group_runs([load_run(p) for p in paths])
    assert sorted(len(g.runs) for g in groups) == [1, 2]
    assert {g.evaluator for g in groups} == {
        "noisy_oracle(fn=0.3,fp=0)",
        "noisy_oracle(fn=0.6,fp=0)",
    }


def test_rows_are_named_by_arm_where_a_benchmark_has_several(tmp_path: Path) -> None:
    """A strategy run under one evaluator only (the study's wrong_reflection under the
    oracle) is named by its arm too, where its benchmark's rows span several arms; a
    benchmark of one arm keeps the plain names."""
    tasks = task_ids(4)
    write_arm(tmp_path, "humaneval", "self_tests", "retry", verdicts(tasks, [0]))
    write_arm(tmp_path, "humaneval", "oracle", "retry", verdicts(tasks, [0]))
    write_arm(tmp_path, "humaneval", "oracle", "wrong_reflection", verdicts(tasks, [0]))
    write_arm(tmp_path, "mbpp", "self_tests", "retry", verdicts(tasks, [0]))
    write_arm(tmp_path, "mbpp", "self_tests", "wrong_reflection", verdicts(tasks, [0]))
    groups = group_runs([load_run(p) for p in find_run_dirs([tmp_path])])
    names = {(g.benchmark, g.name) for g in groups}
    assert names == {
        ("humaneval", "retry (self_tests)"),
        ("humaneval", "retry (oracle)"),
        ("humaneval", "wrong_reflection (oracle)"),
        ("mbpp", "retry"),
        ("mbpp", "wrong_reflection"),
    }
