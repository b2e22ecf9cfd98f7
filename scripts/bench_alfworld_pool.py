"""Benchmark: ALFWorld games through the worker pool, parallel vs one game at a time.

Replays the stored expert walkthrough of N games (no model involved) twice, each time
with fresh worker processes and no game cache:

- baseline: one worker, one game at a time (what a run bound to one core does);
- pool: ``--workers`` workers, all N games in flight.

Prints both wall times and their ratio. The ratio is bounded by the free cores: on a
machine shared with other jobs it is lower than on an idle one.

    python scripts/bench_alfworld_pool.py --data ../shared/data/alfworld/v2.1.2 --games 8

``--json PATH`` also writes the figures with the command, date, machine and load average
(``scripts/_bench_common.py``) and the printed text beside it (``.txt``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path

from _bench_common import BenchOutput

from reflexion_bench.environments.alfworld import AlfWorldEnvironment, GamePool


async def play_all(pool: GamePool, gamefiles: list[str], concurrent: bool) -> int:
    async def play(gamefile: str) -> bool:
        walk = json.loads(Path(gamefile).read_text(encoding="utf-8"))["walkthrough"]
        async with await pool.open(gamefile) as session:
            won = False
            for command in walk:
                won = (await session.step(command)).won
            return won

    if concurrent:
        results = await asyncio.gather(*(play(g) for g in gamefiles))
    else:
        results = [await play(g) for g in gamefiles]
    return sum(results)


async def timed(data: Path, gamefiles: list[str], workers: int, concurrent: bool) -> float:
    pool = GamePool(data, workers=workers, cache_games=0)
    try:
        await pool.ping()  # worker start-up (interpreter + imports) is not the measure
        started = time.perf_counter()
        won = await play_all(pool, gamefiles, concurrent)
        elapsed = time.perf_counter() - started
    finally:
        pool.close()
    assert won == len(gamefiles), f"only {won}/{len(gamefiles)} walkthroughs won"
    return elapsed


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", type=Path, default=Path("../shared/data/alfworld/v2.1.2"))
    p.add_argument("--games", type=int, default=8)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument(
        "--json", type=Path, default=None, help="also write the figures here (and .txt beside)"
    )
    args = p.parse_args(argv)
    with BenchOutput(args.json, "bench_alfworld_pool.py", argv) as out:
        out.write(_run(args))


def _run(args: argparse.Namespace) -> dict[str, object]:
    tasks = AlfWorldEnvironment(args.data).load_tasks()
    step = max(1, len(tasks) // args.games)
    gamefiles = [t.data["gamefile"] for t in tasks[::step][: args.games]]
    base = asyncio.run(timed(args.data, gamefiles, workers=1, concurrent=False))
    pooled = asyncio.run(timed(args.data, gamefiles, workers=args.workers, concurrent=True))
    load = os.getloadavg()[0]
    print(f"games: {len(gamefiles)} walkthroughs, cpus: {os.cpu_count()}, load avg: {load:.1f}")
    print(f"baseline (1 worker, sequential): {base:7.1f} s  ({base / len(gamefiles):.2f} s/game)")
    print(
        f"pool ({args.workers} workers, concurrent): {pooled:7.1f} s  ({pooled / len(gamefiles):.2f} s/game)"
    )
    print(f"speed-up: {base / pooled:.2f}x")
    return {
        "games": len(gamefiles),
        "workers": args.workers,
        "baseline_s": round(base, 3),
        "pool_s": round(pooled, 3),
        "speedup": round(base / pooled, 4),
    }


if __name__ == "__main__":
    main()
