"""How reliable is the loop's own feedback, and what does a wrong verdict cost? From the
run log only (the self-test-reliability study, issue 21; the paper's Table 2 question).

- :func:`confusion_by_trial`: the self-test verdict vs the hidden verdict at each trial
  k (TP: self pass & hidden pass, FP: self pass & hidden fail, FN: self fail & hidden
  pass, TN: both fail), over the trials that ran self-tests and have a hidden verdict.
- :func:`rewrites`: what became of correct programs the self-tests rejected (FN). In a
  loop that stops on a self-test pass, a trial k+1 exists only after a self-test
  failure at k, so a *break* (hidden right at k, wrong at k+1) is a correct program
  rewritten into a wrong one because its self-tests were wrong; the table counts it
  from the verdicts rather than assuming it, and shows breaks with any other cause
  apart (``breaks_other``, e.g. loops that do not stop on a pass).
- :func:`elapsed_s`: the run's wall-clock time from the log (the union of its trials'
  intervals: tasks run concurrently, so this is what a user waits, unlike the sum of
  per-trial times; the pause of an interrupted and resumed run is left out).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reflexion_bench.analysis.metrics import fixes_breaks, hidden_verdict


def _self_verdict(rec: dict[str, Any]) -> bool | None:
    st = rec.get("self_test")
    if not isinstance(st, dict) or st.get("passed") is None:
        return None
    return bool(st["passed"])


def _by_task(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        out.setdefault(str(r["task_id"]), []).append(r)
    for recs in out.values():
        recs.sort(key=lambda r: int(r["trial"]))
    return out


def confusion_by_trial(records: Sequence[dict[str, Any]]) -> list[dict[str, int]]:
    """Per trial index k (ascending): trials, hidden passes and TP/FP/FN/TN counts."""
    rows: dict[int, dict[str, int]] = {}
    for r in records:
        k = int(r["trial"])
        row = rows.setdefault(
            k, {"trial": k, "trials": 0, "hidden_pass": 0, "tp": 0, "fp": 0, "fn": 0, "tn": 0}
        )
        row["trials"] += 1
        hidden = hidden_verdict(r)
        row["hidden_pass"] += int(bool(hidden))
        own = _self_verdict(r)
        if own is None or hidden is None:
            continue
        key = ("tp" if hidden else "fp") if own else ("fn" if hidden else "tn")
        row[key] += 1
    return [rows[k] for k in sorted(rows)]


def rewrites(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the loop did with correct programs its self-tests rejected (module docstring).

    Keys: ``fn`` (trials whose correct program failed its self-tests), ``fn_to_wrong`` /
    ``fn_to_right`` (the next trial's program fails / passes the hidden tests),
    ``fn_submitted`` (an FN at the task's last trial: the correct program was submitted
    anyway), ``fixes`` / ``breaks`` (between trials, as the ``main`` table counts them:
    :func:`~reflexion_bench.analysis.metrics.fixes_breaks`),
    ``breaks_other`` (breaks not preceded by a self-test failure), ``tasks_ever_right``
    (a trial passed the hidden tests), ``tasks_lost`` (of those, the submitted program
    fails), ``tests_per_task`` (mean self-tests kept per task at its first trial).
    """
    out: dict[str, Any] = dict.fromkeys(
        (
            "fn",
            "fn_to_wrong",
            "fn_to_right",
            "fn_submitted",
            "fixes",
            "breaks",
            "breaks_other",
            "tasks_ever_right",
            "tasks_lost",
        ),
        0,
    )
    kept: list[int] = []
    tasks = _by_task(records)
    for recs in tasks.values():
        verdicts = [hidden_verdict(r) for r in recs]
        task_fixes, task_breaks = fixes_breaks(verdicts)  # the report's own count
        out["fixes"] += task_fixes
        out["breaks"] += task_breaks
        for (a, va), (_, vb) in itertools.pairwise(zip(recs, verdicts, strict=True)):
            if va is True and vb is False:
                out["breaks_other"] += int(_self_verdict(a) is not False)
        for i, (r, v) in enumerate(zip(recs, verdicts, strict=True)):
            if not (v and _self_verdict(r) is False):
                continue
            out["fn"] += 1
            if i + 1 == len(recs):
                out["fn_submitted"] += 1
            elif verdicts[i + 1] is not None:
                out["fn_to_right" if verdicts[i + 1] else "fn_to_wrong"] += 1
        if any(v is True for v in verdicts):
            out["tasks_ever_right"] += 1
            out["tasks_lost"] += int(verdicts[-1] is False)
        details = (recs[0].get("self_test") or {}).get("details") or {}
        if int(recs[0]["trial"]) == 1 and isinstance(details.get("n_tests"), int):
            kept.append(int(details["n_tests"]))
    out["n_tasks"] = len(tasks)
    out["tests_per_task"] = sum(kept) / len(kept) if kept else None
    return out


def elapsed_s(records: Sequence[dict[str, Any]]) -> float | None:
    """Wall-clock time during which the run had a trial in flight: the union of the
    trials' intervals (end time minus trial wall time, to end time). Concurrent trials
    overlap, so this is what a user waits; a pause between an interrupted run and its
    resume is not counted. None when the log lacks times."""
    spans = []
    for r in records:
        t, wall = r.get("time"), r.get("wall_time_s")
        if not isinstance(t, str) or wall is None:
            continue
        try:
            end = datetime.fromisoformat(t).timestamp()
        except ValueError:
            continue
        spans.append((end - float(wall), end))
    if not spans:
        return None
    total, (lo, hi) = 0.0, sorted(spans)[0]
    for start, end in sorted(spans)[1:]:
        if start > hi:
            total += hi - lo
            lo, hi = start, end
        else:
            hi = max(hi, end)
    return total + hi - lo
