#!/usr/bin/env python
"""Does the unforgeable judge keep the benchmarks' semantics? Re-score the paper's own
logged solutions and compare with the verdicts the paper's harness logged.

For each log of the original repository (``../shared/data/reflexion-original-repo/
programming_runs/root``) this scores every row's final ``solution`` with this
project's scorer (the judge: test code in a trusted process, the solution in its own
process behind the plain-data wire) and prints how often the verdict equals the
logged ``is_solved``, with the disagreeing task ids. HumanEval and MBPP problems are
read from the log rows themselves (their prompt / entry point / test); LeetcodeHard's
hidden tests from ``leetcode-hard-py-40-hidden.jsonl``.

    python scripts/check_judge_agreement.py [--data ../shared/data] [--jobs 2] [--json F]

Known, documented sources of disagreement that are not the judge's: the original MBPP
harness ran every program in one shared namespace, so a task that redefines a builtin
(``mbpp_126_sum`` defines ``sum``) changed the verdicts of later tasks. In the
exploratory LeetcodeHard log without ``_visible`` (``simple_leetcode_python3_gpt4``, no
claim names it), ``number-of-beautiful-partitions`` is logged failed and judged passed
here: its O(n^2 k) solution is correct and takes about 9 s of CPU (measured 2026-12-07)
of the 10 s the hidden-test file recommends (``recommended_timeout_s``), where
leetcode.com's limit, which the paper was judged by, is tighter. A verdict that close to
a limit can change with the machine's speed; the judge times CPU, not wall time, so it
does not change with the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LOGS = {
    "humaneval-py reflexion": "reflexion_humaneval_py_pass_at_1/reflexion_humaneval_py_pass_at_1.jsonl",
    "humaneval-py simple": "simple_human_eval_py_logging/humaneval-py..gz_simple_1_gpt-4_pass_at_k_1_py.jsonl",
    "mbpp-py reflexion": "reflexion_mbpp_py/mbpp-py._reflexion_5_gpt-4_pass_at_k_1_py.jsonl",
    "mbpp-py simple": "simple_mbpp_py2/mbpp-py._simple_1_gpt-4_pass_at_k_1_py.jsonl",
    "leetcodehard-py simple": "simple_leetcode_python3_gpt4/leetcode-hard-py-40-uncontaminated._simple_1_gpt-4_pass_at_k_1_py.jsonl",
    "leetcodehard-py reflexion": "reflexion_leetcode_python3_gpt4/leetcode-hard-py-40-uncontaminated._reflexion_5_gpt-4_pass_at_k_1_py.jsonl",
}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def _score_code(rows: list[dict[str, Any]], sandbox: Any) -> list[bool]:
    from reflexion_bench.environments.code_common import problem_to_task
    from reflexion_bench.environments.code_python import PythonLanguage

    lang = PythonLanguage()

    async def one(row: dict[str, Any]) -> bool:
        task = problem_to_task(row, "log", lang, "log")
        program = lang.complete_solution(
            str(row.get("solution", "")), task.prompt, row["entry_point"]
        )
        out = await lang.run_hidden(sandbox, program, task, float(row.get("timeout_s", 10.0)))
        return out.passed

    return list(await asyncio.gather(*(one(r) for r in rows)))


async def _score_leetcode(rows: list[dict[str, Any]], sandbox: Any, data: Path) -> list[bool]:
    from reflexion_bench.environments.leetcode import LeetcodeHardEnvironment
    from reflexion_bench.scorers.leetcode import LeetcodeHiddenScorer

    env = LeetcodeHardEnvironment(
        data / "leetcode-hard-py-40.jsonl", data / "leetcode-hard-py-40-hidden.jsonl"
    )
    tasks = {t.id: t for t in env.load_tasks()}
    scorer = LeetcodeHiddenScorer()

    async def one(row: dict[str, Any]) -> bool:
        task = tasks[str(row["task_id"])]
        return (await scorer.score_program(sandbox, task, str(row.get("solution", "")))).passed

    return list(await asyncio.gather(*(one(r) for r in rows)))


async def _main(data: Path, jobs: int) -> dict[str, Any]:
    from reflexion_bench.sandbox.local import LocalSandbox

    root = data / "reflexion-original-repo" / "programming_runs" / "root"
    sb = LocalSandbox(jobs=jobs)
    print(f"sandbox: {sb.isolation}")
    out: dict[str, Any] = {}
    try:
        for name, rel in LOGS.items():
            path = root / rel
            if not path.is_file():
                print(f"{name}: {path} not found, skipped")
                continue
            rows = _rows(path)
            started = time.perf_counter()
            if name.startswith("leetcode"):
                ours = await _score_leetcode(rows, sb, data)
            else:
                ours = await _score_code(rows, sb)
            logged = [bool(r.get("is_solved")) for r in rows]
            ids = [str(r.get("task_id", r.get("name"))) for r in rows]
            differ = [i for i, a, b in zip(ids, ours, logged, strict=True) if a != b]
            out[name] = {
                "n": len(rows),
                "agree": len(rows) - len(differ),
                "agreement": round(1 - len(differ) / len(rows), 4),
                "logged_pass": sum(logged),
                "judge_pass": sum(ours),
                "differ": differ,
                "seconds": round(time.perf_counter() - started, 1),
            }
            r = out[name]
            print(
                f"{name:28s} {r['agree']:4d}/{r['n']:<4d} agree ({100 * r['agreement']:.1f}%)  "
                f"logged pass {r['logged_pass']:4d}  judge pass {r['judge_pass']:4d}  "
                f"{r['seconds']:.0f}s"
            )
            if differ:
                print(f"    differ: {', '.join(differ[:20])}{' ...' if len(differ) > 20 else ''}")
    finally:
        await sb.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if not (args.data / "reflexion-original-repo").is_dir():
        print(f"no paper logs under {args.data} (set --data)", file=sys.stderr)
        return 2
    result = asyncio.run(_main(args.data, args.jobs))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
