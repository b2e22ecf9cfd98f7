"""Listing the games: ids, order, selection, version check, clear errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.alfworld import AlfWorldEnvironment
from reflexion_bench.environments.base import DatasetError


def test_lists_the_134_games_sorted_with_their_types(v212: Path) -> None:
    tasks = AlfWorldEnvironment(v212).load_tasks()
    assert len(tasks) == 134
    ids = [t.id for t in tasks]
    assert ids == sorted(ids)
    # The data's own list of the split's games.
    assert ids == (v212 / "valid_unseen_games.txt").read_text().split()
    # 24/18/31/23/21/17 games of the six types (the data README).
    assert Counter(t.data["type_key"] for t in tasks) == {
        "put": 24,
        "examine": 18,
        "clean": 31,
        "heat": 23,
        "cool": 21,
        "puttwo": 17,
    }
    t = tasks[0]
    assert Path(t.data["gamefile"]).is_file()
    assert t.prompt == t.data["goal"] and t.prompt.endswith(".")
    assert t.data["version"] == t.data["game_version"] == "v2.1.2"


def test_limit_and_task_ids(v212: Path) -> None:
    all_ids = [t.id for t in AlfWorldEnvironment(v212).load_tasks()]
    assert [t.id for t in AlfWorldEnvironment(v212, limit=3).load_tasks()] == all_ids[:3]
    picked = [all_ids[100], all_ids[5]]
    assert [t.id for t in AlfWorldEnvironment(v212, task_ids=picked).load_tasks()] == picked
    with pytest.raises(DatasetError, match="not in the dataset"):
        AlfWorldEnvironment(v212, task_ids=["no-such-game/trial_1"]).load_tasks()


def test_version_mismatch_between_config_and_games(v212: Path, v211: Path) -> None:
    with pytest.raises(ConfigError) as err:
        AlfWorldEnvironment(v212, version="v2.1.1", limit=2).load_tasks()
    assert "env.version" in str(err.value) and "v2.1.2" in str(err.value)
    with pytest.raises(ConfigError):
        AlfWorldEnvironment(v211, version="v2.1.2", limit=2).load_tasks()
    # warn / off go on; the games' real version stays recorded per task.
    tasks = AlfWorldEnvironment(v212, version="v2.1.1", version_check="warn", limit=2).load_tasks()
    assert [t.data["game_version"] for t in tasks] == ["v2.1.2", "v2.1.2"]
    assert (
        AlfWorldEnvironment(v211, version="v2.1.1", limit=1).load_tasks()[0].data["game_version"]
        == "v2.1.1"
    )


def test_missing_data_and_bad_config_name_the_key(tmp_path: Path, v212: Path) -> None:
    with pytest.raises(DatasetError, match=r"env\.data_dir"):
        AlfWorldEnvironment(tmp_path / "nowhere").load_tasks()
    with pytest.raises(DatasetError, match=r"env\.split"):
        AlfWorldEnvironment(v212, split="train").load_tasks()
    with pytest.raises(ConfigError, match=r"env\.split"):
        AlfWorldEnvironment(v212, split="dev")
    with pytest.raises(ConfigError, match=r"env\.version"):
        AlfWorldEnvironment(v212, version="2.1.2")
    with pytest.raises(ConfigError, match=r"env\.max_repeats"):
        AlfWorldEnvironment(v212, max_repeats=1)
