"""Uncertainty for success rates over tasks: bootstrap intervals and paired tests.

Tasks are the unit of resampling (the paper's numbers are shares of tasks). All
functions are deterministic given ``seed``.

- :func:`bootstrap_ci`: percentile bootstrap interval of a mean (95% by default).
- :func:`bootstrap_curve_ci`: the same for every trial of a curve at once, resampling
  whole tasks so that the band of a curve is consistent across trials.
- :func:`mcnemar_exact`: McNemar's test on two strategies' verdicts for the same
  tasks, exact form (a two-sided binomial test on the discordant pairs, scipy).
- :func:`paired_bootstrap_diff`: bootstrap interval of the difference of two success
  rates measured on the same tasks, resampling tasks jointly.
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


def paired_bootstrap_diff(
    a: Sequence[float],
    b: Sequence[float],
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
