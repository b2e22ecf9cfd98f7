"""ALFWorld and the answer key: the paper's evaluator reads the game's own success flag,
and the reflector without evaluator feedback is told "won"/"not won"; both are counted
in the trial record (no game is played: the episode record is what the actor leaves)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Feedback, GenerateConfig, Message, Task
from reflexion_bench.evaluators.alfworld import AlfWorldEvaluator
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.reflectors.alfworld import AlfWorldReflector
from reflexion_bench.runner.loop import Roles, run_trial
from reflexion_bench.strategies.base import Strategy


def _reply(messages: Sequence[Message], config: GenerateConfig) -> str:
    return "Reflection: open the drawer before taking the key."


def _attempt(won: bool) -> Attempt:
    steps = [["go to drawer 1", "You arrive at drawer 1.", True]]
    info = {
        "won": won,
        "stop_reason": "won" if won else "step_limit",
        "n_actions": 1,
        "steps": steps,
    }
    return Attempt(candidate="won in 1 actions" if won else "not won: step limit reached (1 actions)",
                   trajectory="You are in a room.\n> go to drawer 1\nYou arrive at drawer 1.",
                   extra={"alfworld": info})  # fmt: skip


class _Actor:
    def __init__(self, won: bool) -> None:
        self.won = won

    async def act(self, state: TaskState) -> Attempt:
        return _attempt(self.won)


class _Scorer:
    async def score(self, state: TaskState, attempt: Attempt):  # type: ignore[no-untyped-def]
        from reflexion_bench.core.types import Score

        return Score(passed=bool(attempt.extra["alfworld"]["won"]))


def _state(trials: int) -> TaskState:
    return TaskState(
        task=Task(id="g/0", prompt="put a key in the drawer", benchmark="alfworld"),
        strategy="reflexion",
        max_trials=trials,
        memory=WindowMemory(3),
        services=Services(model=MockModel(responder=_reply)),
    )


def _trial(strategy: Strategy, won: bool) -> dict[str, int]:
    roles = Roles(_Actor(won), AlfWorldEvaluator(), AlfWorldReflector(), _Scorer(), strategy)  # type: ignore[arg-type]
    state = _state(strategy.max_trials)
    rec, _ = asyncio.run(run_trial(state, roles))
    assert rec.error is None, rec.error
    return rec.answer_key_uses


def test_the_paper_evaluator_reads_the_games_success_once_per_trial() -> None:
    # A lost episode: the evaluator reads `won`, the reflector gets its feedback text.
    assert _trial(Strategy(max_trials=3), won=False) == {"evaluator.env_success": 1}
    # A won episode stops the task; the evaluator still read the flag.
    assert _trial(Strategy(max_trials=3), won=True) == {"evaluator.env_success": 1}


def test_without_the_evaluator_the_reflector_is_told_the_outcome_and_counted() -> None:
    no_tests = Strategy(name="reflexion_no_tests", max_trials=3, self_test=False)
    assert _trial(no_tests, won=False) == {"reflector.env_success": 1}
    # One trial, no reflection, no evaluator: nothing read the answer key.
    simple = Strategy(name="simple", max_trials=1, self_test=False, memory_content="none")
    assert _trial(simple, won=False) == {}


def test_reflector_with_evaluator_feedback_counts_nothing_itself() -> None:
    state = _state(2)
    asyncio.run(AlfWorldReflector().reflect(state, _attempt(False), Feedback(False, "Failed.")))
    assert "answer_key_uses" not in state.scratch
