"""Read what a previous run logged, for the frozen-first-attempt protocol and the
``wrong_reflection`` control (both replay a *source run* folder).

Only the run log is read (the source of truth), through the same reader as the
reports, so a resumed or half-finished source run is read the way reports read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.core.runlog import LOG_NAME, effective_records, iter_records


@dataclass
class SourceRun:
    """The trial records of one run folder, indexed by task."""

    path: Path
    trials: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    run_id: str = ""

    @classmethod
    def load(cls, path: str | Path) -> SourceRun:
        """Load ``path`` (a run folder or a log file); a missing log gives an empty source."""
        p = Path(path)
        out = cls(path=p)
        log_path = _log_path(p)
        if not log_path.exists():
            return out
        for rec in effective_records(iter_records(log_path)):
            out.trials.setdefault(str(rec["task_id"]), []).append(rec)
            out.run_id = out.run_id or str(rec.get("run_id", ""))
        return out

    def first_trial(self, task_id: str) -> dict[str, Any] | None:
        """The task's trial-1 record, if it has one with a candidate and no error."""
        recs = self.trials.get(task_id) or []
        if not recs or int(recs[0]["trial"]) != 1:
            return None
        rec = recs[0]
        if rec.get("error") or rec.get("candidate") is None:
            return None
        return rec

    def reflections(self, task_id: str) -> list[str]:
        """The reflections written for ``task_id``'s failed trials, in trial order."""
        out = []
        for rec in self.trials.get(task_id) or []:
            text = rec.get("reflection")
            if text and str(text).strip():
                out.append(str(text))
        return out

    def reflection_pool(self) -> dict[str, list[str]]:
        """Every task that has at least one reflection, with its reflections."""
        pool = {tid: self.reflections(tid) for tid in sorted(self.trials)}
        return {tid: refl for tid, refl in pool.items() if refl}


def _log_path(p: Path) -> Path:
    return p if p.suffix == ".jsonl" else p / LOG_NAME


_CACHE: dict[tuple[Path, int, int], SourceRun] = {}


def load_source(path: str | Path) -> SourceRun:
    """:meth:`SourceRun.load`, shared by the roles of a run.

    Keyed by the log's size and mtime too: in a Hydra multirun every job runs in one
    process, and a later job must see what an earlier job added to the source.
    """
    p = Path(path).resolve()
    log_path = _log_path(p)
    stat = log_path.stat() if log_path.exists() else None
    key = (p, stat.st_size if stat else -1, stat.st_mtime_ns if stat else -1)
    if key not in _CACHE:
        _CACHE[key] = SourceRun.load(p)
    return _CACHE[key]
