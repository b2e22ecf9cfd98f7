"""Fixtures for the ALFWorld tests: the two game folders of ../shared/data, and pool cleanup.

The tests that play real games carry ``@pytest.mark.requires("alfworld")`` (the package
builds a planner with cmake, g++): where it is missing they skip with the reason, and
under CI=true they fail (tests/components.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reflexion_bench.environments.alfworld import close_all_pools
from tests.components import missing


@pytest.fixture(scope="session")
def v212(shared_data: Path) -> Path:
    path = shared_data / "alfworld" / "v2.1.2"
    if not path.is_dir():
        missing("shared_data", f"needs the ALFWorld games at {path}")
    return path


@pytest.fixture(scope="session")
def v211(shared_data: Path) -> Path:
    path = shared_data / "alfworld" / "v2.1.1"
    if not path.is_dir():
        missing("shared_data", f"needs the ALFWorld games at {path}")
    return path


@pytest.fixture(scope="session")
def paper_pack(shared_data: Path) -> Path:
    path = shared_data / "reflexion-original-prompts" / "alfworld_3prompts.json"
    if not path.is_file():
        missing("shared_data", f"needs the paper's prompt file at {path}")
    return path


@pytest.fixture(scope="module", autouse=True)
def _stop_workers() -> Iterator[None]:
    # Worker processes are shared by the tests of a module and stopped after it.
    yield
    close_all_pools()


def walkthrough(gamefile: str | Path) -> list[str]:
    """The expert command sequence stored in a game file (the game's own known-good plan)."""
    data = json.loads(Path(gamefile).read_text(encoding="utf-8"))
    return [str(a) for a in data["walkthrough"]]
