"""The trial loop: Actor -> Evaluator -> (Scorer) -> Reflector -> Memory, up to K trials.

One function, shared by every benchmark and strategy. It never raises for a task's
own failure: errors are recorded in the trial record and end that task only.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from reflexion_bench.actors.base import Actor
from reflexion_bench.core.answer_key import take_answer_key_uses
from reflexion_bench.core.budget import spend_of, task_spend
from reflexion_bench.core.errors import TaskStopped
from reflexion_bench.core.state import TRIAL_EXTRA_KEY, TaskState, TrialRecord
from reflexion_bench.core.types import Attempt, Feedback, Score
from reflexion_bench.evaluators.base import Evaluator
from reflexion_bench.models.base import BudgetExceeded
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.sandbox.base import SandboxError
from reflexion_bench.scorers.base import Scorer
from reflexion_bench.strategies.base import Strategy

TrialCallback = Callable[[TaskState, TrialRecord, bool], Awaitable[None]]


@dataclass
class Roles:
    """The role objects of a run (built once from config, shared by all tasks)."""

    actor: Actor
    evaluator: Evaluator
    reflector: Reflector
    scorer: Scorer
    strategy: Strategy


def _error_text(exc: BaseException) -> str:
    # Keep the last frames only: enough to locate a bug, short enough for the log.
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4)
    return f"{type(exc).__name__}: {exc}\n" + "".join(tb)[-2000:]


async def run_trial(state: TaskState, roles: Roles) -> tuple[TrialRecord, bool]:
    """Run one trial; return its record and whether the task is finished."""
    strategy = roles.strategy
    k = state.trial_index
    rec = TrialRecord(trial=k)
    rec.memory_shown = [e.text for e in state.memory.render()]
    rec.extra["memory_kinds"] = [e.kind for e in state.memory.render()]
    started = time.perf_counter()
    done = k >= state.max_trials
    stop_reason = "max_trials" if done else None
    try:
        # The strategy's per-trial settings (sampling temperature, which model acts,
        # which tree node is expanded) before the actor runs.
        await strategy.begin_trial(state)
        attempt: Attempt = await roles.actor.act(state)
        rec.candidate = attempt.candidate
        rec.trajectory = attempt.trajectory
        rec.prompt = [m.to_dict() for m in attempt.prompt]
        if attempt.extra:
            rec.extra.update(attempt.extra)

        feedback = Feedback(passed=None)
        if strategy.self_test:
            feedback = await roles.evaluator.evaluate(state, attempt)
        rec.self_test = feedback

        # The final scorer judges every trial so that in-loop false positives are
        # measurable; its verdict never reaches the actor or the reflector.
        try:
            rec.hidden = await roles.scorer.score(state, attempt)
        except SandboxError:
            # The sandbox itself failed: there is no verdict on this code, so the trial
            # is an error (errored task, redone by retry_errored), never a `fail`.
            raise
        except Exception as exc:  # a scorer crash is a scoring error, not a task error
            rec.hidden = Score(passed=False, status="error", detail=_error_text(exc))

        if feedback.passed and strategy.stop_on_pass:
            done = True
            stop_reason = "self_test_pass"
        if not done:
            # The budget rule (core/budget.py): more work starts only under the budget.
            over = state.services.budget.exceeded(task_spend(state))
            if over is not None:
                done = True
                stop_reason = over
        if not done:
            reflection, entries = await strategy.after_failure(
                state, attempt, feedback, roles.reflector
            )
            rec.reflection = reflection
            for entry in entries:
                state.memory.add(entry)
    except BudgetExceeded as exc:
        # The run's model budget is spent: this trial is cut short and not final, so a
        # resume with a larger budget redoes the task; the runner stops the run.
        rec.error = _error_text(exc)
        state.scratch["budget_exceeded"] = str(exc)
        done = True
        stop_reason = "run_budget"
    except TaskStopped as exc:
        rec.extra["stopped"] = f"{type(exc).__name__}: {exc}"
        done = True
        stop_reason = str(getattr(exc, "reason", "") or "stopped")
    except Exception as exc:
        rec.error = _error_text(exc)
        done = True
        stop_reason = "error"
    finally:
        rec.model_calls = list(state.pending_calls)
        state.pending_calls.clear()
        # What the strategy did but did not show (e.g. the real reflection behind a control).
        rec.extra.update(state.scratch.pop(TRIAL_EXTRA_KEY, None) or {})
        rec.answer_key_uses = take_answer_key_uses(state)
        rec.wall_time_s = time.perf_counter() - started
        if done:
            # Why the task stopped, on its last trial (reports group tasks by it).
            rec.extra["stop_reason"] = stop_reason or "stopped"
            if state.services.budget.active:
                calls = [c for t in state.trials for c in t.model_calls] + rec.model_calls
                rec.extra["budget_spent"] = spend_of(calls)
                rec.extra["budget"] = state.services.budget.as_dict()
    state.trials.append(rec)
    return rec, done


async def run_task(
    state: TaskState, roles: Roles, on_trial: TrialCallback | None = None
) -> TaskState:
    """Run trials until the strategy says stop, K is reached, or an error ends the task."""
    while state.trial_index <= state.max_trials:
        rec, done = await run_trial(state, roles)
        if on_trial is not None:
            await on_trial(state, rec, done and "budget_exceeded" not in state.scratch)
        if done:
            break
    return state
