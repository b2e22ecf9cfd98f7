"""Fixtures of the LeetcodeHard tests: the real data files and the real local sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.leetcode import LeetcodeHardEnvironment
from reflexion_bench.sandbox.base import Sandbox


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    """The project's real local sandbox (the strongest isolation available here)."""
    from reflexion_bench.sandbox.local import LocalSandbox

    box = LocalSandbox(jobs=2)
    try:
        yield box
    finally:
        await box.aclose()


@pytest.fixture(scope="session")
def py_env(shared_data: Path) -> LeetcodeHardEnvironment:
    return LeetcodeHardEnvironment(
        shared_data / "leetcode-hard-py-40.jsonl",
        shared_data / "leetcode-hard-py-40-hidden.jsonl",
    )


@pytest.fixture(scope="session")
def py_tasks(py_env: LeetcodeHardEnvironment) -> dict[str, Task]:
    return {t.id: t for t in py_env.load_tasks()}
