"""Equal-budget analysis: pass@1 resampled at a budget from call records, the Pareto
frontier, Holm, and the `strategies` table and figures built from real run folders
(toy benchmark, scripted model, real runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.equal_budget import (
    holm,
    pareto_front,
    task_budget_points,
    verdicts_at_budget,
)
from reflexion_bench.analysis.report import build_comparison, write_comparison
from reflexion_bench.analysis.tables import render
from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.strategies.base import Strategy
from tests.strategies.toyrun import run_toy


def call(role: str, p: int, c: int) -> dict[str, Any]:
    return {"role": role, "prompt_tokens": p, "completion_tokens": c, "cost_usd": 0.0}


def trial(task: str, k: int, passed: bool, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"task_id": task, "trial": k, "hidden": {"passed": passed}, "model_calls": calls}


def test_budget_points_charge_earlier_trials_fully_and_this_trial_up_to_its_verdict() -> None:
    recs = [
        # trial 1: actor 100 + self-test 50 (verdict at 150), then a reflection of 70
        trial(
            "t",
            1,
            False,
            [call("actor", 80, 20), call("self_test", 30, 20), call("reflector", 50, 20)],
        ),
        # trial 2: verdict at 220 + 100 = 320
        trial("t", 2, True, [call("actor", 90, 10), call("reflector", 40, 10)]),
    ]
    pts = task_budget_points(recs, "tokens")
    assert pts == {"t": [(150.0, False), (320.0, True)]}
    assert verdicts_at_budget(pts, 149) == {"t": False}  # nothing paid for: fails
    assert verdicts_at_budget(pts, 319) == {"t": False}  # trial 1's verdict
    assert verdicts_at_budget(pts, 320) == {"t": True}
    assert verdicts_at_budget(pts, 10**6) == {"t": True}
    assert task_budget_points(recs, "calls") == {"t": [(2.0, False), (4.0, True)]}
    with pytest.raises(ValueError, match="wall"):
        task_budget_points(recs, "wall")


def test_pareto_front_keeps_only_undominated_points() -> None:
    pts = [(100.0, 0.5), (200.0, 0.5), (150.0, 0.6), (300.0, 0.7), (90.0, 0.2), (300.0, 0.65)]
    # (200, .5) is dominated by (150, .6); (300, .65) by (300, .7)
    assert pareto_front(pts) == [4, 0, 2, 3]


def test_holm_matches_the_textbook_step_down() -> None:
    # sorted p: .01 (x3 = .03), .03 (x2 = .06), .04 (x1 = .04 -> monotone .06)
    assert holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert holm([]) == []


async def test_strategies_table_and_figures_from_real_run_folders(tmp_path: Path) -> None:
    words = ["alpha", "beta", "gamma", "delta"]
    root = tmp_path / "runs"
    for strategy in (
        Strategy(name="retry", memory_content="none", max_trials=4),
        Strategy(name="reflexion", memory_content="reflection", max_trials=4),
        Strategy(name="raw_log", memory_content="raw_log", max_trials=4),
    ):
        await run_toy(root / strategy.name, strategy, words=words, budget=TaskBudget(tokens=60))
    report = build_comparison([root], n_resamples=200)
    section = report["strategies"]
    rows = {r["strategy"]: r for r in section["rows"]}
    assert set(rows) == {"retry", "reflexion", "raw_log"}
    assert all(r["budget"] == 60.0 and r["n"] == 4 for r in rows.values())
    assert "vs_retry" not in rows["retry"] and "vs_reflexion" in rows["retry"]
    vs = rows["raw_log"]["vs_retry"]
    assert vs["n_common"] == 4 and 0.0 <= vs["p"] <= vs["p_holm"] <= 1.0
    # Every task stopped for a logged reason, and the budget was honoured.
    for r in rows.values():
        assert sum(r["stop_reasons"].values()) == 4
        assert set(r["stop_reasons"]) <= {"self_test_pass", "max_trials", "budget.tokens"}
    # The scripted reflexion run reaches the budget on beta (memory makes prompts long):
    # its verdict at the budget is read before the overshooting trial.
    assert rows["reflexion"]["stop_reasons"].get("budget.tokens") == 1
    assert (
        rows["reflexion"]["pass_at_budget"]["estimate"]
        < rows["reflexion"]["final_as_run"]["estimate"]
    )
    md = render(report, "md", ["strategies"])
    assert "Holm p vs retry" in md and "pass@1 at budget" in md
    written = write_comparison(report, tmp_path / "report")
    names = {p.name for p in written}
    assert any(n.startswith("pareto_calls_") or n.startswith("pareto_tokens_") for n in names)
    assert any(n.startswith("pass_at_budget_") for n in names)
    assert "table_strategies.csv" in names


def test_min_discordant_is_the_exact_binomial_threshold() -> None:
    from reflexion_bench.analysis.equal_budget import min_discordant

    # two-sided exact p of d out of d discordant tasks = 2 / 2**d:
    # 5 -> 0.0625, 6 -> 0.031 (< 0.05); 8 -> 0.0078, 9 -> 0.0039 (< 0.05 / 8)
    assert min_discordant(0.05, 1) == 6
    assert min_discordant(0.05, 8) == 9


def test_detectable_note_names_holm_only_when_there_is_a_family() -> None:
    """With fewer than two comparisons per reference there is nothing to correct: the
    note must not print a Holm threshold over 0 comparisons (0.05/0)."""
    from reflexion_bench.analysis.tables import _detectable

    def note(m: int) -> str:
        det = {
            "n_tasks": 40,
            "min_one_sided_discordant": 6,
            "min_one_sided_discordant_holm": 9,
            "holm_family": m,
        }
        return _detectable({"strategies": {"detectable": det}})

    assert "at least 6" in note(0) and "Holm" not in note(0) and "/0" not in note(0)
    assert "Holm" not in note(1)
    assert "Holm across 8 comparisons" in note(8) and "0.05/8" in note(8)


async def two_benchmark_report(tmp_path: Path) -> dict[str, Any]:
    """Two toy 'benchmarks' (same task ids, other scripts), retry and reflexion on each,
    run by the real runner, and their report."""
    root = tmp_path / "runs"
    scripts_b = {
        "alpha": ["alpha"],
        "beta": ["beta"],
        "gamma": ["wrongG", "wrongG2", "gamma"],
        "delta": ["wrongD", "delta"],
        "eta": ["wrongE", "eta"],
    }
    for bench, words, scripts in (
        ("toyA", ["alpha", "beta", "gamma", "delta"], None),
        ("toyB", ["alpha", "beta", "gamma", "delta", "eta"], scripts_b),
    ):
        for strategy in (
            Strategy(name="retry", memory_content="none", max_trials=4),
            Strategy(name="reflexion", memory_content="reflection", max_trials=4),
        ):
            await run_toy(
                root / bench / strategy.name,
                strategy,
                words=words,
                scripts=scripts,
                budget=TaskBudget(tokens=60),
                benchmark=bench,
            )
    return build_comparison([root], n_resamples=300)


async def test_pooled_rows_stratify_by_benchmark_and_sum_the_discordant_tasks(
    tmp_path: Path,
) -> None:
    """Two toy 'benchmarks' (same task ids, other scripts), retry and reflexion on each:
    the pooled row counts every task of both, its McNemar test is the exact binomial
    test of the discordant tasks of both together, and its pass@1 is the task-weighted
    mean of the two benchmarks'."""
    from scipy.stats import binomtest

    report = await two_benchmark_report(tmp_path)
    section = report["strategies"]
    per = {(r["benchmark"], r["strategy"]): r for r in section["rows"]}
    pooled = {r["strategy"]: r for r in section["pooled"]}
    assert set(pooled) == {"retry", "reflexion"}
    ref = pooled["reflexion"]
    assert ref["n"] == 9 and ref["n_by_benchmark"] == {"toyA": 4, "toyB": 5}
    est = ref["pass_at_budget"]["estimate"]
    a, b = per[("toyA", "reflexion")], per[("toyB", "reflexion")]
    weighted = (4 * a["pass_at_budget"]["estimate"] + 5 * b["pass_at_budget"]["estimate"]) / 9
    assert est == pytest.approx(weighted)
    assert ref["pass_at_budget"]["low"] <= est <= ref["pass_at_budget"]["high"]
    vs = ref["vs_retry"]
    only_this = a["vs_retry"]["only_this"] + b["vs_retry"]["only_this"]
    only_ref = a["vs_retry"]["only_ref"] + b["vs_retry"]["only_ref"]
    assert (vs["only_this"], vs["only_ref"], vs["n_common"]) == (only_this, only_ref, 9)
    d = only_this + only_ref
    expected_p = binomtest(only_this, d, 0.5).pvalue if d else 1.0
    assert vs["p"] == pytest.approx(expected_p)
    assert vs["p"] <= vs["p_holm"] <= 1.0
    assert vs["assessment"]["verdict"] in {"different", "equivalent", "inconclusive"}
    # The budgets of each benchmark are named; the table renders with its note.
    assert ref["budgets"] == {"toyA": 60.0, "toyB": 60.0}
    md = render(report, "md", ["pooled"])
    assert "Pooled over benchmarks" in md and "toyA (4) + toyB (5)" in md
    assert "Wilson 95% CI" in md and "one family" in md


async def test_each_table_is_one_holm_family_and_a_test_has_one_adjusted_p(
    tmp_path: Path,
) -> None:
    """The strategies table over two benchmarks: reflexion vs retry (in reflexion's row)
    and retry vs reflexion (in retry's) are one test per benchmark; Holm runs once over
    the table's distinct tests, so both listings carry the same adjusted p, which is
    Holm's over the two benchmarks' p-values together (not each benchmark alone)."""
    report = await two_benchmark_report(tmp_path)
    section = report["strategies"]
    per = {(r["benchmark"], r["strategy"]): r for r in section["rows"]}
    raw = []
    for bench in ("toyA", "toyB"):
        this = per[(bench, "reflexion")]["vs_retry"]
        mirror = per[(bench, "retry")]["vs_reflexion"]
        assert this["p"] == mirror["p"] and this["p_holm"] == mirror["p_holm"]
        raw.append(this["p"])
    adjusted = holm(raw)
    for bench, adj in zip(("toyA", "toyB"), adjusted, strict=True):
        assert per[(bench, "reflexion")]["vs_retry"]["p_holm"] == pytest.approx(adj)
    assert section["detectable"]["holm_family"] == 2
    note = render(report, "md", ["strategies"])
    assert "over one family: the 2 distinct tests of this table" in note
    # The pooled table: its own family, reflexion vs retry and retry vs reflexion once.
    pooled = {r["strategy"]: r for r in section["pooled"]}
    assert pooled["reflexion"]["vs_retry"]["p_holm"] == pytest.approx(
        pooled["reflexion"]["vs_retry"]["p"]
    )
    assert pooled["retry"]["vs_reflexion"]["p_holm"] == pooled["reflexion"]["vs_retry"]["p_holm"]
    assert "the 1 distinct pooled tests" in render(report, "md", ["pooled"])


async def test_readme_answer_block_states_the_reports_comparisons_in_words(
    tmp_path: Path,
) -> None:
    """A study README's ``report:answer`` block: one sentence per comparison (a mirror
    pair once), with the report's difference, verdict and tested tasks; marked partial
    and concluding nothing while the design's planned tasks are not all in; per
    benchmark with ``table=strategies``; a malformed ``planned=`` names the README."""
    from reflexion_bench.analysis.report import refresh_readme_blocks

    report = await two_benchmark_report(tmp_path)
    vs = {r["strategy"]: r for r in report["strategies"]["pooled"]}["reflexion"]["vs_retry"]
    readme = tmp_path / "README.md"
    blocks = (
        "# study\n\n<!-- report:answer planned=toyA:4,toyB:{b} -->\n<!-- /report -->\n\n"
        "<!-- report:answer table=strategies -->\nstale\n<!-- /report -->\n"
    )
    readme.write_text(blocks.format(b=5))
    assert refresh_readme_blocks(report, readme)
    pooled_block, per_bench = readme.read_text().split("<!-- report:answer table=strategies")
    lines = [x for x in pooled_block.splitlines() if x.startswith("- ")]
    assert len(lines) == 1 and "**reflexion vs retry**" in lines[0]
    assert "toyA (4) + toyB (5): 9 paired tasks" in lines[0]
    assert f"{100 * vs['diff']['estimate']:+.1f} points" in lines[0]
    assert f"**{vs['assessment']['verdict']}**" in lines[0]
    assert "partial" not in lines[0]
    # Per benchmark: one sentence for each, the stale body replaced.
    per_lines = [x for x in per_bench.splitlines() if x.startswith("- ")]
    assert [("toyA" in x, "toyB" in x) for x in per_lines] == [(True, False), (False, True)]
    assert "stale" not in per_bench
    # The design planned more toyB tasks than ran: no conclusion is drawn.
    readme.write_text(blocks.format(b=40))
    refresh_readme_blocks(report, readme)
    first = next(x for x in readme.read_text().splitlines() if x.startswith("- "))
    assert "*partial (toyB 5 of 40 planned tasks): no conclusion*; so far" in first
    readme.write_text("<!-- report:answer planned=toyA:all -->\n<!-- /report -->\n")
    with pytest.raises(ValueError, match=r"README.md: report:answer planned=.*'toyA:all'"):
        refresh_readme_blocks(report, readme)


def test_comparison_words_name_the_higher_arm_and_the_equivalence_margin() -> None:
    from reflexion_bench.analysis.tables import _comparison_words

    def cmp(est: float, verdict: str, det: float | None, tost_p: float = 0.01) -> dict[str, Any]:
        lo, hi = est - 0.02, est + 0.02
        eq = {"p_value": tost_p, "low": lo, "high": hi, "equivalent": tost_p < 0.05}
        ass = {"verdict": verdict, "equivalence": eq, "detectable_difference": det}
        diff = {"estimate": est, "low": est - 0.03, "high": est + 0.03}
        return {"diff": diff, "p": 0.5, "p_holm": 0.9, "assessment": ass}

    worse = _comparison_words("reflexion", "retry", cmp(-0.11, "different", 0.099, 0.97), 5)
    assert "-11.0 points [-14.0, -8.0]" in worse and "**different**, retry higher" in worse
    assert "not equivalent within ±5 points (TOST p 0.97)" in worse
    assert "detect 9.9 points" in worse
    # A difference shown by McNemar can still lie inside the margin: both are said.
    small = _comparison_words("reflexion", "retry", cmp(0.02, "different", 0.03, 0.01), 5)
    assert "**different**, reflexion higher (and within ±5 points by TOST, p 0.01" in small
    assert "not equivalent" not in small
    better = _comparison_words("reflexion", "retry", cmp(0.08, "different", 0.05), 5)
    assert "**different**, reflexion higher" in better
    same = _comparison_words("reflexion", "retry", cmp(0.01, "equivalent", 0.04), 5)
    assert "**equivalent** within ±5 points (TOST p 0.01, 90% CI [-1.0, +3.0])" in same
    unknown = _comparison_words("a", "b", cmp(0.0, "inconclusive", None), 5)
    assert "**inconclusive**, neither" in unknown and "cannot reach 80% power" in unknown


def test_pooled_rows_need_two_benchmarks() -> None:
    from reflexion_bench.analysis.equal_budget import pooled_rows

    one = {
        ("m", "retry"): {
            "he": {
                "verdicts": {"t": True},
                "plus": None,
                "spend": 1.0,
                "budget": 1.0,
                "row": {"answer_key": "clean"},
            }
        }
    }
    assert pooled_rows(one, {}) == []


def plus_trial(task: str, k: int, base: bool, plus: bool | None, tokens: int) -> dict[str, Any]:
    hidden: dict[str, Any] = {"passed": base}
    if plus is not None:
        hidden["extra"] = {"plus": {"passed": plus}}
    return {
        "task_id": task,
        "trial": k,
        "hidden": hidden,
        "model_calls": [call("actor", tokens, 0)],
    }


def test_plus_verdicts_at_budget_fail_base_failures_and_leave_unjudged_blank() -> None:
    from reflexion_bench.analysis.equal_budget import plus_or_base_failure

    recs = [
        plus_trial("a", 1, True, False, 100),  # base pass, plus fail
        plus_trial("b", 1, False, None, 100),  # base fail: plus fail without judging
        plus_trial("c", 1, False, None, 100),
        plus_trial("c", 2, True, None, 100),  # base pass never judged under plus
        plus_trial("d", 1, True, True, 100),
    ]
    pts = task_budget_points(recs, "tokens", plus_or_base_failure)
    assert verdicts_at_budget(pts, 150) == {"a": False, "b": False, "c": False, "d": True}
    assert verdicts_at_budget(pts, 250) == {"a": False, "b": False, "c": None, "d": True}
    # The hidden (base) reading of the same log.
    assert verdicts_at_budget(task_budget_points(recs), 250) == {
        "a": True,
        "b": False,
        "c": True,
        "d": True,
    }


def test_budget_rule_is_the_median_spend_of_the_second_verdict_rounded_up() -> None:
    from reflexion_bench.analysis.equal_budget import budget_rule

    def task(t: str, second_actor: int | None) -> list[dict[str, Any]]:
        # trial 1: actor 400 + self-test 400 + reflection 600 = 1400 paid before trial 2
        out = [
            trial(
                t,
                1,
                False,
                [call("actor", 300, 100), call("self_test", 300, 100), call("reflector", 500, 100)],
            )
        ]
        if second_actor is not None:
            out.append(trial(t, 2, True, [call("actor", second_actor, 0)]))
        return out

    recs = [*task("a", 600), *task("b", 900), *task("c", 1700), *task("d", None)]
    rule = budget_rule(recs)
    # second verdicts at 2000, 2300, 3100: median 2300 -> 2500
    assert rule["tasks"] == 4 and rule["tasks_reaching_trial"] == 3
    assert rule["median"] == 2300 and rule["budget"] == 2500
    assert budget_rule(recs, round_to=100)["budget"] == 2300
    assert budget_rule(recs, trial=1)["budget"] == 1000  # trial 1's verdict at 800
    assert rule["role_medians"]["trial 1 reflector"] == {"calls": 4, "median": 600.0}
    with pytest.raises(ValueError, match="reached trial 3"):
        budget_rule(recs, trial=3)
