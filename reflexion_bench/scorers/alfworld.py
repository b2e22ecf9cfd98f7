"""ALFWorld's final scorer: success is the game's ``won`` flag.

Never ``done``: an episode is also done when it hits the step limit or is cut short by
the loop heuristic (and TextWorld's gym wrapper sets ``done`` at its own step limit),
which the paper's original code counted as success; ALFWorld's maintainers call that a
bug. ``won`` is what the game's goal check says.
"""

from __future__ import annotations

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score
from reflexion_bench.evaluators.alfworld import episode_info


class AlfWorldScorer:
    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        info = episode_info(attempt)
        won = info.get("won") is True
        return Score(
            passed=won,
            status="pass" if won else "fail",
            value=1.0 if won else 0.0,
            detail=attempt.candidate,
            extra={
                "n_actions": info.get("n_actions"),
                "stop_reason": info.get("stop_reason"),
                "done": info.get("done"),
            },
        )
