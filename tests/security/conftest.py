"""Fixtures of the gaming suite: the sandbox backends that score hidden tests here.

``BACKENDS`` is the one place that says which backends the suite runs on. The
``rlimits`` level is left out on purpose: it refuses to score hidden tests unless the
user opts in to an unprotected score, so gaming it proves nothing about the judge.
A backend that cannot run on this machine is skipped with its reason (docker: unless
an engine already answers, or ``CI=true`` / ``REFLEXION_REQUIRE_DOCKER=1`` asks to start
one the way tests/sandbox does). Under ``CI=true`` a missing Docker engine or bwrap is a
failure, not a skip (tests/components.py).
"""

from __future__ import annotations

import pytest

from reflexion_bench.sandbox.base import Sandbox
from tests.components import missing, strict

# The sandbox suite's engine handling (start if root, build the offline image, or skip).
from tests.sandbox.conftest import TEST_IMAGE, docker_image  # noqa: F401

BACKENDS = ["bwrap", "unshare", "docker"]


@pytest.fixture(
    scope="session",
    params=[
        pytest.param(b, marks=pytest.mark.docker)  # the docker marker: requires("docker")
        if b == "docker"
        else pytest.param(b, marks=pytest.mark.requires("bwrap"))
        if b == "bwrap"
        else b
        for b in BACKENDS
    ],
)
def backend(request: pytest.FixtureRequest) -> str:
    """A backend name, skipped with the reason when it cannot run here."""
    name = str(request.param)
    if name == "docker":
        from reflexion_bench.sandbox.docker import engine_answers

        if not engine_answers() and not strict("docker"):
            missing(
                "docker",
                "docker backend: no Docker engine answers (CI=true or "
                "REFLEXION_REQUIRE_DOCKER=1 starts one as tests/sandbox does)",
            )
        # Starts the engine / builds the offline test image, or skips with the reason.
        request.getfixturevalue("docker_image")
    else:
        from reflexion_bench.sandbox.local import _probe_level, _resolve_python

        problem = _probe_level(name, _resolve_python("auto"))
        if problem:
            reason = f"local isolation level {name!r} unavailable here: {problem}"
            if name == "bwrap":
                missing("bwrap", reason)
            pytest.skip(reason)
    return name


def make_sandbox(backend: str, jobs: int = 2) -> Sandbox:
    """A fresh real sandbox of ``backend`` (the caller closes it with ``aclose``)."""
    if backend == "docker":
        from reflexion_bench.sandbox.docker import DockerSandbox

        return DockerSandbox(jobs=jobs, image=TEST_IMAGE)
    from reflexion_bench.sandbox.local import LocalSandbox

    return LocalSandbox(jobs=jobs, isolation=backend)


def sandbox_overrides(backend: str) -> list[str]:
    """Hydra overrides that select ``backend`` for ``run`` / ``evaluate``."""
    if backend == "docker":
        return ["sandbox=docker", f"sandbox.image={TEST_IMAGE}"]
    return ["sandbox=local", f"sandbox.isolation={backend}"]
