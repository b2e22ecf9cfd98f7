"""How MBPP+ compares a task's outputs (EvalPlus's per-task oracles), and which of
those oracles cannot reject a program that passes the base tests.

Kept apart from :mod:`reflexion_bench.scorers.plus` (which uses these tables to build
each task's plus suite) so that the run summary can name the weak oracles without
importing the sandbox and the judge.

Two MBPP+ oracles accept (almost) anything, as EvalPlus judges them; the verdicts keep
EvalPlus's semantics, and :func:`weak_oracle_tasks` lists those tasks so that a plus
pass there is not read as evidence:

- ``any`` (Mbpp/164 ``are_equivalent``): every returned value passes; only a program
  that raises or times out on a plus input fails plus.
- ``eq_or_zero`` (Mbpp/295 ``sum_div``): 0 passes on every input besides the reference's
  value, so a program that passes the base tests and returns 0 on every other input
  passes plus (a wrong non-zero value still fails).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: MBPP+ tasks whose outputs compare as sets (order and duplicates ignored), as EvalPlus.
MBPP_SET_TASKS = frozenset(
    {
        "similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
        "larg_nnum", "intersection_array", "find_dissimilar", "Diff",
    }
)  # fmt: skip
#: MBPP+ tasks whose reference returns ``re.Match``: judged "returned something".
MBPP_NOT_NONE_TASKS = frozenset({"check_str", "text_match_three", "text_starta_endb"})

#: Every MBPP+ task whose comparison is not plain equality, as EvalPlus judges it
#: (keyed by the entry point, as the plus suite looks it up).
MBPP_ORACLES = {
    **{name: "set" for name in MBPP_SET_TASKS},
    **{name: "not_none" for name in MBPP_NOT_NONE_TASKS},
    "are_equivalent": "any",  # Mbpp/164: the statement is ambiguous, any answer passes
    "sum_div": "eq_or_zero",  # Mbpp/295
}

#: The oracles under which plus cannot reject a program that passes base, and why.
WEAK_ORACLES = {
    "any": (
        "EvalPlus accepts every returned value (the statement is ambiguous): only a "
        "program that raises or times out on a plus input fails plus"
    ),
    "eq_or_zero": (
        "EvalPlus also accepts 0 on every input: a program that passes base and "
        "returns 0 on the other inputs passes plus"
    ),
}

_MBPP_NAME = re.compile(r"^mbpp_(\d+)_(.+)$")


def weak_oracle_tasks(task_ids: Iterable[str]) -> list[dict[str, str]]:
    """The tasks among ``task_ids`` (MultiPL-E MBPP ids, ``mbpp_<n>_<entry point>``)
    whose MBPP+ oracle is one of :data:`WEAK_ORACLES`, in the order given, each once:
    ``{"task", "mbpp_plus_id", "oracle", "why"}``."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for tid in task_ids:
        m = _MBPP_NAME.match(str(tid))
        if m is None or tid in seen:
            continue
        oracle = MBPP_ORACLES.get(m.group(2), "eq")
        if oracle in WEAK_ORACLES:
            seen.add(tid)
            out.append(
                {
                    "task": str(tid),
                    "mbpp_plus_id": f"Mbpp/{int(m.group(1))}",
                    "oracle": oracle,
                    "why": WEAK_ORACLES[oracle],
                }
            )
    return out
