"""The per-task state object that flows through Actor -> Evaluator -> Reflector -> Memory.

One :class:`TaskState` per task per run. Roles read what they need from it and
record their model calls through :meth:`TaskState.generate`, so that accounting
per role happens in one place instead of in every role.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.core.calllog import delta as calllog_delta
from reflexion_bench.core.types import (
    Feedback,
    GenerateConfig,
    Message,
    ModelCall,
    ModelOutput,
    Score,
    Task,
)

if TYPE_CHECKING:
    from reflexion_bench.memory.base import Memory
    from reflexion_bench.models.base import ModelClient
    from reflexion_bench.sandbox.base import Sandbox


@dataclass
class Services:
    """Shared, run-wide resources handed to every task.

    ``models`` maps a role name (``actor``, ``self_test``, ``reflector``, ``judge``...)
    to a client; roles missing from it use ``model``.
    """

    model: ModelClient
    sandbox: Sandbox | None = None
    models: dict[str, ModelClient] = field(default_factory=dict)
    #: The hidden judge's own workers (the final scorer's): never the ones the loop's
    #: own feedback runs on (``sandbox``), so that no channel between two jobs of one
    #: worker, however found, can carry a hidden test into the actor's prompts. None
    #: outside a run (a probe, a test): the scorer then uses ``sandbox``.
    judge_sandbox: Sandbox | None = None
    generate_config: GenerateConfig = field(default_factory=GenerateConfig)
    seed: int = 0
    #: Per-task limits (``budget.*``); the default has none.
    budget: TaskBudget = field(default_factory=TaskBudget)

    def model_for(self, role: str) -> ModelClient:
        return self.models.get(role, self.model)


@dataclass
class TrialRecord:
    """Everything that happened in one trial; becomes one JSONL record."""

    trial: int
    candidate: str = ""
    trajectory: str = ""
    prompt: list[dict[str, str]] = field(default_factory=list)
    self_test: Feedback | None = None
    hidden: Score | None = None
    reflection: str | None = None
    memory_shown: list[str] = field(default_factory=list)
    model_calls: list[ModelCall] = field(default_factory=list)
    wall_time_s: float = 0.0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Reads of the answer key by loop roles in this trial, ``{source: count}`` (see
    #: :mod:`reflexion_bench.core.answer_key`); ``{}`` for a clean trial.
    answer_key_uses: dict[str, int] = field(default_factory=dict)


@dataclass
class TaskState:
    """Per-task state. ``scratch`` is for role-private state (e.g. the generated self-tests)."""

    task: Task
    strategy: str
    max_trials: int
    memory: Memory
    services: Services
    trials: list[TrialRecord] = field(default_factory=list)
    scratch: dict[str, Any] = field(default_factory=dict)
    #: Calls made during the trial in progress (moved into its record when it ends).
    pending_calls: list[ModelCall] = field(default_factory=list)
    #: The role whose model call is in flight (None between calls): the progress display
    #: reads it to say what a task is waiting for.
    calling: str | None = None
    #: Each pending call's full request (by the call's id), to log the next call of its
    #: role as what it adds (not logged itself).
    _requests: dict[int, list[dict[str, str]]] = field(default_factory=dict, repr=False)

    @property
    def trial_index(self) -> int:
        """1-based index of the trial in progress."""
        return len(self.trials) + 1

    @property
    def sandbox(self) -> Sandbox:
        if self.services.sandbox is None:
            raise RuntimeError(
                "this environment needs a sandbox; set `sandbox=local` (or docker/auto)"
            )
        return self.services.sandbox

    @property
    def judge_sandbox(self) -> Sandbox:
        """Where the hidden judge (the final scorer) runs: its own pool in a run."""
        if self.services.judge_sandbox is not None:
            return self.services.judge_sandbox
        return self.sandbox

    async def generate(
        self,
        role: str,
        messages: Sequence[Message],
        config: GenerateConfig | None = None,
    ) -> ModelOutput:
        """Call the model for ``role`` and record the call (also when it fails)."""
        client = self.services.model_for(role)
        cfg = config or self.services.generate_config
        started = time.perf_counter()
        self.calling = role
        # Every role's request is logged in full (the reflector's and the self-test
        # writer's prompts explain a trial as much as the actor's), each text capped,
        # as what it adds to the same role's previous call (core/calllog.py).
        request, full_chars = _logged_messages(messages, cfg.max_reply_chars)
        base, logged = self._delta_to_previous(role, request)
        # What went out, which the config asked for need not be: a sampled strategy's
        # wrapper replaces the temperature and seed, a provider may drop either.
        sent = client.sent_params(cfg)
        try:
            out = await client.generate(messages, cfg)
        except Exception as exc:
            self.calling = None
            self.pending_calls.append(
                ModelCall(
                    role=role,
                    model=client.name,
                    prompt_tokens=0,
                    completion_tokens=0,
                    latency_s=time.perf_counter() - started,
                    finish_reason="error",
                    error=f"{type(exc).__name__}: {exc}",
                    retries=int(getattr(exc, "retries", 0)),
                    temperature=cfg.temperature,
                    temperature_sent=sent.temperature,
                    seed_sent=sent.seed,
                    endpoint_failovers=getattr(exc, "endpoint_failovers", None),
                    messages=logged,
                    messages_chars=full_chars,
                    messages_base=base,
                )
            )
            self._requests[id(self.pending_calls[-1])] = request
            raise
        self.calling = None
        # Capped here as well as in the model layer: bare clients (tests, custom
        # backends) reach the roles through this call too.
        out.cap_reply(cfg.max_reply_chars)
        self.pending_calls.append(
            ModelCall(
                role=role,
                model=out.model or client.name,
                prompt_tokens=out.prompt_tokens,
                completion_tokens=out.completion_tokens,
                latency_s=out.latency_s,
                finish_reason=out.finish_reason,
                cost_usd=out.cost_usd,
                cached=out.cached,
                retries=out.retries,
                served_model=out.served_model,
                system_fingerprint=out.system_fingerprint,
                reply_chars=out.reply_chars,
                max_reply_chars=None if out.reply_chars is None else cfg.max_reply_chars,
                temperature=cfg.temperature,
                temperature_sent=sent.temperature,
                seed_sent=sent.seed,
                endpoint=out.endpoint,
                endpoint_failovers=out.endpoint_failovers,
                messages=logged,
                reply=out.text,
                messages_chars=full_chars,
                messages_base=base,
            )
        )
        self._requests[id(self.pending_calls[-1])] = request
        return out

    def _delta_to_previous(
        self, role: str, request: list[dict[str, str]]
    ) -> tuple[dict[str, int] | None, list[dict[str, Any]]]:
        # The same role's latest call of this trial, found by identity (a memory may
        # take its own calls out of the list; the trial's calls are cleared at its end).
        live = {id(c) for c in self.pending_calls}
        self._requests = {k: v for k, v in self._requests.items() if k in live}
        for i in range(len(self.pending_calls) - 1, -1, -1):
            call = self.pending_calls[i]
            previous = self._requests.get(id(call))
            if call.role == role and previous is not None:
                base, logged = calllog_delta(previous, request)
                return (None if base is None else {"call": i, **base}), logged
        return None, [dict(m) for m in request]

    def last_feedback(self) -> Feedback | None:
        return self.trials[-1].self_test if self.trials else None

    def last_score(self) -> Score | None:
        return self.trials[-1].hidden if self.trials else None


def _logged_messages(
    messages: Sequence[Message], cap: int
) -> tuple[list[dict[str, str]], int | None]:
    """``messages`` as logged: each content cut at ``cap`` characters; with the request's
    full length when something was cut (None otherwise)."""
    out = [{"role": m.role, "content": m.content[:cap]} for m in messages]
    total = sum(len(m.content) for m in messages)
    cut = any(len(m.content) > cap for m in messages)
    return out, (total if cut else None)


#: Key of ``TaskState.scratch`` under which a strategy leaves values for the current
#: trial's ``extra`` field in the run log (e.g. the real reflection a control replaced).
TRIAL_EXTRA_KEY = "trial_extra"


def note_trial_extra(state: TaskState, **values: Any) -> None:
    """Leave ``values`` for the ``extra`` field of the trial in progress.

    The loop merges ``state.scratch[TRIAL_EXTRA_KEY]`` into the trial record when the
    trial ends, so what a strategy (or a reflector, or the lifelong memory) did but did
    not show (the real reflection behind an ``irrelevant_text`` control, the task a
    wrong reflection came from) is in the log.
    """
    state.scratch.setdefault(TRIAL_EXTRA_KEY, {}).update(values)
