"""Run orchestration: build the roles from config, run every task, log each trial.

Tasks run concurrently up to ``max_concurrent_tasks``; each trial is appended to the
run log as it finishes; a task that errors is recorded and the run goes on, unless
the share of errored tasks passes ``fail_on_error`` (checked as tasks finish, and
over the whole run at its end, so a small run that errored throughout exits non-zero
too). Resuming skips the tasks that already have a finished attempt in the log; with
``retry_errored=true`` it redoes those whose attempt ended in an error.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf

from reflexion_bench.config import build, redact_text, save_config
from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.runlog import (
    LOG_NAME,
    RunLogWriter,
    effective_records,
    errored_task_ids,
    finished_task_ids,
    iter_records,
)
from reflexion_bench.core.shards import parse_shard, split, write_shard_file
from reflexion_bench.core.state import Services, TaskState, TrialRecord
from reflexion_bench.core.types import GenerateConfig, Task, to_jsonable
from reflexion_bench.evaluators.base import evaluator_name
from reflexion_bench.memory.base import Memory, TaskAwareMemory
from reflexion_bench.models.base import ModelClient
from reflexion_bench.runner.loop import Roles, run_task
from reflexion_bench.runner.progress import Progress
from reflexion_bench.sandbox.base import Sandbox

if TYPE_CHECKING:
    from reflexion_bench.trackers import Tracker

log = logging.getLogger(__name__)


class RunAborted(RuntimeError):
    """The run was stopped on purpose (fail_on_error, a budget); what was done is kept."""


@dataclass
class RunContext:
    """Everything a run needs, built from config (or by hand in tests)."""

    tasks: list[Task]
    roles: Roles
    services: Services
    memory_factory: Callable[..., Memory]
    memory_window: int
    benchmark: str
    run_dir: Path
    max_concurrent_tasks: int = 1
    fail_on_error: float = 1.0
    min_tasks_before_abort: int = 5
    retry_errored: bool = False
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    meta: dict[str, Any] = field(default_factory=dict)
    show_progress: bool = True
    #: Prefix of every progress line (a sweep job's overrides).
    progress_label: str = ""
    #: ``(index, count, n_selected)`` of a ``shard=I/N`` run (None: the whole selection).
    shard: tuple[int, int, int] | None = None
    #: Called with a finished task's id and its records as written (a tracker's
    #: ``log_task``); it must not raise.
    on_task_done: Callable[[str, list[dict[str, Any]]], None] | None = None
    #: Completion tokens a task is expected to take (an earlier run's log), so that the
    #: progress has an ETA before the first task finishes (None: no such figure).
    expected_tokens_per_task: float | None = None


def trial_to_record(
    ctx: RunContext, state: TaskState, rec: TrialRecord, final: bool, attempt_id: str
) -> dict[str, Any]:
    body = to_jsonable(rec)
    if rec.error:
        body["error"] = redact_text(rec.error)
    for call in body.get("model_calls") or []:
        if call.get("error"):
            call["error"] = redact_text(call["error"])
    return {
        "type": "trial",
        "run_id": ctx.run_id,
        "attempt_id": attempt_id,
        "task_id": state.task.id,
        "benchmark": ctx.benchmark,
        "strategy": ctx.roles.strategy.name,
        # Which in-loop feedback the trial had (self_tests, visible_tests, oracle...):
        # reports never pool runs that differ in it.
        "evaluator": evaluator_name(ctx.roles.evaluator),
        "model": ctx.services.model.name,
        "final": final,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        **body,
        **({"meta": ctx.meta} if ctx.meta else {}),
    }


def _earlier_outcomes(log_path: Path, done_ids: set[str], tasks: list[Task]) -> tuple[int, int]:
    """Passed and errored counts of the tasks finished in earlier sessions (a resumed
    run's progress continues from them)."""
    if not done_ids:
        return 0, 0
    ids = {t.id for t in tasks} & done_ids
    last: dict[str, dict[str, Any]] = {}
    for rec in effective_records(iter_records(log_path)):
        if rec["task_id"] in ids:
            last[str(rec["task_id"])] = rec  # trial order: the last one wins
    passed = sum(1 for r in last.values() if (r.get("hidden") or {}).get("passed") is True)
    errored = sum(1 for r in last.values() if r.get("error"))
    return passed, errored


async def execute(ctx: RunContext, resume: bool = True) -> dict[str, int]:
    """Run all tasks not yet finished in ``ctx.run_dir``; return counts."""
    log_path = ctx.run_dir / LOG_NAME
    done_ids = finished_task_ids(log_path, ctx.retry_errored) if resume else set()
    todo = [t for t in ctx.tasks if t.id not in done_ids]
    writer = RunLogWriter(log_path)
    passed_before, errored_before = _earlier_outcomes(log_path, done_ids, ctx.tasks)
    progress = Progress(
        total=len(ctx.tasks),
        already_done=len(ctx.tasks) - len(todo),
        enabled=ctx.show_progress,
        passed_before=passed_before,
        errored_before=errored_before,
        label=ctx.progress_label,
        expected_tokens_per_task=ctx.expected_tokens_per_task,
    )
    sem = asyncio.Semaphore(max(1, ctx.max_concurrent_tasks))
    counts = {
        "tasks": len(ctx.tasks),
        "skipped": len(ctx.tasks) - len(todo),
        "ran": 0,
        "errored": 0,
    }
    abort = asyncio.Event()
    budget_stop: list[str] = []

    async def one(task: Task) -> None:
        async with sem:
            if abort.is_set():
                return
            attempt_id = uuid.uuid4().hex[:12]
            state = TaskState(
                task=task,
                strategy=ctx.roles.strategy.name,
                max_trials=ctx.roles.strategy.max_trials,
                memory=ctx.memory_factory(window=ctx.memory_window),
                services=ctx.services,
            )

            written: list[dict[str, Any]] = []

            async def on_trial(st: TaskState, rec: TrialRecord, final: bool) -> None:
                record = trial_to_record(ctx, st, rec, final, attempt_id)
                writer.write(record)
                written.append(record)

            hooks = state.memory if isinstance(state.memory, TaskAwareMemory) else None
            if hooks is not None:
                await hooks.begin_task(state)
            progress.task_started(state)
            await run_task(state, ctx.roles, on_trial)
            if "budget_exceeded" in state.scratch:
                budget_stop.append(str(state.scratch["budget_exceeded"]))
                abort.set()
                return
            if hooks is not None:
                await hooks.end_task(state)
            last = state.trials[-1]
            counts["ran"] += 1
            errored = last.error is not None
            counts["errored"] += int(errored)
            progress.task_done(
                passed=bool(last.hidden and last.hidden.passed), errored=errored, task_id=task.id
            )
            if ctx.on_task_done is not None:
                ctx.on_task_done(task.id, written)
            if (
                counts["ran"] >= ctx.min_tasks_before_abort
                and counts["errored"] / counts["ran"] > ctx.fail_on_error
            ):
                abort.set()

    try:
        with progress:
            await asyncio.gather(*(one(t) for t in todo))
    finally:
        writer.close()
    if budget_stop:
        raise RunAborted(
            f"stopped by the model budget ({budget_stop[0]}); {counts['ran']} finished tasks "
            f"are kept in {log_path}: resume with a larger budget to finish the rest"
        )
    redo = (
        f"see the `error` fields in {log_path}; once the cause is fixed, run the same "
        "command again with retry_errored=true to redo the errored tasks"
    )
    if abort.is_set():
        raise RunAborted(
            f"{counts['errored']} of {counts['ran']} tasks errored, more than "
            f"fail_on_error={ctx.fail_on_error}; the run stopped early: {redo} "
            "(and finish the tasks not yet run)"
        )
    # Over the whole run (earlier sessions included), so that a run too small for the
    # early check above, or resumed without retrying its errors, still fails loudly.
    ids = {t.id for t in ctx.tasks}
    finished = [r for r in effective_records(iter_records(log_path)) if r["task_id"] in ids]
    n_finished = len({str(r["task_id"]) for r in finished})
    n_errored = len(errored_task_ids(finished))
    counts["errored_total"] = n_errored
    if n_errored and n_errored / n_finished > ctx.fail_on_error:
        raise RunAborted(
            f"{n_errored} of {n_finished} tasks errored, more than "
            f"fail_on_error={ctx.fail_on_error}: {redo}"
        )
    return counts


# --------------------------------------------------------------------------- config


def _number(
    key: str,
    value: Any,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
    allowed: str,
) -> Any:
    """``value`` as an int/float within bounds, or a ConfigError naming ``key``.

    Hydra passes ``limit=abc`` through as a string; without this check it surfaces
    deep in a library as ``TypeError``/``ValueError`` with a traceback.
    """
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and integer:
        ok = float(value).is_integer()
    if ok and low is not None:
        ok = value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        raise ConfigError(key, value, allowed)
    return int(value) if integer else float(value)


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise ConfigError(key, value, "true or false")


def _generate_config(cfg: DictConfig) -> GenerateConfig:
    gen = cfg.get("generate") or {}
    default = GenerateConfig()

    def get(name: str) -> Any:
        return gen.get(name, getattr(default, name))

    stop = get("stop") or ()
    if isinstance(stop, str):
        stop = (stop,)
    seed = gen.get("seed", cfg.get("seed"))
    if seed is not None:
        key = "generate.seed" if "seed" in gen else "seed"
        seed = _number(key, seed, integer=True, allowed="null or an integer")
    return GenerateConfig(
        max_tokens=_number(
            "generate.max_tokens", get("max_tokens"), integer=True, low=1, allowed="an integer >= 1"
        ),
        temperature=_number(
            "generate.temperature", get("temperature"), low=0, allowed="a number >= 0, e.g. 0.0"
        ),
        top_p=_number("generate.top_p", get("top_p"), low=0, high=1, allowed="a number in [0, 1]"),
        stop=tuple(str(x) for x in stop),
        seed=seed,
        timeout_s=_number(
            "generate.timeout_s", get("timeout_s"), low=1e-9, allowed="a number of seconds > 0"
        ),
        max_reply_chars=_number(
            "generate.max_reply_chars",
            get("max_reply_chars"),
            integer=True,
            low=1,
            allowed="an integer >= 1 (characters kept of each model reply)",
        ),
    )


def build_context(cfg: DictConfig, run_dir: Path) -> RunContext:
    """Instantiate every configured object of a run; config errors surface here, at start."""
    from reflexion_bench.runner.auto import resolve_auto

    resolve_auto(cfg)  # idempotent: run_experiment resolved it before saving the config
    # Plain values first: environments read `limit` while loading, where a bad value
    # would surface as a TypeError from a library instead of naming the key.
    if cfg.get("limit") is not None:
        _number("limit", cfg.get("limit"), integer=True, low=0, allowed="null or an integer >= 0")
    fail_on_error = _number(
        "fail_on_error",
        cfg.get("fail_on_error", 1.0),
        low=0,
        high=1,
        allowed="a share of tasks in [0, 1], e.g. 0.5",
    )
    concurrency = _number(
        "max_concurrent_tasks",
        cfg.get("max_concurrent_tasks", 1),
        integer=True,
        low=1,
        allowed="an integer >= 1",
    )
    retry_errored = _flag("retry_errored", cfg.get("retry_errored", False))
    generate_config = _generate_config(cfg)
    env = build(cfg.env, "env")
    tasks = env.load_tasks()
    if not tasks:
        raise ConfigError(
            "limit/task_ids",
            f"{cfg.get('limit')}/{cfg.get('task_ids')}",
            "a selection with at least one task",
        )
    shard = parse_shard(cfg.get("shard"))
    n_selected = len(tasks)
    if shard is not None:
        _refuse_sequential_shards(cfg)
        tasks = split(tasks, *shard)
    model: ModelClient = build(cfg.model, "model")
    models: dict[str, ModelClient] = {}
    for role, node in (cfg.get("role_models") or {}).items():
        if node is not None:
            models[str(role)] = build(node, f"role_models.{role}")
    # Benchmarks that run no generated code (HotpotQA, ALFWorld) say so, and get no
    # sandbox whatever `sandbox=` says: no idle worker pool beside their own workers.
    needs_sandbox = bool(getattr(env, "needs_sandbox", True))
    sandbox: Sandbox | None = (
        build(cfg.sandbox, "sandbox") if cfg.get("sandbox") and needs_sandbox else None
    )
    # The hidden judge gets workers of its own, by construction: a hidden judgment and
    # the loop's feedback (self-tests, debugging runs) never share a worker, so even a
    # channel between jobs that no clean-up knows of cannot carry a hidden test's
    # input into the feedback the actor and the reflector read.
    judge_sandbox: Sandbox | None = build(cfg.sandbox, "sandbox") if sandbox is not None else None
    strategy = build(cfg.strategy, "strategy")
    cap = cfg.get("max_trials_cap")
    if cap is not None:
        if int(cap) < 1:
            raise ConfigError("max_trials_cap", cap, "null or an integer >= 1")
        strategy.max_trials = min(strategy.max_trials, int(cap))
    roles = Roles(
        actor=build(cfg.actor, "actor"),
        evaluator=build(cfg.evaluator, "evaluator"),
        reflector=build(cfg.reflector, "reflector"),
        scorer=build(cfg.scorer, "scorer"),
        strategy=strategy,
    )
    window = strategy.memory_window
    if window is None:
        window = int(getattr(env, "memory_window", 1))
    mem_factory = build(cfg.memory, "memory")
    return RunContext(
        tasks=tasks,
        roles=roles,
        services=Services(
            model=model,
            sandbox=sandbox,
            judge_sandbox=judge_sandbox,
            models=models,
            generate_config=generate_config,
            seed=int(cfg.get("seed", 0)),
            budget=TaskBudget.from_config(cfg.get("budget")),
        ),
        memory_factory=mem_factory,
        memory_window=window,
        benchmark=str(getattr(env, "name", "unknown")),
        run_dir=run_dir,
        max_concurrent_tasks=concurrency,
        fail_on_error=fail_on_error,
        retry_errored=retry_errored,
        show_progress=bool(cfg.get("progress", True)),
        shard=(*shard, n_selected) if shard is not None else None,
    )


def _refuse_sequential_shards(cfg: DictConfig) -> None:
    """Lifelong memory is one stream: task k retrieves what tasks 1..k-1 stored, so a
    shard would run a different experiment (half the stream, none of the other half's
    lessons), not a part of this one."""
    memory = cfg.get("memory") or {}
    target = str(memory.get("_target_", "")) if isinstance(memory, DictConfig) else ""
    if "lifelong" in target.lower():
        raise ConfigError(
            "shard",
            cfg.get("shard"),
            "null with lifelong memory: its tasks are one sequential stream (each task "
            "retrieves the lessons of the tasks before it), so it cannot be split; run K "
            "task orderings in parallel instead, as a sweep, e.g. -m env.seed=0,1,2,3",
        )


async def _start(ctx: RunContext) -> None:
    await ctx.services.model.start()
    for m in ctx.services.models.values():
        await m.start()


async def _close(ctx: RunContext) -> None:
    for m in [ctx.services.model, *ctx.services.models.values()]:
        try:
            await m.aclose()
        except Exception as exc:  # closing must not hide the run's own error
            log.warning("closing model %s failed: %s", m.name, exc)
    for sandbox in (ctx.services.sandbox, ctx.services.judge_sandbox):
        if sandbox is not None:
            await sandbox.aclose()


def _absolute_data_dir(cfg: DictConfig) -> None:
    """``paths.data_dir`` made absolute (see :func:`reflexion_bench.config.project_path`):
    a relative one given on the command line is found from any working directory, and
    config.yaml records where the data came from."""
    from omegaconf import open_dict

    from reflexion_bench.config import project_path

    paths = cfg.get("paths")
    value = paths.get("data_dir") if isinstance(paths, DictConfig) else None
    if isinstance(value, str) and value:
        with open_dict(paths):
            paths.data_dir = project_path(value)


def _expected_tokens_per_task(cfg: DictConfig, ctx: RunContext) -> float | None:
    """Tokens per task logged by the project's committed runs of this model, benchmark
    and strategy (``results/`` of the checkout), for the progress's first ETA."""
    from reflexion_bench.runner.reference_logs import REFERENCE_DIR, expected_tokens_per_task

    if not cfg.get("progress", True):
        return None
    found = expected_tokens_per_task(
        REFERENCE_DIR, ctx.benchmark, ctx.services.model.name, ctx.roles.strategy.name
    )
    if found is None:
        return None
    log.info("ETA before the first task: %.0f tokens per task, from %s", *found)
    return found[0]


async def run_experiment(
    cfg: DictConfig, run_dir: Path, label: str = "", tracker: Tracker | None = None
) -> dict[str, Any]:
    """Build, run, and summarise one experiment into ``run_dir``.

    ``label`` starts every progress line (a sweep job's overrides); ``tracker`` gets each
    task as it finishes (``log_task``; the caller sends the summary and closes it).
    Cancelled (Ctrl-C, see commands/run.py), the trials in flight are dropped, what
    finished stays in the log and is summarised, provenance records ``interrupted``, and
    the cancel goes on.
    """
    from reflexion_bench.analysis.report import write_run_outputs
    from reflexion_bench.runner import provenance
    from reflexion_bench.runner.auto import resolve_auto
    from reflexion_bench.runner.resume_guard import check_resume

    run_dir.mkdir(parents=True, exist_ok=True)
    # `auto` settings become numbers first: config.yaml, the resume check, provenance
    # and the cache key see what this run uses.
    _absolute_data_dir(cfg)
    for note in resolve_auto(cfg):
        log.info("auto: %s", note)
        if cfg.get("progress", True):
            print(f"settings: {note}", file=sys.stderr, flush=True)
    # Before config.yaml is overwritten: the folder's results belong to the saved one.
    forced = check_resume(cfg, run_dir)
    save_config(cfg, run_dir / "config.yaml")
    started = time.perf_counter()
    start_time = datetime.now(UTC).isoformat(timespec="seconds")
    # The files read while the environment loads its tasks (and the roles are built)
    # are the run's data files: provenance.json records their SHA-256.
    with provenance.OpenedFiles() as opened:
        ctx = build_context(cfg, run_dir)
    if ctx.shard is not None:
        index, count, n_selected = ctx.shard
        # What this shard was given: readers check every shard finished its tasks and
        # that no task is in two shards before they call the experiment complete.
        write_shard_file(run_dir, index, count, n_selected, [t.id for t in ctx.tasks])
    paths = cfg.get("paths") or {}
    provenance.record_start(
        run_dir,
        ctx,
        opened.paths,
        start_time=start_time,
        cache_dir=paths.get("cache_dir"),
        forced=forced,
    )
    outcome = "error"
    ctx.meta = {
        k: v for k, v in {"seed": cfg.get("seed"), "name": cfg.get("name")}.items() if v is not None
    }
    ctx.progress_label = label
    ctx.expected_tokens_per_task = _expected_tokens_per_task(cfg, ctx)
    if tracker is not None:
        ctx.on_task_done = functools.partial(tracker.log_task, run_dir)
    show = bool(cfg.get("progress", True))
    try:
        if show:
            # Loading weights (and a first assembly) takes seconds to minutes: say so.
            print(
                f"{label}{label and ' '}starting model {ctx.services.model.name}...",
                file=sys.stderr,
                flush=True,
            )
        model_started = time.perf_counter()
        await _start(ctx)
        if show:
            print(
                f"{label}{label and ' '}model ready after {time.perf_counter() - model_started:.1f} s; "
                f"{len(ctx.tasks)} tasks, {ctx.max_concurrent_tasks} at a time",
                file=sys.stderr,
                flush=True,
            )
        counts = await execute(ctx, resume=str(cfg.get("resume", True)).lower() != "false")
        outcome = "finished"
    except asyncio.CancelledError:
        outcome = "interrupted"
        try:  # what finished is summarised; an empty log has nothing to summarise
            write_run_outputs(run_dir)
        except Exception as exc:
            log.warning("no summary of the interrupted run: %s", exc)
        raise
    except RunAborted:
        outcome = "aborted"
        # What was done is kept and summarised before the abort is reported.
        write_run_outputs(run_dir)
        raise
    finally:
        await _close(ctx)
        provenance.finish(run_dir, outcome, ctx)
    summary = write_run_outputs(run_dir)
    summary["run"] = {**counts, "wall_time_s": round(time.perf_counter() - started, 2)}
    return summary


def resolved_container(cfg: DictConfig) -> dict[str, Any]:
    out = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(out, dict)
    return {str(k): v for k, v in out.items()}
