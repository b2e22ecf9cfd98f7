"""The layout of a run folder: its files by name, the saved config, its shard folders.

A run folder holds ``log.jsonl`` (:mod:`reflexion_bench.core.runlog`), ``config.yaml``
(the composed config, saved by the runner), and for a shard ``shard.json``
(:mod:`reflexion_bench.core.shards`); the folder of a sharded experiment holds one
``shard-I-of-N`` run folder per shard. The layout lives here, below both the run log
(which reads every shard's log) and the shards (whose check reads the logs), so that
neither imports the other's module to find a name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LOG_NAME = "log.jsonl"
CONFIG_NAME = "config.yaml"
SHARD_FILE = "shard.json"
_FOLDER = re.compile(r"^shard-(\d+)-of-(\d+)$")


def read_config(path: Path) -> dict[str, Any] | None:
    """The saved ``config.yaml`` of the run folder ``path`` as a dict; None when there
    is none (an imported log) or it cannot be read."""
    import yaml

    try:
        data = yaml.safe_load((path / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # no config (an imported log) or unreadable: a set of its own
    return data if isinstance(data, dict) else None


# --------------------------------------------------------------------------- shards


def folder_name(index: int, count: int) -> str:
    return f"shard-{index}-of-{count}"


def parse_folder(name: str) -> tuple[int, int] | None:
    """``(I, N)`` of a ``shard-I-of-N`` folder name, or None."""
    m = _FOLDER.match(name)
    if m is None:
        return None
    index, count = int(m.group(1)), int(m.group(2))
    return (index, count) if index < count else None


def shard_children(folder: Path) -> dict[int, tuple[int, Path]]:
    """The ``shard-I-of-N`` subfolders of ``folder``: index -> (count, path)."""
    out: dict[int, tuple[int, Path]] = {}
    if not folder.is_dir():
        return out
    for child in sorted(folder.iterdir()):
        parsed = parse_folder(child.name)
        if parsed is not None and child.is_dir():
            out.setdefault(parsed[0], (parsed[1], child))
    return out


def is_shard_set(folder: Path) -> bool:
    """Whether ``folder`` is an experiment folder of shards (and not a run itself)."""
    return not (folder / LOG_NAME).is_file() and any(
        (p / LOG_NAME).is_file() or (p / SHARD_FILE).is_file()
        for _, p in shard_children(folder).values()
    )


def shard_dirs(folder: Path) -> list[Path]:
    """The shard folders of an experiment folder that hold a run log, by index."""
    return [p for _, (_, p) in sorted(shard_children(folder).items()) if (p / LOG_NAME).is_file()]


def run_parts(folder: Path) -> list[Path]:
    """The folders holding ``folder``'s logs: its shard folders if it is a sharded
    experiment, else the folder itself."""
    return shard_dirs(folder) if is_shard_set(folder) else [folder]


def expand_shards(run_dirs: Sequence[Path]) -> list[Path]:
    """``run_dirs`` with each sharded experiment's folder replaced by its shard folders."""
    return [part for d in run_dirs for part in run_parts(d)]
