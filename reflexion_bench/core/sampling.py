"""The seed of one sampled call, derived from the run's seed and the sample's index.

A sampled call (a strategy's trial 2..K at a temperature > 0, one sample of
``best_of_n``) sends its own seed, so a backend that honours seeds does not return the
same sample every trial. The seed must differ between every (run seed, sample index)
pair: the earlier ``seed + index`` sent the same seed for run seed s at index k and run
seed s + 1 at index k - 1, so two "independent" seeds of a study shared their samples.

:func:`sample_seed` is the Cantor pairing of the two numbers, which is one-to-one on
pairs of naturals: ``pi(a, i) = (a + i)(a + i + 1) / 2 + i``, where ``a`` is the run
seed mapped one-to-one onto the naturals (``2s`` for s >= 0, ``-2s - 1`` below) and
``i`` the sample index. Backends take seeds of 31 to 32 bits (llama.cpp's is a uint32),
so a pair whose pairing does not fit in 31 bits (``a + i`` above about 65,500, far past
any seed a study uses) is hashed into 31 bits instead (SHA-256): there, and only there,
two pairs could share a seed.

Greedy calls (temperature 0) are not sampled calls: they send the run's seed as it is,
so their requests, and the response cache's keys of them, do not depend on this.
"""

from __future__ import annotations

import hashlib

#: Seeds sent are below this (a non-negative int32, which every backend accepts).
SEED_LIMIT = 2**31


def sample_seed(run_seed: int, sample_index: int) -> int:
    """The seed sent by sample ``sample_index`` (>= 0) of a run seeded ``run_seed``
    (see the module docstring: one-to-one below 2**31, hashed beyond)."""
    if sample_index < 0:
        raise ValueError(f"a sample index is >= 0, got {sample_index}")
    a = 2 * run_seed if run_seed >= 0 else -2 * run_seed - 1
    s = a + sample_index
    paired = s * (s + 1) // 2 + sample_index
    if paired < SEED_LIMIT:
        return paired
    digest = hashlib.sha256(f"{run_seed}/{sample_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % SEED_LIMIT
