"""``sandbox=auto``: Docker when an engine answers and the image exists, else local."""

from __future__ import annotations

import logging
from typing import Any

from reflexion_bench.sandbox.base import Sandbox

log = logging.getLogger(__name__)


def auto_sandbox(
    jobs: int = 2,
    image: str = "reflexion-bench/python:latest",
    docker: dict[str, Any] | None = None,
    local: dict[str, Any] | None = None,
) -> Sandbox:
    """Build the strongest sandbox available and say which one is active.

    Args:
        jobs: concurrent executions, for either backend.
        image: Docker image to use when an engine answers.
        docker: extra keyword arguments for :class:`DockerSandbox`.
        local: extra keyword arguments for :class:`LocalSandbox`.
    """
    from reflexion_bench.sandbox.docker import engine_answers

    why = "no Docker engine answers"
    if engine_answers():
        from reflexion_bench.core.errors import ConfigError
        from reflexion_bench.sandbox.docker import DockerSandbox

        try:
            sb: Sandbox = DockerSandbox(jobs=jobs, image=image, **dict(docker or {}))
            log.warning("sandbox=auto: using Docker: %s", sb.isolation)
            return sb
        except ConfigError as exc:
            why = str(exc)
    from reflexion_bench.sandbox.local import LocalSandbox

    sb = LocalSandbox(jobs=jobs, **dict(local or {}))
    log.warning("sandbox=auto: using the local sandbox (%s): %s", why, sb.isolation)
    return sb
