"""Warm workers shared by the local and Docker backends.

A worker is one long-lived supervisor (``_driver.py``) inside one isolated environment
(a bwrap/unshare sandbox, or a container). The pool keeps ``jobs`` of them, hands each
execution to an idle one, and replaces a worker whenever anything about it is suspect:
it missed its deadline, its supervisor died, it could not wipe its scratch space, or it
has served ``recycle_after`` programs. The harness never trusts the worker: every
deadline is enforced here too, and a result that never came is a result with a reason.
"""

from __future__ import annotations

import abc
import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Sandbox, StopReason
from reflexion_bench.sandbox.shipping import shipped

log = logging.getLogger(__name__)

DRIVER_SOURCE = shipped(Path(__file__).with_name("_driver.py"))

#: Extra seconds the harness waits past a job's own timeout before it declares the
#: supervisor unresponsive and replaces the worker.
GRACE_S = 5.0


def candidate_zygote_source() -> str:
    """The program of the workers' candidate zygote (see ``_driver.ensure_zygote``):
    the judge's candidate runner, which forks clean, warm candidates on request."""
    from reflexion_bench.judge import CANDIDATE_SOURCE

    return CANDIDATE_SOURCE


class WorkerDied(RuntimeError):
    """The worker's supervisor went away or stopped answering."""


class Channel(abc.ABC):
    """Line transport to one supervisor, plus a way to destroy everything behind it."""

    @abc.abstractmethod
    async def send_line(self, data: bytes) -> None: ...

    @abc.abstractmethod
    async def recv_line(self) -> bytes:
        """One line, or b"" at EOF."""

    @abc.abstractmethod
    async def kill(self) -> None:
        """Kill the supervisor and every process it started; idempotent."""

    def kill_now(self) -> None:  # noqa: B027 - optional synchronous variant
        """Best-effort synchronous kill (interpreter exit, event loop gone)."""

    def diagnostics(self) -> str:
        return ""

    def oom_kills(self) -> int | None:
        """Count of OOM kills in this worker's memory cgroup, when one is used."""
        return None


#: First line of a script the supervisor compiles once per worker (_driver.CACHE_MARK):
#: such a file is sent once per worker, then by its hash only.
CACHE_MARK = "# reflexion-bench: compile once per worker\n"


class Worker:
    def __init__(self, channel: Channel, info: dict[str, Any]) -> None:
        self.channel = channel
        self.info = info
        self.served = 0
        self.dead = False
        self._next_id = 0
        #: sha256 of the cacheable files this worker holds (the supervisor's own rule:
        #: at most 8, all dropped when a ninth comes).
        self.cached: set[str] = set()

    def by_ref(self, job: dict[str, Any]) -> dict[str, Any]:
        """``job`` with its cacheable ``.py`` files sent by hash where this worker has
        them (the judge's 90 KB source costs JSON and pipe time on every program)."""
        files = job.get("files") or {}
        if not job.get("trusted"):
            return job  # the supervisor caches a trusted job's scripts only
        refs: dict[str, str] = {}
        full: dict[str, str] = {}
        for name, content in files.items():
            if not (name.endswith(".py") and content.startswith(CACHE_MARK)):
                full[name] = content
                continue
            key = hashlib.sha256(content.encode("utf-8")).hexdigest()
            if key in self.cached:
                refs[name] = key
                continue
            if len(self.cached) >= 8:
                self.cached.clear()
            self.cached.add(key)
            full[name] = content
        if not refs:
            return job
        return {**job, "files": full, "file_refs": refs}

    async def run(self, job: dict[str, Any], wait_s: float) -> dict[str, Any]:
        self._next_id += 1
        job = {**job, "id": self._next_id}
        await self.channel.send_line(json.dumps(job).encode() + b"\n")
        try:
            line = await asyncio.wait_for(self.channel.recv_line(), timeout=wait_s)
        except TimeoutError:
            raise WorkerDied("timeout") from None
        if not line:
            raise WorkerDied("eof")
        out: dict[str, Any] = json.loads(line)
        if out.get("id") != self._next_id:
            raise WorkerDied(f"protocol: expected id {self._next_id}, got {out.get('id')!r}")
        self.served += 1
        return out


async def start_worker(channel: Channel, timeout_s: float = 60.0) -> Worker:
    """Wait for the supervisor's ``ready`` line."""
    try:
        line = await asyncio.wait_for(channel.recv_line(), timeout=timeout_s)
    except TimeoutError:
        line = b""
    try:
        info = json.loads(line) if line else {}
    except json.JSONDecodeError:
        info = {}
    if not info.get("ready"):
        diag = channel.diagnostics()
        await channel.kill()
        raise RuntimeError(f"sandbox worker did not start: {line[:200]!r} {diag}".strip())
    return Worker(channel, info)


class PooledSandbox(Sandbox):
    """``jobs`` warm workers; subclasses say how to start one (``_spawn``)."""

    def __init__(self, jobs: int = 2, recycle_after: int = 500, inproc_python: bool = True):
        if int(jobs) < 1:
            from reflexion_bench.core.errors import ConfigError

            raise ConfigError("sandbox.jobs", jobs, "an integer >= 1")
        self.jobs = int(jobs)
        self.recycle_after = int(recycle_after)
        self.inproc_python = bool(inproc_python)
        self._workers: list[Worker | None] = [None] * self.jobs
        self._idle: asyncio.Queue[int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Workers retired because their integrity check failed after a job (what a
        #: program changed that the clean-up could not undo): ``(slot, problems)``.
        self.retirements: list[tuple[int, list[str]]] = []
        #: Seconds each step of the workers' clean-up took, summed over jobs, and the
        #: number of jobs (``step_costs["jobs"]``): what isolation costs per program.
        self.step_costs: dict[str, float] = {}

    # ------------------------------------------------------------------ subclass API
    @abc.abstractmethod
    async def _spawn(self, slot: int) -> Channel:
        """Start an isolated environment with a supervisor in it."""

    async def _after_worker_killed(self, slot: int) -> None:
        """Hook: sweep what a killed worker may have left (processes, containers)."""

    # ------------------------------------------------------------------ pool
    def _bind_loop(self) -> asyncio.Queue[int]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._idle is None:
            # A new event loop (e.g. a second asyncio.run): the old transports are
            # unusable, so drop those workers and start afresh.
            for w in self._workers:
                if w is not None:
                    w.channel.kill_now()
            self._workers = [None] * self.jobs
            self._idle = asyncio.Queue()
            for slot in range(self.jobs):
                self._idle.put_nowait(slot)
            self._loop = loop
        return self._idle

    async def _worker(self, slot: int) -> Worker:
        w = self._workers[slot]
        if w is not None and (w.dead or w.served >= self.recycle_after):
            await self._discard(slot)
            w = None
        if w is None:
            channel = await self._spawn(slot)
            w = await start_worker(channel)
            self._workers[slot] = w
        return w

    async def _discard(self, slot: int) -> None:
        w = self._workers[slot]
        self._workers[slot] = None
        if w is not None:
            await w.channel.kill()
        await self._after_worker_killed(slot)

    def _python_inproc(self, argv: Sequence[str]) -> bool:
        return (
            self.inproc_python
            and len(argv) >= 2
            and argv[0] == "{python}"
            and not argv[1].startswith("-")
            and argv[1].endswith(".py")
        )

    def _job(self, req: ExecRequest) -> dict[str, Any]:
        limits = asdict(req.limits)
        return {
            "argv": list(req.argv),
            "files": dict(req.files),
            "stdin": req.stdin,
            "timeout_s": float(req.timeout_s),
            "limits": limits,
            "inproc": self._python_inproc(req.argv),
            "trusted": bool(req.trusted),
        }

    async def exec(self, request: ExecRequest) -> ExecResult:
        return (await self.exec_batch([request]))[0]

    async def exec_batch(self, requests: Sequence[ExecRequest]) -> list[ExecResult]:
        """Run ``requests`` one after another on one warm worker (fewer hand-offs).

        Each still runs in its own fresh process and emptied scratch directory, so
        results are the same as with separate :meth:`exec` calls.
        """
        idle = self._bind_loop()
        slot = await idle.get()
        try:
            return [await self._exec_on(slot, req) for req in requests]
        finally:
            idle.put_nowait(slot)

    async def _exec_on(self, slot: int, req: ExecRequest) -> ExecResult:
        started = time.perf_counter()
        if req.fresh and self._workers[slot] is not None:
            await self._discard(slot)
        for attempt in (1, 2):
            try:
                w = await self._worker(slot)
            except Exception as exc:  # the sandbox itself failed; the run goes on
                if attempt == 2:
                    return ExecResult(
                        None,
                        "",
                        "",
                        time.perf_counter() - started,
                        "error",
                        detail=f"sandbox worker failed to start: {exc}",
                    )
                await self._discard(slot)
                continue
            oom_before = w.channel.oom_kills()
            try:
                job = self._job(req)
                out = await w.run(w.by_ref(job), wait_s=float(req.timeout_s) + GRACE_S)
                if out.get("ref_miss"):  # the worker lost a cached file: send it whole
                    w.cached.clear()
                    out = await w.run(job, wait_s=float(req.timeout_s) + GRACE_S)
            except asyncio.CancelledError:
                # The caller gave up mid-program: the worker is still busy with it, so
                # it must not serve anyone else. Destroy it now (synchronously: we are
                # being cancelled); the slot starts a fresh one on next use.
                w.dead = True
                self._workers[slot] = None
                w.channel.kill_now()
                raise
            except (WorkerDied, OSError, ConnectionError, json.JSONDecodeError) as exc:
                w.dead = True
                oom_after = w.channel.oom_kills()
                await self._discard(slot)
                why = str(exc)
                reason: StopReason
                if oom_after is not None and oom_before is not None and oom_after > oom_before:
                    reason, detail = "memory", "the sandbox's memory cgroup ran out of memory"
                elif why == "timeout":
                    reason = "timeout"
                    detail = (
                        f"no answer within {req.timeout_s:g}+{GRACE_S:g} s; "
                        "sandbox worker killed and replaced"
                    )
                else:
                    reason = "signal"
                    detail = (
                        f"the sandbox supervisor went away during the program ({why}); "
                        "worker replaced"
                    )
                return ExecResult(
                    None, "", "", time.perf_counter() - started, reason, detail=detail
                )
            costs = out.get("costs")
            if isinstance(costs, dict) and costs:
                self.step_costs["jobs"] = self.step_costs.get("jobs", 0.0) + 1
                for step, secs in costs.items():
                    if isinstance(secs, int | float):
                        self.step_costs[step] = self.step_costs.get(step, 0.0) + float(secs)
            if not out.get("clean", True):
                # The box is not what a fresh one would be (a limit changed, an IPC
                # object or a process survived the clean-up): no later program may run
                # there. The worker is replaced before the slot's next job.
                w.dead = True
                problems = [str(p) for p in out.get("integrity") or ["not clean"]]
                self.retirements.append((slot, problems))
                log.info("sandbox worker %d retired after a job: %s", slot, "; ".join(problems))
            reason = out.get("reason", "error")
            detail = str(out.get("detail", ""))
            oom_after = w.channel.oom_kills()
            if (
                oom_after is not None
                and oom_before is not None
                and oom_after > oom_before
                and reason in ("signal", "exit")
                and out.get("exit_code") != 0
            ):
                reason, detail = "memory", "killed by the memory cgroup (out of memory)"
            leftovers = int(out.get("leftovers") or 0)
            if leftovers:
                note = f"killed {leftovers} background process(es) it left running"
                detail = f"{detail}; {note}" if detail else note
            return ExecResult(
                leftover_processes=leftovers,
                exit_code=out.get("exit_code"),
                stdout=str(out.get("stdout", "")),
                stderr=str(out.get("stderr", "")),
                duration_s=float(out.get("duration_s", time.perf_counter() - started)),
                reason=reason,
                truncated=bool(out.get("truncated", False)),
                detail=detail,
            )
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Stop every worker (a later ``exec`` starts fresh ones)."""
        for slot in range(self.jobs):
            w = self._workers[slot]
            if w is not None:
                try:
                    await self._discard(slot)
                except Exception as exc:  # closing must go on for the other slots
                    log.warning("closing sandbox worker %d failed: %s", slot, exc)

    def close_now(self) -> None:
        """Synchronous best-effort cleanup (atexit, signal handlers)."""
        for w in self._workers:
            if w is not None:
                w.channel.kill_now()
        self._workers = [None] * self.jobs
