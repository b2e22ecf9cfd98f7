"""Run progress a person can read.

On a terminal (rich): the run's line (tasks done / total, passed and errored so far,
elapsed, ETA, a bar) and one live line per task in flight: its trial, the role whose
model call it is waiting for ("waiting for the model" and for how long: no token
arrives before the reply does), and the tokens it has used so far. Every line is laid
out for the terminal's width (:meth:`Progress.render`): from 200 down to 80 columns
parts shorten or drop in a fixed order, and the count ``done/total`` always stays. Off a
terminal (CI, nohup, a log file): plain lines, one per finished task, plus a status line
every ``interval_s`` while tasks run (never a silent minute), each with the active tasks.

Counts include the tasks finished in earlier sessions of the same run folder (a
resumed run continues its counter and pass rate); the ETA uses this session's pace
only. In a sweep, every line starts with the job's overrides (``label``).

From the first model reply, the run's line also shows the calls answered and the
tokens generated per second in this session (issue 49: a first task can take 20 minutes
on a busy machine, and ``[0/10] ETA --`` for that long reads as a hang). The ETA is then
the tokens still to generate over that speed: the tokens a task takes are those of this
session's finished tasks, pulled towards ``expected_tokens_per_task`` (a figure logged by
an earlier run of the same model and benchmark, see
:func:`reflexion_bench.runner.reference_logs.expected_tokens_per_task`) while few have
finished, and that figure alone before any has. Without either, the ETA waits for the
first finished task and uses the pace of tasks, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import IO, Any

INTERVAL_S = 30.0
#: Live task lines shown at most (more in flight are counted on one line).
MAX_ROWS = 12
#: How many finished tasks the logged tokens-per-task figure counts as: the first tasks
#: to finish are the quick ones (a pass at trial 1), so their mean alone would promise
#: too early an end; the figure's weight fades as this session's tasks accumulate.
PRIOR_WEIGHT = 3.0


def _monotonic() -> float:
    # Looked up at each call: a test may replace the module's ``time``.
    return time.monotonic()


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


def _calls(state: Any) -> list[Any]:
    return [c for t in state.trials for c in t.model_calls] + list(state.pending_calls)


def _tokens(state: Any) -> int:
    return sum(int(c.prompt_tokens or 0) + int(c.completion_tokens or 0) for c in _calls(state))


def _generated(state: Any) -> tuple[int, int, int]:
    """A task's answered calls, their completion tokens, and those generated live.

    A call replayed from the response cache carries its live call's tokens (as the log
    does) but took no time: it counts as work done, not as speed."""
    calls = _calls(state)
    out = sum(int(c.completion_tokens or 0) for c in calls)
    live = sum(int(c.completion_tokens or 0) for c in calls if not getattr(c, "cached", False))
    return len(calls), out, live


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters (an ellipsis marks a cut)."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…" if width > 0 else ""


def _cut_middle(text: str, width: int) -> str:
    # Task ids differ at their end (HumanEval/12 vs HumanEval/120): keep both ends.
    if len(text) <= width:
        return text
    if width < 5:
        return _cut(text, width)
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def _bar(done: int, total: int, width: int) -> str:
    filled = round(width * done / total) if total else width
    return "━" * filled + "╺" * (width - filled)


class _Display:
    """The rich renderable of the live display: asks :meth:`Progress.render` for the
    lines at the width the terminal has at each refresh."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.text import Text

        height = getattr(options, "height", None) or console.size.height
        for line in self.progress.render(options.max_width, height):
            yield Text(line, no_wrap=True, overflow="ellipsis")


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
    expected_tokens_per_task: Completion tokens a task is expected to take (from an
        earlier run's log), for an ETA before the first task finishes; None: unknown.
    clock: Seconds on a monotonic clock (default ``time.monotonic``; tests pass their own).
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
        expected_tokens_per_task: float | None = None,
        clock: Callable[[], float] | None = None,
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
        #: Per task: which call is in flight (role, calls made, trials) and since when.
        self._call: dict[str, tuple[tuple[str, int, int], float]] = {}
        self.expected_tokens_per_task = expected_tokens_per_task
        #: Calls, completion tokens and live completion tokens of the tasks finished in
        #: this session (those in flight are read from their states).
        self._finished_calls = (0, 0, 0)
        self._now = clock or _monotonic
        self._started = self._now()
        self._live: Any = None
        self._ticker: asyncio.Task[None] | None = None

    # -- lifecycle -----------------------------------------------------------------
    def __enter__(self) -> Progress:
        self._started = self._now()
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                _Display(self),
                console=Console(file=self.stream, force_terminal=True),
                auto_refresh=False,  # refreshed from the event loop: no thread reads state
                transient=False,  # the last frame stays (what the run ended with)
            )
            self._live.__enter__()
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
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(exc_type, exc, tb)
            self._live = None

    async def _tick(self) -> None:
        # Every second (also off a terminal, where lines come every interval_s): when a
        # model call started is only seen by looking, so its wait is right to a second.
        step = min(1.0, self.interval_s)
        last = self._now()
        while True:
            await asyncio.sleep(step)
            self._observe()
            if self.enabled:
                self.refresh()
            elif self._now() - last >= self.interval_s - 1e-6:
                last = self._now()
                self.line(self.status())
                for row in self.task_lines():
                    self.line(f"  {row}")

    def _observe(self) -> None:
        for task_id, state in list(self.active.items()):
            self._call_started(task_id, state)

    def _call_started(self, task_id: str, state: Any) -> float | None:
        """When the model call in flight for ``task_id`` was first seen (None: none is)."""
        role = state.calling
        if not role:
            self._call.pop(task_id, None)
            return None
        key = (str(role), len(state.pending_calls), len(state.trials))
        seen = self._call.get(task_id)
        if seen is None or seen[0] != key:
            seen = self._call[task_id] = (key, self._now())
        return seen[1]

    # -- text ------------------------------------------------------------------------
    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self._live is not None:
            # Wrapped at the terminal's width (never cut: these lines stay on screen).
            self._live.console.print(f"{self.label}{text}", highlight=False, markup=False)
        else:
            print(f"{self.label}{text}", file=self.stream, flush=True)

    def stats(self) -> str:
        ran = max(1, self.done)
        return f"passed {self.passed} ({self.passed / ran:.0%} of finished) errored {self.errored}"

    def stats_short(self) -> str:
        ran = max(1, self.done)
        return f"passed {self.passed} ({self.passed / ran:.0%}) errored {self.errored}"

    def model_counts(self) -> tuple[int, int, int]:
        """This session's answered calls, their completion tokens, those generated live."""
        calls, out, live = self._finished_calls
        for state in self.active.values():
            c, o, g = _generated(state)
            calls, out, live = calls + c, out + o, live + g
        return calls, out, live

    def tokens_per_s(self) -> float | None:
        """Completion tokens generated live per second of this session (None before the
        first live reply): the whole run's speed, all tasks in flight together."""
        _, _, live = self.model_counts()
        elapsed = self._now() - self._started
        return live / elapsed if live > 0 and elapsed > 0 else None

    def tokens_per_task(self) -> float | None:
        """Completion tokens a task takes: this session's finished tasks, pulled towards
        the logged figure (:data:`PRIOR_WEIGHT`) while few have finished."""
        n = self.done - self.done_before
        out = self._finished_calls[1]
        prior = self.expected_tokens_per_task
        if prior is not None and prior > 0:
            return (prior * PRIOR_WEIGHT + out) / (PRIOR_WEIGHT + n)
        return out / n if n > 0 and out > 0 else None

    def eta_s(self) -> float | None:
        """Seconds left: the completion tokens still to come over the speed measured so
        far; without a token figure, this session's pace of tasks (None before it has one).
        """
        per_task = self.tokens_per_task()
        elapsed = self._now() - self._started
        _, out, _ = self.model_counts()
        if per_task is not None and out > 0 and elapsed > 0:
            # Delivered tokens (cached ones too) over time: a replayed call is done work.
            speed = out / elapsed
            in_flight = sum(max(0.0, per_task - _generated(s)[1]) for s in self.active.values())
            waiting = max(0, self.total - self.done - len(self.active))
            return (waiting * per_task + in_flight) / speed
        now_done = self.done - self.done_before
        if now_done <= 0:
            return None
        return elapsed / now_done * (self.total - self.done)

    def model_part(self) -> str:
        """``N calls, R tok/s`` of this session (``0 calls`` before the first reply)."""
        calls = self.model_counts()[0]
        rate = self.tokens_per_s()
        return f"{calls} calls" if rate is None else f"{calls} calls, {rate:.1f} tok/s"

    def _eta(self) -> str:
        eta = self.eta_s()
        return "ETA --" if eta is None else f"ETA {_clock(eta)}"

    def timing(self) -> str:
        return f"elapsed {_clock(self._now() - self._started)}, {self._eta()}"

    def status(self) -> str:
        return (
            f"[{self.done}/{self.total}] {self.stats()}; {len(self.active)} running; "
            f"{self.model_part()}; {self.timing()}"
        )

    def run_line(self, width: int) -> str:
        """The run's line in at most ``width`` columns. What goes first as the width
        shrinks: the bar narrows (then goes), "elapsed", then the words of the pass
        rate, the model's calls, its speed, the ETA, the counts of passed/errored, and the
        sweep label is cut; the count ``done/total`` always stays."""
        count = f"{self.done}/{self.total}"
        label = self.label.strip()
        model = self.model_part()
        speed = f"{model.split(', ')[1]}," if ", " in model else ""
        texts = [
            (self.stats(), f"{model}; {self.timing()}"),
            (self.stats(), f"{model}; {self._eta()}"),
            (self.stats_short(), f"{model}; {self._eta()}"),
            (self.stats_short(), f"{speed} {self._eta()}".strip()),
            (self.stats_short(), self._eta()),
            (self.stats_short(), ""),
            ("", ""),
        ]
        for stats, timing in texts:
            tail = " ".join(p for p in (count, stats, timing) if p)
            room = width - len(tail)
            # The label (a sweep job's overrides) keeps at least a few characters.
            need = (min(len(label), 12) + 1) if label else 0
            if room >= need:
                break
        else:
            return _cut(count, width)
        full = f"{label} tasks" if label else "tasks"
        avail = room - 1  # one space before the counts
        bar = ""
        if avail >= len(full) + 1 + 8:
            head = full
            bar = _bar(self.done, self.total, min(40, avail - len(full) - 1))
        elif avail >= len(full):
            head = full
        else:
            head = _cut(label or full, avail) if avail > 0 else ""
        return " ".join(p for p in (head, bar, tail) if p)

    def task_line(self, task_id: str, width: int | None = None) -> str:
        """A task in flight: its trial, what it waits for, its tokens so far, its time.

        A model call gives no token count until its reply arrives (no streaming here):
        while one is in flight the line says "waiting for the model" and for how long,
        instead of a token count that looks stuck at its last value."""
        state = self.active[task_id]
        now = self._now()
        tokens = f"{_tokens(state)} tokens"
        took = _clock(now - self._since[task_id])
        trial = f"trial {state.trial_index}/{state.max_trials}"
        role = state.calling
        since = self._call_started(task_id, state)
        if since is not None:
            waiting = f"{role}: waiting for the model {_clock(now - since)}"
            variants = [
                f"{trial} {waiting}, {tokens} so far, task {took}",
                f"{trial} {waiting}, {tokens} so far",
                f"{trial} {waiting}",
                f"{trial} {role}: waiting {_clock(now - since)}",
            ]
        else:
            variants = [
                f"{trial} judging/testing, {tokens}, {took}",
                f"{trial} judging/testing, {tokens}",
                f"{trial} testing",
            ]
        if width is None:
            return f"{task_id} {variants[0]}"
        # The whole id with the longest tail that fits; only then a cut id.
        for least in (len(task_id), min(len(task_id), 12)):
            for rest in variants:
                room = width - len(rest) - 1
                if room >= least:
                    return f"{_cut_middle(task_id, room)} {rest}"
        return _cut(f"{task_id} {variants[-1]}", width)

    def task_lines(self) -> list[str]:
        return [self.task_line(t) for t in list(self.active)]

    def render(self, width: int, height: int | None = None) -> list[str]:
        """The live display's lines for a terminal ``width`` columns wide (none longer)."""
        width = max(1, width)
        lines = [self.run_line(width)]
        ids = list(self.active)
        shown = MAX_ROWS if height is None else max(0, min(MAX_ROWS, height - 3))
        indent = "  " if width > 40 else ""
        lines += [indent + self.task_line(t, width - len(indent)) for t in ids[:shown]]
        if len(ids) > shown:
            lines.append(_cut(f"{indent}... and {len(ids) - shown} more in flight", width))
        return lines

    # -- events ----------------------------------------------------------------------
    def task_started(self, state: Any) -> None:
        task_id = str(state.task.id)
        self.active[task_id] = state
        self._since[task_id] = self._now()
        self.refresh()

    def refresh(self) -> None:
        if self._live is not None:
            self._live.refresh()

    def task_done(self, passed: bool, errored: bool = False, task_id: str | None = None) -> None:
        self.done += 1
        self.passed += int(passed)
        self.errored += int(errored)
        if task_id is not None:
            state = self.active.pop(task_id, None)
            if state is not None:
                c, o, g = _generated(state)
                calls, out, live = self._finished_calls
                self._finished_calls = (calls + c, out + o, live + g)
            self._since.pop(task_id, None)
            self._call.pop(task_id, None)
        if self._live is not None:
            self.refresh()
        elif not self.quiet:
            # Off a terminal (CI, nohup): one plain line per task, cheap to grep.
            what = (
                f" {task_id} {'passed' if passed else 'errored' if errored else 'failed'};"
                if task_id
                else ""
            )
            self.line(
                f"[{self.done}/{self.total}]{what} {self.stats()}; {self.model_part()}; "
                f"{self.timing()}"
            )
