"""``retry_escalate``: retry at rising temperature, then escalate to a stronger model.

The simple baseline of Kapoor et al. (2024, "AI agents that matter"): no memory, no
reflection; trial 1 is the run's ordinary greedy attempt (shared by every strategy),
trials 2.. are sampled at ``temperatures[0], temperatures[1], ...`` (the last one
repeats), and from trial ``escalate_at`` on the actor is the run's
``role_models.actor`` (a stronger model) when one is configured: its first escalated
trial greedy, later ones at the last temperature. Without ``role_models.actor`` there is
nothing to escalate to and the strategy keeps retrying at the last temperature (the
log says which model and temperature every trial used: ``extra.actor_model``,
``extra.actor_temperature``).

Every trial before escalation uses the run's *default* model (``model=...``), even when
``role_models.actor`` is set: that is what makes the escalation a step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.strategies.base import Strategy, note_trial_extra, use_actor


@dataclass
class RetryEscalateStrategy(Strategy):
    """Args:
    temperatures: Temperatures of trials 2, 3, ... on the run's model (last repeats);
        with ``retry_temperature`` set, the schedule stops there (it is the last one).
    escalate_at: First trial on ``role_models.actor`` (when configured).
    """

    name: str = "retry_escalate"
    memory_content: str = "none"
    temperatures: list[float] = field(default_factory=lambda: [0.4, 0.8])
    escalate_at: int = 4

    def __post_init__(self) -> None:
        super().__post_init__()
        temps = list(self.temperatures)
        if not temps or any(
            isinstance(t, bool) or not isinstance(t, int | float) or t < 0 for t in temps
        ):
            raise ConfigError(
                "strategy.temperatures", self.temperatures, "a non-empty list of numbers >= 0"
            )
        self.temperatures = [float(t) for t in temps]
        if self.retry_temperature is not None:
            # A comparison's common retry temperature is where the schedule rises to.
            top = float(self.retry_temperature)
            self.temperatures = [t for t in self.temperatures if t < top] + [top]
        if self.memory_content != "none":
            raise ConfigError(
                "strategy.memory_content", self.memory_content, "none (retry_escalate)"
            )
        if (
            isinstance(self.escalate_at, bool)
            or not isinstance(self.escalate_at, int)
            or (self.escalate_at < 2)
        ):
            raise ConfigError("strategy.escalate_at", self.escalate_at, "an integer >= 2")

    async def begin_trial(self, state: TaskState) -> None:
        k = state.trial_index
        services = state.services
        base = state.scratch.setdefault("escalate_base_model", services.model)
        strong = state.scratch.setdefault("escalate_strong_model", services.models.get("actor"))
        if strong is not None and k >= self.escalate_at:
            # The escalated model's first trial is greedy (its own best guess), later
            # ones sample at the last temperature.
            temp = None if k == self.escalate_at else self.temperatures[-1]
            use_actor(state, strong, temp)
            note_trial_extra(state, escalated=True)
            return
        if k == 1:
            use_actor(state, base, None)
        else:
            use_actor(state, base, self.temperatures[min(k - 2, len(self.temperatures) - 1)])
        note_trial_extra(state, escalated=False)
