"""``best_of_n``: the compute baseline for Reflexion.

n = ``max_trials`` independent samples of the actor, no memory, each judged by the
self-tests; the first sample that passes them is submitted (the loop stops on a
self-test pass), else the last one. It shares the loop: one sample per trial.

Sampling: trial 1 is the run's ordinary first attempt (greedy at the default
temperature 0, the same trial 1 every other strategy has, so comparisons at trial 1
are exact); trials 2..n are drawn at ``temperature`` with ``sample_index = trial - 1``
(part of the request cache key) and, when the run has a seed, a seed of their own
derived from the run's seed and the sample index
(:func:`reflexion_bench.core.sampling.sample_seed`: one-to-one, so backends that honour a
seed neither return the same sample n times nor share samples between run seeds). To sample
trial 1 too, set ``generate.temperature > 0`` for the run (that also applies to the
other roles). Only the actor's calls of trials 2..n are changed: self-test
generation and every other role keep the run's settings.

Choosing n so that the token budget matches a Reflexion run:
:func:`reflexion_bench.analysis.budget.best_of_n_for_budget` (and ``reflexion-bench
report --format json``, key ``best_of_n_equal_tokens``) divides a Reflexion run's
mean tokens per task among tasks that used every trial (its worst-case spend) minus
the one-off self-test generation by the mean tokens of one first attempt.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.models.sampled import SampledClient as SampledClient  # was defined here
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.strategies.base import Strategy, note_trial_extra, state_base_actor


@dataclass
class BestOfNStrategy(Strategy):
    """n independent samples judged by the self-tests (see the module docstring).

    Args:
        temperature: Sampling temperature of samples 2..n (> 0).
    """

    name: str = "best_of_n"
    memory_content: str = "none"
    temperature: float = 0.8

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.memory_content != "none":
            raise ConfigError("strategy.memory_content", self.memory_content, "none (best_of_n)")
        if not self.temperature > 0:
            raise ConfigError("strategy.temperature", self.temperature, "a temperature > 0")
        if not self.self_test:
            raise ConfigError(
                "strategy.self_test", self.self_test, "true (best_of_n picks by self-tests)"
            )

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        index = state.trial_index  # the next trial's index minus one: trial 1 is index 0
        base = state_base_actor(state)
        # The per-task copy of the shared services: only this task's actor calls change.
        state.services = dataclasses.replace(
            state.services,
            models={
                **state.services.models,
                "actor": SampledClient(base, self.temperature, index),
            },
        )
        note_trial_extra(state, next_sample_index=index, next_temperature=self.temperature)
        return None, []
