"""Experiment trackers fed from the run log (W&B, none). Chosen with ``logger=``.

The runner calls ``make_tracker(cfg, run_dir)`` before the run, ``tracker.log_task(...)``
with each task's records (as written to the log) as the task finishes, then
``tracker.log_run(run_dir, summary)`` and, always, ``tracker.close()``. Trackers read
what they send from the run folder and its log: the JSONL log stays the source of truth.
A tracker never raises: a failure is a warning (the results are already on disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from omegaconf import DictConfig


class Tracker(Protocol):
    def log_task(self, run_dir: Path, task_id: str, records: list[dict[str, Any]]) -> None: ...

    def log_run(self, run_dir: Path, summary: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class NoTracker:
    """``logger=none``: the run log is the only record."""

    def log_task(self, run_dir: Path, task_id: str, records: list[dict[str, Any]]) -> None:
        return None

    def log_run(self, run_dir: Path, summary: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


def make_tracker(cfg: DictConfig, run_dir: Path) -> Tracker:
    """Build the configured tracker (``logger`` node), or :class:`NoTracker`."""
    from reflexion_bench.config import build

    node = cfg.get("logger")
    if node is None or "_target_" not in node:
        return NoTracker()
    # Built as a partial and called here: handing the whole run config to Hydra as a
    # kwarg would merge it into the logger node and instantiate every `_target_` in it.
    factory = build(node, "logger", _partial_=True)
    tracker: Tracker = factory(cfg=cfg, run_dir=run_dir)
    return tracker


#: Output-only overrides: where results are shown, not what they are.
_NOT_TAGS = ("logger", "progress", "hydra")


def sweep_tags(overrides: list[str]) -> list[str]:
    """A sweep job's overrides as tracker tags (W&B allows 64 characters a tag)."""
    tags = []
    for o in overrides:
        key = o.lstrip("+~").split("=", 1)[0]
        if key.split(".", 1)[0].split("/", 1)[0] in _NOT_TAGS:
            continue
        tags.append(o if len(o) <= 64 else o[:61] + "...")
    return tags


__all__ = ["NoTracker", "Tracker", "make_tracker", "sweep_tags"]
