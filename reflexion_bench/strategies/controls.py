"""The memory-content controls the paper lacked: ``wrong_reflection`` and ``irrelevant_text``.

Both still call the reflector on the task's own failure, so they spend the same
calls as Reflexion and the real reflection is logged (``reflection`` field and
``extra.real_reflection``); only what the next trial is *shown* differs:

- ``wrong_reflection``: a reflection the same reflector wrote for a *different*
  failed task, paired at random with a seed. With ``source_run`` (the
  frozen-first-attempt protocol) the pairs are a seeded derangement of the source
  run's failed tasks, fixed before the run starts, so they do not depend on task
  scheduling. Without it, the donor is drawn (seeded by task and trial) from the
  reflections other tasks of this run have written so far; a task that fails before
  any other task has (only possible at the very start of a run) is shown nothing and
  the log says so (``extra.wrong_reflection_from: null``).
- ``irrelevant_text``: neutral prose with exactly as many word-piece tokens as the
  real reflection (:func:`reflexion_bench.strategies.filler.count_tokens`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.strategies.base import Strategy, note_trial_extra
from reflexion_bench.strategies.filler import count_tokens, irrelevant_text
from reflexion_bench.strategies.source import load_source


def seeded_derangement(items: list[str], seed: int | str) -> dict[str, str]:
    """Map every item to a different one: a cyclic shift of a seeded shuffle.

    A single cycle through a random order never maps an item to itself (for two or
    more items) and uses every donor exactly once, so no task's reflection is over-used.
    """
    order = sorted(items)
    if len(order) < 2:
        return {}
    random.Random(f"derangement:{seed}").shuffle(order)
    return {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}


@dataclass
class WrongReflectionStrategy(Strategy):
    """Show a reflection written for another, randomly paired, failed task.

    Args:
        source_run: Run folder whose logged reflections are the donors (the
            frozen-first-attempt protocol); ``None`` draws from this run's own pool.
        seed: Seed of the pairing.
    """

    name: str = "wrong_reflection"
    memory_content: str = "wrong_reflection"
    source_run: str | None = None
    seed: int = 0
    _live: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _pairs: dict[str, str] | None = field(default=None, init=False, repr=False)

    def _source_pool(self) -> dict[str, list[str]]:
        if not self.source_run:
            return {}
        return load_source(self.source_run).reflection_pool()

    def _donor(self, task_id: str, trial: int) -> tuple[str | None, str | None]:
        """The (donor task, its reflection) shown to ``task_id`` after failing ``trial``."""
        if self.source_run:
            pool = self._source_pool()
            if self._pairs is None:
                # Fixed once per run from the source, so the pairing is the same whatever
                # order tasks run in.
                self._pairs = seeded_derangement(list(pool), self.seed)
            donor = self._pairs.get(task_id)
        else:
            pool = {tid: refl for tid, refl in self._live.items() if refl}
            donor = None
        if donor is None:
            others = sorted(tid for tid in pool if tid != task_id)
            if not others:
                return None, None
            donor = random.Random(f"wrong:{self.seed}:{task_id}:{trial}").choice(others)
        refl = pool[donor]
        # The donor's reflection for the same failure number when it has one, else its
        # last one: trial k of this task sees what the donor learned after its k-th failure.
        return donor, refl[min(trial, len(refl)) - 1]

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        trial = state.trial_index
        task_id = state.task.id
        real = await reflector.reflect(state, attempt, feedback)
        donor, text = self._donor(task_id, trial)
        # Registered after drawing, so a task can never draw its own reflection.
        self._live.setdefault(task_id, []).append(real)
        assert donor != task_id, "a wrong reflection must come from another task"
        note_trial_extra(
            state,
            real_reflection=real,
            wrong_reflection_from=donor,
            wrong_reflection=text,
        )
        entries = [MemoryEntry("wrong_reflection", text, trial)] if text else []
        return real, entries


@dataclass
class IrrelevantTextStrategy(Strategy):
    """Show neutral text as long as the real reflection (which is logged, never shown).

    Args:
        seed: Seed of the text choice (combined with the task id and trial).
    """

    name: str = "irrelevant_text"
    memory_content: str = "irrelevant_text"
    seed: int = 0

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        trial = state.trial_index
        real = await reflector.reflect(state, attempt, feedback)
        n = count_tokens(real)
        text = irrelevant_text(n, seed=f"{self.seed}:{state.task.id}:{trial}")
        note_trial_extra(
            state,
            real_reflection=real,
            real_reflection_tokens=n,
            irrelevant_text=text,
            irrelevant_text_tokens=count_tokens(text),
        )
        entries = [MemoryEntry("irrelevant_text", text, trial)] if text else []
        return real, entries
