"""Benchmark of the model layer.

1. Harness overhead per call, zero-latency mock: the bare client vs the same client
   through the model layer (cache off; cache hits), measured in the same process.
2. Wall time of a HumanEval-sized run (164 tasks x 3 calls: actor, reflector, actor)
   through the real runner and the real ``openai`` SDK against a local fake endpoint
   that answers every call after 1 s, at concurrency 1, 8 and 32 (``max_concurrent_tasks``
   and ``max_connections`` both set to the concurrency). Concurrency 1 would take ~8 min,
   so it runs a sample of tasks and is extrapolated linearly (marked ``*``).

3. With ``--embedded``: tokens per second of the local models (``model=smollm2`` and the
   default ``model=embedded``), one llama.cpp thread, 3 code prompts of 128 tokens each,
   end to end through the layer (prompt processing included), with the load average.

    python scripts/bench_models.py [--calls 3000] [--latency 1.0] [--sample 6] [--embedded]

Parts 1-2 take about 2-3 minutes on 2 cores; part 3 about one more (quiet machine).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import tempfile
import time
from pathlib import Path

from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Feedback, GenerateConfig, Message, Score, Task
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.base import ModelClient
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.strategies.base import Strategy
from reflexion_bench.testing.fake_llm_server import fake_server_process

N_TASKS = 164

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


# ----------------------------------------------------------------------------- part 3

PROMPTS = [
    "Write a Python function is_prime(n) with a docstring.",
    "Write a Python function that merges two sorted lists.",
    "Write a Python function that returns the n-th Fibonacci number iteratively.",
]


async def tokens_per_s(options: list[str], threads: int) -> None:
    from hydra import compose, initialize_config_dir

    from reflexion_bench.config import CONFIG_DIR, build

    print(f"\n3) local models, {threads} llama.cpp thread(s), {len(PROMPTS)} prompts x 128 tokens")
    for option in options:
        with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(
                "config",
                overrides=[
                    f"model={option}",
                    f"model.n_threads={threads}",
                    "model.exclusive=true",
                    "model.cache=off",
                ],
            )
        model = build(cfg.model, "model")
        started = time.perf_counter()
        await model.start()
        startup = time.perf_counter() - started
        tokens, seconds = 0, 0.0
        try:
            for prompt in PROMPTS:
                out = await model.generate(
                    [Message("user", prompt)], GenerateConfig(max_tokens=128, timeout_s=900)
                )
                tokens += out.completion_tokens
                seconds += out.latency_s
        finally:
            await model.aclose()
        load = os.getloadavg()[0]
        print(
            f"   {option:<10} {model.name:<30} {tokens / seconds:6.1f} tokens/s "
            f"({tokens} tokens in {seconds:.1f} s; start {startup:.1f} s; load avg {load:.1f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--sample", type=int, default=6)
    parser.add_argument("--embedded", action="store_true", help="also measure the local models")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads for part 3")
    parser.add_argument("--skip-layer", action="store_true", help="only part 3")
    args = parser.parse_args()
    print(f"bench_models: python pid {os.getpid()}, {os.cpu_count()} CPUs")
    if not args.skip_layer:
        asyncio.run(overhead(args.calls))
        asyncio.run(wall_times(args.latency, args.sample))
    if args.embedded:
        asyncio.run(tokens_per_s(["smollm2", "embedded"], args.threads))


if __name__ == "__main__":
    main()
