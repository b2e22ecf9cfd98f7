"""Type-aware mutation of test inputs (how the HumanEval+ inputs are generated).

In the manner of EvalPlus's type-aware mutation: an input (a tuple of arguments) becomes
a new one by changing one argument according to its type: ints and floats step,
scale, flip sign or take a value seen in another input; strings lose, gain, swap or
repeat characters; lists and tuples lose, gain, replace, reorder or repeat elements
(each new element a mutation of an existing one, so nested structures stay
well-formed); dicts change a value or gain/lose a key. Numbers stay within a few times
the largest magnitude seen in the seeds, so an input never asks for gigabytes.

Pure functions of a seeded ``random.Random``: the same seeds and seed give the same
inputs. Whether an input is *valid* is not decided here (the contract and the reference
solutions decide: see ``scripts/make_humaneval_plus.py``).
"""

from __future__ import annotations

import contextlib
import random
import string
from collections.abc import Iterable
from typing import Any

_CHARS = string.ascii_letters + string.digits + " _-.,!?'"


class Ingredients:
    """Scalars seen in the seed inputs, by type, and the magnitude bounds."""

    def __init__(self, seeds: Iterable[tuple[Any, ...]]) -> None:
        self.ints: list[int] = []
        self.floats: list[float] = []
        self.strs: list[str] = []
        for s in seeds:
            self._walk(s, 0)
        self.ints = sorted(set(self.ints)) or [0, 1]
        self.floats = sorted(set(self.floats)) or [0.0, 1.0]
        self.strs = sorted(set(self.strs)) or [""]
        self.int_bound = max(20, 4 * max(abs(i) for i in self.ints))
        self.float_bound = max(20.0, 4 * max(abs(f) for f in self.floats))
        self.max_len = max(8, 2 * max((len(s) for s in self.strs), default=0))

    def _walk(self, x: Any, depth: int) -> None:
        if depth > 50:
            return
        if isinstance(x, bool):
            return
        if isinstance(x, int):
            self.ints.append(x)
        elif isinstance(x, float):
            self.floats.append(x)
        elif isinstance(x, str):
            self.strs.append(x)
        elif isinstance(x, list | tuple | set | frozenset):
            for i in x:
                self._walk(i, depth + 1)
        elif isinstance(x, dict):
            for k, v in x.items():
                self._walk(k, depth + 1)
                self._walk(v, depth + 1)


def _clip_int(v: int, ing: Ingredients) -> int:
    return max(-ing.int_bound, min(ing.int_bound, v))


def mutate_value(x: Any, rng: random.Random, ing: Ingredients, depth: int = 0) -> Any:
    """A mutation of one value, by its type."""
    if isinstance(x, bool):
        return not x
    if isinstance(x, int):
        op = rng.randrange(8)
        if op == 0:
            return _clip_int(x + 1, ing)
        if op == 1:
            return _clip_int(x - 1, ing)
        if op == 2:
            return _clip_int(-x, ing)
        if op == 3:
            return _clip_int(x * 2, ing)
        if op == 4:
            return x // 2
        if op == 5:
            return rng.choice(ing.ints)
        if op == 6:
            return rng.choice((0, 1, -1))
        return rng.randint(-ing.int_bound, ing.int_bound)
    if isinstance(x, float):
        op = rng.randrange(7)
        b = ing.float_bound
        if op == 0:
            return max(-b, min(b, x + rng.uniform(-1.0, 1.0)))
        if op == 1:
            return max(-b, min(b, x * 2))
        if op == 2:
            return -x
        if op == 3:
            return x / 2
        if op == 4:
            return rng.choice(ing.floats)
        if op == 5:
            return round(x, rng.randrange(3))
        return round(rng.uniform(-b, b), 3)
    if isinstance(x, str):
        return _mutate_str(x, rng, ing)
    if isinstance(x, list | tuple):
        out = _mutate_seq(list(x), rng, ing, depth)
        return tuple(out) if isinstance(x, tuple) else out
    if isinstance(x, dict):
        return _mutate_dict(dict(x), rng, ing, depth)
    return x


def _mutate_str(x: str, rng: random.Random, ing: Ingredients) -> str:
    op = rng.randrange(10)
    pool = x + rng.choice(ing.strs) if ing.strs else x
    ch = rng.choice(pool) if pool and rng.random() < 0.7 else rng.choice(_CHARS)
    if op == 0 and x:
        i = rng.randrange(len(x))
        return x[:i] + x[i + 1 :]
    if op == 1 and len(x) < ing.max_len:
        i = rng.randrange(len(x) + 1)
        return x[:i] + ch + x[i:]
    if op == 2 and len(x) > 1:
        i, j = sorted(rng.sample(range(len(x)), 2))
        return x[:i] + x[j] + x[i + 1 : j] + x[i] + x[j + 1 :]
    if op == 3 and x:
        i = rng.randrange(len(x))
        return x[:i] + ch + x[i + 1 :]
    if op == 4 and x and 2 * len(x) <= ing.max_len:
        i, j = sorted((rng.randrange(len(x) + 1), rng.randrange(len(x) + 1)))
        return x[:j] + x[i:j] + x[j:]
    if op == 5:
        return x.swapcase() if rng.random() < 0.5 else x[::-1]
    if op == 6 and x:
        i, j = sorted((rng.randrange(len(x) + 1), rng.randrange(len(x) + 1)))
        return x[i:j]
    if op == 7:
        other = rng.choice(ing.strs)
        return (x + other)[: ing.max_len]
    if op == 8:
        return rng.choice(ing.strs)
    return ""


def _mutate_seq(x: list[Any], rng: random.Random, ing: Ingredients, depth: int) -> list[Any]:
    op = rng.randrange(9)
    if not x:
        op = 1 if rng.random() < 0.7 else 8
    if op == 0 and x:
        del x[rng.randrange(len(x))]
    elif op == 1:
        src = rng.choice(x) if x else _fresh(rng, ing)
        x.insert(rng.randrange(len(x) + 1), mutate_value(src, rng, ing, depth + 1))
    elif op == 2 and x:
        i = rng.randrange(len(x))
        x[i] = mutate_value(x[i], rng, ing, depth + 1)
    elif op == 3:
        rng.shuffle(x)
    elif op == 4:
        x.reverse()
    elif op == 5 and len(x) < 64:
        x = x + x
    elif op == 6:
        try:
            x.sort()
        except TypeError:
            rng.shuffle(x)
    elif op == 7 and x:
        i = rng.randrange(len(x))
        x.append(x[i])
    elif op == 8:
        x = []
    return x


def _fresh(rng: random.Random, ing: Ingredients) -> Any:
    kind = rng.randrange(3)
    if kind == 0:
        return rng.choice(ing.ints)
    if kind == 1:
        return rng.choice(ing.floats)
    return rng.choice(ing.strs)


def _mutate_dict(
    x: dict[Any, Any], rng: random.Random, ing: Ingredients, depth: int
) -> dict[Any, Any]:
    keys = list(x)
    op = rng.randrange(3)
    if op == 0 and keys:
        k = rng.choice(keys)
        x[k] = mutate_value(x[k], rng, ing, depth + 1)
    elif op == 1 and keys:
        del x[rng.choice(keys)]
    else:
        k = mutate_value(rng.choice(keys), rng, ing, depth + 1) if keys else rng.choice(ing.strs)
        v = mutate_value(x[rng.choice(keys)], rng, ing, depth + 1) if keys else rng.choice(ing.ints)
        with contextlib.suppress(TypeError):  # an unhashable key: no change
            x[k] = v
    return x


def mutate_input(args: tuple[Any, ...], rng: random.Random, ing: Ingredients) -> tuple[Any, ...]:
    """A new input: one argument mutated (sometimes a second one too)."""
    if not args:
        return args
    out = list(args)
    for _ in range(1 if rng.random() < 0.7 else 2):
        i = rng.randrange(len(out))
        out[i] = mutate_value(out[i], rng, ing)
    return tuple(out)


def generate(
    seeds: list[tuple[Any, ...]],
    rng: random.Random,
    count: int,
    max_repr: int = 2000,
    tries_per_input: int = 20,
) -> list[tuple[Any, ...]]:
    """Up to ``count`` distinct new inputs mutated from ``seeds`` and from each other
    (not equal to a seed; each at most ``max_repr`` characters as Python source)."""
    if not seeds:
        return []
    ing = Ingredients(seeds)
    seen = {repr(s) for s in seeds}
    corpus = list(seeds)
    out: list[tuple[Any, ...]] = []
    tries = 0
    while len(out) < count and tries < count * tries_per_input:
        tries += 1
        parent = rng.choice(corpus)
        child = mutate_input(parent, rng, ing)
        text = repr(child)
        if text in seen or len(text) > max_repr:
            continue
        seen.add(text)
        out.append(child)
        corpus.append(child)
    return out
