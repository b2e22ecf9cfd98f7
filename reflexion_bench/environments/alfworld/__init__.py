"""ALFWorld: the household text games, their worker-process pool and text conventions.

``AlfWorldEnvironment`` lists the games; ``get_pool`` gives the process-wide pool of
game workers the actor plays them in; :mod:`.text` holds the game's text conventions
(task types, the two text versions, observation clean-up).
"""

from reflexion_bench.environments.alfworld.environment import (
    SPLITS,
    AlfWorldEnvironment,
)
from reflexion_bench.environments.alfworld.pool import (
    GameError,
    GamePool,
    GameSession,
    GameState,
    GameWorkerError,
    close_all_pools,
    get_pool,
)

__all__ = [
    "SPLITS",
    "AlfWorldEnvironment",
    "GameError",
    "GamePool",
    "GameSession",
    "GameState",
    "GameWorkerError",
    "close_all_pools",
    "get_pool",
]
