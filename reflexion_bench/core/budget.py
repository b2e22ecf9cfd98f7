"""The per-task budget (``budget.tokens``, ``budget.usd``, ``budget.calls``).

Spend is counted *as run live* over every role's calls of the task (actor, self-test
writer, reflector, critic, ...): a call replayed from the response cache carries the
tokens and cost of the live call it replays (see :class:`~reflexion_bench.core.types.ModelCall`),
so a strategy run after another one that shares its first trial is charged the same
as if it had run first. A call that failed counts as a call (it was made) with the
tokens it reported (none).

The rule every strategy follows: a task may start more work (a trial, a tree
expansion) only while its spend is below every set limit. Work that started under the
budget finishes, so the last trial may overshoot; the log has the exact spend of
every trial, and the reports read success *at* a budget off the spend curve (they
never credit the overshoot). The trial that ends a task for the budget carries
``extra.stop_reason = "budget.<key>"`` and ``extra.budget_spent``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reflexion_bench.core.errors import ConfigError

if TYPE_CHECKING:
    from reflexion_bench.core.state import TaskState
    from reflexion_bench.core.types import ModelCall

KEYS = ("tokens", "usd", "calls")


@dataclass(frozen=True)
class TaskBudget:
    """Limits per task; ``None`` = no limit on that axis."""

    tokens: int | None = None
    usd: float | None = None
    calls: int | None = None

    def __post_init__(self) -> None:
        for key in KEYS:
            value = getattr(self, key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"budget.{key}", value, "null or a number > 0")

    @classmethod
    def from_config(cls, node: Any) -> TaskBudget:
        """From the ``budget`` config node (a mapping, or None for no budget)."""
        if node is None:
            return cls()
        data = dict(node)
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            raise ConfigError(
                f"budget.{unknown[0]}", data[unknown[0]], "budget keys: " + ", ".join(KEYS)
            )
        tokens = data.get("tokens")
        calls = data.get("calls")
        for key, value in (("tokens", tokens), ("calls", calls)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value != int(value)
            ):
                raise ConfigError(f"budget.{key}", value, "null or an integer > 0")
        usd = data.get("usd")
        return cls(
            tokens=None if tokens is None else int(tokens),
            usd=None if usd is None else usd,
            calls=None if calls is None else int(calls),
        )

    @property
    def active(self) -> bool:
        return any(getattr(self, k) is not None for k in KEYS)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in KEYS}

    def exceeded(self, spent: dict[str, float]) -> str | None:
        """The first limit the spend has reached (``"budget.tokens"``...), else None."""
        for key in KEYS:
            limit = getattr(self, key)
            if limit is not None and spent[key] >= limit:
                return f"budget.{key}"
        return None


def spend_of(calls: Iterable[ModelCall]) -> dict[str, float]:
    """Tokens (prompt + completion), US$ and calls of ``calls``, as run live."""
    out = {"tokens": 0.0, "usd": 0.0, "calls": 0.0}
    for c in calls:
        out["tokens"] += float(c.prompt_tokens or 0) + float(c.completion_tokens or 0)
        out["usd"] += float(c.cost_usd or 0.0)
        out["calls"] += 1
    return out


def task_spend(state: TaskState) -> dict[str, float]:
    """What the task has spent so far: its finished trials and the trial in progress."""
    calls: list[ModelCall] = [c for rec in state.trials for c in rec.model_calls]
    calls.extend(state.pending_calls)
    return spend_of(calls)


def budget_left(state: TaskState) -> bool:
    """False once the task's spend has reached a limit of the run's budget."""
    return state.services.budget.exceeded(task_spend(state)) is None
