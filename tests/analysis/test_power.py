"""The planner's power formulas (issue 29): Connor's normal approximation to McNemar's
test, checked against the exact power of the exact test and against simulation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from reflexion_bench.analysis import power as pw
from reflexion_bench.analysis.stats import mcnemar_exact
from reflexion_bench.commands import plan

ROOT = Path(__file__).resolve().parents[2]


def test_connor_sample_size_by_hand() -> None:
    # Connor (1987): n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, worked out with
    # the normal quantiles to 4 digits (1.9600, 0.8416) for psi = 0.3, d = 0.1:
    # (1.96 * 0.54772 + 0.8416 * 0.53852)^2 / 0.01 = (1.07353 + 0.45322)^2 / 0.01 = 233.1
    assert pw.tasks_needed(0.3, 0.1) == 234
    # Halving the effect at the same discordance needs about four times the tasks.
    assert 3.8 < pw.tasks_needed(0.3, 0.05) / pw.tasks_needed(0.3, 0.1) < 4.2


def test_the_issue_figures() -> None:
    # The paper's HumanEval-py Reflexion vs base (10 + 1 discordant of 164, effect 9/164).
    n = pw.tasks_needed(0.067, 0.055)
    assert abs(n - 172) <= 17
    dd = pw.detectable_difference(40, 0.2)
    assert abs(100 * dd - 19) < 1.5


def test_detectable_difference_inverts_the_sample_size() -> None:
    for psi, n in ((0.1, 164), (0.2, 40), (0.35, 397)):
        d = pw.detectable_difference(n, psi)
        assert pw.power(n, psi, d) == pytest.approx(0.8, abs=1e-4)
        # The tasks needed for that difference are n (up to rounding up).
        assert n <= pw.tasks_needed(psi, d * (1 + 1e-6)) <= n + 1


def test_more_power_or_a_stricter_level_needs_more_tasks() -> None:
    base = pw.tasks_needed(0.2, 0.08)
    assert pw.tasks_needed(0.2, 0.08, power=0.9) > base
    assert pw.tasks_needed(0.2, 0.08, alpha=0.01) > base
    assert pw.detectable_difference(40, 0.2, power=0.9) > pw.detectable_difference(40, 0.2)


def test_seeds_help_only_as_far_as_they_differ() -> None:
    one = pw.detectable_difference(40, 0.2)
    assert pw.detectable_difference(40, 0.2, seeds=5, rho=1.0) == pytest.approx(one)
    five = pw.detectable_difference(40, 0.2, seeds=5, rho=0.0)
    assert five < 0.5 * one  # about 1/sqrt(5) of it
    assert abs(pw.tasks_needed(0.2, 0.08, seeds=4, rho=0.0) - pw.tasks_needed(0.2, 0.08) / 4) <= 1
    assert pw.design_effect(3, 0.5) == pytest.approx(0.5 + 0.5 / 3)


def test_exact_power_matches_simulation_of_the_exact_test() -> None:
    rng = np.random.default_rng(7)
    n, p01, p10 = 40, 0.05, 0.2
    sims = 4000
    hits = 0
    for _ in range(sims):
        # Bands of [0, 1): A only, B only, both (0.5), neither.
        u = rng.random(n)
        both = (u >= p10 + p01) & (u < p10 + p01 + 0.5)
        a = (u < p10) | both
        b = ((u >= p10) & (u < p10 + p01)) | both
        hits += mcnemar_exact(a.tolist(), b.tolist()).p_value <= 0.05
    exact = pw.exact_power(n, p01, p10)
    se = math.sqrt(exact * (1 - exact) / sims)
    assert abs(hits / sims - exact) < 4 * se


@pytest.mark.parametrize(
    ("n", "p01", "p10"), [(40, 0.05, 0.2), (80, 0.06, 0.14), (164, 0.006, 0.061)]
)
def test_normal_approximation_is_close_to_the_exact_power(n: int, p01: float, p10: float) -> None:
    approx = pw.power(n, p01 + p10, p10 - p01)
    exact = pw.exact_power(n, p01, p10)
    # The exact test is conservative (discrete), the approximation a little optimistic
    # at small n; they stay within 0.12 here, which the docs state.
    assert abs(approx - exact) < 0.12
    assert 0 < exact < 1


def test_the_rejection_region_is_the_exact_tests() -> None:
    # 10 discordant tasks: p <= 0.05 needs 0-1 or 9-10 on one side (binomial at 1/2).
    assert pw.rejection_region(10).tolist() == [0, 1, 9, 10]
    assert pw.rejection_region(5).tolist() == []  # 5 discordant tasks can never reject


def test_bad_input_says_what_to_fix() -> None:
    with pytest.raises(ValueError, match="cannot exceed"):
        pw.tasks_needed(0.05, 0.1)
    with pytest.raises(ValueError, match="non-zero"):
        pw.tasks_needed(0.2, 0.0)
    with pytest.raises(ValueError, match="discordance"):
        pw.detectable_difference(40, 0.0)


def test_seed_correlation_of_identical_and_independent_seeds() -> None:
    rng = np.random.default_rng(1)
    same = np.repeat(rng.integers(-1, 2, size=(60, 1)), 4, axis=1)
    assert pw.seed_correlation(same) == pytest.approx(1.0)
    indep = rng.integers(-1, 2, size=(400, 4))
    rho = pw.seed_correlation(indep)
    assert rho is not None and rho < 0.1
    assert pw.seed_correlation(np.zeros((10, 3))) is None
    assert pw.seed_correlation(np.ones((10, 1))) is None


# --------------------------------------------------------------------------- the command


def test_plan_prints_tasks_needed_and_points(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.main(["--tasks", "164", "--discordance", "0.067", "--effect", "0.055"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "tasks needed" in x)
    needed = int(line.split(": ")[1].split()[0])
    assert abs(needed - 172) <= 17
    # The exact test's figure, with Connor's in brackets as the labelled approximation.
    assert f"[Connor: {pw.tasks_needed(0.067, 0.055)}]" in line
    assert plan.main(["--tasks", "40", "--discordance", "0.2"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "points" in x)
    assert abs(float(line.split(": ")[1].split()[0]) - 19) < 1.5


def _simulated_power(n: int, psi: float, effect: float, alpha: float, sims: int) -> float:
    """Share of ``sims`` simulated studies of ``n`` tasks that the exact McNemar test
    (``stats.mcnemar_exact``, what the tables run) rejects at ``alpha``."""
    rng = np.random.default_rng(48)
    p10, p01 = (psi + effect) / 2, (psi - effect) / 2
    cells = rng.multinomial(n, [p10, p01, 1 - psi], size=sims)
    hits = 0
    for only_a, only_b, _ in cells:
        a = [True] * only_a + [False] * only_b
        hits += mcnemar_exact(a, [not x for x in a]).p_value <= alpha
    return hits / sims


def test_plan_prints_the_exact_tests_detectable_difference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The judged figure: 364 tasks at discordance 0.203 detect 6.8 points with the exact
    test (Connor's approximation says 6.6). Checked against simulation of the test."""
    assert plan.main(["--tasks", "364", "--discordance", "0.203"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("detectable difference"))
    points = float(line.split(": ")[1].split()[0])
    assert abs(points - 6.8) <= 0.1, line
    assert "[Connor: 6.6]" in line
    # Simulated power of the exact test: ~0.8 at the printed difference, and clearly
    # below at Connor's (6.6 points is not detectable with 80% power by this test).
    sims = 4000
    se = math.sqrt(0.8 * 0.2 / sims)
    at_exact = _simulated_power(364, 0.203, points / 100, 0.05, sims)
    assert abs(at_exact - 0.8) < 4 * se + 0.005  # 0.005: the printed figure's rounding
    assert _simulated_power(364, 0.203, 0.066, 0.05, sims) < 0.8 - se


def test_holm_plans_at_the_first_steps_level(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.main(["--tasks", "364", "--discordance", "0.203", "--holm", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["alpha_test"] == pytest.approx(0.05 / 3)
    dd = data["detectable_difference"]
    assert dd > pw.exact_detectable_difference(364, 0.203)
    sims = 4000
    at = _simulated_power(364, 0.203, dd, 0.05 / 3, sims)
    assert abs(at - 0.8) < 4 * math.sqrt(0.16 / sims)
    assert plan.main(["--tasks", "364", "--discordance", "0.203", "--holm", "0"]) == 2


def test_exact_tasks_needed_is_the_first_n_reaching_the_power() -> None:
    for psi, d in ((0.067, 0.055), (0.2, 0.08)):
        n = pw.exact_tasks_needed(psi, d)
        assert n is not None
        assert pw.exact_power(n, (psi - d) / 2, (psi + d) / 2) >= 0.8
        below = [m for m in range(int(0.8 * pw.tasks_needed(psi, d)), n)]
        assert all(pw.exact_power(m, (psi - d) / 2, (psi + d) / 2) < 0.8 for m in below)


def test_critical_counts_are_the_binomial_tests_rejection_regions() -> None:
    for alpha in (0.05, 0.05 / 3, 0.01):
        c = pw.critical_counts(60, alpha)
        for d in range(1, 61):
            expected = [k for k in range(d + 1) if c[d] >= 0 and (k <= c[d] or k >= d - c[d])]
            assert pw.rejection_region(d, alpha).tolist() == expected


def test_plan_json_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.main(["--tasks", "40", "--discordance", "0.2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tasks"] == 40 and 0.15 < data["detectable_difference"] < 0.25
    assert plan.main(["--tasks", "40"]) == 2
    assert "--discordance" in capsys.readouterr().err
    assert plan.main(["--discordance", "0.05", "--effect", "0.2"]) == 2
    assert "cannot exceed" in capsys.readouterr().err


def test_plan_from_the_paper_audit(capsys: pytest.CaptureFixture[str]) -> None:
    audit = ROOT / "results" / "paper-audit" / "claims.json"
    pairs = {p["id"]: p for p in json.loads(audit.read_text(encoding="utf-8"))["pairs"]}
    row = pairs["humaneval-py"]["logged"]
    assert plan.main(["--paper", "humaneval-py", "--audit", str(audit), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tasks"] == row["n"]
    assert data["discordance"] == pytest.approx((row["only_a"] + row["only_b"]) / row["n"])
    assert data["effect"] == pytest.approx((row["only_a"] - row["only_b"]) / row["n"])
    assert abs(data["tasks_needed"] - 172) <= 17
    assert plan.main(["--paper", "nope", "--audit", str(audit)]) == 2
    assert "humaneval-py" in capsys.readouterr().err


def test_the_audit_paired_rows_carry_the_planner_figures() -> None:
    from reflexion_bench.analysis.audit import _power_cells

    # The paper's HumanEval-py row: 10 only-a and 1 only-b of 164 (logged).
    det, need = _power_cells({"n": 164, "only_a": 10, "only_b": 1}).split(" | ")
    assert det == f"{100 * pw.detectable_difference(164, 11 / 164):.1f} pts"
    assert need == f"{pw.tasks_needed(11 / 164, 9 / 164):,}"
    assert abs(int(need.replace(",", "")) - 172) <= 17
    # LeetcodeHard's logs: 2 only-a and none only-b of 40; every discordant task on one
    # side is allowed (|effect| == discordance): about 155 tasks (the issue's figure).
    det, need = _power_cells({"n": 40, "only_a": 2, "only_b": 0}).split(" | ")
    assert abs(int(need) - 155) <= 15
    # 2 discordant tasks of 40: no difference reaches 80% power at that discordance.
    assert det.startswith("none") and pw.power(40, 0.05, 0.05) < 0.8
    assert _power_cells({"n": 40, "only_a": 0, "only_b": 0}) == "- | -"


def test_plan_budget_from_the_committed_40_task_reflexion_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The study budgets come from `plan --budget-from`: on the committed Reflexion run,
    the tokens of trial 1's calls plus trial 2's actor and self-test calls, read here
    straight from log.jsonl, give the median the command prints."""
    run = ROOT / "results" / "strategies-humaneval40" / "reflexion"
    spend: dict[str, float] = {}
    reached = set()
    for line in (run / "log.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("type") not in (None, "trial") or "trial" not in r:
            continue
        for c in r.get("model_calls") or []:
            if r["trial"] == 1 or (r["trial"] == 2 and c["role"] in ("actor", "self_test")):
                tokens = c["prompt_tokens"] + c["completion_tokens"]
                spend[r["task_id"]] = spend.get(r["task_id"], 0) + tokens
        if r["trial"] == 2:
            reached.add(r["task_id"])
    median = float(np.median([spend[t] for t in reached]))
    assert plan.main(["--budget-from", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tasks_reaching_trial"] == len(reached)
    assert data["median"] == pytest.approx(median)
    assert data["budget"] == math.ceil(median / 500) * 500
    assert plan.main(["--budget-from", str(run)]) == 0
    assert f"budget (rounded up to 500): {data['budget']:.0f} tokens" in capsys.readouterr().out
    assert plan.main(["--budget-from", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err
