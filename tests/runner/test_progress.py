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
