"""ALFWorld's in-loop evaluator: the game's own success plus the paper's heuristic.

The paper reflects when an episode fails, and cuts an episode short when the agent
repeats the same action with the same answer three times in a row, or when it runs
past a step budget. The cut itself happens while the actor plays (it needs
:func:`trailing_repeats` at every step); this evaluator reads the finished episode and
says why it failed, in words the reflector sees. Its verdict is the game's own
success signal, i.e. the answer key inside the loop: each call is counted
(:mod:`reflexion_bench.core.answer_key`) and the run labelled ``answer-in-loop``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.answer_key import EVALUATOR_ENV_SUCCESS, note_answer_key_use
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback

#: Why an episode ended (``extra["alfworld"]["stop_reason"]``).
STOP_REASONS = ("won", "repeated_action", "step_limit", "game_over")


def trailing_repeats(steps: Sequence[Sequence[Any]]) -> int:
    """How many times the last (action, observation) pair occurs in a row at the end.

    ``steps`` are ``(action, observation, ...)`` rows. A repeated action with a changed
    answer (``open drawer 1`` then ``open drawer 1`` after closing it) is progress, not a
    loop, so the answer is part of the comparison, as in the paper's rule.
    """
    if not steps:
        return 0
    last = (steps[-1][0], steps[-1][1])
    n = 0
    for row in reversed(steps):
        if (row[0], row[1]) != last:
            break
        n += 1
    return n


def should_stop(steps: Sequence[Sequence[Any]], max_repeats: int) -> bool:
    """The paper's loop heuristic: the same action and answer ``max_repeats`` times in a row."""
    return max_repeats > 0 and trailing_repeats(steps) >= max_repeats


def episode_info(attempt: Attempt) -> dict[str, Any]:
    """The episode record the ALFWorld actor leaves in ``attempt.extra["alfworld"]``."""
    info = attempt.extra.get("alfworld")
    if not isinstance(info, dict):
        raise ValueError(
            "this attempt has no ALFWorld episode (extra['alfworld']); the ALFWorld "
            "evaluator/scorer need actor=alfworld_react"
        )
    return info


class AlfWorldEvaluator:
    """Pass when the game says ``won``; otherwise explain the failure for the reflector.

    Args:
        max_actions: Call a failed episode "too long" past this many actions (the paper's
            text uses 30 for its inefficient-planning heuristic); None: never.
    """

    #: The name in logs and reports (its config file: configs/evaluator/alfworld.yaml).
    name = "alfworld"

    def __init__(self, max_actions: int | None = 30) -> None:
        if max_actions is not None and max_actions < 1:
            raise ConfigError("evaluator.max_actions", max_actions, "null or an integer >= 1")
        self.max_actions = max_actions

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        info = episode_info(attempt)
        # The game's own success flag is the answer key (as in the paper): counted.
        note_answer_key_use(state, EVALUATOR_ENV_SUCCESS)
        n = int(info.get("n_actions", len(info.get("steps", []))))
        details = {
            "won": bool(info.get("won")),
            "stop_reason": info.get("stop_reason"),
            "n_actions": n,
            "invalid_actions": info.get("invalid_actions", 0),
        }
        if info.get("won"):
            return Feedback(True, f"Task completed in {n} actions.", {**details, "reason": "won"})
        reason = str(info.get("stop_reason") or "not_won")
        if reason == "repeated_action":
            steps = info.get("steps") or []
            last = steps[-1][0] if steps else ""
            text = (
                f"Failed: the episode was stopped after the same action (`{last}`) gave the "
                f"same answer {trailing_repeats(steps)} times in a row, after {n} actions."
            )
        elif reason == "step_limit":
            text = f"Failed: the step limit was reached ({n} actions) before the task was done."
        else:
            text = f"Failed: the game ended after {n} actions without the task done."
        if self.max_actions is not None and n > self.max_actions and reason != "step_limit":
            text += f" The attempt was long ({n} actions, more than {self.max_actions})."
            details["too_many_actions"] = True
        if info.get("version_symptoms", 0) >= 2:
            text += (
                " Several put commands were answered `Nothing happens.`: the put syntax "
                "may not be this game's."
            )
        return Feedback(False, text, {**details, "reason": reason})
