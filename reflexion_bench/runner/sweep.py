"""Sweep bookkeeping as a Hydra callback: a sweep-level index and jobs progress.

Hydra's launchers (basic, joblib, submitit, ray) run the jobs; this callback only
records them. It runs inside each job's process (also on a cluster node), so the
index is an append-only JSONL written under a file lock, and every reader takes the
newest line per job.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock
from hydra.core.utils import JobReturn, JobStatus
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from reflexion_bench.config import redact_override, redact_text

INDEX_NAME = "index.jsonl"


def _append(path: Path, record: dict[str, Any]) -> list[dict[str, Any]]:
    """Append ``record``; return the index as it stands with it, read under the same
    lock: the counts printed from it then never go backwards between parallel jobs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
        return read_index(path.parent)


def read_index(sweep_dir: Path) -> list[dict[str, Any]]:
    """The newest index line per job folder, in first-seen order."""
    path = sweep_dir / INDEX_NAME
    if not path.exists():
        return []
    latest: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        latest[str(rec.get("job_dir"))] = rec
    return list(latest.values())


def job_counts(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = {"done": 0, "running": 0, "failed": 0}
    for rec in records:
        status = rec.get("status")
        if status in counts:
            counts[status] += 1
    return counts


def task_counts(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Tasks of the ended jobs, and how many of them errored (no verdict)."""
    counts = {"tasks": 0, "errored": 0}
    for rec in records:
        counts["tasks"] += int(rec.get("n_tasks") or 0)
        counts["errored"] += int(rec.get("errored_tasks") or 0)
    return counts


def _run_summary(job_dir: Path) -> dict[str, Any]:
    # The job's own summary (written also when the run aborted on errors): a job can
    # complete with every task errored, so its status alone says nothing of errors.
    try:
        data = json.loads((job_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class SweepIndex(Callback):
    """Writes ``<sweep dir>/index.jsonl`` (job folder, overrides, status, final score)
    and prints a line of jobs done / running / failed as each job starts and ends."""

    def __init__(self) -> None:
        self._started: float = 0.0

    @staticmethod
    def _sweep_dir(config: DictConfig) -> Path:
        return Path(str(config.hydra.sweep.dir))

    @staticmethod
    def _report(record: dict[str, Any], index: list[dict[str, Any]]) -> None:
        # Each job's line names the job by Hydra's own number (stable across launchers
        # and resumes) and its overrides; the counts come from the index as this job's
        # line was appended (under the lock), so they only grow.
        counts = {**job_counts(index), **task_counts(index)}
        line = (
            f"[sweep job {record['job_num']}: {' '.join(record['overrides'])}] "
            f"{record['status']}; jobs done {counts['done']} running {counts['running']} "
            f"failed {counts['failed']}; tasks errored {counts['errored']} of {counts['tasks']}"
            + (f"; error: {record['error']}" if record.get("error") else "")
        )
        # One write of the whole line: jobs in parallel processes share the terminal,
        # and a line written in two parts (print writes the text, then the newline) can
        # be split by another job's line (seen under load in CI: 3 lines for 4).
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        from hydra.core.hydra_config import HydraConfig

        hc = HydraConfig.get()
        if hc.mode is None or hc.mode.name != "MULTIRUN":
            return
        self._started = time.time()
        record = {
            "job_dir": hc.runtime.output_dir,
            "job_num": hc.job.num,
            "overrides": [redact_override(o) for o in hc.overrides.task],
            "status": "running",
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        self._report(record, _append(self._sweep_dir(config) / INDEX_NAME, record))

    def on_job_end(self, config: DictConfig, job_return: JobReturn, **kwargs: Any) -> None:
        from hydra.core.hydra_config import HydraConfig

        hc = HydraConfig.get()
        if hc.mode is None or hc.mode.name != "MULTIRUN":
            return
        ok = job_return.status == JobStatus.COMPLETED
        record: dict[str, Any] = {
            "job_dir": hc.runtime.output_dir,
            "job_num": hc.job.num,
            "overrides": [redact_override(o) for o in hc.overrides.task],
            "status": "done" if ok else "failed",
            "wall_time_s": round(time.time() - self._started, 2),
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        summary = _run_summary(Path(hc.runtime.output_dir))
        if summary:
            record["n_tasks"] = int(summary.get("n_tasks") or 0)
            record["errored_tasks"] = int(summary.get("errored_tasks") or 0)
            record["final_finished"] = summary.get("final_finished")
        if ok:
            record["final"] = job_return._return_value
        else:
            record["error"] = redact_text(str(job_return._return_value))[-500:]
        self._report(record, _append(self._sweep_dir(config) / INDEX_NAME, record))
