"""Run progress: tasks done / total and success so far (rich), quiet off a terminal."""

from __future__ import annotations

import sys
from types import TracebackType

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress


class Progress:
    def __init__(self, total: int, already_done: int = 0, enabled: bool = True) -> None:
        self.total = total
        self.done = already_done
        self.passed = 0
        self.errored = 0
        self.quiet = not enabled
        self.enabled = enabled and sys.stderr.isatty()
        self._bar: RichProgress | None = None
        self._task_id: object = None

    def __enter__(self) -> Progress:
        if self.enabled:
            self._bar = RichProgress(
                TextColumn("[bold]tasks"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                transient=False,
            )
            self._bar.__enter__()
            self._task_id = self._bar.add_task(
                "run", total=self.total, completed=self.done, stats=self._stats()
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)

    def _stats(self) -> str:
        ran = max(1, self.done)
        return f"passed {self.passed} ({self.passed / ran:.0%} of finished) errored {self.errored}"

    def task_done(self, passed: bool, errored: bool = False) -> None:
        self.done += 1
        self.passed += int(passed)
        self.errored += int(errored)
        if self._bar is not None:
            self._bar.update(self._task_id, completed=self.done, stats=self._stats())  # type: ignore[arg-type]
        elif not self.quiet:
            # Off a terminal (CI, nohup): one plain line per task, cheap to grep.
            print(f"[{self.done}/{self.total}] {self._stats()}", file=sys.stderr, flush=True)
