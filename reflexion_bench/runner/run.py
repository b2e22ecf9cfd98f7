"""Run orchestration: build the roles from config, run every task, log each trial.

Tasks run concurrently up to ``max_concurrent_tasks``; each trial is appended to the
run log as it finishes; a task that errors is recorded and the run goes on, unless
the share of errored tasks passes ``fail_on_error``. Resuming skips the tasks that
already have a finished attempt in the log.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from reflexion_bench.config import build, redact_text, save_config
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState, TrialRecord
from reflexion_bench.core.types import GenerateConfig, Task, to_jsonable
from reflexion_bench.memory.base import Memory, TaskAwareMemory
from reflexion_bench.models.base import ModelClient
from reflexion_bench.runner.loop import Roles, run_task
from reflexion_bench.runner.progress import Progress
from reflexion_bench.runner.runlog import LOG_NAME, RunLogWriter, finished_task_ids
from reflexion_bench.sandbox.base import Sandbox

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
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    meta: dict[str, Any] = field(default_factory=dict)
    show_progress: bool = True


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
        "model": ctx.services.model.name,
        "final": final,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        **body,
        **({"meta": ctx.meta} if ctx.meta else {}),
    }


async def execute(ctx: RunContext, resume: bool = True) -> dict[str, int]:
    """Run all tasks not yet finished in ``ctx.run_dir``; return counts."""
    log_path = ctx.run_dir / LOG_NAME
    done_ids = finished_task_ids(log_path) if resume else set()
    todo = [t for t in ctx.tasks if t.id not in done_ids]
    writer = RunLogWriter(log_path)
    progress = Progress(
        total=len(ctx.tasks), already_done=len(ctx.tasks) - len(todo), enabled=ctx.show_progress
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

            async def on_trial(st: TaskState, rec: TrialRecord, final: bool) -> None:
                writer.write(trial_to_record(ctx, st, rec, final, attempt_id))

            hooks = state.memory if isinstance(state.memory, TaskAwareMemory) else None
            if hooks is not None:
                await hooks.begin_task(state)
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
            progress.task_done(passed=bool(last.hidden and last.hidden.passed), errored=errored)
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
    if abort.is_set():
        raise RunAborted(
            f"{counts['errored']} of {counts['ran']} tasks errored, more than "
            f"fail_on_error={ctx.fail_on_error}; see the `error` fields in {log_path}"
        )
    return counts


# --------------------------------------------------------------------------- config


def build_context(cfg: DictConfig, run_dir: Path) -> RunContext:
    """Instantiate every configured object of a run; config errors surface here, at start."""
    env = build(cfg.env, "env")
    tasks = env.load_tasks()
    if not tasks:
        raise ConfigError(
            "limit/task_ids",
            f"{cfg.get('limit')}/{cfg.get('task_ids')}",
            "a selection with at least one task",
        )
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
    strategy = build(cfg.strategy, "strategy")
    cap = cfg.get("max_trials_cap")
    if cap is not None:
        if int(cap) < 1:
            raise ConfigError("max_trials_cap", cap, "null or an integer >= 1")
        strategy.max_trials = min(strategy.max_trials, int(cap))
    gen = cfg.get("generate") or {}
    generate_config = GenerateConfig(
        max_tokens=int(gen.get("max_tokens", 512)),
        temperature=float(gen.get("temperature", 0.0)),
        top_p=float(gen.get("top_p", 1.0)),
        stop=tuple(gen.get("stop") or ()),
        seed=gen.get("seed", cfg.get("seed")),
        timeout_s=float(gen.get("timeout_s", 600.0)),
    )
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
            models=models,
            generate_config=generate_config,
            seed=int(cfg.get("seed", 0)),
        ),
        memory_factory=mem_factory,
        memory_window=window,
        benchmark=str(getattr(env, "name", "unknown")),
        run_dir=run_dir,
        max_concurrent_tasks=int(cfg.get("max_concurrent_tasks", 1)),
        fail_on_error=float(cfg.get("fail_on_error", 1.0)),
        show_progress=bool(cfg.get("progress", True)),
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
    if ctx.services.sandbox is not None:
        await ctx.services.sandbox.aclose()


async def run_experiment(cfg: DictConfig, run_dir: Path) -> dict[str, Any]:
    """Build, run, and summarise one experiment into ``run_dir``."""
    from reflexion_bench.analysis.report import write_run_outputs

    from reflexion_bench.runner import provenance
    from reflexion_bench.runner.resume_guard import check_resume

    run_dir.mkdir(parents=True, exist_ok=True)
    # Before config.yaml is overwritten: the folder's results belong to the saved one.
    forced = check_resume(cfg, run_dir)
    save_config(cfg, run_dir / "config.yaml")
    started = time.perf_counter()
    start_time = datetime.now(UTC).isoformat(timespec="seconds")
    # The files read while the environment loads its tasks (and the roles are built)
    # are the run's data files: provenance.json records their SHA-256.
    with provenance.OpenedFiles() as opened:
        ctx = build_context(cfg, run_dir)
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
    try:
        await _start(ctx)
        counts = await execute(ctx, resume=str(cfg.get("resume", True)).lower() != "false")
        outcome = "finished"
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
