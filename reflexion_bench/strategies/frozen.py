"""The frozen-first-attempt protocol for the memory-content controls.

Every variant (``retry``, ``raw_log``, ``reflexion``, ``raw_log_and_reflexion``,
``wrong_reflection``, ``irrelevant_text``) starts each task from the *same* logged
first attempt, so the variants differ only in what memory trial 2 sees. Two thin
wrappers, configured around the benchmark's own roles:

- :class:`FrozenFirstAttemptActor`: at trial 1 returns the candidate, trajectory and
  prompt logged for the task in ``source_run`` (its actor calls are re-counted as
  cached calls, so token budgets stay comparable); later trials are the inner actor's.
- :class:`FrozenFirstFeedbackEvaluator`: at trial 1 runs the inner evaluator (so any
  state it keeps for later trials, e.g. the generated self-tests, is set up) and then
  returns the *logged* trial-1 feedback, recording whether the live verdict agreed.

A task missing from the source (or errored there) runs live and is flagged
``extra.frozen: false`` (or fails, with ``require: true``); the report checks that
trial 1 is identical across variants. Sequential Hydra multiruns can use the
``reflexion`` variant's own folder as the source: it runs first (live), the others
replay it (see ``configs/experiment/memory_controls_humaneval.yaml``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reflexion_bench.actors.base import Actor
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import (
    Attempt,
    Feedback,
    Message,
    ModelCall,
    sent_seed,
    sent_temperature,
)
from reflexion_bench.evaluators.base import Evaluator, evaluator_name
from reflexion_bench.strategies.source import load_source

# Keys the loop or the strategies put into a record's extra: not the actor's output.
_LOOP_KEYS = {"memory_kinds", "frozen", "frozen_source", "frozen_source_run_id"}


class FrozenFirstAttemptError(RuntimeError):
    """``require: true`` and the source run has no usable trial 1 for the task."""


def _replayed_call(call: dict[str, Any]) -> ModelCall:
    return ModelCall(
        role=str(call.get("role", "actor")),
        model=str(call.get("model", "")),
        prompt_tokens=int(call.get("prompt_tokens", 0)),
        completion_tokens=int(call.get("completion_tokens", 0)),
        # What the logged live call took, like any replayed call ("as run live").
        latency_s=float(call.get("latency_s") or 0.0),
        finish_reason=str(call.get("finish_reason", "stop")),
        cost_usd=float(call.get("cost_usd", 0.0)),
        cached=True,
        served_model=call.get("served_model"),
        system_fingerprint=call.get("system_fingerprint"),
        temperature=call.get("temperature"),
        # What the source call sent (read in any of the log's forms): the replay is that call.
        temperature_sent=sent_temperature(call),
        seed_sent=sent_seed(call),
    )


class FrozenFirstAttemptActor:
    """Replays each task's logged trial-1 attempt from ``source_run``.

    Args:
        inner: The benchmark's actor (trials 2..K, and trial 1 of tasks the source lacks).
        source_run: Run folder (or log file) holding the first attempts.
        require: Fail a task (recorded as its error) instead of running it live when
            the source has no trial 1 for it.
        replay_calls: Count the source's trial-1 actor calls again (as cached calls),
            so every variant's token totals include the shared first attempt.
    """

    def __init__(
        self,
        inner: Actor,
        source_run: str | Path,
        require: bool = False,
        replay_calls: bool = True,
    ) -> None:
        self.inner = inner
        self.source_run = Path(source_run)
        self.require = require
        self.replay_calls = replay_calls

    async def act(self, state: TaskState) -> Attempt:
        if state.trial_index != 1:
            return await self.inner.act(state)
        source = load_source(self.source_run)
        rec = source.first_trial(state.task.id)
        if rec is None:
            if self.require:
                raise FrozenFirstAttemptError(
                    f"no usable trial 1 for {state.task.id} in {self.source_run} "
                    "(run the source variant first, or set require=false to run it live)"
                )
            attempt = await self.inner.act(state)
            attempt.extra = {**attempt.extra, "frozen": False}
            return attempt
        if self.replay_calls:
            for call in rec.get("model_calls") or []:
                if call.get("role") == "actor" and not call.get("error"):
                    state.pending_calls.append(_replayed_call(call))
        extra = {k: v for k, v in (rec.get("extra") or {}).items() if k not in _LOOP_KEYS}
        prompt = [
            Message(m["role"], m["content"])
            for m in rec.get("prompt") or []
            if m.get("role") in ("system", "user", "assistant")
        ]
        return Attempt(
            candidate=str(rec["candidate"]),
            trajectory=str(rec.get("trajectory") or ""),
            prompt=prompt,
            extra={
                **extra,
                "frozen": True,
                "frozen_source": str(self.source_run),
                "frozen_source_run_id": source.run_id,
            },
        )


class FrozenFirstFeedbackEvaluator:
    """Returns the logged trial-1 feedback for frozen attempts (see the module docstring).

    Args:
        inner: The benchmark's in-loop evaluator.
        source_run: The same source as the actor's.
    """

    def __init__(self, inner: Evaluator, source_run: str | Path) -> None:
        self.inner = inner
        self.source_run = Path(source_run)

    @property
    def name(self) -> str:
        """The inner evaluator's name: the in-loop feedback is still its own (trial 1's
        is the same evaluator's, logged by the source run), so reports keep the controls
        in the arm of the runs they are compared with, not in one of their own."""
        return evaluator_name(self.inner)

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        live = await self.inner.evaluate(state, attempt)
        if state.trial_index != 1 or not attempt.extra.get("frozen"):
            return live
        rec = load_source(self.source_run).first_trial(state.task.id)
        logged = (rec or {}).get("self_test")
        if not logged:
            return live
        details = dict(logged.get("details") or {})
        details["frozen"] = True
        details["live_passed"] = live.passed
        details["live_matches_logged"] = live.passed == logged.get("passed") and (
            live.text == (logged.get("text") or "")
        )
        return Feedback(
            passed=logged.get("passed"), text=str(logged.get("text") or ""), details=details
        )
