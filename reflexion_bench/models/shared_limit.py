"""A requests-per-window limit shared by every process of a sweep.

``rpm`` in the model layer bounds one process. A sweep runs jobs in several processes
(joblib, SLURM array tasks on one node, Ray workers) that may call one provider
account; this limiter keeps a sliding-window log of call starts in a SQLite file that
all of them open, so the account's limit holds for the sweep as a whole.

Why SQLite: it is already the cache's store, works across processes on one machine
or a shared filesystem with proper locking, and ``BEGIN IMMEDIATE`` gives the
check-then-insert step the atomicity a limiter needs without a server.

A slot is held from the moment a call is allowed until ``window`` after its response
arrived. The server counts a request when it *arrives*, which is somewhere between
those two moments, so however late a loaded machine delivers a request, every request
in any server-side window still holds a slot here: the limit holds without a guessed
safety margin.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from reflexion_bench.core.errors import ConfigError

_SCHEMA = "CREATE TABLE IF NOT EXISTS calls (key TEXT NOT NULL, t REAL NOT NULL)"
#: How long an unreleased slot (a process killed mid-call) is held at most.
MAX_HOLD_S = 900.0
_INDEX = "CREATE INDEX IF NOT EXISTS calls_key_t ON calls (key, t)"


class SharedRateLimit:
    """At most ``rate`` call starts per ``window_s`` under ``key``, across processes.

    Args:
        path: SQLite file shared by the processes (created if missing).
        key: What the limit is shared by (e.g. an account or endpoint name); clients of
            different providers that share one account use the same key.
        rate: Calls allowed per window.
        window_s: Window length in seconds (60 for a per-minute limit).
        margin_s: Extra spacing added to the window (clock differences between machines
            sharing the file over a network filesystem).
    """

    def __init__(
        self, path: str | Path, key: str, rate: int, window_s: float = 60.0, margin_s: float = 0.0
    ) -> None:
        if rate < 1:
            raise ConfigError("model.shared_rpm", rate, "an integer >= 1")
        if window_s <= 0:
            raise ConfigError("model.rate_window_s", window_s, "a number > 0")
        self.path = Path(path)
        self.key = key
        self.rate = int(rate)
        self.window_s = float(window_s) + float(margin_s)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(_SCHEMA)
            db.execute(_INDEX)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def try_acquire(self, now: float | None = None) -> tuple[float, int | None]:
        """Take a slot if one is free: return (0, slot id), else (seconds to wait, None).

        The slot stays held until :meth:`release` plus the window. Uses wall-clock time
        (``time.time``): the processes share no monotonic clock.
        """
        now = time.time() if now is None else now
        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "DELETE FROM calls WHERE key = ? AND t <= ?", (self.key, now - self.window_s)
            )
            (count, oldest) = db.execute(
                "SELECT COUNT(*), MIN(t) FROM calls WHERE key = ?", (self.key,)
            ).fetchone()
            if count < self.rate:
                cur = db.execute(
                    "INSERT INTO calls (key, t) VALUES (?, ?)", (self.key, now + MAX_HOLD_S)
                )
                db.execute("COMMIT")
                return 0.0, cur.lastrowid
            db.execute("COMMIT")
            return max(0.005, float(oldest) + self.window_s - now), None
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()

    def release(self, slot: int, now: float | None = None) -> None:
        """The call of ``slot`` is over: its slot frees ``window`` from now."""
        now = time.time() if now is None else now
        db = self._connect()
        try:
            db.execute("UPDATE calls SET t = ? WHERE rowid = ?", (now, slot))
        finally:
            db.close()

    async def acquire(self) -> int:
        """Wait until a slot is free, take it, and return its id (for :meth:`release`)."""
        while True:
            wait, slot = await asyncio.to_thread(self.try_acquire)
            if slot is not None:
                return slot
            # Poll at least every 0.25 s: a slot held by an in-flight call frees when
            # that call ends, earlier than the wait computed from its hold time.
            await asyncio.sleep(min(wait, 0.25))
