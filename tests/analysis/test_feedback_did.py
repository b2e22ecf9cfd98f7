"""The feedback-reliability study's statistics (issue 48): the difference in differences of
Reflexion's gain over retry between in-loop evaluators and the dose-response, on
synthetic run folders laid out as the study lays them out
(``<benchmark>/<evaluator>/<strategy>``, tests/analysis/feedback_runs.py), read as real
runs are.

Each task's verdict at the budget is set by the test; every expected number below is
computed here from those verdicts (brute force where it is a p-value), never by the code
under test."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reflexion_bench.analysis import plots
from reflexion_bench.analysis.feedback_did import did_statistics, dose_order, trend_test
from reflexion_bench.analysis.report import (
    build_comparison,
    refresh_readme_blocks,
    write_comparison,
)
from reflexion_bench.analysis.tables import render
from tests.analysis.feedback_runs import task_ids, verdicts, write_arm

RESAMPLES = 500  # quick on two shared cores; the report's default is 10,000


def _did_row(report: dict[str, Any], bench: str, evaluator: str) -> dict[str, Any]:
    rows = [
        r
        for r in report["feedback"]["did"]
        if r["benchmark"] == bench and r["evaluator"] == evaluator
    ]
    assert len(rows) == 1, [(r["benchmark"], r["evaluator"]) for r in report["feedback"]["did"]]
    return rows[0]


# --------------------------------------------------------------------------- DiD


def _four_arms(root: Path, bench: str, tasks: list[str], cells: dict[str, list[bool]]) -> None:
    """``cells``: per "<evaluator>/<strategy>" a verdict per task (a task whose
    verdict is None is left out of that run)."""
    for key, per_task in cells.items():
        evaluator, strategy = key.split("/")
        v = {t: x for t, x in zip(tasks, per_task, strict=True) if x is not None}
        write_arm(root, bench, evaluator, strategy, v)


def test_did_is_the_mean_per_task_contrast_at_the_budget_on_tasks_of_all_four_arms(
    tmp_path: Path,
) -> None:
    tasks = task_ids(40)
    rng = np.random.default_rng(7)
    cells: dict[str, list[Any]] = {
        k: [bool(x) for x in rng.random(40) < p]
        for k, p in (
            ("oracle/reflexion", 0.7),
            ("oracle/retry", 0.5),
            ("self_tests/reflexion", 0.35),
            ("self_tests/retry", 0.5),
        )
    }
    cells["oracle/retry"][5] = None  # task T005 has no oracle retry run: left out
    _four_arms(tmp_path, "humaneval", tasks, cells)
    report = build_comparison([tmp_path], n_resamples=RESAMPLES)
    row = _did_row(report, "humaneval", "oracle")
    keep = [i for i in range(40) if i != 5]
    ro, to, rs, ts = (
        np.array([float(cells[k][i]) for i in keep])
        for k in ("oracle/reflexion", "oracle/retry", "self_tests/reflexion", "self_tests/retry")
    )
    d = (ro - to) - (rs - ts)
    assert row["n"] == 39
    assert row["did"] == pytest.approx(d.mean())
    assert row["nonzero"] == int(np.count_nonzero(d))
    assert row["diff_evaluator"]["estimate"] == pytest.approx((ro - to).mean())
    assert row["diff_reference"]["estimate"] == pytest.approx((rs - ts).mean())
    assert row["low"] <= row["did"] <= row["high"]
    # The inner intervals are the paired (Newcombe) ones of the strategies table.
    assert row["diff_evaluator"]["low"] < row["diff_evaluator"]["estimate"]
    # What the tasks can detect: (z_.975 + z_.8) sd(d) / sqrt(n), here by hand.
    assert row["detectable"] == pytest.approx((1.959964 + 0.841621) * d.std(ddof=1) / math.sqrt(39))
    assert row["reference_evaluator"] == "self_tests"


def _brute_force_sign_flip(d: np.ndarray) -> float:
    observed = abs(int(d.sum()))
    hits = sum(
        abs(int((np.array(signs) * d).sum())) >= observed
        for signs in itertools.product((-1, 1), repeat=d.size)
    )
    return hits / 2**d.size


def test_did_p_value_is_the_exact_sign_flip_test(tmp_path: Path) -> None:
    # Twelve tasks with contrasts from -2 to 2: every one of the 4,096 sign assignments
    # enumerated here.
    cells = {
        "oracle/reflexion": [1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0],
        "oracle/retry": [0, 0, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1],
        "self_tests/reflexion": [0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0],
        "self_tests/retry": [1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0],
    }
    tasks = task_ids(12)
    _four_arms(tmp_path, "humaneval", tasks, {k: [bool(x) for x in v] for k, v in cells.items()})
    x = {k: np.array(v) for k, v in cells.items()}
    d = (x["oracle/reflexion"] - x["oracle/retry"]) - (
        x["self_tests/reflexion"] - x["self_tests/retry"]
    )
    assert set(d.tolist()) >= {-1, 1, 2}  # a case with a 2 and both signs
    report = build_comparison([tmp_path], n_resamples=RESAMPLES)
    row = _did_row(report, "humaneval", "oracle")
    assert row["p_value"] == pytest.approx(_brute_force_sign_flip(d))
    assert row["did"] == pytest.approx(d.mean())


def test_did_interval_covers_a_known_difference_and_pools_benchmarks(tmp_path: Path) -> None:
    """Tasks drawn with known probabilities: the true DiD is (0.7 - 0.5) - (0.4 - 0.5) =
    0.3 on each benchmark; each row's interval and the pooled one hold it."""
    rng = np.random.default_rng(48)
    sizes = {"humaneval": 164, "mbpp": 200}
    drawn: dict[str, dict[str, np.ndarray]] = {}
    for bench, n in sizes.items():
        drawn[bench] = {}
        for key, p in (
            ("oracle/reflexion", 0.7),
            ("oracle/retry", 0.5),
            ("self_tests/reflexion", 0.4),
            ("self_tests/retry", 0.5),
        ):
            drawn[bench][key] = rng.random(n) < p
        _four_arms(
            tmp_path, bench, task_ids(n), {k: [bool(v) for v in a] for k, a in drawn[bench].items()}
        )
    report = build_comparison([tmp_path], n_resamples=RESAMPLES)
    ds = []
    for bench in sizes:
        row = _did_row(report, bench, "oracle")
        x = {k: a.astype(float) for k, a in drawn[bench].items()}
        d = (x["oracle/reflexion"] - x["oracle/retry"]) - (
            x["self_tests/reflexion"] - x["self_tests/retry"]
        )
        ds.append(d)
        assert row["did"] == pytest.approx(d.mean())
        assert row["low"] <= 0.3 <= row["high"]
        assert row["role"] == "secondary"
    pooled = _did_row(report, "pooled", "oracle")
    all_d = np.concatenate(ds)
    assert pooled["n"] == 364
    assert pooled["n_by_benchmark"] == sizes
    assert pooled["did"] == pytest.approx(all_d.mean())
    assert pooled["low"] <= 0.3 <= pooled["high"]
    # Narrower than either benchmark's: more tasks.
    widths = [r["high"] - r["low"] for r in report["feedback"]["did"]]
    assert pooled["high"] - pooled["low"] == min(widths)
    # The pooled oracle row is the one confirmatory test; the others are Holm-adjusted
    # together (by hand: sorted p times the number left, running maximum).
    assert pooled["role"] == "confirmatory" and pooled["p_holm"] is None
    secondary = [r for r in report["feedback"]["did"] if r is not pooled]
    ps = sorted((r["p_value"], id(r)) for r in secondary)
    running = 0.0
    for i, (p, rid) in enumerate(ps):
        running = max(running, min(1.0, p * (len(ps) - i)))
        (r,) = [r for r in secondary if id(r) == rid]
        assert r["p_holm"] == pytest.approx(running)


def test_a_contrast_that_never_differs_has_an_exact_interval_not_a_point() -> None:
    """Every d_t = 0 (the four arms agree on each task): the bootstrap would give the
    point 0; the interval is the exact bound instead, +-2 u with u the one-sided 97.5%
    Clopper-Pearson bound on a share of 0 of n."""
    n = 50
    x = np.tile([1.0, 1.0, 0.0, 0.0], (n, 1))
    x[::2] = [0.0, 0.0, 1.0, 1.0]
    got = did_statistics([x], n_resamples=RESAMPLES)
    u = 1 - 0.025 ** (1 / n)
    assert got["did"] == 0 and got["p_value"] == 1.0 and got["detectable"] is None
    assert got["low"] == pytest.approx(-2 * u) and got["high"] == pytest.approx(2 * u)


# --------------------------------------------------------------------------- dose


def _brute_force_trend(y: np.ndarray) -> float:
    """Every assignment of each task's values to the arms (m! per task), enumerated."""
    m = y.shape[1]
    w = np.arange(m) - (m - 1) / 2
    observed = abs(float((y @ w).sum()))
    per_task = [
        [float(np.array(row)[list(p)] @ w) for p in itertools.permutations(range(m))] for row in y
    ]
    hits = total = 0
    for combo in itertools.product(*per_task):
        total += 1
        hits += abs(sum(combo)) >= observed - 1e-9
    return hits / total


def test_trend_test_is_the_exact_permutation_test() -> None:
    y = np.array([[-1, 0, 1, 1], [0, 0, 1, 0], [-1, -1, 0, 1], [1, 0, 0, 1]])
    got = trend_test(y)
    assert got["p_value"] == pytest.approx(_brute_force_trend(y))
    # The slope: least squares of the arms' mean differences on their ranks.
    means = y.mean(axis=0)
    assert got["slope"] == pytest.approx(np.polyfit(np.arange(4), means, 1)[0])
    flat = np.array([[1, 1, 1], [0, 0, 0], [-1, -1, -1]])
    assert trend_test(flat)["p_value"] == 1.0


def test_dose_order_follows_designed_reliability() -> None:
    arms = [
        "oracle",
        "visible_tests",
        "noisy_oracle(fn=0.3,fp=0)",
        "self_tests",
        "noisy_oracle(fn=0.6,fp=0)",
        "noisy_oracle(settings unknown)",
    ]
    ordered, apart = dose_order(arms)
    assert ordered == [
        "self_tests",
        "noisy_oracle(fn=0.6,fp=0)",
        "noisy_oracle(fn=0.3,fp=0)",
        "oracle",
    ]
    assert apart == ["noisy_oracle(settings unknown)", "visible_tests"]


@pytest.fixture(scope="module")
def dose_study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """HumanEval (20 tasks) under five evaluators; reflexion - retry grows along the
    designed order (-4, -1, +2, +6 tasks; visible tests +1); each arm's in-loop
    verdicts reject a known number of its hidden passes and pass a known number of its
    hidden failures at trial 1."""
    root = tmp_path_factory.mktemp("dose")
    tasks = task_ids(20)
    arms = {
        # folder: (evaluator, settings, reflexion passes, retry passes, FN, FP at trial 1)
        "self_tests": ("self_tests", None, 6, 10, 3, 4),
        "noisy_oracle_fn0.6": ("noisy_oracle", {"fn_rate": 0.6, "fp_rate": 0.0}, 9, 10, 10, 0),
        "noisy_oracle_fn0.3": ("noisy_oracle", {"fn_rate": 0.3, "fp_rate": 0.0}, 12, 10, 6, 0),
        "oracle": ("oracle", None, 16, 10, 0, 0),
        "visible_tests": ("visible_tests", None, 11, 10, 2, 2),
    }
    expected: dict[str, Any] = {}
    for folder, (evaluator, settings, refl, retry, fn, fp) in arms.items():
        counts = {"fn": 0, "tp": 0, "fp": 0, "tn": 0}
        for strategy, passes in (("reflexion", refl), ("retry", retry)):
            v = verdicts(tasks, range(passes))
            # In-loop verdicts: the first `fn` hidden passes called failures, the first
            # `fp` hidden failures called passes (per run).
            own = dict(v)
            passing = [t for t in tasks if v[t]]
            failing = [t for t in tasks if not v[t]]
            for t in passing[:fn]:
                own[t] = False
            for t in failing[:fp]:
                own[t] = True
            counts["fn"] += min(fn, len(passing))
            counts["tp"] += len(passing) - min(fn, len(passing))
            counts["fp"] += min(fp, len(failing))
            counts["tn"] += len(failing) - min(fp, len(failing))
            write_arm(
                root,
                "humaneval",
                folder,
                strategy,
                v,
                evaluator=evaluator,
                settings=settings,
                in_loop=own,
            )
        expected[folder] = {
            "diff": (refl - retry) / 20,
            "fn_rate": counts["fn"] / (counts["fn"] + counts["tp"]),
            "fp_rate": counts["fp"] / (counts["fp"] + counts["tn"]),
        }
    return root, expected


@pytest.fixture(scope="module")
def dose_report(dose_study: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    return build_comparison([dose_study[0]], n_resamples=RESAMPLES)


def test_dose_rows_are_in_order_with_measured_error_rates(
    dose_study: tuple[Path, dict[str, Any]], dose_report: dict[str, Any]
) -> None:
    _, expected = dose_study
    rows = dose_report["feedback"]["dose"]
    names = {
        "self_tests": "self_tests",
        "noisy_oracle(fn=0.6,fp=0)": "noisy_oracle_fn0.6",
        "noisy_oracle(fn=0.3,fp=0)": "noisy_oracle_fn0.3",
        "oracle": "oracle",
        "visible_tests": "visible_tests",
    }
    assert [(r["evaluator"], r["order"]) for r in rows] == [
        ("self_tests", 1),
        ("noisy_oracle(fn=0.6,fp=0)", 2),
        ("noisy_oracle(fn=0.3,fp=0)", 3),
        ("oracle", 4),
        ("visible_tests", None),
    ]
    for r in rows:
        e = expected[names[r["evaluator"]]]
        assert r["n"] == 20
        assert r["diff"]["estimate"] == pytest.approx(e["diff"])
        assert r["diff"]["low"] <= e["diff"] <= r["diff"]["high"]
        assert r["fn_rate"] == pytest.approx(e["fn_rate"])
        assert r["fp_rate"] == pytest.approx(e["fp_rate"])
    (trend,) = dose_report["feedback"]["trends"]
    assert trend["arms"] == [r["evaluator"] for r in rows[:4]]
    y = np.array(
        [
            [int(i < p) - int(i < 10) for p in (6, 9, 12, 16)]  # reflexion - retry per task
            for i in range(20)
        ]
    )
    assert trend["p_value"] == pytest.approx(_brute_force_trend_fast(y))
    assert trend["slope"] == pytest.approx(np.polyfit(np.arange(4), y.mean(axis=0), 1)[0])
    # The DiD table has every evaluator against self-tests, visible tests too.
    assert {r["evaluator"] for r in dose_report["feedback"]["did"]} == set(names) - {"self_tests"}


def _brute_force_trend_fast(y: np.ndarray) -> float:
    """:func:`_brute_force_trend` for many tasks: the permutations of identical rows
    are enumerated once per row and combined by exact enumeration of the sum's law
    (a dictionary of sums), no convolution shortcut of the code under test."""
    m = y.shape[1]
    w = 2 * np.arange(m) - (m - 1)
    observed = abs(int((y @ w).sum()))
    law: dict[int, float] = {0: 1.0}
    for row in y:
        values = [int(np.array(row)[list(p)] @ w) for p in itertools.permutations(range(m))]
        step: dict[int, float] = {}
        for s, q in law.items():
            for v in values:
                step[s + v] = step.get(s + v, 0.0) + q / len(values)
        law = step
    return sum(q for s, q in law.items() if abs(s) >= observed)


def test_the_fast_brute_force_agrees_with_full_enumeration() -> None:
    y = np.array([[-1, 0, 1, 1], [0, 0, 1, 0], [-1, -1, 0, 1], [1, 0, 0, 1]])
    assert _brute_force_trend_fast(y) == pytest.approx(_brute_force_trend(y))


# --------------------------------------------------------------------------- report


@pytest.fixture
def only_new_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """write_comparison without the figures other tests check (minutes on a loaded
    machine): the tables, the manifest and the dose figure only."""
    from reflexion_bench.analysis import budget_curve

    monkeypatch.setattr(plots, "write_plots", lambda *a, **k: [])
    monkeypatch.setattr(budget_curve, "plot_budget_curves", lambda *a, **k: [])


def test_report_writes_the_tables_figure_and_readme_blocks(
    dose_study: tuple[Path, dict[str, Any]],
    dose_report: dict[str, Any],
    tmp_path: Path,
    only_new_figures: None,
) -> None:
    _, expected = dose_study
    out = tmp_path / "study" / "report"
    readme = tmp_path / "study" / "README.md"
    readme.parent.mkdir()
    readme.write_text(
        "# study\n\n<!-- report:did -->\nold\n<!-- /report -->\n\n"
        "<!-- report:dose -->\nold\n<!-- /report -->\n\n"
        "<!-- report:feedback_did columns=evaluator,n,did where=evaluator:oracle -->\n"
        "old\n<!-- /report -->\n"
    )
    written = write_comparison(dose_report, out)
    names = {p.relative_to(out).as_posix() for p in written}
    assert {"table_feedback_did.csv", "table_feedback_dose.csv"} <= names
    assert "figures/feedback_dose_humaneval_mock.png" in names
    assert "figures/feedback_dose_humaneval_mock.pdf" in names
    assert refresh_readme_blocks(dose_report, readme)
    text = readme.read_text()
    oracle_did = 100 * (expected["oracle"]["diff"] - expected["self_tests"]["diff"])
    row = _did_row(dose_report, "humaneval", "oracle")
    sentence = (
        f"**HumanEval, oracle (hidden tests) vs self-tests**: DiD {oracle_did:+.1f} points"
        f" [{100 * row['low']:+.1f}, {100 * row['high']:+.1f}], p = {row['p_value']:.3g}"
    )
    assert sentence in text
    assert "n = 20 tasks (detectable: " in text
    # The noisy arms by their labels.yaml name and their rates.
    assert "noisy oracle (fn=0.3, fp=0) vs self-tests" in text
    assert re.search(r"least to most reliable feedback: self-tests -20\.0 \[", text)
    assert "trend along the order" in text and "exact permutation p = " in text
    # The table block, one row kept.
    assert f"| oracle | 20 | {oracle_did:.1f} [" in text
    md = (out / "report.md").read_text()
    assert "### Feedback reliability: difference in differences" in md
    assert "percentile bootstrap" in md and "sign-flip" in md


def test_the_dose_figure_names_arms_by_the_label_map(
    dose_report: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reflexion_bench.analysis.feedback_did import plot_dose

    figs: list[Any] = []
    real = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, stem: figs.append(fig) or real(fig, stem))
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "close", lambda *_: None)
    plot_dose(dose_report["feedback"], tmp_path)
    (fig,) = figs
    # One row per arm, top to bottom from the least reliable, the arm apart last.
    ticks = [t.get_text().split("\n")[0] for t in fig.axes[0].get_yticklabels()]
    assert ticks == [
        "self-tests",
        "noisy oracle (fn=0.6, fp=0)",
        "noisy oracle (fn=0.3, fp=0)",
        "oracle (hidden tests)",
        "visible tests",
    ]


def test_a_report_of_one_evaluator_has_no_feedback_tables(
    tmp_path: Path, only_new_figures: None
) -> None:
    tasks = task_ids(10)
    for strategy, ones in (("reflexion", range(4)), ("retry", range(6))):
        write_arm(tmp_path / "runs", "humaneval", "self_tests", strategy, verdicts(tasks, ones))
    report = build_comparison([tmp_path / "runs"], n_resamples=RESAMPLES)
    assert "feedback" not in report
    out = tmp_path / "report"
    names = {p.name for p in write_comparison(report, out)}
    assert not any("feedback" in n for n in names)
    assert "Feedback reliability" not in (out / "report.md").read_text()
    # Asked for by name, the table says why it is empty.
    assert "two in-loop evaluators" in render(report, "md", ["feedback_did"])
