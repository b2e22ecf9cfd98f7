#!/usr/bin/env python
"""Validate the HumanEval+ input generator on MBPP, where real extra inputs exist.

For each MBPP problem that MBPP+ v1 covers, the generator of ``make_humaneval_plus.py``
(the same mutation, contract check and counted-step caps) makes as many inputs from MBPP+'s
``base_input`` as MBPP+ has ``plus_input``, validated with MBPP+'s contract and
``canonical_solution``. Both input sets (each with the base inputs) then judge the same
candidates: the distinct final programs of the paper's published GPT-4 MBPP runs
(Reflexion and simple) that pass the base tests. A set that rejects more of these
base-passing programs finds more wrong programs (every rejection is a real wrong
answer: the expected output is the canonical solution's, on an input its contract
accepts).

    python scripts/validate_plus_generator.py [--data ../shared/data] [--jobs 2] [--json F]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

LOGS = (
    "reflexion_mbpp_py/mbpp-py._reflexion_5_gpt-4_pass_at_k_1_py.jsonl",
    "simple_mbpp_py2/mbpp-py._simple_1_gpt-4_pass_at_k_1_py.jsonl",
)


def _generated_inputs(
    row: dict[str, Any], prompt: str, entry: str, count: int, seed: int
) -> list[tuple[Any, ...]]:
    from make_humaneval_plus import literal_ok, select_valid, with_contract

    from reflexion_bench.scorers.plus import (
        MBPP_SET_TASKS,
        _annotations,
        _literal_args,
        coerce_to_annotation,
        conforms,
        restore_shape,
    )
    from reflexion_bench.scorers.plus_mutate import generate

    template = _literal_args(str(row.get("assertion", "")), entry)

    def shaped(args: list[Any]) -> tuple[Any, ...]:
        if template is not None and len(template) == len(args):
            return tuple(restore_shape(v, t) for v, t in zip(args, template, strict=True))
        return tuple(args)

    seeds = [shaped(list(a)) for a in row["base_input"]]
    rng = random.Random(f"{seed}:{row['task_id']}")
    candidates = [c for c in generate(seeds, rng, 3 * count) if literal_ok(c)]
    try:
        reference = with_contract(
            str(row["canonical_solution"]), entry, str(row.get("contract") or "")
        )
    except SyntaxError:
        reference = str(row["canonical_solution"])
    kept, _why = select_valid(
        candidates,
        [reference],
        entry,
        None,  # no time cap: the generator's caps are counted steps (see select_valid)
        "set" if entry in MBPP_SET_TASKS else "eq",
        float(row.get("atol") or 0.0),
        count,
    )
    anns = _annotations(prompt, entry)
    if anns is None:
        return kept
    out = []
    for args in kept:
        if len(anns) == len(args):
            args = tuple(coerce_to_annotation(v, a) for v, a in zip(args, anns, strict=True))
            if not all(conforms(v, a) for v, a in zip(args, anns, strict=True)):
                continue  # outside the typed prompt, as MBPP+'s own are dropped
        out.append(args)
    return out


async def _main(data: Path, jobs: int, seed: int, cache_dir: str) -> dict[str, Any]:
    from reflexion_bench.environments.code_python import PythonLanguage
    from reflexion_bench.environments.mbpp import MBPPEnvironment
    from reflexion_bench.judge import judge_plus
    from reflexion_bench.sandbox.local import LocalSandbox
    from reflexion_bench.scorers.code import CodeScorer
    from reflexion_bench.scorers.plus import PlusSuite, PlusTests, load_mbpp_plus, mbpp_suite

    mbpp_plus = load_mbpp_plus(str(data / "evalplus" / "MbppPlus-v1.jsonl"))
    tasks = {t.id: t for t in MBPPEnvironment(path=str(data / "mbpp-py.jsonl")).load_tasks()}
    plus = PlusTests(cache_dir=cache_dir)
    lang = PythonLanguage()
    scorer = CodeScorer()
    # Candidate programs: distinct final programs of the published runs, per task.
    root = data / "reflexion-original-repo" / "programming_runs" / "root"
    programs: dict[str, set[str]] = {}
    for rel in LOGS:
        for line in (root / rel).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            tid = str(row["name"])
            if tid in tasks:
                task = tasks[tid]
                prog = lang.complete_solution(
                    str(row.get("solution", "")), task.prompt, str(row["entry_point"])
                )
                programs.setdefault(tid, set()).add(prog)
    started = time.perf_counter()
    suites: dict[str, tuple[PlusSuite, PlusSuite]] = {}
    n_real = n_gen = 0
    for tid, task in tasks.items():
        num = int(tid.split("_")[1])
        row = mbpp_plus.get(num)
        if row is None:
            continue
        real = mbpp_suite(tid, task.prompt, str(task.data["entry_point"]), row)
        if real is None:
            continue
        gen_inputs = _generated_inputs(
            row, task.prompt, real.entry_point, len(row["plus_input"]), seed
        )
        base_only = mbpp_suite(tid, task.prompt, real.entry_point, {**row, "plus_input": []})
        assert base_only is not None
        gen = PlusSuite(**{**real.__dict__, "inputs": base_only.inputs + gen_inputs, "notes": []})
        suites[tid] = (real, gen)
        n_real += len(row["plus_input"])
        n_gen += len(gen_inputs)
    gen_s = time.perf_counter() - started
    print(
        f"{len(suites)} problems; MBPP+ plus inputs {n_real}, generated {n_gen} ({gen_s:.0f}s)",
        flush=True,
    )

    sb = LocalSandbox(jobs=jobs)

    async def verdict(suite: PlusSuite, program: str) -> bool:
        cases, _ = await plus.cases(sb, suite)
        v = await judge_plus(
            sb,
            program=program,
            entry_point=suite.entry_point,
            cases=cases,
            oracle=suite.oracle,
            atol=suite.atol,
            seq_insensitive=suite.seq_insensitive,
        )
        return v.status == "pass"

    async def one(tid: str, program: str) -> dict[str, Any] | None:
        base = await scorer.run(sb, tasks[tid], program)
        if not base.passed:
            return None
        real, gen = suites[tid]
        return {
            "task_id": tid,
            "real": await verdict(real, program),
            "gen": await verdict(gen, program),
        }

    try:
        jobs_ = [one(tid, p) for tid in suites for p in sorted(programs.get(tid, ()))]
        results = [r for r in await asyncio.gather(*jobs_) if r is not None]
    finally:
        await sb.aclose()
    rej_real = [r for r in results if not r["real"]]
    rej_gen = [r for r in results if not r["gen"]]
    both = [r for r in results if not r["real"] and not r["gen"]]
    out = {
        "problems": len(suites),
        "mbpp_plus_inputs": n_real,
        "generated_inputs": n_gen,
        "base_passing_programs": len(results),
        "rejected_by_mbpp_plus": len(rej_real),
        "rejected_by_generated": len(rej_gen),
        "rejected_by_both": len(both),
        "only_mbpp_plus": sorted(r["task_id"] for r in rej_real if r["gen"]),
        "only_generated": sorted(r["task_id"] for r in rej_gen if r["real"]),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(
        f"base-passing GPT-4 programs {out['base_passing_programs']}: rejected by MBPP+'s inputs "
        f"{out['rejected_by_mbpp_plus']}, by generated inputs {out['rejected_by_generated']}, "
        f"by both {out['rejected_by_both']}"
    )
    print(f"only MBPP+ rejects: {', '.join(out['only_mbpp_plus'])}")
    print(f"only generated rejects: {', '.join(out['only_generated'])}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "reflexion-bench"))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if not (args.data / "evalplus" / "MbppPlus-v1.jsonl").is_file():
        print(f"no MBPP+ under {args.data} (set --data)", file=sys.stderr)
        return 2
    result = asyncio.run(_main(args.data, args.jobs, args.seed, args.cache_dir))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
