"""A Hydra callback that masks secrets in the files Hydra writes itself.

Hydra saves the composed config (``.hydra/config.yaml``), its own config with the
command-line overrides (``.hydra/hydra.yaml``), the overrides (``.hydra/overrides.yaml``)
and, for sweeps, ``multirun.yaml`` in the sweep folder, all before our code runs and
with values in clear. This callback rewrites them, masked by key name and by value
shape (:func:`reflexion_bench.config.redact`), right after Hydra wrote them
(``on_job_start``) and once more when the job or sweep ends.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from reflexion_bench.config import redact, redact_override

HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")


def _mask(obj: Any) -> Any:
    # Overrides are `key=value` strings: masked whole when the key names a secret.
    if isinstance(obj, list):
        return [redact_override(v) if isinstance(v, str) else _mask(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _mask(v) for k, v in redact(obj).items()}
    return redact(obj)


def redact_yaml_file(path: Path) -> bool:
    """Rewrite ``path`` (a YAML file) with secrets masked; True if it changed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return False
    data = yaml.safe_load(text)
    masked = _mask(data)
    if masked == data:
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(
        yaml.safe_dump(masked, sort_keys=False, allow_unicode=True, default_flow_style=False),
        encoding="utf-8",
    )
    os.replace(tmp, path)  # concurrent jobs rewriting multirun.yaml never tear it
    return True


class RedactHydraFiles(Callback):
    """Registered in ``configs/config.yaml`` under ``hydra.callbacks``."""

    @staticmethod
    def _job_files(config: DictConfig) -> list[Path]:
        from hydra.core.hydra_config import HydraConfig

        hc = HydraConfig.get()
        files: list[Path] = []
        subdir = hc.output_subdir
        if subdir is not None:
            folder = Path(hc.runtime.output_dir) / str(subdir)
            files += [folder / name for name in HYDRA_FILES]
        if hc.mode is not None and hc.mode.name == "MULTIRUN":
            files.append(Path(str(hc.sweep.dir)) / "multirun.yaml")
        return files

    def _redact_job(self, config: DictConfig) -> None:
        for path in self._job_files(config):
            redact_yaml_file(path)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._redact_job(config)

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        self._redact_job(config)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        redact_yaml_file(Path(str(config.hydra.sweep.dir)) / "multirun.yaml")
