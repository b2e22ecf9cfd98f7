"""Intervals and paired tests against values worked out by hand or by scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, bootstrap

from reflexion_bench.analysis.stats import (
    bootstrap_ci,
    bootstrap_curve_ci,
    mcnemar_exact,
    paired_bootstrap_diff,
)


def exact_percentile_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The bootstrap distribution of a share of n 0/1 values with ``successes`` ones is
    Binomial(n, successes/n)/n exactly; its percentile interval, from scipy's binom."""
    p = successes / n
    alpha = (1 - level) / 2
    return binom.ppf(alpha, n, p) / n, binom.ppf(1 - alpha, n, p) / n


@pytest.mark.parametrize(("successes", "n"), [(6, 10), (14, 20), (21, 40), (1, 12), (26, 30)])
def test_bootstrap_ci_matches_the_exact_bootstrap_distribution(successes: int, n: int) -> None:
    # Monte Carlo could only flip a bound where the binomial CDF sits within 0.5% of
    # 2.5% / 97.5%: the chosen cases are away from that (checked here, not assumed).
    p = successes / n
    for q in (0.025, 0.975):
        k = binom.ppf(q, n, p)
        assert abs(binom.cdf(k, n, p) - q) > 0.005 and abs(binom.cdf(k - 1, n, p) - q) > 0.005
    values = [1] * successes + [0] * (n - successes)
    iv = bootstrap_ci(values, n_resamples=20_000, seed=1)
    low, high = exact_percentile_interval(successes, n)
    assert iv.estimate == pytest.approx(successes / n)
    assert (iv.low, iv.high) == (pytest.approx(low), pytest.approx(high))
    # The curve version gives the same interval for the same column.
    col = bootstrap_curve_ci(np.array(values, dtype=float)[:, None], n_resamples=20_000, seed=1)
    assert (col[0].low, col[0].high) == (pytest.approx(low), pytest.approx(high))


def test_bootstrap_degenerate_and_by_hand() -> None:
    assert bootstrap_ci([1, 1, 1, 1]).to_dict() == {
        "estimate": 1.0,
        "low": 1.0,
        "high": 1.0,
        "level": 0.95,
    }
    # Two tasks, one solved: resampled shares are 0, 1/2, 1 with probability 1/4, 1/2,
    # 1/4, so the 95% percentile interval is [0, 1].
    iv = bootstrap_ci([1, 0], n_resamples=4000)
    assert (iv.low, iv.high) == (0.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_curve_bands_resample_whole_tasks() -> None:
    # Task verdicts never go down in this matrix; since a resample draws whole tasks,
    # every resampled curve is non-decreasing, and so are both bounds.
    rng = np.random.default_rng(3)
    first = rng.random(30) < 0.4
    later = first | (rng.random(30) < 0.5)
    m = np.stack([first, later, later], axis=1).astype(float)
    ivs = bootstrap_curve_ci(m, n_resamples=5000)
    assert [iv.estimate for iv in ivs] == pytest.approx(list(m.mean(axis=0)))
    assert ivs[0].low <= ivs[1].low and ivs[0].high <= ivs[1].high
    assert (ivs[1].low, ivs[1].high) == (ivs[2].low, ivs[2].high)


def test_mcnemar_exact_by_hand() -> None:
    # 1 task only A solves, 7 only B solves: two-sided exact p = 2 * P(X <= 1),
    # X ~ Bin(8, 1/2) = 2 * (1 + 8) / 256.
    a = [True] * 5 + [True] + [False] * 7 + [False] * 3
    b = [True] * 5 + [False] + [True] * 7 + [False] * 3
    t = mcnemar_exact(a, b)
    assert (t.n, t.both, t.only_a, t.only_b, t.neither) == (16, 5, 1, 7, 3)
    assert t.p_value == pytest.approx(18 / 256)
    # Symmetric in A and B; no discordant task means no evidence either way.
    assert mcnemar_exact(b, a).p_value == pytest.approx(18 / 256)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    # 0 vs 6 discordant: p = 2 / 2**6.
    assert mcnemar_exact([False] * 6, [True] * 6).p_value == pytest.approx(2 / 64)
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_paired_bootstrap_diff() -> None:
    same = [1, 0, 1, 1, 0]
    iv = paired_bootstrap_diff(same, same)
    assert (iv.estimate, iv.low, iv.high) == (0.0, 0.0, 0.0)
    rng = np.random.default_rng(7)
    a = (rng.random(60) < 0.7).astype(float)
    b = np.where(rng.random(60) < 0.8, a, 1 - a)
    iv = paired_bootstrap_diff(a, b, n_resamples=20_000, seed=2)
    ref = bootstrap(
        (a, b),
        lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        method="percentile",
        random_state=np.random.default_rng(5),
    ).confidence_interval
    assert iv.estimate == pytest.approx(a.mean() - b.mean())
    # Different random streams: agree to within Monte Carlo error (one task = 1/60).
    assert iv.low == pytest.approx(ref.low, abs=1 / 60 + 1e-9)
    assert iv.high == pytest.approx(ref.high, abs=1 / 60 + 1e-9)
    with pytest.raises(ValueError):
        paired_bootstrap_diff([1, 0], [1])


def test_stratified_bootstrap_keeps_each_stratum_size() -> None:
    """Constant strata cannot vary when resampled within themselves: the pooled interval
    collapses to the exact weighted mean, where a bootstrap ignoring the strata (mixing
    them) is wide. Strata count by their size."""
    from reflexion_bench.analysis.stats import bootstrap_ci, stratified_bootstrap_ci

    ones, zeros = [1.0] * 30, [0.0] * 10
    iv = stratified_bootstrap_ci([ones, zeros], n_resamples=2000, seed=1)
    assert (iv.estimate, iv.low, iv.high) == (0.75, 0.75, 0.75)
    mixed = bootstrap_ci(ones + zeros, n_resamples=2000, seed=1)
    assert mixed.high - mixed.low > 0.15
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 50).astype(float), rng.integers(0, 2, 20).astype(float)
    iv2 = stratified_bootstrap_ci([a, b, []], n_resamples=3000, seed=2)
    assert iv2.estimate == pytest.approx(np.concatenate([a, b]).mean())
    assert iv2.low < iv2.estimate < iv2.high
    assert stratified_bootstrap_ci([a, b], n_resamples=3000, seed=2) == iv2  # empty skipped
    with pytest.raises(ValueError):
        stratified_bootstrap_ci([[], []])
