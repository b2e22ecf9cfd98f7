"""Small-sample intervals and equivalence tests (issue 29), checked against statsmodels'
independent implementations, textbook examples and by simulated coverage at n = 40."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import ttost_paired

from reflexion_bench.analysis.stats import (
    comparison_verdict,
    mcnemar_exact,
    tost_paired,
    wilson_interval,
)


def _pairs(both: int, only_a: int, only_b: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return a, b


def test_mcnemar_on_agrestis_presidential_approval_table() -> None:
    # Agresti, Categorical Data Analysis, table 10.1: 794 / 150 / 86 / 570 of 1600.
    a, b = _pairs(794, 150, 86, 570)
    ours = mcnemar_exact(a, b)
    theirs = sm_mcnemar(np.array([[794, 150], [86, 570]]), exact=True)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)
    assert ours.p_value < 1e-4  # the book's chi-square 17.36 on 1 df: p ~ 3e-5


def test_wilson_matches_statsmodels_and_behaves_at_the_edges() -> None:
    for k, n in ((30, 40), (0, 40), (40, 40), (7, 164)):
        iv = wilson_interval(k, n)
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert (iv.low, iv.high) == pytest.approx((lo, hi), abs=1e-9)
    zero = wilson_interval(0, 40)
    assert zero.low == 0 and zero.high > 0.05  # the Wald interval would be [0, 0]
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(41, 40)


def test_tost_matches_statsmodels() -> None:
    rng = np.random.default_rng(3)
    a = (rng.random(40) < 0.7).astype(float)
    b = (rng.random(40) < 0.65).astype(float)
    for margin in (0.05, 0.1, 0.3):
        ours = tost_paired(a, b, margin)
        p, _, _ = ttost_paired(a, b, -margin, margin)
        assert ours.p_value == pytest.approx(p, rel=1e-9)
        # TOST at alpha <=> the 90% interval inside the margin.
        assert ours.equivalent == (-margin < ours.low and ours.high < margin)


def test_tost_verdicts() -> None:
    same = [1.0] * 30 + [0.0] * 10
    # Identical verdicts on 40 tasks: no discordant task, but 40 tasks only bound the
    # discordance by 1 - 0.05**(1/40) = 7.2 points (exact): not equivalent within ±5,
    # equivalent within ±10; 59 tasks are the fewest that show ±5 this way.
    eq0 = tost_paired(same, same, 0.05)
    assert not eq0.equivalent and eq0.high == pytest.approx(0.0722, abs=1e-4)
    assert eq0.p_value == pytest.approx(0.95**40)
    assert tost_paired(same, same, 0.10).equivalent
    assert not tost_paired([1.0] * 58, [1.0] * 58, 0.05).equivalent
    assert tost_paired([1.0] * 59, [1.0] * 59, 0.05).equivalent
    # 40 tasks, 8 discordant split 4/4: mean 0 but the interval is wider than ±5 points.
    a, b = _pairs(26, 4, 4, 6)
    eq = tost_paired(np.array(a, float), np.array(b, float), 0.05)
    assert not eq.equivalent and eq.low < -0.05 and eq.high > 0.05
    assert comparison_verdict(eq, different=False) == "inconclusive"
    assert tost_paired(np.array(a, float), np.array(b, float), 0.2).equivalent
    assert comparison_verdict(eq, different=True) == "different"
    with pytest.raises(ValueError, match="margin"):
        tost_paired(same, same, 0.0)


def test_coverage_at_n_40_by_simulation() -> None:
    """Wilson's 95% interval and the paired TOST's 90% interval cover the truth about as
    often as they claim at n = 40 (2,000 simulated studies each)."""
    rng = np.random.default_rng(11)
    sims, n = 2000, 40
    p = 0.7
    hits = 0
    for _ in range(sims):
        iv = wilson_interval(int((rng.random(n) < p).sum()), n)
        hits += iv.low <= p <= iv.high
    assert 0.93 <= hits / sims <= 0.975
    # Paired verdicts: 60% both, 15% only A, 10% only B, 15% neither: true diff 0.05.
    covered = 0
    for _ in range(sims):
        u = rng.random(n)
        a = (u < 0.75).astype(float)
        b = ((u < 0.6) | ((u >= 0.75) & (u < 0.85))).astype(float)
        eq = tost_paired(a, b, 0.1)
        covered += eq.low <= 0.05 <= eq.high
    assert 0.86 <= covered / sims <= 0.94
