"""Benchmark of the model layer.

1. Harness overhead per call, zero-latency mock: the bare client vs the same client
   through the model layer (cache off; cache hits), measured in the same process.
2. Wall time of a HumanEval-sized run (164 tasks x 3 calls: actor, reflector, actor)
   through the real runner and the real ``openai`` SDK against a local fake endpoint
   that answers every call after 1 s, at concurrency 1, 8 and 32 (``max_concurrent_tasks``
   and ``max_connections`` both set to the concurrency). Concurrency 1 would take ~8 min,
   so it runs a sample of tasks and is extrapolated linearly (marked ``*``).

With ``--embedded`` (the local models, each through the layer with the cache off; add
``--skip-layer`` to run only these):

3. Tokens per second of each ``--models`` option (``embedded``, ``embedded_1_5b``,
   ``smollm2``; ``--both`` = the 0.5B and the 1.5B): the old setting (1 thread, 1 slot,
   one request at a time), the new defaults one request at a time, and the new
   defaults with every slot busy (as many concurrent requests as slots). Wall-clock
   tokens/s (prompt processing included) and the ratio against the old setting.
4. Greedy replies across slots: the first ``--tasks`` HumanEval prompts at temperature
   0 through 1 slot one at a time, and through the default slots all at once; are the
   replies byte-identical? (The response cache keys on ``n_parallel`` either way.)
5. The quickstart's tasks per hour: ``reflexion-bench run experiment=quickstart
   limit=--tasks`` with the new defaults and with the old setting (``model.n_threads=1
   model.n_parallel=1 model.max_connections=1 max_concurrent_tasks=1``), cache off, each
   in a fresh process and run folder, interleaved old, new, old, new... (``--rounds``),
   with the resolved settings, pass counts, load average and the ratio (target >= 1.6x).

    python scripts/bench_models.py [--calls 3000] [--latency 1.0] [--sample 6]
    python scripts/bench_models.py --embedded --skip-layer --both --tasks 4 --rounds 2

``--json PATH`` also writes every figure printed, with the command, date, machine and
load average (``scripts/_bench_common.py``), and the printed text beside it (``.txt``):
the README's figures come from ``results/bench/tokens_per_s.json`` (``--embedded
--skip-layer --both --parts 3``) and ``results/bench/quickstart.json`` (``--embedded
--skip-layer --models embedded --parts 5 --rounds 2 --tasks 4``).

6. Server options (``--parts 6``): the quickstart's tasks per hour under each llama.cpp
   KV/prompt-cache option of ``model.server_options`` (``kv_unified``,
   ``n_cache_reuse``, ``cache_ram_mib``) and 4 vs 6 vs 8 slots, each variant a fresh
   process, interleaved by round, against the defaults measured in the same rounds
   (``results/bench/server_options.json``: ``--embedded --skip-layer --models embedded
   --parts 6 --rounds 2 --tasks 4``).

7. A pool of servers (``--pool``; with ``--skip-layer`` only this part): calls per
   second through ``model=openai_pool`` (the model layer over ``PooledOpenAIClient``,
   real ``openai`` SDK) against 1, 2 and 3 fake servers (separate processes) that each
   answer after a fixed ``--pool-latency`` (0.5 s), ``--pool-per-endpoint`` (4) calls in
   flight per endpoint and the same offered concurrency (4 x 3) at every size, the sizes
   interleaved by round (``--pool-rounds``); the ratio against 1 server is measured in the
   same run (ideal: N). Latency-bound by design: the client spends ~6 ms of CPU per call
   (the ``openai`` SDK), so at most 24 calls/s keep it far from the CPU a busy 2-core
   machine leaves it (0.2 s x 8 per endpoint, 120 calls/s, measured the CPU, not the
   pool); the load average of every point is recorded.
   ``results/bench/model_pool.json``: ``--skip-layer --pool --pool-rounds 3``.

Parts 1-2 take about 2-3 minutes on 2 cores; 3-5 about 30 minutes for both models and
2 rounds (quiet machine: a busy one makes `auto` choose 1 thread, and the figures wrong).
Smoke settings: ``--models smollm2 --tasks 1 --rounds 1 --max-tokens 16 --settle-s 0
--quickstart-extra "generate.max_tokens=32 strategy.max_trials=1"``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from _bench_common import BenchOutput

from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Feedback, GenerateConfig, Message, Score, Task
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.base import ModelClient
from reflexion_bench.models.layer import ModelLayer, build_layered_model
from reflexion_bench.models.mock import MockModel
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.strategies.base import Strategy
from reflexion_bench.testing.fake_llm_server import fake_server_process

N_TASKS = 164

# Every figure printed, by part: what --json writes.
RESULTS: dict[str, Any] = {}

# ----------------------------------------------------------------------------- part 1


async def per_call_us(model: ModelClient, calls: int, vary: bool) -> float:
    cfg = GenerateConfig()
    msgs = [Message("system", "You write Python."), Message("user", "def f(x):")]
    started = time.perf_counter()
    for i in range(calls):
        m = [*msgs, Message("user", str(i))] if vary else msgs
        await model.generate(m, cfg)
    return (time.perf_counter() - started) / calls * 1e6


async def overhead(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bare = await per_call_us(MockModel(responses=["ok"], cycle=True), calls, vary=True)
        layer = ModelLayer(MockModel(responses=["ok"], cycle=True))
        layered = await per_call_us(layer, calls, vary=True)
        cached_layer = ModelLayer(
            MockModel(responses=["ok"], cycle=True),
            cache="read_write",
            cache_path=str(Path(tmp) / "c.sqlite"),
        )
        await per_call_us(cached_layer, 1, vary=False)  # record the one entry
        hits = await per_call_us(cached_layer, calls, vary=False)
        writes = await per_call_us(cached_layer, max(200, calls // 10), vary=True)
        await cached_layer.aclose()
    print(f"\n1) harness overhead per call, zero-latency mock ({calls} sequential calls)")
    print(f"   {'bare MockModel':<38}{bare:>9.1f} us/call")
    print(f"   {'layer (cache off)':<38}{layered:>9.1f} us/call   (+{layered - bare:.1f} us)")
    print(
        f"   {'layer, cache hit (SQLite read)':<38}{hits:>9.1f} us/call   (+{hits - bare:.1f} us)"
    )
    print(f"   {'layer, cache miss + write':<38}{writes:>9.1f} us/call   (+{writes - bare:.1f} us)")
    RESULTS["overhead_us_per_call"] = {
        "calls": calls,
        "bare": round(bare, 2),
        "layer_cache_off": round(layered, 2),
        "layer_cache_hit": round(hits, 2),
        "layer_cache_miss_write": round(writes, 2),
    }


# ----------------------------------------------------------------------------- part 2


class BenchActor:
    async def act(self, state: TaskState) -> Attempt:
        msgs = [Message("user", f"{state.task.prompt} (trial {state.trial_index})")]
        out = await state.generate("actor", msgs)
        return Attempt(candidate=out.text, prompt=msgs)


class BenchEvaluator:
    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        return Feedback(passed=False, text="self-tests failed")


class BenchReflector:
    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        out = await state.generate("reflector", [Message("user", f"Reflect on {state.task.id}")])
        return out.text


class BenchScorer:
    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        return Score(passed=False)


async def run_once(base_url: str, n_tasks: int, concurrency: int, run_dir: Path) -> float:
    tasks = [
        Task(id=f"HumanEval/{i}", prompt=f"Solve problem {i}.", benchmark="bench")
        for i in range(n_tasks)
    ]
    model = ModelLayer(
        OpenAIChatClient(name="bench-model", base_url=base_url, api_key_env=None),
        max_connections=concurrency,
        retries=2,
    )
    ctx = RunContext(
        tasks=tasks,
        roles=Roles(
            actor=BenchActor(),
            evaluator=BenchEvaluator(),
            reflector=BenchReflector(),
            scorer=BenchScorer(),
            # 2 trials: actor, reflector, actor = 3 calls per task.
            strategy=Strategy(name="reflexion", max_trials=2),
        ),
        services=Services(model=model, generate_config=GenerateConfig(max_tokens=64)),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="bench",
        run_dir=run_dir,
        max_concurrent_tasks=concurrency,
        show_progress=False,
    )
    await model.start()
    started = time.perf_counter()
    counts = await execute(ctx, resume=False)
    elapsed = time.perf_counter() - started
    await model.aclose()
    assert counts["errored"] == 0, counts
    assert model.usage.live_calls == 3 * n_tasks, model.usage
    return elapsed


async def wall_times(latency: float, sample: int) -> None:
    rows = []
    with (
        fake_server_process("--latency-s", str(latency)) as (_, port),
        tempfile.TemporaryDirectory() as tmp,
    ):
        base_url = f"http://127.0.0.1:{port}/v1"
        for conc in (1, 8, 32):
            n = sample if conc == 1 else N_TASKS
            t = await run_once(base_url, n, conc, Path(tmp) / f"c{conc}")
            total = t * N_TASKS / n
            ideal = math.ceil(N_TASKS / conc) * 3 * latency
            rows.append((conc, n, total, ideal))
    base = rows[0][2]
    print(
        f"\n2) HumanEval-sized run: {N_TASKS} tasks x 3 calls, endpoint latency {latency:g} s "
        "(real runner + openai SDK over HTTP)"
    )
    print(
        f"   {'concurrency':>11} {'tasks run':>10} {'wall time':>11} {'ideal':>9} {'speed-up vs 1':>14}"
    )
    for conc, n, total, ideal in rows:
        mark = "*" if n < N_TASKS else " "
        print(f"   {conc:>11} {n:>10} {total:>10.1f}s{mark} {ideal:>8.1f}s {base / total:>13.1f}x")
    print(
        f"   * extrapolated from {sample} tasks ({3 * sample} calls); ideal = ceil(164/c) x 3 x latency"
    )
    RESULTS["wall_times"] = {
        "tasks": N_TASKS,
        "calls_per_task": 3,
        "latency_s": latency,
        "rows": [
            {
                "concurrency": conc,
                "tasks_run": n,
                "extrapolated": n < N_TASKS,
                "wall_s": round(total, 2),
                "ideal_s": round(ideal, 2),
                "speedup_vs_1": round(base / total, 3),
            }
            for conc, n, total, ideal in rows
        ],
    }


# ----------------------------------------------------------------------------- part 3

OLD = {"n_threads": 1, "n_parallel": 1, "max_connections": 1}
OLD_RUN = [
    "model.n_threads=1",
    "model.n_parallel=1",
    "model.max_connections=1",
    "max_concurrent_tasks=1",
]
PROMPTS = [
    "Write a Python function is_prime(n) with a docstring.",
    "Write a Python function that merges two sorted lists.",
    "Write a Python function that returns the n-th Fibonacci number iteratively.",
    "Write a Python function that parses a CSV line with quoted fields.",
]


def _model(option: str, settings: Mapping[str, object]) -> ModelLayer:
    """``model=option`` as configured, cache off, with ``settings`` overriding (the run's
    own `auto` resolution applies to whatever is left ``auto``)."""
    from hydra import compose, initialize_config_dir

    from reflexion_bench.config import CONFIG_DIR, build
    from reflexion_bench.runner.auto import resolve_auto

    overrides = [f"model={option}", "model.cache=off", "model.timeout_s=3600"]
    overrides += [f"model.{k}={v}" for k, v in settings.items()]
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    resolve_auto(cfg)
    model = build(cfg.model, "model")
    assert isinstance(model, ModelLayer)
    return model


def _describe(model: ModelLayer) -> str:
    c = model.client
    return f"{c.n_threads} thr/{c.n_parallel} slot/ctx {c.n_ctx}"  # type: ignore[attr-defined]


async def _tokens_per_s(model: ModelLayer, concurrent: int, max_tokens: int) -> tuple[float, int]:
    """Wall-clock completion tokens per second over ``concurrent`` requests at a time
    (len(PROMPTS) requests in all, at least one per slot)."""
    cfg = GenerateConfig(max_tokens=max_tokens, temperature=0.0, timeout_s=3600)
    n = max(len(PROMPTS), concurrent)
    prompts = [[Message("user", PROMPTS[i % len(PROMPTS)] + f" (#{i})")] for i in range(n)]
    sem = asyncio.Semaphore(concurrent)

    async def one(msgs: list[Message]) -> int:
        async with sem:
            return (await model.generate(msgs, cfg)).completion_tokens

    started = time.perf_counter()
    tokens = sum(await asyncio.gather(*(one(m) for m in prompts)))
    return tokens / (time.perf_counter() - started), tokens


async def tokens_per_s(options: list[str], max_tokens: int) -> None:
    print(
        f"\n3) tokens/s, {max(len(PROMPTS), 1)}+ code prompts x {max_tokens} tokens, "
        "wall clock (prompt processing included)"
    )
    print(f"   {'model':<28} {'setting':<36} {'settings':<28} {'tok/s':>7} {'vs old':>7}")
    out: dict[str, Any] = RESULTS.setdefault(
        "tokens_per_s", {"max_tokens": max_tokens, "prompts": len(PROMPTS), "models": {}}
    )
    for option in options:
        base = None
        rows = out["models"].setdefault(option, {})
        for key, label, settings, busy in (
            ("old", "old: 1 thread, 1 slot, 1 at a time", OLD, False),
            ("defaults_one_request", "defaults, 1 request at a time", {}, False),
            ("defaults_every_slot_busy", "defaults, every slot busy", {}, True),
        ):
            _settle()  # the previous row's load must not make `auto` choose 1 thread
            model = _model(option, settings)
            await model.start()
            try:
                slots = model.client.n_parallel  # type: ignore[attr-defined]
                rate, tokens = await _tokens_per_s(model, slots if busy else 1, max_tokens)
            finally:
                await model.aclose()
            base = base or rate
            load = os.getloadavg()[0]
            print(
                f"   {model.name:<28} {label:<36} {_describe(model):<28} {rate:>7.1f} "
                f"{rate / base:>6.2f}x   ({tokens} tokens, load avg {load:.1f})",
                flush=True,
            )
            rows[key] = {
                "setting": label,
                "resolved": _describe(model),
                "tokens_per_s": round(rate, 3),
                "vs_old": round(rate / base, 4),
                "tokens": tokens,
                "load_avg_1min_after": round(load, 2),
            }


# ----------------------------------------------------------------------------- part 4


async def greedy_across_slots(option: str, n: int, max_tokens: int) -> None:
    """Four passes over the same prompts: 1 slot one at a time; the default slots one at
    a time; the default slots all at once, twice. Pairwise byte-identical replies tell
    whether the slot count, the batching of concurrent requests, or timing (which
    requests share a batch) changes greedy output."""
    from reflexion_bench.environments.humaneval import HumanEvalEnvironment

    tasks = HumanEvalEnvironment(limit=n).load_tasks()
    cfg = GenerateConfig(max_tokens=max_tokens, temperature=0.0, timeout_s=3600)
    prompts = [[Message("user", t.prompt)] for t in tasks]
    passes: list[tuple[str, list[str]]] = []
    for label, settings, together in (
        ("A: 1 slot, one at a time", {"n_parallel": 1, "max_connections": 1}, False),
        ("B: default slots, one at a time", {}, False),
        (f"C: default slots, {len(prompts)} at once", {}, True),
        (f"D: default slots, {len(prompts)} at once again", {}, True),
    ):
        model = _model(option, settings)
        await model.start()
        try:
            if together:
                outs = await asyncio.gather(*(model.generate(p, cfg) for p in prompts))
            else:
                outs = [await model.generate(p, cfg) for p in prompts]
        finally:
            await model.aclose()
        passes.append((f"{label} ({_describe(model)})", [o.text for o in outs]))
    print(
        f"\n4) greedy replies across slots ({option}, {len(prompts)} HumanEval prompts, "
        f"temperature 0, {max_tokens} tokens): byte-identical replies per pair of passes"
    )
    for label, _ in passes:
        print(f"   {label}")
    pairs: dict[str, int] = {}
    RESULTS["greedy_across_slots"] = {
        "model": option,
        "prompts": len(prompts),
        "max_tokens": max_tokens,
        "passes": [label for label, _ in passes],
        "identical_per_pair": pairs,
    }
    for a in range(len(passes)):
        for b in range(a + 1, len(passes)):
            x, y = passes[a][1], passes[b][1]
            same = sum(p == q for p, q in zip(x, y, strict=True))
            where = [
                f"{t.id}@{next((i for i, (c, d) in enumerate(zip(p, q, strict=False)) if c != d), min(len(p), len(q)))}"
                for t, p, q in zip(tasks, x, y, strict=True)
                if p != q
            ]
            note = f"  (differ: {', '.join(where)})" if where else ""
            pairs[f"{passes[a][0][0]} vs {passes[b][0][0]}"] = same
            print(f"   {passes[a][0][0]} vs {passes[b][0][0]}: {same}/{len(prompts)}{note}")


# ----------------------------------------------------------------------------- part 5


SETTLE_S = 120.0


def _settle(max_wait_s: float | None = None) -> float:
    """Wait (bounded) for the 1-minute load average to fall below the cores less one half.

    The previous run's own load lingers in the average for a minute or two, and
    `n_threads: auto` reads it: without the wait, the run after an old-setting run
    could resolve to 1 thread because of this very benchmark. Returns the load at start.
    """
    from reflexion_bench.models.resources import available_cores

    limit = available_cores() - 0.5
    deadline = time.monotonic() + (SETTLE_S if max_wait_s is None else max_wait_s)
    while os.getloadavg()[0] >= limit and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def _quickstart(
    option: str, n_tasks: int, old: bool, run_dir: Path, extra: list[str]
) -> dict[str, object]:
    cmd = [
        str(Path(sys.executable).with_name("reflexion-bench")),
        "run",
        "experiment=quickstart",
        f"model={option}",
        f"limit={n_tasks}",
        "model.cache=off",
        "progress=false",
        "resume=false",
        f"run_dir={run_dir}",
        *(OLD_RUN if old else []),
        *extra,
    ]
    load = _settle()
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    load_end = os.getloadavg()[0]
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    import yaml

    saved = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    m = saved["model"]
    return {
        "wall": wall,
        "load": load,
        "load_end": load_end,
        "settings": f"{m['n_threads']} thr/{m['n_parallel']} slot/ctx {m['n_ctx']}/"
        f"{saved['max_concurrent_tasks']} tasks",
        "passed": summary.get("final"),
        "n": summary.get("n_tasks"),
    }


def quickstart(option: str, n_tasks: int, rounds: int, extra: list[str]) -> None:
    print(
        f"\n5) quickstart tasks/hour ({option}, {n_tasks} tasks, cache off, fresh process "
        f"and run folder each, interleaved old/new x {rounds}{', ' + ' '.join(extra) if extra else ''})"
    )
    print(f"   {'round':>5} {'setting':<9} {'resolved':<34} {'wall':>8} {'tasks/h':>8} pass  load")
    totals = {"old": 0.0, "new": 0.0}
    runs: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, rounds + 1):
            for label in ("old", "new"):
                res = _quickstart(option, n_tasks, label == "old", Path(tmp) / f"{label}{r}", extra)
                wall = float(res["wall"])  # type: ignore[arg-type]
                totals[label] += wall
                runs.append(
                    {
                        "round": r,
                        "setting": label,
                        "resolved": res["settings"],
                        "wall_s": round(wall, 1),
                        "tasks_per_h": round(n_tasks / wall * 3600, 2),
                        "final_pass": res["passed"],
                        "load_avg_1min_at_start": round(float(res["load"]), 2),  # type: ignore[arg-type]
                        "load_avg_1min_at_end": round(float(res["load_end"]), 2),  # type: ignore[arg-type]
                    }
                )
                print(
                    f"   {r:>5} {label:<9} {res['settings']!s:<34} {wall:>7.0f}s "
                    f"{n_tasks / wall * 3600:>8.1f} {res['passed']}  {res['load']:.1f}",
                    flush=True,
                )
    old_rate = rounds * n_tasks / totals["old"] * 3600
    new_rate = rounds * n_tasks / totals["new"] * 3600
    print(
        f"   total: old {old_rate:.1f} tasks/h, new defaults {new_rate:.1f} tasks/h: "
        f"{new_rate / old_rate:.2f}x (target >= 1.6x)"
    )
    RESULTS.setdefault("quickstart", {})[option] = {
        "tasks": n_tasks,
        "rounds": rounds,
        "extra_overrides": extra,
        "runs": runs,
        "old_tasks_per_h": round(old_rate, 3),
        "new_tasks_per_h": round(new_rate, 3),
        "speedup": round(new_rate / old_rate, 4),
        "target": 1.6,
    }


#: Part 6: each variant is the quickstart with the defaults plus these overrides. The
#: first is the baseline the ratios are against (the defaults as shipped).
SERVER_VARIANTS: dict[str, list[str]] = {
    "defaults": [],
    "kv_unified": ["model.server_options={kv_unified:true}"],
    "n_cache_reuse=256": ["model.server_options={n_cache_reuse:256}"],
    "cache_ram_mib=2048": ["model.server_options={cache_ram_mib:2048}"],
    "kv_unified+n_cache_reuse=256": ["model.server_options={kv_unified:true,n_cache_reuse:256}"],
    "n_parallel=4": ["model.n_parallel=4", "max_concurrent_tasks=4", "model.max_connections=4"],
    "n_parallel=6": ["model.n_parallel=6", "max_concurrent_tasks=6", "model.max_connections=6"],
    "n_parallel=8": ["model.n_parallel=8", "max_concurrent_tasks=8", "model.max_connections=8"],
}


def server_options(option: str, n_tasks: int, rounds: int, extra: list[str], only: str) -> None:
    """Part 6: the quickstart's tasks per hour under each llama.cpp server option, side
    by side in one invocation (interleaved by round, a fresh process and run folder
    each), against the defaults measured in the same rounds."""
    names = [n for n in SERVER_VARIANTS if not only or n in only.split(",") or n == "defaults"]
    print(
        f"\n6) server options: quickstart tasks/hour ({option}, {n_tasks} tasks, cache off, "
        f"{rounds} round(s), variants interleaved)"
    )
    print(f"   {'round':>5} {'variant':<30} {'resolved':<34} {'wall':>8} {'tasks/h':>8} pass  load")
    walls: dict[str, float] = {n: 0.0 for n in names}
    runs: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, rounds + 1):
            for name in names:
                over = [*SERVER_VARIANTS[name], *extra]
                # The folder is a Hydra override value: no '=' or '+' in it.
                folder = Path(tmp) / f"{r}_{name.replace('=', '-').replace('+', '_')}"
                res = _quickstart(option, n_tasks, False, folder, over)
                wall = float(res["wall"])  # type: ignore[arg-type]
                walls[name] += wall
                runs.append(
                    {
                        "round": r,
                        "variant": name,
                        "overrides": over,
                        "resolved": res["settings"],
                        "wall_s": round(wall, 1),
                        "tasks_per_h": round(n_tasks / wall * 3600, 2),
                        "final_pass": res["passed"],
                        "load_avg_1min_at_start": round(float(res["load"]), 2),  # type: ignore[arg-type]
                    }
                )
                print(
                    f"   {r:>5} {name:<30} {res['settings']!s:<34} {wall:>7.0f}s "
                    f"{n_tasks / wall * 3600:>8.1f} {res['passed']}  {res['load']:.1f}",
                    flush=True,
                )
    base = rounds * n_tasks / walls["defaults"] * 3600
    rates = {n: rounds * n_tasks / w * 3600 for n, w in walls.items()}
    for n, rate in rates.items():
        print(f"   {n:<30} {rate:>8.1f} tasks/h  {rate / base:.2f}x the defaults")
    best = max(rates, key=lambda n: rates[n])
    print(f"   fastest: {best} ({rates[best] / base:.2f}x)")
    RESULTS.setdefault("server_options", {})[option] = {
        "tasks": n_tasks,
        "rounds": rounds,
        "variants": {n: SERVER_VARIANTS[n] for n in names},
        "runs": runs,
        "tasks_per_h": {n: round(v, 3) for n, v in rates.items()},
        "ratio_vs_defaults": {n: round(v / base, 4) for n, v in rates.items()},
        "fastest": best,
    }


# ----------------------------------------------------------------------------- part 7

POOL_SIZES = (1, 2, 3)


async def _pool_point(
    urls: list[str], calls: int, per_endpoint: int, concurrency: int
) -> tuple[float, dict[str, int]]:
    """Calls per second through a pool of ``urls`` at ``concurrency`` calls offered."""
    model = build_layered_model(
        "reflexion_bench.models.pool.PooledOpenAIClient",
        name="bench-model",
        base_urls=urls,
        max_connections=per_endpoint,
        timeout_s=30,
        retries=0,
        cache="off",
    )
    cfg = GenerateConfig(max_tokens=16)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> str | None:
        async with gate:
            out = await model.generate([Message("user", f"call {i}")], cfg)
            return out.endpoint

    await model.start()
    # Untimed warm-up: open every connection the timed calls will use.
    await asyncio.gather(*(one(i) for i in range(concurrency)))
    started = time.perf_counter()
    served = await asyncio.gather(*(one(i) for i in range(calls)))
    wall = time.perf_counter() - started
    await model.aclose()
    split: dict[str, int] = {}
    for url in served:
        split[str(url)] = split.get(str(url), 0) + 1
    return calls / wall, split


async def pool_throughput(latency: float, per_endpoint: int, calls_per: int, rounds: int) -> None:
    from contextlib import ExitStack

    concurrency = per_endpoint * max(POOL_SIZES)
    with ExitStack() as stack:
        ports = [
            stack.enter_context(
                fake_server_process("--latency-s", str(latency), "--served-model", "bench-model")
            )[1]
            for _ in POOL_SIZES
        ]
        urls = [f"http://127.0.0.1:{p}/v1" for p in ports]
        runs: list[dict[str, Any]] = []
        for r in range(rounds):
            for n in POOL_SIZES:
                rate, split = await _pool_point(urls[:n], calls_per * n, per_endpoint, concurrency)
                runs.append(
                    {
                        "round": r + 1,
                        "servers": n,
                        "calls": calls_per * n,
                        "calls_per_s": round(rate, 2),
                        "calls_by_endpoint": sorted(split.values()),
                        "load_1min": round(os.getloadavg()[0], 2),
                    }
                )
    rates = {
        n: sum(x["calls_per_s"] for x in runs if x["servers"] == n) / rounds for n in POOL_SIZES
    }
    ideal = per_endpoint / latency
    print(
        f"\n7) model pool: {per_endpoint} calls in flight per endpoint, {concurrency} offered, "
        f"fixed latency {latency:g} s per request, {rounds} interleaved round(s)"
    )
    print(f"   {'servers':>7} {'calls/s':>9} {'ideal':>7} {'vs 1 server':>12} {'rounds':>24}")
    for n in POOL_SIZES:
        each = ", ".join(f"{x['calls_per_s']:.1f}" for x in runs if x["servers"] == n)
        print(
            f"   {n:>7} {rates[n]:>9.1f} {ideal * n:>7.1f} {rates[n] / rates[1]:>11.2f}x   {each}"
        )
    RESULTS["model_pool"] = {
        "latency_s": latency,
        "per_endpoint_connections": per_endpoint,
        "offered_concurrency": concurrency,
        "calls_per_server_per_point": calls_per,
        "rounds": rounds,
        "runs": runs,
        "calls_per_s": {str(n): round(v, 2) for n, v in rates.items()},
        "ideal_calls_per_s": {str(n): round(ideal * n, 2) for n in POOL_SIZES},
        "ratio_vs_1": {str(n): round(rates[n] / rates[1], 3) for n in POOL_SIZES},
        "efficiency": {str(n): round(rates[n] / (ideal * n), 3) for n in POOL_SIZES},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--sample", type=int, default=6)
    parser.add_argument("--embedded", action="store_true", help="also measure the local models")
    parser.add_argument("--skip-layer", action="store_true", help="only the --embedded parts")
    parser.add_argument(
        "--models", default="embedded", help="comma-separated model options for part 3"
    )
    parser.add_argument("--both", action="store_true", help="--models embedded,embedded_1_5b")
    parser.add_argument("--max-tokens", type=int, default=200, help="tokens per request (3, 4)")
    parser.add_argument(
        "--tasks", type=int, default=4, help="HumanEval prompts (4), quickstart tasks (5)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="old/new pairs of quickstart runs")
    parser.add_argument(
        "--parts", default="3,4,5", help="which of the --embedded parts to run, e.g. 5"
    )
    parser.add_argument(
        "--quickstart-extra",
        default="",
        help="extra overrides of the quickstart runs (smoke: 'generate.max_tokens=32')",
    )
    parser.add_argument(
        "--variants",
        default="",
        help="part 6: comma-separated server-option variants (default: all; see SERVER_VARIANTS)",
    )
    parser.add_argument(
        "--settle-s",
        type=float,
        default=SETTLE_S,
        help="longest wait before each embedded row for the load to settle (0: none)",
    )
    parser.add_argument("--pool", action="store_true", help="part 7: a pool of 1, 2, 3 servers")
    parser.add_argument("--pool-latency", type=float, default=0.5, help="part 7: s per request")
    parser.add_argument("--pool-per-endpoint", type=int, default=4, help="part 7: connections")
    parser.add_argument(
        "--pool-calls", type=int, default=40, help="part 7: timed calls per server per point"
    )
    parser.add_argument("--pool-rounds", type=int, default=2, help="part 7: rounds of 1, 2, 3")
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the figures here (and .txt beside)"
    )
    args = parser.parse_args(argv)
    globals()["SETTLE_S"] = args.settle_s
    with BenchOutput(args.json, "bench_models.py", argv) as out:
        _main(args)
        out.write({"results": RESULTS})


def _main(args: argparse.Namespace) -> None:
    print(f"bench_models: python pid {os.getpid()}, {os.cpu_count()} CPUs")
    if not args.skip_layer:
        asyncio.run(overhead(args.calls))
        asyncio.run(wall_times(args.latency, args.sample))
    if args.pool:
        asyncio.run(
            pool_throughput(
                args.pool_latency, args.pool_per_endpoint, args.pool_calls, args.pool_rounds
            )
        )
    if args.embedded:
        from reflexion_bench.models.resources import available_cores

        options = ["embedded", "embedded_1_5b"] if args.both else args.models.split(",")
        parts = set(args.parts.split(","))
        print(
            f"embedded: {available_cores()} core(s) available to this process, load avg "
            f"{os.getloadavg()[0]:.1f}"
        )
        if "3" in parts:
            asyncio.run(tokens_per_s(options, args.max_tokens))
        if "4" in parts:
            asyncio.run(greedy_across_slots(options[0], args.tasks, args.max_tokens))
        if "5" in parts:
            for option in options:
                quickstart(option, args.tasks, args.rounds, args.quickstart_extra.split())
        if "6" in parts:
            server_options(
                options[0], args.tasks, args.rounds, args.quickstart_extra.split(), args.variants
            )


if __name__ == "__main__":
    main()
