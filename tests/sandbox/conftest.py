"""Fixtures of the sandbox tests: every backend this machine can run, for real.

Backends: the three local isolation levels (``bwrap``, ``unshare``, ``rlimits``) and
``docker``. A level that does not work here, or a Docker engine that cannot be started,
is SKIPPED WITH ITS REASON (and listed again at the end of the run); under ``CI=true``
(or with ``REFLEXION_REQUIRE_DOCKER=1``) a missing engine or bwrap fails instead
(tests/components.py). When no engine answers
and we are root, the session starts one with scripts/ci/docker.sh and stops it after.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.sandbox.base import Sandbox
from tests.components import missing

ROOT = Path(__file__).resolve().parents[2]
TEST_IMAGE = "reflexion-bench/sandbox-test:offline"
BACKENDS = ["bwrap", "unshare", "rlimits", "docker"]
_SKIPPED: list[str] = []


def _skip(reason: str, component: str | None = None) -> None:
    _SKIPPED.append(reason)
    print(f"\n*** SANDBOX BACKEND SKIPPED: {reason}", file=sys.stderr)
    if component is not None:  # a required component: a failure under CI=true
        missing(component, reason)
    pytest.skip(reason)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SKIPPED:
        terminalreporter.section("sandbox backends NOT tested")
        for reason in sorted(set(_SKIPPED)):
            terminalreporter.write_line(f"SKIPPED: {reason}")


@pytest.fixture(scope="session")
def docker_image() -> Any:
    """A running engine with the offline test image; started here if need be."""
    from reflexion_bench.sandbox.docker import engine_answers

    started = False

    def unavailable(reason: str) -> None:
        _skip(f"docker backend: {reason}", "docker")

    if not engine_answers():
        if os.geteuid() != 0:
            unavailable("no Docker engine answers and we are not root to start one")
        proc = subprocess.run(
            ["bash", str(ROOT / "scripts/ci/docker.sh"), "start"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        started = True
        if proc.returncode != 0 or not engine_answers():
            unavailable(f"could not start dockerd: {(proc.stdout + proc.stderr)[-800:]}")
    import docker

    client = docker.from_env(version="auto")
    try:
        client.images.get(TEST_IMAGE)
    except docker.errors.ImageNotFound:
        proc = subprocess.run(
            ["bash", str(ROOT / "envs/test/build.sh"), TEST_IMAGE],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            unavailable(f"could not build {TEST_IMAGE}: {proc.stderr[-800:]}")
    yield TEST_IMAGE
    client.close()
    if started:
        subprocess.run(["bash", str(ROOT / "scripts/ci/docker.sh"), "stop"], timeout=300)


@pytest.fixture
def make_sandbox(request: pytest.FixtureRequest) -> Callable[..., Sandbox]:
    """``make_sandbox(backend, jobs=1, **kw)``: a real sandbox, skipped with the reason
    when that backend cannot run here. Closed at the end of the test."""
    made: list[Sandbox] = []

    def make(backend: str, jobs: int = 1, **kw: Any) -> Sandbox:
        sb: Sandbox
        if backend == "docker":
            image = request.getfixturevalue("docker_image")
            from reflexion_bench.sandbox.docker import DockerSandbox

            sb = DockerSandbox(jobs=jobs, image=image, **kw)
        else:
            from reflexion_bench.sandbox.local import LocalSandbox, _probe_level, _resolve_python

            problem = _probe_level(backend, _resolve_python("auto"))
            if problem:
                _skip(
                    f"local isolation level {backend!r} unavailable here: {problem}",
                    "bwrap" if backend == "bwrap" else None,
                )
            sb = LocalSandbox(jobs=jobs, isolation=backend, **kw)
        made.append(sb)
        return sb

    yield make
    for sb in made:
        close_now = getattr(sb, "close_now", None)
        if close_now is not None:
            close_now()


@pytest.fixture(
    params=[
        pytest.param(b, marks=pytest.mark.docker)  # the docker marker: requires("docker")
        if b == "docker"
        else pytest.param(b, marks=pytest.mark.requires("bwrap"))
        if b == "bwrap"
        else b
        for b in BACKENDS
    ]
)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def sandbox(make_sandbox: Callable[..., Sandbox], backend: str) -> AsyncIterator[Sandbox]:
    sb = make_sandbox(backend)
    yield sb
    await sb.aclose()
