"""Issue 32: the live progress fits the terminal from 200 down to 80 columns with the
count always shown; a call in flight says "waiting for the model" (not a token count
stuck at 0); the summary names the run's elapsed time and the summed task time apart."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import reflexion_bench.runner.progress as progress_mod
from reflexion_bench.runner.progress import Progress
from reflexion_bench.runner.run import execute
from tests.runner.test_progress import ctx_for

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = [80, 100, 120, 160, 200]
LABEL = (
    "[job 12: env=humaneval strategy=reflexion model=embedded seed=2 limit=164 "
    "generate.temperature=0.8]"
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class FakeState:
    """What Progress reads of a TaskState (a call in flight, or between calls)."""

    def __init__(self, task_id: str, calling: str | None, tokens: int = 0) -> None:
        self.task = type("T", (), {"id": task_id})()
        call = type("C", (), {"prompt_tokens": tokens, "completion_tokens": 0})()
        self.trials: list[Any] = []
        self.pending_calls: list[Any] = [call] if tokens else []
        self.max_trials = 10
        self.calling = calling

    @property
    def trial_index(self) -> int:
        return 3


def busy_progress(label: str, **kwargs: Any) -> Progress:
    return fill(Progress(total=1640, already_done=737, passed_before=412, label=label, **kwargs))


def fill(p: Progress) -> Progress:
    """An hour into a long run: 3 tasks done this session, 3 in flight."""
    p._started -= 3725.0
    for _ in range(3):
        p.task_done(passed=True)
    ids = ["HumanEval/163", "leetcode_hard/minimum-cost-to-make-array-equalindromic-v2", "x/1"]
    for i, task_id in enumerate(ids):
        p.task_started(FakeState(task_id, ["actor", None, "reflector"][i], tokens=123_456))
    return p


@pytest.mark.parametrize("label", ["", LABEL])
@pytest.mark.parametrize("width", WIDTHS)
def test_every_line_fits_and_the_count_is_always_shown(label: str, width: int) -> None:
    p = busy_progress(label, enabled=False)
    lines = p.render(width, height=40)
    assert all(len(line) <= width for line in lines), [(len(x), x) for x in lines]
    assert f"{p.done}/{p.total}" in lines[0]
    assert len(lines) == 1 + len(p.active)
    if width >= 120:  # room for the whole story
        assert "passed" in lines[0] and "ETA" in lines[0]
    # A task in flight and waiting: said in words at every width from 80 up.
    assert "waiting for the model" in lines[1]


def test_the_parts_degrade_in_order_as_the_width_shrinks() -> None:
    p = busy_progress("", enabled=False)
    wide, narrow = p.render(200)[0], p.render(80)[0]
    assert "━" in wide and "elapsed" in wide  # the bar and the elapsed time at 200
    assert "ETA" in narrow and "passed" in narrow  # at 80 the bar goes before these


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_live_terminal_display_fits_the_terminal(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("LINES", "40")
    out = io.StringIO()
    with Progress(total=1640, already_done=737, label=LABEL, stream=out, tty=True) as p:
        fill(p)
        p.refresh()
        p.line("a line printed above the display")
        p.task_done(passed=False, task_id="x/1")
    lines = [line for line in ANSI.sub("\n", out.getvalue()).splitlines() if line.strip()]
    assert lines, out.getvalue()
    assert all(len(line) <= width for line in lines), [(len(x), x) for x in lines]
    assert any("/1640" in line for line in lines)  # the count survived the terminal


def test_many_tasks_in_flight_are_capped_to_the_terminal_height() -> None:
    p = Progress(total=100, enabled=False)
    for i in range(30):
        p.task_started(FakeState(f"t/{i}", "actor"))
    lines = p.render(120, height=10)
    assert len(lines) <= 10 and "more in flight" in lines[-1]


async def test_a_call_in_flight_says_waiting_for_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real run (mock model, 0.4 s per call) printing its status lines every 0.1 s.
    monkeypatch.setattr(progress_mod, "INTERVAL_S", 0.1)
    await execute(ctx_for(tmp_path, ["alpha", "beta"], latency=0.4))
    err = capsys.readouterr().err.splitlines()
    waiting = [line for line in err if "waiting for the model" in line]
    assert waiting, err
    # How long this call has waited, beside the tokens the task already used.
    assert all(re.search(r"waiting for the model \d+m\d\ds", line) for line in waiting)
    assert all("tokens so far" in line for line in waiting)


class Clock:
    """Stands in for the ``time`` module of progress.py: seconds set by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_the_wait_counts_from_when_the_call_was_seen_not_from_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(progress_mod, "time", clock)
    p = Progress(total=1, enabled=False, interval_s=30)
    state = FakeState("t/0", None)
    p.task_started(state)
    clock.now += 0.5
    state.calling = "actor"  # the call starts between two ticks
    for _ in range(29):  # the ticker looks every second, prints every 30 s
        clock.now += 1.0
        p._observe()
    assert "actor: waiting for the model 0m28s" in p.task_line("t/0")
    state.calling = "reflector"  # the next call (the actor's is now in pending_calls)
    state.pending_calls = [type("C", (), {"prompt_tokens": 7, "completion_tokens": 3})()]
    clock.now += 1.0
    assert "reflector: waiting for the model 0m00s" in p.task_line("t/0")


async def test_off_a_terminal_the_ticker_looks_every_second() -> None:
    import asyncio

    p = Progress(total=1, enabled=True, interval_s=30, stream=io.StringIO(), tty=False)
    with p:
        p.task_started(FakeState("t/0", None))
        p.active["t/0"].calling = "actor"
        await asyncio.sleep(2.5)
        seen = dict(p._call)
    assert "t/0" in seen  # observed long before the first status line (30 s)


def test_the_summary_names_elapsed_and_summed_task_time(tmp_path: Path) -> None:
    started = time.monotonic()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
            "env=toy",
            "model=toy",
            "model.latency_s=1.0",
            "sandbox=none",
            "progress=false",
            "max_concurrent_tasks=4",
            f"run_dir={tmp_path / 'r'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert "wall time" not in out.stdout  # the old, ambiguous "total"
    elapsed = re.search(r"^run elapsed +([\d.]+)s", out.stdout, re.M)
    summed = re.search(r"^task time summed +([\d.]+)s over 4 tasks", out.stdout, re.M)
    assert elapsed and summed, out.stdout
    run_s, sum_s = float(elapsed.group(1)), float(summed.group(1))
    # The run's own clock: no longer than the process lived, and at least as long as
    # its average task (every task ran inside the run).
    assert run_s <= took
    assert sum_s / 4 <= run_s + 0.1
    # The summed time is the four tasks' own times added up: each waited for at least
    # one 1 s call, all four at once (so, but for overhead, about 4x the elapsed time).
    assert sum_s >= 4 * 1.0

    again = subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "report", str(tmp_path / "r")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert again.returncode == 0, again.stderr
    # From provenance.json (whole seconds, start to end of the run proper; the live
    # figure also counts writing the summary): no more than the live one.
    reported = re.search(r"^run elapsed +([\d.]+)s", again.stdout, re.M)
    assert reported and 0 <= float(reported.group(1)) <= float(elapsed.group(1)) + 1.0
