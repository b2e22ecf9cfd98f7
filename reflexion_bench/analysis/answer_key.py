"""The answer-key label of a run, from its logs: ``clean`` or ``answer-in-loop``.

A run is ``answer-in-loop`` when any loop role read the answer key (the gold answer,
the environment's success signal, the hidden verdict; see
:mod:`reflexion_bench.core.answer_key`), ``clean`` when the logs show none. The counts
come from the logs only, never from the config or in-memory state:

- ``log.jsonl``: each trial record's ``answer_key_uses`` (``{source: count}``), over
  the effective records (the newest finished attempt of each task);
- ``memory_events.jsonl`` (lifelong memory): each ``end_task`` event's
  ``answer_key_uses``, i.e. reads after a task's last trial (``memory.label_from_hidden``)
  that reach later tasks through the store; the last event of each task in the records.

Logs written before the counting existed have no such field. Their trials are counted
from the paper evaluators' marks in ``self_test.details`` (the gold evaluator's
``em``, the ALFWorld evaluator's ``won``); a trial with neither is *unrecorded*, and a
run with unrecorded trials and no use found is labelled ``unknown`` (never guessed
clean).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.core.answer_key import (
    ANSWER_IN_LOOP,
    CLEAN,
    EVALUATOR_ENV_SUCCESS,
    EVALUATOR_GOLD_ANSWER,
)
from reflexion_bench.core.runlog import iter_records

#: Label of a run whose logs cannot tell (written before the counting, or imported).
UNKNOWN = "unknown"
#: The lifelong memory's events file in a run folder (``memory.events_path``'s default;
#: a literal here so that reading a run does not import the memory package).
MEMORY_EVENTS_NAME = "memory_events.jsonl"


def _clean_counts(uses: Mapping[Any, Any]) -> dict[str, int]:
    return {str(k): int(v) for k, v in uses.items() if isinstance(v, int | float) and v}


def trial_uses(rec: Mapping[str, Any]) -> tuple[dict[str, int] | None, bool]:
    """(the uses of one trial record, whether they were inferred); None: not recorded."""
    uses = rec.get("answer_key_uses")
    if isinstance(uses, Mapping):
        return _clean_counts(uses), False
    # Older logs: the paper evaluators are recognisable by the details they log.
    details = (rec.get("self_test") or {}).get("details") or {}
    if "em" in details:
        return {EVALUATOR_GOLD_ANSWER: 1}, True
    if "won" in details and "stop_reason" in details:
        return {EVALUATOR_ENV_SUCCESS: 1}, True
    return None, False


def memory_end_events(
    run_dirs: Iterable[Path], task_ids: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """The last ``end_task`` memory event of each task (of ``task_ids``) in ``run_dirs``."""
    wanted = None if task_ids is None else {str(t) for t in task_ids}
    out: list[dict[str, Any]] = []
    for run_dir in run_dirs:
        path = Path(run_dir) / MEMORY_EVENTS_NAME
        if not path.is_file():
            continue
        last: dict[str, dict[str, Any]] = {}
        for ev in iter_records(path):
            if ev.get("event") != "end_task":
                continue
            tid = str(ev.get("task_id"))
            if wanted is None or tid in wanted:
                last[tid] = ev
        out.extend(last.values())
    return out


def answer_key_summary(
    records: Sequence[Mapping[str, Any]], memory_events: Iterable[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The answer-key section of a summary (see the module docstring).

    Args:
        records: Effective trial records of one run (or of a pooled group of runs).
        memory_events: The ``end_task`` memory events of those tasks (may be empty).

    Returns:
        ``label`` (``clean`` / ``answer-in-loop`` / ``unknown``), ``uses`` (total reads),
        ``by_source``, ``trials``, ``trials_with_uses``, ``tasks_with_uses``,
        ``unrecorded_trials``, ``inferred_trials`` and ``memory_events``.
    """
    by_source: dict[str, int] = {}
    tasks: set[str] = set()
    with_uses = unrecorded = inferred = 0
    for rec in records:
        uses, guessed = trial_uses(rec)
        if uses is None:
            unrecorded += 1
            continue
        inferred += int(guessed)
        if uses:
            with_uses += 1
            tasks.add(str(rec.get("task_id")))
        for src, n in uses.items():
            by_source[src] = by_source.get(src, 0) + n
    n_events = 0
    for ev in memory_events:
        n_events += 1
        uses = ev.get("answer_key_uses")
        if not isinstance(uses, Mapping):
            # A lifelong run from before the counting: it may have read the hidden
            # verdict (the old fallback), so it cannot be called clean.
            unrecorded += 1
            continue
        counts = _clean_counts(uses)
        if counts:
            tasks.add(str(ev.get("task_id")))
        for src, n in counts.items():
            by_source[src] = by_source.get(src, 0) + n
    total = sum(by_source.values())
    if total:
        label = ANSWER_IN_LOOP
    elif unrecorded:
        label = UNKNOWN
    else:
        label = CLEAN
    return {
        "label": label,
        "uses": total,
        "by_source": dict(sorted(by_source.items())),
        "trials": len(records),
        "trials_with_uses": with_uses,
        "tasks_with_uses": len(tasks),
        "unrecorded_trials": unrecorded,
        "inferred_trials": inferred,
        "memory_events": n_events,
    }


def run_answer_key(
    records: Sequence[Mapping[str, Any]], run_dirs: Iterable[Path]
) -> dict[str, Any]:
    """:func:`answer_key_summary` of records read from ``run_dirs`` (and their memory events)."""
    task_ids = {str(r.get("task_id")) for r in records}
    return answer_key_summary(records, memory_end_events(run_dirs, task_ids))


def label_text(section: Mapping[str, Any] | None) -> str:
    """``clean``, ``answer-in-loop (N uses)`` or ``unknown``: for tables and plots."""
    if not section:
        return UNKNOWN
    label = str(section.get("label") or UNKNOWN)
    if label == ANSWER_IN_LOOP:
        n = int(section.get("uses") or 0)
        return f"{label} ({n} use{'s' if n != 1 else ''})"
    return label


def describe(section: Mapping[str, Any] | None) -> str:
    """One line for a printed summary: the label, the count and where the uses were."""
    text = label_text(section)
    if not section:
        return text
    if section.get("by_source"):
        text += ": " + ", ".join(f"{k} {v}" for k, v in section["by_source"].items())
        text += f" (in {section.get('tasks_with_uses', 0)} tasks)"
    if section.get("unrecorded_trials"):
        text += f"; {section['unrecorded_trials']} trials/tasks not counted in the log"
    return text
