"""Lifelong memory: reflections kept across tasks, retrieved before each task.

:class:`LifelongMemory` is the factory the runner calls once per task
(``memory_factory(window=W)``); it holds the persistent store, the retriever and the
policies, and returns a :class:`TaskLifelongMemory` that

- wraps the paper's :class:`~reflexion_bench.memory.base.WindowMemory` (the
  within-task sliding window works as before);
- in ``begin_task`` runs maintenance (optional), retrieves the top-k reflections for
  the task and shows them first, as ``lesson`` entries;
- in ``end_task`` decides (gating) whether the task leaves a lesson in the store,
  writes it with its outcome and failure signature, has it judged (optional), and
  appends what happened to ``memory_events.jsonl`` (retrievals with ids and scores,
  every policy's gating decision, model calls made after the last trial, and reads of
  the answer key, ``answer_key_uses``).

Outcomes come from the in-loop verdict (what the agent itself knows). The scorer's
hidden verdict is read only with ``label_from_hidden=true``; without an in-loop verdict
the outcome is ``unknown``.

Tasks must run one at a time (``max_concurrent_tasks=1``) for a reproducible stream.
"""

from __future__ import annotations

import logging
import re
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reflexion_bench.core.answer_key import (
    MEMORY_HIDDEN_VERDICT,
    note_answer_key_use,
    take_answer_key_uses,
)
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.runlog import RunLogWriter
from reflexion_bench.core.state import TaskState, TrialRecord, note_trial_extra
from reflexion_bench.core.types import Attempt, Feedback, to_jsonable
from reflexion_bench.memory.base import MemoryEntry, WindowMemory
from reflexion_bench.memory.lifelong.encoders import Encoder
from reflexion_bench.memory.lifelong.gating import GatingPolicy, TaskFacts, task_confidence
from reflexion_bench.memory.lifelong.judge import ReflectionJudge
from reflexion_bench.memory.lifelong.maintenance import DecayPolicy, run_maintenance
from reflexion_bench.memory.lifelong.record import Reflection, utcnow
from reflexion_bench.memory.lifelong.retrieval import Hit, RetrievalConfig, Retriever
from reflexion_bench.memory.lifelong.signature import failure_signature
from reflexion_bench.memory.lifelong.store import ReflectionStore

if TYPE_CHECKING:
    # A type only: the reflector role sits above memory (actors read memory.base).
    from reflexion_bench.reflectors.base import Reflector

log = logging.getLogger(__name__)

EVENTS_NAME = "memory_events.jsonl"
STORE_CHOICES = ("last", "all")


class SimulatedClock:
    """A clock that advances a fixed step per task, so decay and promotion happen
    within one benchmark run (real runs last minutes, thresholds are in days).

    Args:
        start: ISO start time (default: 2025-01-01T00:00:00Z).
        days_per_task: Days added each time a task begins.
    """

    def __init__(
        self, start: str = "2025-01-01T00:00:00+00:00", days_per_task: float = 1.0
    ) -> None:
        self.now_ts = datetime.fromisoformat(start)
        if self.now_ts.tzinfo is None:
            self.now_ts = self.now_ts.replace(tzinfo=UTC)
        self.step = timedelta(days=days_per_task)

    def __call__(self) -> datetime:
        return self.now_ts

    def advance(self) -> None:
        self.now_ts += self.step


def in_loop_passed(rec: TrialRecord) -> bool | None:
    """The in-loop verdict of a trial (None when no in-loop evaluation ran)."""
    if rec.error:
        return False
    return None if rec.self_test is None else rec.self_test.passed


def trial_signature(rec: TrialRecord) -> str:
    fb = rec.self_test.text if rec.self_test else ""
    return failure_signature(fb, rec.error)


class LifelongMemory:
    """The lifelong memory factory (built once per run from ``configs/memory/lifelong*.yaml``).

    Args:
        store: Folder of this agent's reflection store (created if missing).
        agent: This agent's name (stamped on the reflections it writes).
        share_from: Other agents' store folders, searched read-only.
        retrieval: Retrieval settings (see :class:`RetrievalConfig`).
        encoder: The dense encoder (required by every mode except ``bm25``).
        gating: Gating settings (see :class:`GatingPolicy`).
        decay: Decay/promotion thresholds (see :class:`DecayPolicy`).
        maintenance: ``between_tasks`` (run before each task) or ``never``.
        reflector: Writes post-task lessons (a lesson for a solved task that had no
            failure, and a reflection on a final failed trial); None disables both.
        reflect_on_final_failure: Reflect on the last failed trial of a task
            (the loop does not, since no trial follows it), or on the last trial of a
            task without a verdict (outcome ``unknown``).
        store_reflections: ``last`` (one lesson per task: the latest) or ``all``.
        judge: Grade each lesson with the rubric (role ``judge``); None: no grading.
        label_from_hidden: Label a task's outcome (and decide failure/success lessons)
            from the scorer's hidden verdict instead of the in-loop verdict. That puts
            the answer key into later tasks' prompts: every read is counted in the
            ``end_task`` event (``answer_key_uses``) and the run is labelled
            ``answer-in-loop``. Off (default): the hidden verdict is never read; a task
            without an in-loop verdict (``strategy=simple``, ``reflexion_no_tests``) has
            outcome ``unknown`` and the reflector's own reading of its last attempt
            is what is stored.
        outcome_source: Replaced by ``label_from_hidden``; only there to name it in
            the error.
        events_path: Where to append the memory events (the run folder's
            ``memory_events.jsonl``); None: not logged.
        clock: "Now" (a :class:`SimulatedClock`, or the wall clock when None).
        model_name: Recorded on stored reflections (default: the run's model).
        task_chars: Characters of the task prompt kept with a reflection.
        lesson_chars: Longest lesson shown to the actor (see :func:`lesson_text`).
    """

    #: What `max_concurrent_tasks: auto` reads (runner/auto.py).
    one_task_at_a_time = "the task stream's order must be fixed (lessons flow forward)"

    def __init__(
        self,
        store: str | Path,
        agent: str = "default",
        share_from: Sequence[str | Path] = (),
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        encoder: Encoder | None = None,
        gating: GatingPolicy | dict[str, Any] | None = None,
        decay: DecayPolicy | dict[str, Any] | None = None,
        maintenance: str = "between_tasks",
        reflector: Reflector | None = None,
        reflect_on_final_failure: bool = True,
        store_reflections: str = "last",
        judge: ReflectionJudge | None = None,
        label_from_hidden: bool = False,
        outcome_source: str | None = None,
        events_path: str | Path | None = None,
        clock: Any = None,
        model_name: str | None = None,
        task_chars: int = 600,
        lesson_chars: int = 500,
    ) -> None:
        if maintenance not in ("between_tasks", "never"):
            raise ConfigError("memory.maintenance", maintenance, ("between_tasks", "never"))
        if store_reflections not in STORE_CHOICES:
            raise ConfigError("memory.store_reflections", store_reflections, STORE_CHOICES)
        if outcome_source is not None:
            raise ConfigError(
                "memory.outcome_source",
                outcome_source,
                "none, this key was renamed: set memory.label_from_hidden=true|false instead",
            )
        if not isinstance(label_from_hidden, bool):
            raise ConfigError("memory.label_from_hidden", label_from_hidden, "true or false")
        self.clock = clock or utcnow
        self.store = ReflectionStore(store, clock=self.clock, agent=agent)
        self.shared = [ReflectionStore(p, read_only=True, clock=self.clock) for p in share_from]
        self.agent = agent
        self.retrieval = (
            retrieval
            if isinstance(retrieval, RetrievalConfig)
            else RetrievalConfig(**dict(retrieval or {}))
        )
        self.retriever = Retriever([self.store, *self.shared], self.retrieval, encoder)
        self.gating = (
            gating if isinstance(gating, GatingPolicy) else GatingPolicy(**dict(gating or {}))
        )
        self.decay = decay if isinstance(decay, DecayPolicy) else DecayPolicy(**dict(decay or {}))
        self.maintenance = maintenance
        self.reflector = reflector
        self.reflect_on_final_failure = reflect_on_final_failure
        self.store_reflections = store_reflections
        self.judge = judge
        self.label_from_hidden = label_from_hidden
        self.model_name = model_name
        self.task_chars = task_chars
        self.lesson_chars = lesson_chars
        self._events = RunLogWriter(Path(events_path)) if events_path else None
        self.counts: dict[str, int] = {}

    def __call__(self, window: int = 1) -> TaskLifelongMemory:
        return TaskLifelongMemory(self, window)

    def log_event(self, event: dict[str, Any]) -> None:
        if self._events is not None:
            self._events.write({"type": "memory", **event})

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
        self.store.close()
        for s in self.shared:
            s.close()


class TaskLifelongMemory:
    """One task's view: retrieved lessons first, then the within-task window."""

    def __init__(self, factory: LifelongMemory, window: int) -> None:
        self.factory = factory
        self.window = WindowMemory(window)
        self.lessons: list[MemoryEntry] = []
        self.hits: list[Hit] = []

    def add(self, entry: MemoryEntry) -> None:
        self.window.add(entry)

    def render(self) -> list[MemoryEntry]:
        return [*self.lessons, *self.window.render()]

    @property
    def all_entries(self) -> list[MemoryEntry]:
        return [*self.lessons, *self.window.all_entries]

    # ------------------------------------------------------------------ begin
    async def begin_task(self, state: TaskState) -> None:
        f = self.factory
        event: dict[str, Any] = {
            "event": "begin_task",
            "task_id": state.task.id,
            "task_type": state.task.benchmark,
            # Kept so that reports can tell similar tasks apart without the dataset.
            "task_text": state.task.prompt[: f.task_chars],
        }
        try:
            if isinstance(f.clock, SimulatedClock):
                f.clock.advance()
            now = f.clock()
            event["now"] = now.isoformat(timespec="seconds")
            if f.maintenance == "between_tasks":
                rep = run_maintenance(f.store, f.decay, now)
                event["maintenance"] = {
                    "archived": len(rep.archived),
                    "unarchived": len(rep.unarchived),
                    "promoted": len(rep.promoted),
                    "demoted": len(rep.demoted),
                }
            # Reloading the corpus after the last task's writes is timed apart from
            # the query itself (the per-task retrieval budget is about the query).
            refreshed = f.retriever.refresh()
            event["refresh_ms"] = round(f.retriever.last_refresh_s * 1000, 2) if refreshed else 0.0
            started = time.perf_counter()
            hits = f.retriever.search(state.task.prompt, exclude_task_id=state.task.id)
            event["latency_ms"] = round((time.perf_counter() - started) * 1000, 2)
            own = [h.id for h in hits if h.store == str(f.store.root)]
            if own:
                f.store.record_retrievals(own, now)
            self.hits = hits
            self.lessons = [
                MemoryEntry("lesson", lesson_text(h.text, f.lesson_chars), 0) for h in hits
            ]
            event["mode"] = f.retrieval.mode
            event["retrieved"] = [h.to_dict() for h in hits]
            event["store_size"] = len(f.store)
            event["active_size"] = f.store.count(active_only=True)
        except Exception as exc:  # memory trouble must not end the task: run without lessons
            event["error"] = f"{type(exc).__name__}: {exc}"
            log.warning("lifelong memory: retrieval for %s failed: %s", state.task.id, exc)
            log.debug("%s", traceback.format_exc())
        # Merged by the trial loop into the first trial's record.
        note_trial_extra(
            state,
            memory_retrieval={"mode": event.get("mode"), "hits": event.get("retrieved", [])},
        )
        f.log_event(event)

    # ------------------------------------------------------------------ end
    async def end_task(self, state: TaskState) -> None:
        f = self.factory
        event: dict[str, Any] = {
            "event": "end_task",
            "task_id": state.task.id,
            "task_type": state.task.benchmark,
        }
        pending_before = len(state.pending_calls)
        take_answer_key_uses(state)  # anything left belongs to no trial; start at zero
        try:
            await self._end_task(state, event)
        except Exception as exc:  # a failed write is logged; the run goes on
            event["error"] = f"{type(exc).__name__}: {exc}"
            log.warning("lifelong memory: storing for %s failed: %s", state.task.id, exc)
        # Reads of the answer key after the last trial record (the hidden verdict for
        # labels, a reflector told "won"): they reach later tasks through the store, so
        # they are logged here, always (``{}`` = none), and count in the run's label.
        event["answer_key_uses"] = take_answer_key_uses(state)
        calls = state.pending_calls[pending_before:]
        # These calls happen after the task's last trial record was written: account
        # for them here so judge/reflector cost after the loop is not lost.
        event["model_calls"] = to_jsonable(calls)
        del state.pending_calls[pending_before:]
        event["store_size"] = len(f.store)
        event["active_size"] = f.store.count(active_only=True)
        f.log_event(event)

    async def _end_task(self, state: TaskState, event: dict[str, Any]) -> None:
        f = self.factory
        trials = state.trials
        if not trials:
            event["skipped"] = "no trials"
            return
        verdicts = [self._verdict(state, t) for t in trials]
        solved = verdicts[-1] is True
        had_failure = any(v is False for v in verdicts)
        # No verdict on the submitted attempt: nothing in the loop judged it, and the
        # answer key is not asked (unless label_from_hidden).
        unknown = verdicts[-1] is None
        facts = TaskFacts(
            task_type=state.task.benchmark,
            had_failure=had_failure,
            confidence=task_confidence(trials),
            stored_of_type=f.store.count(state.task.benchmark),
        )
        write, decisions = f.gating.decide(facts)
        event.update(
            solved=solved,
            had_failure=had_failure,
            outcome="unknown" if unknown else ("success" if solved else "failure"),
            verdict_source="hidden"
            if f.label_from_hidden
            else ("self_test" if any(v is not None for v in verdicts) else "none"),
            confidence=round(facts.confidence, 4),
            stored_of_type=facts.stored_of_type,
            policy=f.gating.policy,
            decisions=decisions,
        )
        # (trial, text, feedback, signature) of each reflection written in the loop.
        written = [
            (t.trial, t.reflection, t.self_test.text if t.self_test else "", trial_signature(t))
            for t in trials
            if t.reflection
        ]
        last = trials[-1]
        lessons: list[tuple[int, str, str, str, str]] = []  # + outcome
        if write:
            if (
                (had_failure or unknown)
                and f.reflector is not None
                and f.reflect_on_final_failure
                and (verdicts[-1] is not True and not last.reflection and not last.error)
            ):
                # An unknown outcome goes to the reflector without a verdict: its own
                # judgement of the attempt, not the answer key, is what gets stored.
                fallback = Feedback(None) if unknown else Feedback(False)
                text = await f.reflector.reflect(state, _attempt(last), last.self_test or fallback)
                written.append(
                    (
                        last.trial,
                        text,
                        last.self_test.text if last.self_test else "",
                        trial_signature(last),
                    )
                )
                event["final_failure_reflection"] = True
            if written:
                chosen = written if f.store_reflections == "all" else written[-1:]
                outcome = "unknown" if unknown else ("partial" if solved else "failure")
                lessons = [(*w, outcome) for w in chosen]
            elif solved and f.reflector is not None:
                fb = last.self_test or Feedback(True)
                text = await f.reflector.reflect(state, _attempt(last), fb)
                lessons = [(0, text, fb.text, "", "success")]
        refs: list[Reflection] = []
        judged: list[dict[str, Any]] = []
        model = f.model_name or state.services.model.name
        for trial, text, feedback, sig, outcome in lessons:
            if not text or not text.strip():
                continue
            quality = None
            if f.judge is not None:
                verdict = await f.judge.judge(state, text, feedback)
                quality = verdict["scores"]
                judged.append({"trial": trial, **verdict})
            refs.append(
                Reflection(
                    text=text.strip(),
                    task_type=state.task.benchmark,
                    task_id=state.task.id,
                    outcome=outcome,
                    created=f.clock(),
                    model=model,
                    source_agent=f.agent,
                    failure_signature=sig,
                    trial=trial,
                    task_excerpt=state.task.prompt[: f.task_chars],
                    tags=[state.task.benchmark],
                    quality=quality,
                )
            )
        f.store.add_many(refs)
        used = {h.id for h in self.hits}
        event.update(
            wrote=len(refs),
            written=[
                {
                    "id": r.id,
                    "outcome": r.outcome,
                    "signature": r.failure_signature,
                    "trial": r.trial,
                }
                for r in refs
            ],
            judged=judged,
            retrieved_ids=sorted(used),
            trial_signatures=[
                trial_signature(t) if v is False else None
                for t, v in zip(trials, verdicts, strict=True)
            ],
        )

    def _verdict(self, state: TaskState, rec: TrialRecord) -> bool | None:
        """The trial's verdict as the memory may know it (None: no verdict exists).

        Only ``label_from_hidden`` reads the scorer's verdict, and each read is counted.
        """
        if not self.factory.label_from_hidden:
            return in_loop_passed(rec)
        if rec.error:
            return False
        if rec.hidden is None:
            return None
        note_answer_key_use(state, MEMORY_HIDDEN_VERDICT)
        return rec.hidden.passed


_FENCED = re.compile(r"```.*?(```|\Z)", re.S)


def lesson_text(text: str, limit: int = 500) -> str:
    """A stored reflection as shown to another task: verbal only, and short.

    Code blocks are dropped (code written for another task misleads more than it
    helps: a small model copies it) and the text is cut at ``limit`` characters; the
    store keeps the full reflection.
    """
    text = _FENCED.sub(" (code omitted) ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 4].rstrip() + " ..."


def _attempt(rec: TrialRecord) -> Attempt:
    return Attempt(candidate=rec.candidate, trajectory=rec.trajectory)
