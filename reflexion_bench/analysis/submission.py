"""Submission rules as an offline analysis: which of a task's trials is submitted.

A run submits the last trial it paid for (``last``, what every number of a report
means by default). ``best_own_tests`` submits, among the trials paid for so far, the one
that passed the most of its in-loop tests (the evaluator's: self-written tests, visible
tests...), the earliest on ties. Both read only the log (each trial's in-loop result is
logged under ``self_test``, whatever the evaluator, see
:mod:`reflexion_bench.analysis.metrics`), so a rule is tried on finished runs without
running anything again.

:func:`apply_submission` rewrites a log so that each trial record carries the hidden
verdict of the program the rule would have submitted had the task stopped after that
trial. Every number that reads "the last trial's verdict" (final, success after k
trials, pass@1 at a budget: the last trial paid for within it) then reads the rule's
submission, with no second definition of any of them. The trial's own verdict is kept
in ``extra.own_hidden``; per-trial tables (the in-loop verdicts against the hidden ones)
should read the unrewritten log.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

SUBMIT_RULES = ("last", "best_own_tests")


def own_tests_passed(rec: Mapping[str, Any]) -> float | None:
    """How many in-loop tests the trial's program passed: ``self_test.details.n_passed``,
    else the ``pass`` entries of ``details.results``, else its in-loop verdict as 1 or 0
    (an evaluator that logs a verdict only); None where the trial has no in-loop result."""
    st = rec.get("self_test")
    if not isinstance(st, Mapping):
        return None
    details = st.get("details")
    if isinstance(details, Mapping):
        if isinstance(details.get("n_passed"), int | float):
            return float(details["n_passed"])
        results = details.get("results")
        if isinstance(results, list) and results:
            return float(
                sum(1 for r in results if isinstance(r, Mapping) and r.get("status") == "pass")
            )
    passed = st.get("passed")
    return None if passed is None else float(bool(passed))


def submitted_indices(scores: Sequence[float | None], rule: str) -> list[int]:
    """For each prefix of a task's trials (in trial order, each with its
    :func:`own_tests_passed`), the index of the trial the rule submits."""
    if rule not in SUBMIT_RULES:
        raise ValueError(f"unknown submission rule {rule!r} (allowed: {', '.join(SUBMIT_RULES)})")
    out: list[int] = []
    best = -1
    for i, s in enumerate(scores):
        # best_own_tests: a trial without an in-loop result never beats one with a result
        # (it gave the loop nothing to choose it by); strictly greater keeps the earliest
        # on ties.
        if rule == "last" or best < 0 or _rank(s) > _rank(scores[best]):
            best = i
        out.append(best)
    return out


def _rank(score: float | None) -> float:
    return -1.0 if score is None else score


def apply_submission(records: Sequence[Mapping[str, Any]], rule: str) -> list[dict[str, Any]]:
    """The log with each trial's ``hidden`` replaced by the hidden result of the trial
    ``rule`` submits after it (see the module docstring); ``last`` returns it as it is.
    The records keep their order; the input is not modified."""
    if rule not in SUBMIT_RULES:
        raise ValueError(f"unknown submission rule {rule!r} (allowed: {', '.join(SUBMIT_RULES)})")
    if rule == "last":
        return [dict(r) for r in records]
    by_task: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_task.setdefault(str(r["task_id"]), []).append(i)
    out = [dict(r) for r in records]
    for idx in by_task.values():
        idx.sort(key=lambda i: int(records[i]["trial"]))
        chosen = submitted_indices([own_tests_passed(records[i]) for i in idx], rule)
        for pos, pick in zip(idx, chosen, strict=True):
            src = records[idx[pick]]
            rec = out[pos]
            extra = dict(rec.get("extra") or {})
            extra["own_hidden"] = copy.deepcopy(records[pos].get("hidden"))
            extra["submitted_trial"] = int(src["trial"])
            # A missing verdict of the chosen trial stays missing (imported logs).
            missing = set((src.get("extra") or {}).get("missing") or ()) & {"hidden"}
            others = [m for m in (extra.get("missing") or ()) if m != "hidden"]
            extra["missing"] = [*others, *sorted(missing)]
            if not extra["missing"]:
                del extra["missing"]
            rec["hidden"] = copy.deepcopy(src.get("hidden"))
            rec["extra"] = extra
    return out


#: Summary keys that pair each trial's in-loop verdict with that trial's own hidden
#: verdict (the paper's Table 2): not about which trial is submitted, so never rewritten.
PER_TRIAL_KEYS = (
    "self_test_confusion",
    "self_test_fp_rate",
    "self_test_rates",
    "self_test_fp_split",
    "in_loop",
)


def resubmit_groups(groups: Sequence[Any], rule: str) -> dict[int, list[dict[str, Any]]]:
    """Rewrite each report group's records and summary under ``rule`` (in place); return
    each group's original records (by ``id``), for the per-trial tables that must read
    each trial's own verdict. ``last`` changes nothing."""
    from reflexion_bench.analysis.metrics import summarize

    original: dict[int, list[dict[str, Any]]] = {}
    if rule == "last":
        return original
    for g in groups:
        original[id(g)] = list(g.records)
        old = g.summary
        g.records = apply_submission(g.records, rule)
        g.summary = summarize(g.records)
        g.summary["answer_key"] = old.get("answer_key")
        for key in PER_TRIAL_KEYS:
            if key in old:
                g.summary[key] = old[key]
    return original
