"""Fixtures of the Rust tests: the real local sandbox with Debian's rustc inside."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.environments.multiple import MultiPLEEnvironment
from reflexion_bench.sandbox.base import ExecRequest, Sandbox
from tests.components import missing

_RUSTC_OK: dict[str, str | None] = {}


@pytest.fixture
async def sandbox(request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    """The real local sandbox; skips loudly when rustc cannot run inside it (a failure
    under CI=true: the test counts as requires("rust"))."""
    from reflexion_bench.sandbox.local import LocalSandbox

    request.node.add_marker(pytest.mark.requires("rust"))
    box = LocalSandbox(jobs=2)
    try:
        if "probe" not in _RUSTC_OK:
            r = await box.exec(ExecRequest(argv=("rustc", "--version"), timeout_s=60))
            _RUSTC_OK["probe"] = None if r.ok else (r.stderr or r.detail or r.reason)
        if _RUSTC_OK["probe"] is not None:
            missing(
                "rust",
                "rustc does not run inside the sandbox (apt-get install rustc): "
                f"{_RUSTC_OK['probe']}",
            )
        yield box
    finally:
        await box.aclose()


@pytest.fixture(scope="session")
def rust() -> RustLanguage:
    return RustLanguage(compile_timeout_s=120)


@pytest.fixture(scope="session")
def humaneval_rs(shared_data: Path, rust: RustLanguage) -> dict[str, Task]:
    env = MultiPLEEnvironment(
        rust, path=str(shared_data / "humaneval-rs.jsonl"), name="humaneval_rs"
    )
    return {t.id: t for t in env.load_tasks()}


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
