"""Experiment trackers fed from the run log (W&B, none). Chosen with ``logger=``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from omegaconf import DictConfig


class Tracker(Protocol):
    def log_run(self, run_dir: Path, summary: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class NoTracker:
    """``logger=none``: the run log is the only record."""

    def log_run(self, run_dir: Path, summary: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


def make_tracker(cfg: DictConfig, run_dir: Path) -> Tracker:
    from reflexion_bench.config import build

    node = cfg.get("logger")
    if node is None or "_target_" not in node:
        return NoTracker()
    tracker: Tracker = build(node, "logger", cfg=cfg, run_dir=run_dir)
    return tracker
