"""Run progress a person can read.

On a terminal (rich): the run's bar (tasks done / total, passed and errored so far,
elapsed, ETA) and one live line per task in flight: its trial, the role whose model
call it is waiting for, and the tokens it has used so far. Off a terminal (CI, nohup,
a log file): plain lines, one per finished task, plus a status line every
``interval_s`` while tasks run (never a silent minute), each with the active tasks.

Counts include the tasks finished in earlier sessions of the same run folder (a
resumed run continues its counter and pass rate); the ETA uses this session's pace
only. In a sweep, every line starts with the job's overrides (``label``).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from types import TracebackType
from typing import IO, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
from rich.progress import Progress as RichProgress

INTERVAL_S = 30.0


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


def _tokens(state: Any) -> int:
    calls = [c for t in state.trials for c in t.model_calls] + list(state.pending_calls)
    return sum(int(c.prompt_tokens or 0) + int(c.completion_tokens or 0) for c in calls)


class Progress:
    """Args:
    total: Tasks of the run (earlier sessions included).
    already_done: Tasks finished before this session.
    passed_before, errored_before: Of those, how many passed / errored.
    enabled: False: print nothing (``progress=false``).
    label: Prefix of every line (a sweep job's overrides).
    interval_s: Seconds between status lines off a terminal.
    stream: Where to write (stderr).
    tty: Force the terminal display on or off (default: ``stream.isatty()``).
    """

    def __init__(
        self,
        total: int,
        already_done: int = 0,
        enabled: bool = True,
        *,
        passed_before: int = 0,
        errored_before: int = 0,
        label: str = "",
        interval_s: float | None = None,
        stream: IO[str] | None = None,
        tty: bool | None = None,
    ) -> None:
        self.total = total
        self.done = already_done
        self.passed = passed_before
        self.errored = errored_before
        self.done_before = already_done
        self.quiet = not enabled
        self.stream = stream or sys.stderr
        is_tty = self.stream.isatty() if tty is None else tty
        self.enabled = enabled and is_tty
        self.label = f"{label} " if label else ""
        self.interval_s = INTERVAL_S if interval_s is None else interval_s
        self.active: dict[str, Any] = {}
        self._since: dict[str, float] = {}
        self._started = time.monotonic()
        self._bar: RichProgress | None = None
        self._task_id: Any = None
        self._rows: dict[str, Any] = {}
        self._ticker: asyncio.Task[None] | None = None

    # -- lifecycle -----------------------------------------------------------------
    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        if self.enabled:
            self._bar = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                console=Console(file=self.stream, force_terminal=True),
                transient=False,
                refresh_per_second=2,
            )
            self._bar.__enter__()
            self._task_id = self._bar.add_task(
                f"{self.label}tasks", total=self.total, completed=self.done, stats=self.stats()
            )
        if not self.quiet:
            with contextlib.suppress(RuntimeError):  # no running loop: no ticker
                self._ticker = asyncio.get_running_loop().create_task(self._tick())
            if not self.enabled:
                self.line(self.status())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
            self._bar = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0 if self.enabled else self.interval_s)
            if self.enabled:
                self.refresh()
            else:
                self.line(self.status())
                for row in self.task_lines():
                    self.line(f"  {row}")

    # -- text ------------------------------------------------------------------------
    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.console.print(f"{self.label}{text}", highlight=False, markup=False)
        else:
            print(f"{self.label}{text}", file=self.stream, flush=True)

    def stats(self) -> str:
        ran = max(1, self.done)
        return f"passed {self.passed} ({self.passed / ran:.0%} of finished) errored {self.errored}"

    def eta_s(self) -> float | None:
        """Seconds left at this session's pace (None before its first finished task)."""
        now_done = self.done - self.done_before
        if now_done <= 0:
            return None
        return (time.monotonic() - self._started) / now_done * (self.total - self.done)

    def timing(self) -> str:
        eta = self.eta_s()
        left = "ETA --" if eta is None else f"ETA {_clock(eta)}"
        return f"elapsed {_clock(time.monotonic() - self._started)}, {left}"

    def status(self) -> str:
        return f"[{self.done}/{self.total}] {self.stats()}; {len(self.active)} running; {self.timing()}"

    def task_line(self, task_id: str) -> str:
        state = self.active[task_id]
        role = state.calling or "judging/testing"
        waited = _clock(time.monotonic() - self._since[task_id])
        return (
            f"{task_id} trial {state.trial_index}/{state.max_trials} {role}, "
            f"{_tokens(state)} tokens, {waited}"
        )

    def task_lines(self) -> list[str]:
        return [self.task_line(t) for t in list(self.active)]

    # -- events ----------------------------------------------------------------------
    def task_started(self, state: Any) -> None:
        task_id = str(state.task.id)
        self.active[task_id] = state
        self._since[task_id] = time.monotonic()
        if self._bar is not None:
            self._rows[task_id] = self._bar.add_task(
                f"  {self.task_line(task_id)}", total=None, stats=""
            )

    def refresh(self) -> None:
        if self._bar is None:
            return
        for task_id, row in list(self._rows.items()):
            if task_id in self.active:
                self._bar.update(row, description=f"  {self.task_line(task_id)}")
        self._bar.update(self._task_id, stats=f"{self.stats()}  {self.timing()}")

    def task_done(self, passed: bool, errored: bool = False, task_id: str | None = None) -> None:
        self.done += 1
        self.passed += int(passed)
        self.errored += int(errored)
        if task_id is not None:
            self.active.pop(task_id, None)
            self._since.pop(task_id, None)
            row = self._rows.pop(task_id, None)
            if row is not None and self._bar is not None:
                self._bar.remove_task(row)
        if self._bar is not None:
            self._bar.update(
                self._task_id, completed=self.done, stats=f"{self.stats()}  {self.timing()}"
            )
        elif not self.quiet:
            # Off a terminal (CI, nohup): one plain line per task, cheap to grep.
            what = (
                f" {task_id} {'passed' if passed else 'errored' if errored else 'failed'};"
                if task_id
                else ""
            )
            self.line(f"[{self.done}/{self.total}]{what} {self.stats()}; {self.timing()}")
