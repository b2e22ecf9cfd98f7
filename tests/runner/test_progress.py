"""Progress a person can read: a live line per task (trial, role, tokens), an ETA,
quiet periodic lines off a terminal, sweep labels, counters that include earlier
sessions."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import reflexion_bench.runner.progress as progress_mod
from reflexion_bench.core.state import Services
from reflexion_bench.memory import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.progress import Progress
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.strategies import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer, toy_responder


def ctx_for(tmp_path: Path, words: list[str], latency: float, label: str = "") -> RunContext:
    return RunContext(
        tasks=ToyEnvironment(words).load_tasks(),
        roles=Roles(
            actor=ToyActor(),
            evaluator=ToyEvaluator(),
            reflector=ToyReflector(),
            scorer=ToyScorer(),
            strategy=Strategy(max_trials=2),
        ),
        services=Services(model=MockModel(responder=toy_responder, latency_s=latency)),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="toy",
        run_dir=tmp_path,
        max_concurrent_tasks=2,
        show_progress=True,
        progress_label=label,
    )


async def test_off_a_terminal_periodic_lines_name_each_task_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_mod, "INTERVAL_S", 0.1)
    await execute(ctx_for(tmp_path, ["alpha", "beta", "gamma"], latency=0.25, label="[job 0: x=1]"))
    err = capsys.readouterr().err.splitlines()
    assert err, "nothing printed"
    # Every line carries the job's label (a sweep's jobs print into one terminal).
    assert all(line.startswith("[job 0: x=1] ") for line in err), err
    # A line at the start, before any task finished: never a silent first minute.
    assert "[0/3]" in err[0] and "ETA --" in err[0]
    # Live lines: a task in flight, its trial, the role it waits for, its tokens.
    live = [line for line in err if "toy/" in line and "trial 1/2" in line and "tokens" in line]
    assert any("actor" in line for line in live), err
    # After the first finished task the ETA is a time, and the last line counts all.
    done = [line for line in err if "failed;" in line or "passed;" in line]
    assert len(done) == 3 and "ETA 0m" in done[0]
    assert "[3/3]" in done[-1]


async def test_on_a_terminal_the_live_lines_show_trial_role_and_tokens() -> None:
    class State:  # what Progress reads from a TaskState
        def __init__(self) -> None:
            self.task = type("T", (), {"id": "HumanEval/7"})()
            self.trials: list[object] = []
            self.pending_calls: list[object] = []
            self.max_trials = 3
            self.calling = "reflector"

        @property
        def trial_index(self) -> int:
            return 2

    out = io.StringIO()
    with Progress(total=5, already_done=1, passed_before=1, stream=out, tty=True) as p:
        p.task_started(State())
        p.refresh()
        line = p.task_line("HumanEval/7")
        p.task_done(passed=False, task_id="HumanEval/7")
    # A call in flight reports no tokens until its reply: the line says it waits (issue 32).
    assert line.startswith("HumanEval/7 trial 2/3 reflector: waiting for the model")
    assert "0 tokens so far" in line
    text = out.getvalue()
    assert "HumanEval/7 trial 2/3 reflector" in text  # drawn on the live display
    assert "2/5" in text
    assert "passed 1 (50% of finished)" in text  # the earlier session's pass is counted


def test_eta_uses_this_sessions_pace_only() -> None:
    p = Progress(total=10, already_done=6, enabled=False)
    assert p.eta_s() is None  # resumed: the 6 earlier tasks say nothing about the pace
    p._started -= 20.0
    p.task_done(passed=True)
    eta = p.eta_s()
    assert eta is not None and 55 <= eta <= 65  # 1 task in ~20 s, 3 left


def test_progress_false_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress(total=2, enabled=False) as p:
        p.task_done(passed=True)
        p.line("hello")
    assert capsys.readouterr().err == ""


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Call:
    def __init__(self, completion: int, cached: bool = False) -> None:
        self.prompt_tokens = 100
        self.completion_tokens = completion
        self.cached = cached


class CallingState:
    """What Progress reads of a TaskState, with calls answered in the trial in progress."""

    def __init__(self, task_id: str, calls: list[Call]) -> None:
        self.task = type("T", (), {"id": task_id})()
        self.trials: list[object] = []
        self.pending_calls: list[object] = list(calls)
        self.max_trials = 3
        self.calling: str | None = "actor"

    @property
    def trial_index(self) -> int:
        return 1


def test_before_any_task_finishes_the_line_shows_calls_speed_and_an_eta() -> None:
    # Issue 49: the quickstart's first task takes minutes; "[0/10] ETA --" for that long
    # reads as a hang. From the first reply: calls, tokens/s, and an ETA from that speed.
    clock = Clock()
    p = Progress(total=10, enabled=False, expected_tokens_per_task=600.0, clock=clock)
    a, b = CallingState("t/0", []), CallingState("t/1", [])
    p.task_started(a)
    p.task_started(b)
    clock.now += 30.0
    assert "0 calls" in p.status() and "ETA --" in p.status()  # no reply yet: no speed
    a.pending_calls.append(Call(300))
    b.pending_calls.append(Call(150))
    clock.now += 15.0  # 45 s in: 450 tokens generated, 10 tok/s
    assert p.tokens_per_s() == pytest.approx(10.0)
    # Left: 8 tasks not started x 600 + (600 - 300) + (600 - 150) = 5550 tokens at 10/s.
    assert p.eta_s() == pytest.approx(555.0)
    line = p.status()
    assert "[0/10]" in line and "2 calls, 10.0 tok/s" in line and "ETA 9m15s" in line
    wide = p.run_line(200)
    assert "2 calls, 10.0 tok/s" in wide and "ETA 9m15s" in wide
    narrow = p.run_line(80)
    assert len(narrow) <= 80 and "ETA 9m15s" in narrow and "0/10" in narrow


def test_without_a_logged_figure_the_eta_waits_for_a_finished_task() -> None:
    clock = Clock()
    p = Progress(total=4, enabled=False, clock=clock)
    a = CallingState("t/0", [Call(200)])
    p.task_started(a)
    clock.now += 20.0
    assert "1 calls, 10.0 tok/s" in p.status()
    assert p.eta_s() is None  # the speed alone says nothing of a task's size
    p.task_done(passed=True, task_id="t/0")
    # One task took 200 tokens; 3 left at 10 tokens/s.
    assert p.eta_s() == pytest.approx(60.0)


def test_finished_tasks_pull_the_logged_figure_towards_what_this_run_takes() -> None:
    clock = Clock()
    p = Progress(total=10, enabled=False, expected_tokens_per_task=1000.0, clock=clock)
    for i in range(3):
        p.task_started(CallingState(f"t/{i}", [Call(100)]))
        p.task_done(passed=True, task_id=f"t/{i}")
    # (1000 x 3 + 300) / (3 + 3): half way from the log's figure to this run's.
    assert p.tokens_per_task() == pytest.approx(550.0)


def test_a_replayed_call_is_work_done_but_not_speed() -> None:
    clock = Clock()
    p = Progress(total=2, enabled=False, expected_tokens_per_task=400.0, clock=clock)
    p.task_started(CallingState("t/0", [Call(300, cached=True), Call(100)]))
    clock.now += 10.0
    assert p.tokens_per_s() == pytest.approx(10.0)  # the cached 300 took no time
    assert p.model_counts() == (2, 400, 100)


async def test_a_mock_run_reports_calls_and_speed_before_its_first_task_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The mock model reports token counts: the periodic line says so before "[1/3]".
    monkeypatch.setattr(progress_mod, "INTERVAL_S", 0.1)
    ctx = ctx_for(tmp_path, ["alpha", "beta", "gamma"], latency=0.25)
    ctx.expected_tokens_per_task = 20.0
    await execute(ctx)
    err = capsys.readouterr().err.splitlines()
    first_done = next(i for i, line in enumerate(err) if "failed;" in line or "passed;" in line)
    early = [line for line in err[:first_done] if line.startswith("[0/3]")]
    measured = [line for line in early if "tok/s" in line]
    assert measured, err
    assert any("ETA --" not in line and "ETA " in line for line in measured), err
