"""Fixtures for the ALFWorld tests: the two game folders of ../shared/data, and pool cleanup."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reflexion_bench.environments.alfworld import close_all_pools


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The tests that play real games (marked slow) need the alfworld package, whose
    # install compiles a planner (cmake, g++). Where it could not be installed they skip
    # with the reason instead of failing; CI installs it, so there they run.
    if importlib.util.find_spec("alfworld") is not None:
        return
    here = Path(__file__).parent
    reason = "needs the alfworld package: pip install -e '.[alfworld]' (builds with cmake, g++)"
    for item in items:
        if item.get_closest_marker("slow") and here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def v212(shared_data: Path) -> Path:
    path = shared_data / "alfworld" / "v2.1.2"
    if not path.is_dir():
        pytest.skip(f"needs the ALFWorld games at {path}")
    return path


@pytest.fixture(scope="session")
def v211(shared_data: Path) -> Path:
    path = shared_data / "alfworld" / "v2.1.1"
    if not path.is_dir():
        pytest.skip(f"needs the ALFWorld games at {path}")
    return path


@pytest.fixture(scope="session")
def paper_pack(shared_data: Path) -> Path:
    path = shared_data / "reflexion-original-prompts" / "alfworld_3prompts.json"
    if not path.is_file():
        pytest.skip(f"needs the paper's prompt file at {path}")
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
