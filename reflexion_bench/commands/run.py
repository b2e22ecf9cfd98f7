"""``reflexion-bench run <hydra overrides>``: the Hydra application."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR, redact_text
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.models.base import ModelError

log = logging.getLogger("reflexion_bench")


def _run_dir() -> Path:
    # Hydra's output dir is the run folder in single runs and in every multirun job,
    # so sweeps get one run folder per job without a second naming scheme.
    return Path(HydraConfig.get().runtime.output_dir)


@hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
def hydra_main(cfg: DictConfig) -> float | None:
    from reflexion_bench.analysis.report import format_table
    from reflexion_bench.runner.run import RunAborted, run_experiment
    from reflexion_bench.trackers import make_tracker

    run_dir = _run_dir()
    tracker = make_tracker(cfg, run_dir)
    try:
        summary = asyncio.run(run_experiment(cfg, run_dir))
        tracker.log_run(run_dir, summary)
        print(format_table(summary))
        print(f"run folder: {run_dir}")
        return float(summary.get("final", 0.0)) if summary.get("n_tasks") else None
    except (ConfigError, DatasetError, ModelError, FileNotFoundError, RunAborted) as exc:
        # Errors a user fixes by changing config/data/keys: one clear line, no traceback.
        print(f"error: {redact_text(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        tracker.close()


def main(argv: list[str]) -> int:
    sys.argv = ["reflexion-bench run", *argv]
    hydra_main()
    return 0
