"""ALFWorld as a task source: one task per game file of a split, in sorted path order."""

from __future__ import annotations

import importlib.util
import json
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.alfworld.text import (
    TASK_TYPES,
    VERSIONS,
    goal_of,
    grammar_version,
    task_params_of,
    task_type_of,
)
from reflexion_bench.environments.base import DatasetError, select_tasks

log = logging.getLogger(__name__)

#: Config split name -> folder under ``json_2.1.1`` (ALFWorld's own names are accepted too).
SPLITS = {
    "eval_out_of_distribution": "valid_unseen",
    "valid_unseen": "valid_unseen",
    "eval_in_distribution": "valid_seen",
    "valid_seen": "valid_seen",
    "train": "train",
}
VERSION_CHECKS = ("error", "warn", "off")


class AlfWorldEnvironment:
    """The ALFWorld text games of one split.

    Task ids are the game folders relative to the split
    (``pick_heat_then_place_in_recep-Egg-None-GarbageCan-10/trial_T20190908_113432_673307``),
    sorted, so runs are comparable across machines. The games themselves are played by
    the actor through the worker pool described by ``task.data["pool"]``.

    Args:
        data_dir: An ALFWorld data root (what ``alfworld-download`` creates, i.e. the
            ``ALFWORLD_DATA`` folder holding ``json_2.1.1/<split>/...``).
        version: The text version the run's prompts are written for (``v2.1.2``: put is
            ``move X to Y``; ``v2.1.1``: ``put X in/on Y``). Checked against the games.
        split: ``eval_out_of_distribution`` (= ``valid_unseen``, the paper's 134 games),
            ``eval_in_distribution`` (= ``valid_seen``) or ``train``.
        limit: Keep the first N games after ``task_ids`` selection.
        task_ids: Game folders relative to the split.
        max_steps: Actions per episode, ``think:`` included (the paper's loop: 49-50).
        max_repeats: End an episode when the same action (with the same answer) comes
            this many times in a row (the paper's heuristic: 3); 0 disables it.
        workers: Game worker processes (about the number of free cores).
        version_check: ``error`` (stop at start on a version mismatch), ``warn`` (log it
            and go on; symptoms are still counted per episode) or ``off``.
        load_timeout_s: Seconds a game load may take before its worker is restarted.
        step_timeout_s: Seconds a step may take before its worker is restarted.
        cache_games: Closed games each worker keeps loaded (the next trial reopens them faster).
        max_games_per_worker: Recycle a worker process after this many games (memory).
        memory_window: Ω, the reflections shown to the actor (the paper: 3).
    """

    name = "alfworld"
    #: No generated code runs: the runner builds no sandbox for this benchmark.
    needs_sandbox = False
    #: What `max_concurrent_tasks: auto` reads (runner/auto.py): with the embedded model
    #: one game at a time lets its server reuse the long prompt prefix step after step.
    one_task_at_a_time = "one game at a time reuses the model's prompt prefix between steps"

    def __init__(
        self,
        data_dir: str | Path,
        version: str = "v2.1.2",
        split: str = "eval_out_of_distribution",
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        max_steps: int = 50,
        max_repeats: int = 3,
        workers: int = 2,
        version_check: str = "error",
        load_timeout_s: float = 300.0,
        step_timeout_s: float = 60.0,
        cache_games: int = 4,
        max_games_per_worker: int = 200,
        memory_window: int = 3,
    ) -> None:
        if version not in VERSIONS:
            raise ConfigError("env.version", version, VERSIONS)
        if split not in SPLITS:
            raise ConfigError("env.split", split, SPLITS)
        if version_check not in VERSION_CHECKS:
            raise ConfigError("env.version_check", version_check, VERSION_CHECKS)
        if max_steps < 1:
            raise ConfigError("env.max_steps", max_steps, "an integer >= 1")
        if max_repeats == 1 or max_repeats < 0:
            raise ConfigError("env.max_repeats", max_repeats, "0 (off) or an integer >= 2")
        if workers < 1:
            raise ConfigError("env.workers", workers, "an integer >= 1")
        self.data_dir = Path(str(data_dir)).expanduser()
        self.version = version
        self.split = split
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.max_steps = int(max_steps)
        self.max_repeats = int(max_repeats)
        self.workers = int(workers)
        self.version_check = version_check
        self.load_timeout_s = float(load_timeout_s)
        self.step_timeout_s = float(step_timeout_s)
        self.cache_games = int(cache_games)
        self.max_games_per_worker = int(max_games_per_worker)
        self.memory_window = int(memory_window)

    @property
    def split_dir(self) -> Path:
        return self.data_dir / "json_2.1.1" / SPLITS[self.split]

    def game_ids(self) -> list[str]:
        """Every playable game of the split, sorted (the task ids before selection)."""
        root = self.data_dir
        if not root.is_dir():
            raise DatasetError(
                f"ALFWorld data not found at {root} (config `env.data_dir`, default "
                "$ALFWORLD_DATA). Run `alfworld-download` (it fills ~/.cache/alfworld) and "
                "point env.data_dir there, or use a copy such as ../shared/data/alfworld/v2.1.2"
            )
        split_dir = self.split_dir
        if not split_dir.is_dir():
            have = sorted(p.name for p in (root / "json_2.1.1").glob("*") if p.is_dir())
            raise DatasetError(
                f"ALFWorld split `{self.split}` not found: no folder {split_dir} "
                f"(config `env.split`; this data root has: {', '.join(have) or 'no splits'})"
            )
        ids = []
        for game in sorted(split_dir.glob("*/*/game.tw-pddl")):
            rel = game.parent.relative_to(split_dir).as_posix()
            # The same exclusions as ALFWorld's own loader: six task types, no movable
            # receptacles, no sliced objects.
            if task_type_of(rel) is None or "movable" in rel or "Sliced" in rel:
                continue
            ids.append(rel)
        if not ids:
            raise DatasetError(f"no ALFWorld games (*/*/game.tw-pddl) under {split_dir}")
        return ids

    def load_tasks(self) -> list[Task]:
        """The selected games as tasks; checks the game text version against ``version``."""
        _require_alfworld()
        stubs = [Task(id=i, prompt="", benchmark=self.name) for i in self.game_ids()]
        selected = select_tasks(stubs, self.limit, self.task_ids)
        tasks = []
        versions: Counter[str] = Counter()
        for stub in selected:
            gamefile = self.split_dir / stub.id / "game.tw-pddl"
            game = _read_game(gamefile)
            if game.get("solvable") is False:
                log.warning("ALFWorld game %s is marked unsolvable; kept as selected", stub.id)
            game_version = grammar_version(str(game.get("grammar", "")))
            versions[game_version or "unknown"] += 1
            task_type = task_type_of(stub.id)
            assert task_type is not None  # filtered in game_ids
            goal = goal_of(str(game.get("grammar", ""))) or ""
            tasks.append(
                Task(
                    id=stub.id,
                    prompt=goal,
                    benchmark=self.name,
                    data={
                        "gamefile": str(gamefile.resolve()),
                        "task_type": task_type,
                        "type_key": TASK_TYPES[task_type],
                        **task_params_of(stub.id),
                        "goal": goal,
                        "version": self.version,
                        "game_version": game_version,
                        "max_steps": self.max_steps,
                        "max_repeats": self.max_repeats,
                        "load_timeout_s": self.load_timeout_s,
                        "step_timeout_s": self.step_timeout_s,
                        "pool": self.pool_spec(),
                    },
                )
            )
        self._check_versions(versions)
        by_type = Counter(t.data["type_key"] for t in tasks)
        log.info(
            "ALFWorld: %d game(s) of %s (%s), text version %s",
            len(tasks),
            SPLITS[self.split],
            ", ".join(f"{k}={v}" for k, v in sorted(by_type.items())),
            self.version,
        )
        return tasks

    def pool_spec(self) -> dict[str, Any]:
        """The arguments of :func:`~reflexion_bench.environments.alfworld.pool.get_pool`."""
        return {
            "data_dir": str(self.data_dir.resolve()),
            "workers": self.workers,
            "cache_games": self.cache_games,
            "max_games_per_worker": self.max_games_per_worker,
        }

    def _check_versions(self, versions: Counter[str]) -> None:
        other = {v: n for v, n in versions.items() if v != self.version}
        if not other or self.version_check == "off":
            return
        found = ", ".join(f"{n} game(s) of {v}" for v, n in sorted(other.items()))
        msg = (
            f"ALFWorld version mismatch: config `env.version` is {self.version} but the "
            f"selected games in {self.split_dir} include {found} (v2.1.2 puts with "
            "`move X to Y`, v2.1.1 with `put X in/on Y`)"
        )
        if self.version_check == "error":
            raise ConfigError(
                "env.version",
                self.version,
                f"{' or '.join(sorted(other))}, the version of the games ({msg}); with "
                "prompts written for it (env=alfworld_v211 for v2.1.1), or point "
                "env.data_dir at games of the configured version, or set "
                "env.version_check=warn to go on anyway",
            )
        log.warning("%s; going on because env.version_check=warn", msg)


def _read_game(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"cannot read ALFWorld game {path}: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"ALFWorld game {path} is not a JSON object")
    return data


def _require_alfworld() -> None:
    missing = [m for m in ("alfworld", "textworld") if importlib.util.find_spec(m) is None]
    if missing:
        raise DatasetError(
            f"ALFWorld needs the packages {missing}: pip install 'reflexion-bench[alfworld]' "
            "(alfworld==0.4.2; it compiles fast-downward-textworld, needs cmake and g++)"
        )
