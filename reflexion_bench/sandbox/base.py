"""The one sandbox interface: run a program on files, with limits, and say why it stopped.

Every consumer (self-tests, hidden tests, Rust compilation, ``evaluate``) goes through
:meth:`Sandbox.exec`, so that every backend is interchangeable and comparable.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

StopReason = Literal["exit", "timeout", "memory", "signal", "output_limit", "error"]


class SandboxError(RuntimeError):
    """The sandbox itself failed (workers never started, the supervisor died, the judge
    never reported ready): a *run* error, never a verdict on the candidate's code.

    Raised by the code judges instead of returning a ``fail``/``error`` verdict, so the
    trial is recorded as errored (visible in reports, redone by ``retry_errored``).
    """


@dataclass(frozen=True)
class Limits:
    """Resource limits for one execution. Defaults suit one unit-test program."""

    memory_mb: int = 1024
    cpu_s: int = 30
    max_procs: int = 64
    file_size_mb: int = 16
    output_bytes: int = 64_000
    """Bytes kept of each of stdout and stderr: the first 3/4 and the last 1/4 (where
    tracebacks and verdict lines are), the middle replaced by a note (``truncated``)."""
    output_kill_bytes: int = 8_000_000
    """Past this many bytes on one stream the program is killed (reason ``output_limit``),
    so a program printing gigabytes costs neither memory nor time."""


@dataclass(frozen=True)
class ExecRequest:
    """One program to run.

    ``argv[0]`` may be the placeholder ``"{python}"``: each backend substitutes the
    interpreter that exists inside it. ``files`` are written into the scratch working
    directory (paths relative to it) before the program starts.
    """

    argv: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    timeout_s: float = 10.0
    limits: Limits = field(default_factory=Limits)
    trusted: bool = False
    """Harness code (the judge, the Rust driver), not a candidate: it runs under the
    sandbox's *judge* uid, which keeps the capabilities to start candidates under the
    candidate uid and to kill them, and gets (fd 3) the sandbox's candidate zygote
    where there is one. Never set it for a model's program."""
    fresh: bool = False
    """Run on a newly started worker (the slot's current one is retired first): the
    judge's health check after a program broke its sandbox."""


@dataclass
class ExecResult:
    """What happened. ``exit_code`` is None when the program never exited by itself."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    reason: StopReason
    truncated: bool = False
    detail: str = ""
    leftover_processes: int = 0
    """Background processes still running when the program ended (all were killed)."""

    @property
    def ok(self) -> bool:
        """Exited by itself with code 0 and left no process behind."""
        return self.reason == "exit" and self.exit_code == 0 and self.leftover_processes == 0


class Sandbox(abc.ABC):
    """A place to run untrusted programs.

    Implementations bound their own parallelism (``jobs``): callers may fire as many
    ``exec`` calls concurrently as they like.
    """

    #: Human-readable description of the isolation level actually in force.
    isolation: str = "none"

    @abc.abstractmethod
    async def exec(self, request: ExecRequest) -> ExecResult:
        """Run ``request`` and return its result; never raises for program misbehaviour."""

    async def exec_batch(self, requests: Sequence[ExecRequest]) -> list[ExecResult]:
        """Run several programs (e.g. the tests of one task), results in order.

        Each program still runs on its own, in a fresh process and scratch directory,
        so results equal those of separate :meth:`exec` calls; backends may run the
        batch on one warm worker to save hand-offs.
        """
        return list(await asyncio.gather(*(self.exec(r) for r in requests)))

    async def aclose(self) -> None:  # noqa: B027 - optional hook, default no-op
        """Release pooled resources (containers, worker processes)."""
