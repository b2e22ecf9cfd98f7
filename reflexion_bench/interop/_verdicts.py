"""Scores of other harnesses -> this project's hidden verdict (pass / fail).

Our verdict is binary: the submitted candidate passes the benchmark's scorer or not.
Inspect scores are ``C`` (correct), ``I`` (incorrect), ``P`` (partial), ``N`` (no
answer), booleans, numbers, or other strings a custom scorer chose; lm-eval metrics
are numbers (``acc``, ``exact_match``: 0/1; ``f1``, ``bleu``: a grade). The defaults:

- ``C`` pass; ``I``, ``P``, ``N`` fail (a partial answer is not a pass: Inspect's own
  ``value_to_float`` makes ``P`` 0.5, which a binary verdict cannot hold);
- ``true``/``yes``/``correct`` pass, ``false``/``no``/``incorrect`` fail (any case), and
  booleans as they are;
- a number passes when it is at least the threshold, 1.0 by default (full credit only:
  an ``f1`` of 0.8 is not a pass unless the threshold says so).

Everything is configurable per scorer (``--map [SCORER:]VALUE=pass|fail``,
``--threshold [SCORER=]X``); a value neither the defaults nor the options cover is an
error naming the scorer, the value and the option that maps it, never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


class InteropError(ValueError):
    """A source cannot be imported or exported; the message names what to fix."""


#: Inspect's score letters and common words, as this project's verdict.
DEFAULT_VALUES: Mapping[str, bool] = {
    "C": True,
    "I": False,
    "P": False,
    "N": False,
    "true": True,
    "false": False,
    "yes": True,
    "no": False,
    "correct": True,
    "incorrect": False,
}
DEFAULT_THRESHOLD = 1.0


@dataclass(frozen=True)
class VerdictMap:
    """How score values become verdicts, per scorer (``None``: every scorer)."""

    values: Mapping[tuple[str | None, str], bool] = field(default_factory=dict)
    thresholds: Mapping[str | None, float] = field(default_factory=dict)

    def threshold(self, scorer: str) -> float:
        return self.thresholds.get(scorer, self.thresholds.get(None, DEFAULT_THRESHOLD))

    def verdict(self, scorer: str, value: Any) -> bool:
        """The verdict of one score value; :class:`InteropError` for an unmapped value."""
        if isinstance(value, str):
            for key in ((scorer, value), (None, value)):
                if key in self.values:
                    return self.values[key]
            if value in DEFAULT_VALUES:
                return DEFAULT_VALUES[value]
            low = value.strip().lower()
            if low in DEFAULT_VALUES and low not in ("c", "i", "p", "n"):
                return DEFAULT_VALUES[low]
            try:
                number = float(value)
            except ValueError:
                raise InteropError(
                    f"scorer {scorer!r} gave the value {value!r}, which has no verdict: map it "
                    f"with --map {scorer}:{value}=pass (or =fail)"
                ) from None
            return self._number(scorer, number)
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            return self._number(scorer, float(value))
        if value is None:
            raise InteropError(f"scorer {scorer!r} gave no value (null) for a sample")
        raise InteropError(
            f"scorer {scorer!r} gave a {type(value).__name__} value ({str(value)[:60]}), "
            "which has no single verdict: choose a scorer with one value per sample "
            "(--scorer NAME)"
        )

    def _number(self, scorer: str, number: float) -> bool:
        if math.isnan(number):
            raise InteropError(f"scorer {scorer!r} gave NaN for a sample")
        return number >= self.threshold(scorer)

    def describe(self) -> dict[str, Any]:
        """The mapping as written to ``import.json`` (defaults included)."""
        custom = {f"{s}:{v}" if s else v: ok for (s, v), ok in self.values.items()}
        return {
            "values": {**{k: v for k, v in DEFAULT_VALUES.items()}, **custom},
            "numeric": {
                "rule": "pass when value >= threshold",
                "threshold": {
                    (k if k is not None else "*"): v
                    for k, v in {None: DEFAULT_THRESHOLD, **self.thresholds}.items()
                },
            },
        }


def parse_verdict_options(maps: Iterable[str], thresholds: Iterable[str]) -> VerdictMap:
    """``--map [SCORER:]VALUE=pass|fail`` and ``--threshold [SCORER=]X`` as a map."""
    values: dict[tuple[str | None, str], bool] = {}
    for raw in maps:
        key, sep, verdict = raw.rpartition("=")
        if not sep or verdict.strip().lower() not in ("pass", "fail") or not key:
            raise InteropError(
                f"--map {raw!r}: expected [SCORER:]VALUE=pass or [SCORER:]VALUE=fail "
                "(e.g. --map P=pass, --map match:P=pass)"
            )
        scorer, colon, value = key.partition(":")
        values[(scorer, value) if colon else (None, key)] = verdict.strip().lower() == "pass"
    limits: dict[str | None, float] = {}
    for raw in thresholds:
        scorer, sep, number = raw.rpartition("=")
        try:
            x = float(number)
        except ValueError:
            raise InteropError(
                f"--threshold {raw!r}: expected [SCORER=]NUMBER (e.g. --threshold 0.5, "
                "--threshold f1=0.5)"
            ) from None
        if math.isnan(x):
            raise InteropError(f"--threshold {raw!r}: not a number")
        limits[scorer if sep else None] = x
    return VerdictMap(values=values, thresholds=limits)
