"""A pool of game worker processes, shared by every task of a run.

A game load takes seconds of pure-Python PDDL grounding and a step a tenth of a second,
all on one core; with several tasks in flight the games must run in other processes or
the whole run is bound by one core. Each worker process hosts any number of open games
(a task keeps its game open while the model thinks, so games outnumber workers); a new
game goes to the worker with the fewest open games. Workers are started on first use,
reused across games and trials, recycled after ``max_games_per_worker`` games (to bound
memory), restarted after a crash or a timeout (the games open there are lost and their
tasks error, the others go on), and stopped at exit.

Each worker is driven by one daemon thread of the parent that owns its pipe, so requests
to one worker are served in order without locks held across ``await`` and the pool
works from any event loop (tests make a new loop per test), and a blocked pipe can never
hold up interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# The folder holding the `reflexion_bench` package, for workers run from a checkout.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[3])


class GameError(RuntimeError):
    """The game engine refused a request (a broken game file, an unknown session)."""


class GameWorkerError(GameError):
    """A worker process crashed or stopped answering; the games it hosted are lost."""


@dataclass(frozen=True)
class GameState:
    """What the game says after a reset or a step (raw text; see ``text.clean_observation``)."""

    observation: str
    won: bool
    done: bool
    admissible: tuple[str, ...] = ()


def _resolve(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.done():  # the awaiting task was cancelled meanwhile
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class _Worker:
    def __init__(self, index: int, data_dir: str, cache_games: int, max_games: int) -> None:
        self.index = index
        self.data_dir = data_dir
        self.cache_games = cache_games
        self.max_games = max_games
        self.sessions: set[str] = set()
        self.generation = 0
        self.games_opened = 0
        self.restarts = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: Connection | None = None
        self._writer: Connection | None = None
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    # ---------------------------------------------------------------- thread side

    def _serve(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, args, loop, fut = item
            try:
                value = fn(*args)
                ok = True
            except BaseException as exc:
                value, ok = exc, False
            # RuntimeError: the loop was closed meanwhile, nobody waits for the answer.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, fut, ok, value)

    def _start_process(self) -> None:
        # A fresh interpreter (`python -m ...worker`), not multiprocessing: `spawn` would
        # re-import the caller's main module (breaking scripts without a main guard and
        # notebooks) and `fork` would copy a process full of threads and model state.
        # Requests and answers are pickled over two private pipes; the worker's stdout
        # goes nowhere so a chatty library cannot corrupt the protocol.
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        env = dict(os.environ)
        env["ALFWORLD_DATA"] = self.data_dir
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH", "")) if p
        )
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "reflexion_bench.environments.alfworld.worker",
                    str(req_r),
                    str(resp_w),
                    self.data_dir,
                    str(self.cache_games),
                ],
                pass_fds=(req_r, resp_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                close_fds=True,
            )
        finally:
            os.close(req_r)
            os.close(resp_w)
        self.proc = proc
        self._writer = Connection(req_w, readable=False)
        self.conn = Connection(resp_r, writable=False)
        log.debug("started ALFWorld worker %d (pid %s)", self.index, proc.pid)

    def _stop_process(self, graceful: bool) -> None:
        proc, conn, writer = self.proc, self.conn, self._writer
        self.proc = self.conn = self._writer = None
        if proc is None or conn is None or writer is None:
            return
        if graceful and proc.poll() is None:
            try:
                writer.send(("shutdown", "", None))
                if conn.poll(10):
                    conn.recv()
            except (EOFError, OSError):
                pass
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        conn.close()
        writer.close()

    def _lose_sessions(self, why: str) -> None:
        with self._lock:
            lost = len(self.sessions)
            self.sessions.clear()
            self.generation += 1
            self.restarts += 1
        log.warning(
            "ALFWorld worker %d: %s; restarting it (%d open game(s) lost)", self.index, why, lost
        )
        self._stop_process(graceful=False)

    def call(self, op: str, sid: str, arg: Any, generation: int | None, timeout: float) -> Any:
        """Send one request and wait for its answer (runs on this worker's thread)."""
        if generation is not None and generation != self.generation:
            raise GameWorkerError(
                f"ALFWorld worker {self.index} was restarted after a crash or timeout; "
                "this game's session is lost"
            )
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:  # died between requests
                self._lose_sessions(f"process exited with code {self.proc.returncode}")
                if generation is not None:
                    raise GameWorkerError(f"ALFWorld worker {self.index} died; session lost")
            self._start_process()
        assert self.conn is not None and self._writer is not None and self.proc is not None
        try:
            self._writer.send((op, sid, arg))
            if not self.conn.poll(timeout):
                self._lose_sessions(f"no answer to `{op}` within {timeout:.0f}s")
                raise GameWorkerError(
                    f"ALFWorld worker {self.index} gave no answer to `{op}` within "
                    f"{timeout:.0f}s (env.step_timeout_s / env.load_timeout_s)"
                )
            status, payload = self.conn.recv()
        except (EOFError, OSError) as exc:
            code = self.proc.poll() if self.proc is not None else None
            self._lose_sessions(f"process died ({type(exc).__name__}, exit code {code})")
            raise GameWorkerError(
                f"ALFWorld worker {self.index} died while serving `{op}` (exit code {code}); "
                "if it died at start, check that alfworld is installed "
                "(pip install 'reflexion-bench[alfworld]')"
            ) from None
        if status != "ok":
            raise GameError(str(payload))
        if op == "close":
            with self._lock:
                self.sessions.discard(sid)
                recycle = self.games_opened >= self.max_games > 0 and not self.sessions
                if recycle:
                    self.games_opened = 0
            if recycle:  # bound the memory a long-lived worker accumulates
                self._stop_process(graceful=True)
        return payload

    def open_game(self, sid: str, gamefile: str, timeout: float) -> tuple[int, Any]:
        """Load a game (runs on this worker's thread, so no restart can interleave)."""
        with self._lock:
            self.sessions.add(sid)  # again: a restart since `reserve` cleared the set
            generation = self.generation
        return generation, self.call("open", sid, gamefile, generation, timeout)

    # ---------------------------------------------------------------- loop side

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        if self._closed:
            raise GameWorkerError("the ALFWorld game pool is closed")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name=f"alfworld-worker-{self.index}", daemon=True
            )
            self._thread.start()
        self._queue.put((fn, args, loop, fut))
        return fut

    def reserve(self, sid: str) -> None:
        # Counted at once (not when the load starts) so concurrent opens spread out.
        with self._lock:
            self.sessions.add(sid)
            self.games_opened += 1

    def release(self, sid: str) -> None:
        with self._lock:
            self.sessions.discard(sid)

    def close(self) -> None:
        """Stop the thread and the process (safe from any thread, and twice)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(15)
        self._stop_process(graceful=True)


class GameSession:
    """One open game. Use ``async with``, or call :meth:`close` when the episode ends."""

    def __init__(
        self, worker: _Worker, sid: str, generation: int, initial: GameState, step_timeout_s: float
    ) -> None:
        self._worker = worker
        self.sid = sid
        self._generation = generation
        self.initial = initial
        self.step_timeout_s = step_timeout_s
        self.closed = False

    @property
    def worker_index(self) -> int:
        return self._worker.index

    async def step(self, command: str) -> GameState:
        """Send one command to the game."""
        payload = await self._worker.submit(
            self._worker.call, "step", self.sid, command, self._generation, self.step_timeout_s
        )
        return GameState(payload[0], payload[1], payload[2], tuple(payload[3]))

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self._worker.submit(
                self._worker.call, "close", self.sid, None, self._generation, self.step_timeout_s
            )
        except GameError:  # the worker already lost this game; nothing left to close
            self._worker.release(self.sid)

    async def __aenter__(self) -> GameSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class GamePool:
    """Worker processes for one ALFWORLD_DATA root.

    Args:
        data_dir: The ALFWorld data root the workers set as ``ALFWORLD_DATA``.
        workers: Number of worker processes (about the number of free cores).
        cache_games: Closed games each worker keeps loaded for a quick reopen.
        max_games_per_worker: Recycle a worker after this many games (0: never).
    """

    def __init__(
        self,
        data_dir: str | Path,
        workers: int = 2,
        cache_games: int = 4,
        max_games_per_worker: int = 200,
    ) -> None:
        if workers < 1:
            raise ValueError(f"env.workers must be >= 1, got {workers}")
        self.data_dir = str(Path(data_dir).resolve())
        self._workers = [
            _Worker(i, self.data_dir, cache_games, max_games_per_worker) for i in range(workers)
        ]
        self.closed = False

    @property
    def size(self) -> int:
        return len(self._workers)

    def open_counts(self) -> list[int]:
        """Open games per worker (for tests and progress displays)."""
        return [len(w.sessions) for w in self._workers]

    def worker_pids(self) -> list[int | None]:
        return [w.proc.pid if w.proc is not None else None for w in self._workers]

    def restarts(self) -> int:
        """Worker restarts after a crash or timeout so far."""
        return sum(w.restarts for w in self._workers)

    async def open(
        self, gamefile: str | Path, load_timeout_s: float = 300.0, step_timeout_s: float = 60.0
    ) -> GameSession:
        """Load ``gamefile`` in the least busy worker and reset it."""
        if self.closed:
            raise GameWorkerError("the ALFWorld game pool is closed")
        worker = min(self._workers, key=lambda w: (len(w.sessions), w.index))
        sid = uuid.uuid4().hex[:12]
        worker.reserve(sid)
        try:
            generation, payload = await worker.submit(
                worker.open_game, sid, str(gamefile), load_timeout_s
            )
        except BaseException:
            worker.release(sid)
            raise
        initial = GameState(payload[0], payload[1], payload[2], tuple(payload[3]))
        return GameSession(worker, sid, generation, initial, step_timeout_s)

    async def ping(self) -> list[int]:
        """Start every worker (if needed) and return their pids."""
        return [int(await w.submit(w.call, "ping", "", None, None, 120.0)) for w in self._workers]

    def close(self) -> None:
        """Stop every worker process. Safe to call twice and at interpreter exit."""
        if self.closed:
            return
        self.closed = True
        for w in self._workers:
            w.close()


_POOLS: dict[tuple[str, int, int, int], GamePool] = {}
_POOLS_LOCK = threading.Lock()


def get_pool(
    data_dir: str | Path, workers: int = 2, cache_games: int = 4, max_games_per_worker: int = 200
) -> GamePool:
    """The process-wide pool for these settings (created on first use, closed at exit)."""
    key = (str(Path(data_dir).resolve()), int(workers), int(cache_games), int(max_games_per_worker))
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool.closed:
            pool = GamePool(*key)
            _POOLS[key] = pool
        return pool


def close_all_pools() -> None:
    """Stop every pool's workers (registered at exit; tests call it too)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


atexit.register(close_all_pools)
