"""HotpotQA test fixtures: the real config composed for offline runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR

Compose = Callable[..., DictConfig]


def compose_hotpot_config(shared_data: Path, *overrides: str) -> DictConfig:
    """configs/config.yaml with env=hotpotqa, the mock model, no sandbox, and the shared
    data folder (a plain function: module-scoped fixtures use it too)."""
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                "env=hotpotqa",
                "model=mock",
                "sandbox=none",
                f"paths.data_dir={shared_data}",
                "progress=false",
                *overrides,
            ],
            return_hydra_config=True,
        )


@pytest.fixture()
def compose_hotpot(shared_data: Path) -> Compose:
    """``compose_hotpot(*overrides)``: :func:`compose_hotpot_config` on the shared data."""

    def _compose(*overrides: str) -> DictConfig:
        return compose_hotpot_config(shared_data, *overrides)

    return _compose
