"""What a paired comparison of two strategies on the same tasks can detect.

The design is paired binary: each task is solved or not by A and by B. Only discordant
tasks carry information, so power depends on the **discordance** ``psi = p01 + p10``
(the share of tasks exactly one strategy solves) and the **effect** ``delta = p10 -
p01`` (the paired difference of pass@1, A minus B), both fractions of tasks.

Normal approximation to McNemar's test (Connor 1987, *Biometrics* 43:207-211; the same
formula as Miettinen 1968 and statsmodels' ``power_mcnemar`` family). Under the null the
paired difference of one task has variance ``psi``; under the alternative ``psi -
delta**2``. With ``z_a = z_{1-alpha/2}`` and ``z_b = z_{power}``::

    n      = (z_a * sqrt(psi) + z_b * sqrt(psi - delta**2))**2 / delta**2
    power  = Phi((|delta| * sqrt(n) - z_a * sqrt(psi)) / sqrt(psi - delta**2))

The detectable difference for ``n`` tasks is the ``delta`` at which that power reaches
the target (solved numerically; it exists because power grows with ``delta``).

**Seeds.** With ``S`` seeds per task the test is on each task's mean difference over
seeds. If the per-seed outcomes of one task are correlated with intra-task correlation
``rho`` (1: seeds change nothing, as under greedy decoding; 0: independent draws), both
variances shrink by the design effect ``f = rho + (1 - rho) / S``, so ``n`` scales by
``f`` and the detectable difference by about ``sqrt(f)``. ``rho`` is estimated from a
pilot with several seeds (:func:`seed_correlation`); without one the planner assumes 1
and says so (seeds are not free power).

**The exact test.** The tables and ``plan`` test with the exact (conditional binomial)
McNemar test, which is discrete and conservative: at 364 tasks and discordance 0.203 it
detects 6.8 points where Connor's formula says 6.6. So for one seed the planner reports
the exact test's own figures: :func:`exact_power` enumerates the discordant count (and
the count favouring A given it) exactly, :func:`exact_detectable_difference` and
:func:`exact_tasks_needed` invert it. Connor's formula stays as the labelled
approximation (and for several seeds, whose test is the sign-flip test on per-task
means). For a family of ``M`` tests under Holm, ``alpha / M`` is the level of Holm's
first step, the one the smallest p-value must pass; planning at it is planning for the
strictest comparison of the family.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

ALPHA = 0.05
POWER = 0.8


def _z(alpha: float, power: float) -> tuple[float, float]:
    from scipy.stats import norm

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    return float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))


def _check(discordance: float, effect: float | None = None) -> None:
    if not 0 < discordance <= 1:
        raise ValueError(
            f"discordance (p01 + p10, a fraction of tasks) must be in (0, 1], got {discordance}"
        )
    if effect is not None:
        if effect == 0:
            raise ValueError("effect (p10 - p01) must be non-zero: no n detects a zero effect")
        # Equality is allowed: every discordant task on one side (LeetcodeHard's logs).
        if abs(effect) > discordance + 1e-12:
            raise ValueError(
                f"|effect| {abs(effect)} must not exceed the discordance {discordance}: the "
                "paired difference p10 - p01 cannot exceed the share of discordant tasks p10 + p01"
            )


def design_effect(seeds: int, rho: float) -> float:
    """``rho + (1 - rho) / seeds``: how much of one seed's variance remains in the mean of
    ``seeds`` seeds whose outcomes correlate with ``rho`` within a task."""
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    if not 0 <= rho <= 1:
        raise ValueError(f"the seed correlation must be in [0, 1], got {rho}")
    return rho + (1 - rho) / seeds


def power(
    n: int,
    discordance: float,
    effect: float,
    *,
    alpha: float = ALPHA,
    seeds: int = 1,
    rho: float = 1.0,
) -> float:
    """Approximate power of a two-sided paired test on ``n`` tasks (normal approximation)."""
    _check(discordance, effect)
    return _power_at(n, discordance, abs(effect), alpha, seeds, rho)


def tasks_needed(
    discordance: float,
    effect: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    seeds: int = 1,
    rho: float = 1.0,
) -> int:
    """Tasks needed to detect ``effect`` with the given power (Connor's formula x f)."""
    _check(discordance, effect)
    z_a, z_b = _z(alpha, power)
    d = abs(effect)
    n1 = (z_a * math.sqrt(discordance) + z_b * math.sqrt(discordance - d * d)) ** 2 / (d * d)
    return math.ceil(n1 * design_effect(seeds, rho) - 1e-9)


def detectable_difference(
    n: int,
    discordance: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    seeds: int = 1,
    rho: float = 1.0,
) -> float:
    """The smallest ``|p10 - p01|`` that ``n`` tasks detect with the given power.

    Returns ``discordance`` itself when even an effect equal to it (every discordant task
    on one side) stays below the target power: nothing smaller is detectable.
    """
    from scipy.optimize import brentq

    if n < 1:
        raise ValueError(f"n (tasks) must be >= 1, got {n}")
    _check(discordance)
    _z(alpha, power)
    hi = discordance * (1 - 1e-9)

    def gap(d: float) -> float:
        return _power_at(n, discordance, d, alpha, seeds, rho) - power

    if gap(hi) < 0:
        return discordance
    return float(brentq(gap, 1e-9, hi, xtol=1e-7))


def _power_at(n: int, psi: float, d: float, alpha: float, seeds: int, rho: float) -> float:
    from scipy.stats import norm

    z_a, _ = _z(alpha, 0.5)
    f = design_effect(seeds, rho)
    if psi - d * d <= 0:  # every task discordant, all one way: no variance left
        return 1.0 if d * math.sqrt(n) > z_a * math.sqrt(f * psi) else 0.0
    z = (d * math.sqrt(n) - z_a * math.sqrt(f * psi)) / math.sqrt(f * (psi - d * d))
    return float(norm.cdf(z))


def exact_power(n: int, p01: float, p10: float, *, alpha: float = ALPHA) -> float:
    """Exact power of the exact two-sided McNemar test (one seed), by enumeration.

    The discordant count ``D`` is Binomial(n, p01 + p10); given ``D = d`` the count
    favouring A is Binomial(d, p10 / (p01 + p10)) and the test rejects where the
    two-sided binomial p-value at 1/2 is at most ``alpha`` (scipy's ``binomtest``, the
    test :func:`reflexion_bench.analysis.stats.mcnemar_exact` runs). Every ``d`` of
    0..n is enumerated at once (its rejection region is two tails,
    :func:`critical_counts`), so a call takes milliseconds at n in the thousands.
    """
    from scipy.stats import binom

    psi = p01 + p10
    if p01 < 0 or p10 < 0 or not 0 < psi <= 1:
        raise ValueError(f"p01, p10 must be >= 0 with 0 < p01 + p10 <= 1, got {p01}, {p10}")
    if n < 1:
        raise ValueError(f"n (tasks) must be >= 1, got {n}")
    q = min(1.0, p10 / psi)
    # Only the discordant counts with any probability (outside them the mass is below
    # 1e-13): a plan searching thousands of n stays fast.
    lo = int(binom.ppf(1e-13, n, psi))
    hi = int(binom.isf(1e-13, n, psi))
    d = np.arange(max(0, lo - 1), min(n, hi + 1) + 1)
    c = _critical_counts_cached(n, float(alpha))[d]
    rejects = c >= 0
    # P(K <= c) + P(K >= d - c) for K ~ Binomial(d, q); the tails never overlap, since
    # 2 P(K <= c | q = 1/2) <= alpha < 1 keeps c below d / 2.
    tails = np.where(rejects, binom.cdf(c, d, q) + binom.sf(d - c - 1, d, q), 0.0)
    return float(np.clip((binom.pmf(d, n, psi) * tails).sum(), 0.0, 1.0))


def _critical_counts_cached(n: int, alpha: float) -> np.ndarray:
    # The critical count of d discordant tasks does not depend on n: one table per level,
    # grown in powers of two as larger n are asked for.
    size = 1 << max(6, n.bit_length())
    return _critical_table(size, alpha)


@functools.lru_cache(maxsize=32)
def _critical_table(size: int, alpha: float) -> np.ndarray:
    table = critical_counts(size, alpha)
    table.setflags(write=False)
    return table


def critical_counts(n: int, alpha: float = ALPHA) -> np.ndarray:
    """For d = 0..n discordant tasks, the largest count ``c`` on the losing side at which
    the exact two-sided McNemar test rejects (-1 where no count rejects): it rejects at
    ``k <= c`` or ``k >= d - c`` (the region :func:`rejection_region` lists).

    At 1/2 the binomial is symmetric, so the two-sided p-value of ``k <= d / 2`` is
    ``min(1, 2 P(K <= k))`` (scipy's ``binomtest`` sums the outcomes no more likely than
    ``k``: the same two tails); ``c`` is the largest ``k`` with ``2 P(K <= k) <= alpha``.
    """
    from scipy.stats import binom

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    d = np.arange(n + 1)
    c = binom.ppf(alpha / 2, d, 0.5).astype(int)  # smallest k with P(K <= k) >= alpha / 2
    # binomtest compares with a relative tolerance of 1e-7; so does this.
    over = 2 * binom.cdf(c, d, 0.5) > alpha * (1 + 1e-7)
    out: np.ndarray = np.where(over, c - 1, c)
    return out


def _exact_power_at(n: int, psi: float, d: float, alpha: float) -> float:
    return exact_power(n, (psi - d) / 2, (psi + d) / 2, alpha=alpha)


def exact_detectable_difference(
    n: int, discordance: float, *, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    """The smallest ``|p10 - p01|`` at which the exact McNemar test on ``n`` tasks (one
    seed) reaches ``power``, by :func:`exact_power`; None when even every discordant
    task on one side stays below it.

    At a fixed discordance the exact power grows with the effect (the two tails are
    symmetric, and the count favouring A moves away from d / 2), so the root is unique.
    """
    from scipy.optimize import brentq

    if n < 1:
        raise ValueError(f"n (tasks) must be >= 1, got {n}")
    _check(discordance)
    _z(alpha, power)
    if _exact_power_at(n, discordance, discordance, alpha) < power:
        return None
    return float(
        brentq(
            lambda d: _exact_power_at(n, discordance, d, alpha) - power,
            0.0,
            discordance,
            xtol=1e-7,
        )
    )


#: Where the exact sample-size search stops (tasks): beyond it the plan says so.
MAX_EXACT_TASKS = 200_000


def exact_tasks_needed(
    discordance: float, effect: float, *, alpha: float = ALPHA, power: float = POWER
) -> int | None:
    """The smallest ``n`` at which the exact McNemar test (one seed) reaches ``power``
    for ``effect`` at ``discordance``, by :func:`exact_power`; None beyond
    :data:`MAX_EXACT_TASKS`.

    The exact power is not monotone in ``n`` (the test is discrete: it saw-tooths by a
    few points), so a few more tasks than this can dip just below the target; the search
    starts at 0.8 times Connor's figure (the exact test, being conservative, needs more
    than that approximation, not a fifth less) and goes up one task at a time.
    """
    _check(discordance, effect)
    _z(alpha, power)
    d = abs(effect)
    n = max(1, int(0.8 * tasks_needed(discordance, effect, alpha=alpha, power=power)))
    while n <= MAX_EXACT_TASKS:
        if _exact_power_at(n, discordance, d, alpha) >= power:
            return n
        n += 1
    return None


def rejection_region(d: int, alpha: float = ALPHA) -> np.ndarray:
    """The counts ``k`` of ``d`` discordant tasks at which the exact McNemar test rejects."""
    from scipy.stats import binomtest

    ks = [k for k in range(d + 1) if binomtest(k, d, 0.5).pvalue <= alpha]
    return np.asarray(ks, dtype=int)


def seed_correlation(per_seed_diffs: np.ndarray) -> float | None:
    """Intra-task correlation of the per-seed paired differences (one-way ANOVA ICC),
    clipped to [0, 1]; ``per_seed_diffs`` is tasks x seeds. None with one seed or no
    variance at all (every seed of every task alike: nothing to estimate from)."""
    x = np.asarray(per_seed_diffs, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 2:
        return None
    n, s = x.shape
    grand = x.mean()
    row = x.mean(axis=1)
    msb = s * ((row - grand) ** 2).sum() / (n - 1)
    msw = ((x - row[:, None]) ** 2).sum() / (n * (s - 1))
    if msb + (s - 1) * msw == 0:
        return None
    icc = (msb - msw) / (msb + (s - 1) * msw)
    return float(min(1.0, max(0.0, icc)))


@dataclass(frozen=True)
class Pilot:
    """Discordance and effect measured on two runs' verdicts for the same tasks."""

    n: int
    p01: float  # B solves, A does not
    p10: float  # A solves, B does not
    seeds: int
    rho: float | None

    @property
    def discordance(self) -> float:
        return self.p01 + self.p10

    @property
    def effect(self) -> float:
        return self.p10 - self.p01

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "discordance": self.discordance, "effect": self.effect}


def pilot(a: Sequence[Sequence[bool]], b: Sequence[Sequence[bool]]) -> Pilot:
    """The discordance of A vs B from per-task verdicts, tasks x seeds (seeds paired by
    position: seed i of A with seed i of B), averaged over seeds."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 2 or x.size == 0:
        raise ValueError("pilot needs two equally shaped, non-empty tasks x seeds verdict tables")
    p10 = float((x * (1 - y)).mean())
    p01 = float(((1 - x) * y).mean())
    return Pilot(x.shape[0], p01, p10, x.shape[1], seed_correlation(x - y))


#: The equivalence margin when none is given: 5 points of pass@1 (``report
#: --equivalence-margin``), stated in every table note that uses it.
DEFAULT_MARGIN = 0.05


def assess(
    a: Sequence[bool] | np.ndarray,
    b: Sequence[bool] | np.ndarray,
    *,
    p_value: float,
    margin: float = DEFAULT_MARGIN,
    alpha: float = ALPHA,
    target_power: float = POWER,
) -> dict[str, Any]:
    """What one paired comparison of verdicts on the same tasks says and could have said.

    ``p_value`` is the difference test's (Holm-adjusted where it belongs to a family).
    Returns the observed discordance, the smallest difference these tasks could detect
    at ``target_power`` given that discordance (None when no task is discordant: no
    information to plan from; the exact McNemar test's at one seed), the TOST result
    against ``±margin`` and the one-word
    verdict (different / equivalent / inconclusive).

    With several seeds ``a`` and ``b`` are tasks x seeds: TOST runs on the per-task means,
    and the detectable difference is the planner's with the design effect of the seeds'
    measured correlation (seeds paired by position for the discordance, as in
    :func:`pilot`; 1, seeds adding nothing, where it cannot be estimated)."""
    from reflexion_bench.analysis.stats import comparison_verdict, tost_paired

    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim == 1:
        x, y = x[:, None], y[:, None]
    n, seeds = int(x.shape[0]), int(x.shape[1])
    psi = float((x != y).mean()) if n else 0.0
    rho = seed_correlation(x - y) if seeds > 1 else None
    detectable = (
        detectable_difference(
            n,
            psi,
            alpha=alpha,
            power=target_power,
            seeds=seeds,
            rho=1.0 if rho is None else rho,
        )
        if n and psi > 0
        else None
    )
    reason = None if detectable is not None else "no discordant task"
    if detectable is not None and seeds == 1:
        # One seed: the test run is the exact McNemar test, so its own detectable
        # difference (Connor's approximation is a few tenths of a point optimistic).
        detectable = exact_detectable_difference(n, psi, alpha=alpha, power=target_power)
        if detectable is None:
            reason = "too few discordant tasks for any detectable difference"
    elif detectable is not None:
        f_rho = 1.0 if rho is None else rho
        if _power_at(n, psi, psi, alpha, seeds, f_rho) < target_power:
            # Even every discordant task on one side stays below the target power: no
            # difference at this discordance is detectable (not "psi is detectable").
            detectable, reason = None, "too few discordant tasks for any detectable difference"
    eq = tost_paired(x.mean(axis=1), y.mean(axis=1), margin, alpha=alpha) if n >= 2 else None
    verdict = "inconclusive" if eq is None else comparison_verdict(eq, p_value < alpha)
    out: dict[str, Any] = {
        "verdict": verdict,
        "discordance": psi,
        "detectable_difference": detectable,
        "detectable_reason": reason,
        "equivalence": None if eq is None else eq.to_dict(),
        "margin": margin,
    }
    if seeds > 1:
        out["seeds"] = seeds
        out["seed_correlation"] = rho
    return out
