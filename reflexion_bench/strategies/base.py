"""Strategies: what the loop does between trials, with one shared loop for all.

A strategy is data (how many trials, whether the in-loop evaluator runs, what goes
into memory after a failure) plus one hook, :meth:`Strategy.after_failure`, so the
paper's variants and the controls it lacked differ only where they really differ.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from reflexion_bench.core.errors import ConfigError

# TRIAL_EXTRA_KEY and note_trial_extra live with TaskState (core): reflectors and the
# lifelong memory note trial extras too, and they sit below the strategies.
from reflexion_bench.core.state import TRIAL_EXTRA_KEY as TRIAL_EXTRA_KEY
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.state import note_trial_extra as note_trial_extra
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.models.base import ModelClient
from reflexion_bench.models.sampled import SampledClient
from reflexion_bench.reflectors.base import Reflector

MEMORY_CONTENTS = (
    "none",  # retry with no memory (the `retry` control / the paper's base agents)
    "raw_log",  # the previous attempt and its feedback verbatim (episodic memory)
    "reflection",  # Reflexion
    "raw_log_and_reflection",
    "feedback",  # failing self-test output only (the paper's "immediate-refinement")
    "wrong_reflection",  # a reflection written for another task (control)
    "irrelevant_text",  # length-matched text that says nothing about the task (control)
)


@dataclass
class Strategy:
    """Loop policy.

    Args:
        name: Label used in the run log and reports.
        max_trials: K, the maximum number of trials per task.
        self_test: Run the in-loop evaluator (self-generated tests, heuristics).
        memory_content: What a failed trial leaves in memory; one of ``MEMORY_CONTENTS``.
        stop_on_pass: Stop a task as soon as the in-loop evaluator passes.
        memory_window: Ω, entries kept; ``None`` means the environment's default.
        retry_temperature: Sampling temperature of the actor on trials 2..K (each trial
            its own ``sample_index``); ``None`` keeps the run's ``generate.temperature``
            for every trial. At temperature 0 a retry with no memory repeats trial 1
            (and is a cache hit), so an equal-budget comparison states it: trial 1 stays
            greedy (shared by every strategy), every retry samples.
    """

    name: str = "reflexion"
    max_trials: int = 5
    self_test: bool = True
    memory_content: str = "reflection"
    stop_on_pass: bool = True
    memory_window: int | None = None
    retry_temperature: float | None = None

    def __post_init__(self) -> None:
        _check_scalar_fields(self)
        if self.retry_temperature is not None and not (
            isinstance(self.retry_temperature, int | float) and self.retry_temperature >= 0
        ):
            raise ConfigError(
                "strategy.retry_temperature", self.retry_temperature, "null or a number >= 0"
            )
        if self.memory_content not in MEMORY_CONTENTS:
            raise ConfigError("strategy.memory_content", self.memory_content, MEMORY_CONTENTS)
        if self.max_trials < 1:
            raise ConfigError(
                "strategy.max_trials", self.max_trials, "a positive integer (trials per task)"
            )

    @property
    def reflects(self) -> bool:
        return self.memory_content in ("reflection", "raw_log_and_reflection")

    async def begin_trial(self, state: TaskState) -> None:
        """Called by the loop before the actor of every trial.

        The default applies ``retry_temperature`` to the actor of trials 2..K.
        """
        base = state_base_actor(state)  # kept at trial 1, before anything wraps it
        if self.retry_temperature is not None and state.trial_index >= 2:
            use_actor(state, base, self.retry_temperature)

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        """Return (the reflection written, if any; the memory entries to add)."""
        trial = state.trial_index
        reflection: str | None = None
        entries: list[MemoryEntry] = []
        if self.memory_content in ("raw_log", "raw_log_and_reflection"):
            entries.append(MemoryEntry("raw_log", raw_log_text(attempt, feedback), trial))
        if self.reflects:
            reflection = await reflector.reflect(state, attempt, feedback)
            entries.append(MemoryEntry("reflection", reflection, trial))
        if self.memory_content == "feedback" and feedback.text:
            entries.append(MemoryEntry("feedback", feedback.text, trial))
        if self.memory_content in ("wrong_reflection", "irrelevant_text"):
            raise ConfigError(
                "strategy",
                self.memory_content,
                "this memory content needs its control strategy class "
                "(configs/strategy/wrong_reflection.yaml, irrelevant_text.yaml)",
            )
        return reflection, entries


#: What a scalar field accepts, by its annotation (a string: this module postpones
#: annotations), and how the error says it. A value from the command line that is of the
#: wrong type (`strategy.max_trials=zero` arrives as a str) must fail naming its key, not
#: with Python's "'<' not supported" from the first comparison that meets it.
_SCALAR_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((int,), "an integer"),
    "float": ((int, float), "a number"),
    "bool": ((bool,), "true or false"),
    "str": ((str,), "a string"),
}


def _check_scalar_fields(strategy: Strategy) -> None:
    """Raise :class:`ConfigError` naming ``strategy.<field>`` for a scalar field of the
    wrong type (``int``, ``float``, ``bool``, ``str``, each optionally ``| None``)."""
    for f in dataclasses.fields(strategy):
        annotation = str(f.type).replace(" ", "")
        optional = annotation.endswith("|None")
        accepted = _SCALAR_FIELDS.get(annotation.removesuffix("|None"))
        value = getattr(strategy, f.name)
        if accepted is None or (optional and value is None):
            continue
        types, wanted = accepted
        # bool is an int to Python, but `max_trials=true` is a mistake, not 1.
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            if f.name == "max_trials":
                wanted = "a positive integer (trials per task)"
            raise ConfigError(
                f"strategy.{f.name}", value, wanted + (" or null" if optional else "")
            )


def raw_log_text(attempt: Attempt, feedback: Feedback) -> str:
    """The verbatim previous attempt (trajectory or candidate) followed by its feedback."""
    body = attempt.trajectory or attempt.candidate
    if feedback.text:
        return f"{body}\n\n[feedback]\n{feedback.text}"
    return body


#: Key of ``TaskState.scratch`` holding the run's own actor client of a task, before any
#: strategy replaced it with a sampled or escalated one.
BASE_ACTOR_KEY = "base_actor_model"


def state_base_actor(state: TaskState) -> ModelClient:
    """The actor client the run configured for this task (kept on first use)."""
    base: ModelClient = state.scratch.setdefault(BASE_ACTOR_KEY, state.services.model_for("actor"))
    return base


def use_actor(
    state: TaskState,
    client: ModelClient,
    temperature: float | None,
    sample_index: int | None = None,
) -> None:
    """This task's actor calls go to ``client``, at ``temperature`` (None: the run's
    setting) with ``sample_index`` (default: trial - 1, part of the cache key so each
    trial is its own sample). Only this task's copy of the services changes; the
    trial's ``extra`` records the actor's model, temperature and sample index."""
    index = state.trial_index - 1 if sample_index is None else sample_index
    actor: ModelClient = client
    if temperature is not None:
        actor = SampledClient(client, float(temperature), index)
    state.services = dataclasses.replace(
        state.services, models={**state.services.models, "actor": actor}
    )
    note_trial_extra(
        state,
        actor_model=client.name,
        actor_temperature=temperature,
        actor_sample_index=index if temperature is not None else None,
    )
