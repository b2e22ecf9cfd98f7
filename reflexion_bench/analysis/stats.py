"""Uncertainty for success rates over tasks: intervals and paired tests.

Tasks are the unit (the paper's numbers are shares of tasks). All functions are
deterministic given ``seed``.

**What the tables print.** A share of tasks: the Wilson score interval
(:func:`proportion_interval`); a paired difference of two shares on the same tasks:
Newcombe's hybrid score interval (:func:`paired_difference_interval`). At n = 40 near 0
or 1 the percentile bootstrap covers far less than its nominal 95% (with no success it
is the point 0), which ``tests/analysis/test_interval_coverage.py`` measures; these two
keep their coverage there. Per-task means over several seeds are not binomial counts:
for them the bootstrap below remains.

- :func:`bootstrap_ci`: percentile bootstrap interval of a mean (95% by default).
- :func:`bootstrap_curve_ci`: the same for every trial of a curve at once, resampling
  whole tasks so that the band of a curve is consistent across trials.
- :func:`mcnemar_exact`: McNemar's test on two strategies' verdicts for the same
  tasks, exact form (a two-sided binomial test on the discordant pairs, scipy).
- :func:`paired_bootstrap_diff`: bootstrap interval of the difference of two success
  rates measured on the same tasks, resampling tasks jointly (per-task means over seeds
  with several seeds: the task stays the unit).
- :func:`stratified_bootstrap_ci`: the mean over several strata (benchmarks) pooled,
  every task weighted alike, resampling tasks within each stratum (a pooled estimate
  keeps each benchmark's size; paired differences are per-task values too).
- :func:`sign_flip_exact`: the exact paired permutation test of per-task mean
  differences over seeds; McNemar's exact test at one seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    level: float = 0.95

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def _quantiles(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - level) / 2.0
    # "lower"/"higher" keep the bounds on values the statistic can take, so an
    # interval of a share of n tasks is made of multiples of 1/n.
    low = np.quantile(samples, alpha, axis=0, method="lower")
    high = np.quantile(samples, 1.0 - alpha, axis=0, method="higher")
    return low, high


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of ``mean(values)`` (e.g. 0/1 task verdicts)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_resamples, x.size))
    means = x[idx].mean(axis=1)
    low, high = _quantiles(means, level)
    return Interval(float(x.mean()), float(low), float(high), level)


def bootstrap_curve_ci(
    matrix: Sequence[Sequence[float]] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[Interval]:
    """Intervals for each column mean of a tasks x trials 0/1 matrix (one draw of tasks
    per resample, shared by all trials)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError("bootstrap_curve_ci needs a non-empty tasks x trials matrix")
    n = m.shape[0]
    rng = np.random.default_rng(seed)
    # Resample counts per task rather than index arrays: (resamples x tasks) @ (tasks x
    # trials) stays small where indexing would build a resamples x tasks x trials array.
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)
    means = counts @ m / n  # (n_resamples, trials)
    low, high = _quantiles(means, level)
    est = m.mean(axis=0)
    return [
        Interval(float(e), float(lo), float(hi), level)
        for e, lo, hi in zip(est, low, high, strict=True)
    ]


@dataclass(frozen=True)
class McNemar:
    n: int
    both: int
    only_a: int
    only_b: int
    neither: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """Exact McNemar test: are A and B equally likely to be the only one that succeeds?

    Under the null each discordant task is equally likely to favour A or B, so the
    p-value is a two-sided binomial test of ``only_a`` out of ``only_a + only_b`` at 1/2.
    """
    from scipy.stats import binomtest

    if len(a) != len(b):
        raise ValueError("mcnemar_exact needs verdicts for the same tasks, in the same order")
    aa = np.asarray(a, dtype=bool)
    bb = np.asarray(b, dtype=bool)
    only_a = int((aa & ~bb).sum())
    only_b = int((~aa & bb).sum())
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(binomtest(only_a, discordant, 0.5).pvalue)
    return McNemar(
        n=len(aa),
        both=int((aa & bb).sum()),
        only_a=only_a,
        only_b=only_b,
        neither=int((~aa & ~bb).sum()),
        p_value=p,
    )


@dataclass(frozen=True)
class SignFlip:
    """Exact paired sign-flip (permutation) test on per-task mean differences."""

    n: int
    seeds: int  # S_a * S_b: the per-task differences are multiples of 1/seeds
    nonzero: int  # tasks whose mean difference is not 0 (the discordant tasks at 1 seed)
    statistic: float  # sum of the per-task mean differences
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sign_flip_exact(a: np.ndarray, b: np.ndarray) -> SignFlip:
    """Are A and B exchangeable within each task? ``a``/``b`` are tasks x seeds verdicts.

    The unit is the task: ``d_t`` is task t's mean verdict over A's seeds minus over
    B's (the seeds need not be paired with each other, nor as many on each side). Under H0 (A and B exchangeable
    within a task) each ``d_t`` is as likely as ``-d_t``, so the p-value is the share of
    the ``2^n`` sign assignments whose ``|sum|`` reaches the observed one, computed
    exactly by convolution over the integers ``S * |d_t|`` (S seeds) rather than by
    sampling. At one seed it is the exact McNemar test (two-sided binomial at 1/2 on
    the discordant tasks). It treats each task once however many seeds it has, so
    repeated seeds of one task are never counted as independent evidence.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if y.ndim == 1:
        y = y[:, None]
    if x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError("sign_flip_exact needs verdicts for the same, non-empty tasks")
    sa, sb = x.shape[1], y.shape[1]
    seeds = sa * sb
    # d_t * S_a * S_b is an integer (sums over seeds), so the null distribution is exact.
    units = np.rint(x.sum(axis=1) * sb - y.sum(axis=1) * sa).astype(int)
    observed = int(units.sum())
    mags = np.abs(units[units != 0])
    total = int(mags.sum())
    if total == 0:
        return SignFlip(int(x.shape[0]), seeds, 0, 0.0, 1.0)
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0  # index = sum + total
    for m in mags:
        dist = 0.5 * (np.roll(dist, int(m)) + np.roll(dist, -int(m)))
    sums = np.arange(-total, total + 1)
    p = float(dist[np.abs(sums) >= abs(observed)].sum())
    return SignFlip(int(x.shape[0]), seeds, int(mags.size), observed / seeds, min(1.0, p))


def paired_bootstrap_diff(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Interval of ``mean(a) - mean(b)``, resampling tasks jointly (paired)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size == 0:
        raise ValueError("paired_bootstrap_diff needs two equally long, non-empty samples")
    d = x - y
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(n_resamples, d.size))
    diffs = d[idx].mean(axis=1)
    low, high = _quantiles(diffs, level)
    return Interval(float(d.mean()), float(low), float(high), level)


def stratified_bootstrap_ci(
    strata: Sequence[Sequence[float]] | Sequence[np.ndarray],
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile interval of the mean of all values of all ``strata`` together (each
    value weighted alike, so a stratum counts by its size), resampling with replacement
    *within* each stratum: the pooled sample keeps every stratum's size, as the design
    did (the benchmarks' sizes are fixed, not drawn). For paired comparisons pass the
    per-task differences. Empty strata are skipped; at least one value is needed."""
    parts = [np.asarray(s, dtype=float) for s in strata]
    parts = [p for p in parts if p.size]
    if not parts:
        raise ValueError("stratified_bootstrap_ci needs at least one value")
    total = sum(p.size for p in parts)
    rng = np.random.default_rng(seed)
    sums = np.zeros(n_resamples)
    for p in parts:
        idx = rng.integers(0, p.size, size=(n_resamples, p.size))
        sums += p[idx].sum(axis=1)
    low, high = _quantiles(sums / total, level)
    estimate = float(np.concatenate(parts).mean())
    return Interval(estimate, float(low), float(high), level)


def wilson_interval(successes: int, n: int, *, level: float = 0.95) -> Interval:
    """Wilson score interval of a proportion: well behaved at n = 40 and at 0 or n
    successes, where the normal (Wald) interval collapses."""
    from scipy.stats import norm

    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(
            f"wilson_interval needs 0 <= successes <= n and n > 0, got {successes}/{n}"
        )
    z = float(norm.ppf(1 - (1 - level) / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At 0 or n successes a bound equals p in exact arithmetic; rounding could put it a
    # hair past p (a negative error bar in a plot), so the bounds are held around p.
    low = min(p, max(0.0, float(centre - half)))
    high = max(p, min(1.0, float(centre + half)))
    return Interval(p, low, high, level)


def newcombe_paired_interval(
    both: int, only_a: int, only_b: int, neither: int, *, level: float = 0.95
) -> Interval:
    """Newcombe's hybrid score interval (1998, *Stat. Med.* 17:2635, method 10) of the
    paired difference ``p_a - p_b`` = ``(only_a - only_b) / n`` of two success rates on
    the same ``n`` tasks.

    Each rate gets its Wilson interval (``l_a..u_a``, ``l_b..u_b``), and the two are
    combined with the phi correlation of the 2 x 2 table (0 where a margin is empty)::

        low  = D - sqrt((p_a - l_a)**2 - 2 phi (p_a - l_a)(u_b - p_b) + (u_b - p_b)**2)
        high = D + sqrt((u_a - p_a)**2 - 2 phi (u_a - p_a)(p_b - l_b) + (p_b - l_b)**2)

    Unlike a percentile bootstrap it does not collapse to a point when no task (or
    every task) is discordant, and it keeps its coverage near 0 and 1 at n = 40
    (``tests/analysis/test_interval_coverage.py`` measures it).
    """
    counts = (both, only_a, only_b, neither)
    if min(counts) < 0 or sum(counts) == 0:
        raise ValueError(f"newcombe_paired_interval needs counts >= 0, not all 0: {counts}")
    n = sum(counts)
    a_solved, b_solved = both + only_a, both + only_b
    pa, pb = a_solved / n, b_solved / n
    wa = wilson_interval(a_solved, n, level=level)
    wb = wilson_interval(b_solved, n, level=level)
    margins = (a_solved, n - a_solved, b_solved, n - b_solved)
    phi = 0.0
    if min(margins) > 0:
        phi = (both * neither - only_a * only_b) / float(np.sqrt(np.prod(margins, dtype=float)))
    diff = pa - pb
    dl_a, du_a = pa - wa.low, wa.high - pa
    dl_b, du_b = pb - wb.low, wb.high - pb
    low = diff - float(np.sqrt(max(0.0, dl_a**2 - 2 * phi * dl_a * du_b + du_b**2)))
    high = diff + float(np.sqrt(max(0.0, du_a**2 - 2 * phi * du_a * dl_b + dl_b**2)))
    return Interval(diff, max(-1.0, low), min(1.0, high), level)


def _binary(x: np.ndarray) -> bool:
    return bool(x.size) and bool(np.all((x == 0) | (x == 1)))


def proportion_interval(
    values: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The interval the tables print for a share of tasks.

    0/1 verdicts (one per task): the Wilson score interval. Per-task means over several
    seeds are not binomial counts: there the percentile bootstrap over tasks
    (:func:`bootstrap_ci`). A pooled share over benchmarks passes all tasks together:
    Wilson's binomial variance is at least the stratified one, so it errs wide.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("proportion_interval needs at least one value")
    if _binary(x):
        return wilson_interval(int(x.sum()), int(x.size), level=level)
    return bootstrap_ci(x, level=level, n_resamples=n_resamples, seed=seed)


def proportion_curve_intervals(
    matrix: Sequence[Sequence[float]] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[Interval]:
    """:func:`proportion_interval` of every column of a tasks x trials (or budgets)
    matrix: Wilson per column for 0/1 verdicts, else the shared-draw bootstrap band
    (:func:`bootstrap_curve_ci`)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError("proportion_curve_intervals needs a non-empty tasks x trials matrix")
    if _binary(m):
        n = int(m.shape[0])
        return [wilson_interval(int(k), n, level=level) for k in m.sum(axis=0)]
    return bootstrap_curve_ci(m, level=level, n_resamples=n_resamples, seed=seed)


def paired_difference_interval(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The interval the tables print for ``mean(a) - mean(b)`` on the same tasks: for
    0/1 verdicts Newcombe's hybrid score interval (:func:`newcombe_paired_interval`),
    for per-task means over seeds the paired percentile bootstrap
    (:func:`paired_bootstrap_diff`)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size == 0:
        raise ValueError("paired_difference_interval needs two equally long, non-empty samples")
    if _binary(x) and _binary(y):
        xa, yb = x.astype(bool), y.astype(bool)
        return newcombe_paired_interval(
            int((xa & yb).sum()),
            int((xa & ~yb).sum()),
            int((~xa & yb).sum()),
            int((~xa & ~yb).sum()),
            level=level,
        )
    return paired_bootstrap_diff(x, y, level=level, n_resamples=n_resamples, seed=seed)


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests (TOST) of a paired difference against ``±margin``.

    ``p_value`` is the larger of the two one-sided p-values (H0: d <= -margin, H0: d >=
    margin); equivalence is shown at ``alpha`` when it is below ``alpha``, which is the
    same as the ``1 - 2 alpha`` interval ``[low, high]`` lying inside the margin."""

    estimate: float
    low: float
    high: float
    margin: float
    alpha: float
    p_value: float
    n: int

    @property
    def equivalent(self) -> bool:
        return self.p_value < self.alpha

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "equivalent": self.equivalent}


def tost_paired(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    margin: float,
    *,
    alpha: float = 0.05,
) -> Equivalence:
    """TOST on per-task paired differences ``a - b`` (paired t, Schuirmann 1987).

    With no variance at all the t-test is degenerate. Where every difference is 0 (no
    discordant task), the test is exact instead: an effect of ``margin`` needs at least a
    share ``margin`` of discordant tasks, and seeing none of ``n`` then has probability
    at most ``(1 - margin)**n``, the p-value; the interval is ``±(1 - alpha**(1/n))``,
    the exact one-sided upper bound on that share (so 40 tasks with no discordant one
    bound the difference by 7.2 points, not 0). Any other constant difference is p 1."""
    from scipy.stats import t as student_t

    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size < 2:
        raise ValueError("tost_paired needs two equally long samples of at least 2 tasks")
    if margin <= 0:
        raise ValueError(f"the equivalence margin must be positive, got {margin}")
    d = x - y
    n = d.size
    mean = float(d.mean())
    se = float(d.std(ddof=1)) / np.sqrt(n)
    if se == 0:
        if mean == 0:
            bound = 1.0 - alpha ** (1.0 / n)
            return Equivalence(0.0, -bound, bound, margin, alpha, (1.0 - margin) ** n, n)
        return Equivalence(mean, mean, mean, margin, alpha, 1.0, n)
    df = n - 1
    p_low = float(student_t.sf((mean + margin) / se, df))  # H0: d <= -margin
    p_high = float(student_t.cdf((mean - margin) / se, df))  # H0: d >= margin
    q = float(student_t.ppf(1 - alpha, df))
    return Equivalence(
        mean, float(mean - q * se), float(mean + q * se), margin, alpha, max(p_low, p_high), n
    )


def comparison_verdict(equivalence: Equivalence, different: bool) -> str:
    """One word for a paired comparison: ``different`` (the difference test rejected),
    ``equivalent`` (TOST within the margin), else ``inconclusive``; never "no
    difference" for a comparison that could not tell."""
    if different:
        return "different"
    return "equivalent" if equivalence.equivalent else "inconclusive"
