"""Shards of one run: ``shard=I/N`` splits a run's tasks over N processes or machines.

Tasks are independent, trials within a task are not, so a shard is a set of whole
tasks. The split comes after the ``task_ids``/``limit`` selection, round-robin over the
benchmark's own order (``tasks[I::N]``): ``-m shard=0/2,1/2 limit=8`` runs exactly the
tasks of ``limit=8``, each shard gets every N-th task (so slow and fast stretches of a
benchmark spread evenly), and the split depends on nothing but the selection.

Each shard is an ordinary run folder named ``shard-I-of-N`` inside the experiment's
folder (resumed like any run), holding ``shard.json``: its index, the count, the size
of the selection and the task ids it was given. Readers (``report``, ``view``,
``compare``) take the ``shard-*-of-N`` folders of one experiment folder as one run,
after :func:`shard_status` checked that every shard is there, finished its tasks, and
that no task is in two shards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from reflexion_bench.core.errors import ConfigError

# The folder layout (names, which folders hold a run's logs) is in core/runfolder.py,
# below the run log; re-exported here, with the shards, where readers look for it.
from reflexion_bench.core.runfolder import LOG_NAME, read_config
from reflexion_bench.core.runfolder import SHARD_FILE as SHARD_FILE
from reflexion_bench.core.runfolder import expand_shards as expand_shards
from reflexion_bench.core.runfolder import folder_name as folder_name
from reflexion_bench.core.runfolder import is_shard_set as is_shard_set
from reflexion_bench.core.runfolder import parse_folder as parse_folder
from reflexion_bench.core.runfolder import run_parts as run_parts
from reflexion_bench.core.runfolder import shard_children as shard_children
from reflexion_bench.core.runfolder import shard_dirs as shard_dirs
from reflexion_bench.core.runlog import finished_task_ids

_VALUE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_ALLOWED = "null or I/N with 0 <= I < N, e.g. shard=0/4 (the first of 4 shards)"

T = TypeVar("T")


def parse_shard(value: Any) -> tuple[int, int] | None:
    """``"I/N"`` as ``(I, N)``; None for null. Anything else is a ConfigError naming
    the key and the form."""
    if value is None:
        return None
    m = _VALUE.match(str(value))
    if m is None:
        raise ConfigError("shard", value, _ALLOWED)
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or index >= count:
        raise ConfigError("shard", value, _ALLOWED)
    return index, count


def split(items: Sequence[T], index: int, count: int) -> list[T]:
    """Shard ``index`` of ``count`` of a selection: every ``count``-th item from ``index``."""
    return list(items[index::count])


def shard_dir(run_dir: str, shard: Any) -> str:
    """A single run's folder: ``run_dir`` itself, or its ``shard-I-of-N`` subfolder
    (the experiment's folder then holds every shard run into the same ``run_dir``).
    Used as ``${shard_dir:${run_dir},${shard}}`` in ``hydra.run.dir``."""
    parsed = _parsed_or_none(shard)
    return run_dir if parsed is None else f"{run_dir}/{folder_name(*parsed)}"


def _parsed_or_none(value: Any) -> tuple[int, int] | None:
    # Resolvers of folder names never raise: Hydra would print its own traceback. A bad
    # value names no shard folder here and is refused by the run's config check (one
    # line naming `shard`, and the folder made for it removed).
    if value in (None, "None", "null", ""):
        return None
    try:
        return parse_shard(value)
    except ConfigError:
        return None


def sweep_subdir(override_dirname: str) -> str:
    """A sweep job's folder from its (masked) override dirname: a ``shard=I/N`` part
    becomes a ``shard-I-of-N`` subfolder of the folder named by the other overrides
    (``limit=8,shard=0/2`` -> ``limit=8/shard-0-of-2``), never a folder per ``/``."""
    parts = [p for p in override_dirname.split(",") if p]
    keep = [p for p in parts if p.split("=", 1)[0].lstrip("+~") != "shard"]
    shard = [p.split("=", 1)[1] for p in parts if p.split("=", 1)[0].lstrip("+~") == "shard"]
    base = ",".join(keep)
    parsed = _parsed_or_none(shard[-1]) if shard else None
    if parsed is None:
        return base
    return f"{base}/{folder_name(*parsed)}" if base else folder_name(*parsed)


def write_shard_file(
    run_dir: Path, index: int, count: int, n_selected: int, task_ids: Sequence[str]
) -> None:
    data = {
        "index": index,
        "count": count,
        "n_selected": n_selected,
        "task_ids": list(task_ids),
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / SHARD_FILE).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- reading


@dataclass
class ShardStatus:
    """What :func:`shard_status` found: a shard set is complete only when every shard
    of one count is present, finished every task it was given, and no task is in two."""

    count: int
    present: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "present": self.present,
            "complete": self.complete,
            "problems": self.problems,
        }


def _read_shard_file(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / SHARD_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def shard_status(folder: Path, finished: dict[int, set[str]] | None = None) -> ShardStatus:
    """Check the shards of ``folder``. ``finished``: per present shard index, the task
    ids its log finished (read from the logs when not given)."""
    children = shard_children(folder)
    counts = sorted({c for c, _ in children.values()})
    count = counts[-1] if counts else 0
    status = ShardStatus(count=count)
    if len(counts) > 1:
        status.problems.append(
            "shards of different counts in one folder: "
            + ", ".join(p.name for _, p in sorted(children.values(), key=lambda x: x[1].name))
        )
    owner: dict[str, int] = {}
    selected: set[int] = set()
    for i in range(count):
        entry = children.get(i)
        if entry is None or entry[0] != count or not (entry[1] / LOG_NAME).is_file():
            status.problems.append(f"shard {i}/{count} missing")
            continue
        path = entry[1]
        status.present.append(i)
        done = (finished or {}).get(i)
        if done is None:
            done = finished_task_ids(path / LOG_NAME)
        info = _read_shard_file(path)
        if info is None:
            status.problems.append(f"shard {i}/{count} has no readable {SHARD_FILE}")
            assigned = set(done)
        else:
            assigned = {str(t) for t in info.get("task_ids") or []}
            selected.add(int(info.get("n_selected") or 0))
            left = len(assigned - done)
            if left:
                status.problems.append(
                    f"shard {i}/{count} incomplete: {left} of {len(assigned)} tasks not finished"
                )
        for tid in sorted(assigned | done):
            if tid in owner and owner[tid] != i:
                status.problems.append(
                    f"task {tid} is in shard {owner[tid]}/{count} and shard {i}/{count}"
                )
            owner.setdefault(tid, i)
    if len(selected) > 1:
        status.problems.append(
            f"shards were cut from selections of different sizes ({sorted(selected)}): "
            "not one experiment's shards"
        )
    return status


def shard_warnings(run_dirs: Sequence[Path]) -> list[str]:
    """One line per problem of each sharded experiment among ``run_dirs``."""
    out: list[str] = []
    for d in run_dirs:
        if is_shard_set(d):
            status = shard_status(d)
            out.extend(f"{d}: incomplete: {p}" for p in status.problems)
    return out


def merged_config(folder: Path) -> dict[str, Any] | None:
    """The config of a shard set: the first shard's ``config.yaml`` without ``shard``
    (what an unsharded run of the same experiment saves)."""
    for path in shard_dirs(folder):
        config = read_config(path)
        if config is not None:
            config.pop("shard", None)
            return config
    return None
