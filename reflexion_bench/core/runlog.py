"""The append-only JSONL run log: the source of truth of every report.

One record per finished trial. A task re-run after an interruption gets a new
``attempt_id``; readers keep, per task, only the records of the newest attempt that
reached a ``final`` record, so a resumed run never counts a trial twice even though
the file is never rewritten. The earlier attempts stay in the file, superseded:
:func:`finished_attempts` is the one reader that yields each task's finished attempt
only (``load_run_records`` is its records, flattened); :func:`iter_records` yields every
line, superseded ones included.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion_bench.core.runfolder import LOG_NAME as LOG_NAME
from reflexion_bench.core.runfolder import run_parts

SCHEMA_VERSION = 1

# The logger keeps the name it had in runner/ (moved to core/ so that every layer can
# read a run log): logging settings that name it keep working.
log = logging.getLogger("reflexion_bench.runner.runlog")


class RunLogWriter:
    """Appends records, one line each, flushed and fsynced so a SIGKILL loses at most
    the record being written (which readers then drop)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._repair_tail()
        self._fh = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def _repair_tail(self) -> None:
        # A write cut short leaves a last line without "\n"; terminate it so the next
        # record starts on its own line (the reader then drops the broken one).
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb+") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps({"schema": SCHEMA_VERSION, **record}, ensure_ascii=False, default=str)
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a log, skipping (with a warning) lines that do not parse.

    The file is read as bytes and each line decoded on its own: a line of random bytes
    (a disk error, a write cut short by a crash) is one dropped record, not a
    ``UnicodeDecodeError`` that makes the whole run unreadable.
    """
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                log.warning("%s:%d: dropped a corrupt record (not UTF-8 text)", path, lineno)
                continue
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                log.warning("%s:%d: dropped a truncated/corrupt record", path, lineno)
                continue
            if not isinstance(rec, dict):
                log.warning("%s:%d: dropped a record that is not a JSON object", path, lineno)
            elif rec.get("type", "trial") != "trial" or (
                "task_id" in rec and _is_int(rec.get("trial"))
            ):
                yield rec
            else:
                log.warning("%s:%d: dropped a trial record without task_id/trial", path, lineno)


def _is_int(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return True


def _complete(trials: list[dict[str, Any]]) -> bool:
    """Whether an attempt reached its final trial with no trial record lost.

    Live runs number trials 1..k without gaps, so a gap means a record was dropped as
    corrupt: the attempt is treated as unfinished and the task is redone on resume.
    Imported logs (the paper's) may lack trials by nature and say so in ``extra``.
    """
    if not any(r.get("final") for r in trials):
        return False
    if any((r.get("extra") or {}).get("imported") for r in trials):
        return True
    indices = {int(r["trial"]) for r in trials}
    return indices == set(range(1, max(indices) + 1))


@dataclass(frozen=True)
class FinishedAttempt:
    """One task's finished attempt: the one every report counts."""

    task_id: str
    attempt_id: str
    #: Its trial records, in trial order (one per trial index).
    trials: list[dict[str, Any]]
    #: Other attempts of the task in the same log (abandoned by an interruption or a
    #: crash, or an earlier finished one that ``retry_errored`` redid): left out.
    superseded: int


def finished_attempts(source: Path | Iterable[dict[str, Any]]) -> Iterator[FinishedAttempt]:
    """Each task's finished attempt, once per task, in the order the attempts began.

    A resumed run's log holds, beside a task's finished attempt, the trials of the
    attempts that were cut short (a task caught mid-way is redone from its first trial
    under a new ``attempt_id``) and, after ``retry_errored=true``, the errored attempt
    it redid. This yields the newest attempt of each task that reached its ``final``
    trial with no trial missing, and nothing of the others; a task with no finished
    attempt is left out (a resume still has it to do).

    Args:
        source: A run folder (every shard of a sharded one), a ``log.jsonl`` path, or
            records already read (``iter_records``).
    """
    if isinstance(source, Path):
        paths = run_log_files(source)
        if not paths or not all(p.exists() for p in paths):
            path = paths[0] if paths else source / LOG_NAME
            raise FileNotFoundError(f"no run log at {path} (is `{source}` a run folder?)")
        # Per log: attempts are the newest of one folder; shards hold disjoint tasks.
        for p in paths:
            yield from _finished(iter_records(p))
        return
    yield from _finished(source)


def _finished(records: Iterable[dict[str, Any]]) -> Iterator[FinishedAttempt]:
    by_attempt: dict[tuple[str, str], list[dict[str, Any]]] = {}
    order: list[tuple[str, str]] = []
    for rec in records:
        if rec.get("type", "trial") != "trial":
            continue
        key = (str(rec["task_id"]), str(rec.get("attempt_id", "")))
        if key not in by_attempt:
            by_attempt[key] = []
            order.append(key)
        by_attempt[key].append(rec)
    chosen: dict[str, tuple[str, str]] = {}
    attempts: dict[str, int] = {}
    for key in order:
        attempts[key[0]] = attempts.get(key[0], 0) + 1
        if _complete(by_attempt[key]):
            chosen[key[0]] = key  # later finished attempts replace earlier ones
    position = {key: i for i, key in enumerate(order)}
    for task_id in sorted(chosen, key=lambda t: position[chosen[t]]):
        trials = sorted(by_attempt[chosen[task_id]], key=lambda r: int(r["trial"]))
        # De-duplicate by trial index (defensive: a retried write of the same trial).
        seen: dict[int, dict[str, Any]] = {}
        for r in trials:
            seen[int(r["trial"])] = r
        yield FinishedAttempt(
            task_id=task_id,
            attempt_id=chosen[task_id][1],
            trials=[seen[k] for k in sorted(seen)],
            superseded=attempts[task_id] - 1,
        )


def effective_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per task, the trial records of the newest attempt that finished, in trial order
    (:func:`finished_attempts`' records, flattened).

    Tasks with no finished attempt are left out: they are still to be done.
    """
    return [r for a in _finished(records) for r in a.trials]


def run_log_files(run_dir: Path) -> list[Path]:
    """The logs of a run folder (or a log file path): its ``log.jsonl``, or for the
    folder of a sharded experiment the logs of its ``shard-I-of-N`` folders, by index."""
    if not run_dir.is_dir():
        return [run_dir]
    return [d / LOG_NAME for d in run_parts(run_dir)]


def iter_run_records(run_dir: Path) -> Iterator[dict[str, Any]]:
    """Every record of a run folder's logs (all shards of a sharded one)."""
    for path in run_log_files(run_dir):
        yield from iter_records(path)


def load_run_records(run_dir: Path) -> list[dict[str, Any]]:
    """The effective trial records of a run folder (or a log file path; or the folder of
    a sharded experiment: its shards' records together): the trials of each task's
    finished attempt only (:func:`finished_attempts`), superseded attempts left out."""
    return [r for a in finished_attempts(run_dir) for r in a.trials]


def finished_task_ids(path: Path, retry_errored: bool = False) -> set[str]:
    """Tasks a resume skips: those with a finished attempt in the log. With
    ``retry_errored`` a task whose finished attempt ended in an error (an outage, a
    broken sandbox) is not skipped, so the resume redoes it."""
    if not path.exists():
        return set()
    records = effective_records(iter_records(path))
    errored = errored_task_ids(records) if retry_errored else set()
    return {str(r["task_id"]) for r in records} - errored


def errored_task_ids(records: Iterable[dict[str, Any]]) -> set[str]:
    """Tasks of effective records whose last trial errored (no verdict: counted as
    failed in pass@1, left out of pass@1 over finished tasks)."""
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        tid = str(r["task_id"])
        if tid not in last or int(r["trial"]) >= int(last[tid]["trial"]):
            last[tid] = r
    return {tid for tid, r in last.items() if r.get("error")}
