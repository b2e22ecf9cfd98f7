#!/usr/bin/env python
"""Re-score the paper's published GPT-4 Python runs under the plus tests.

For each log (HumanEval Reflexion and simple, MBPP Reflexion and simple, from
``../shared/data/reflexion-original-repo/programming_runs/root``) every row's final
program is judged by this project's scorer on the base tests and then on the plus
tests (HumanEval: the generated inputs shipped in the package; MBPP: MBPP+ v1), and the
script prints, per log: tasks, passes as logged, base passes, plus passes, how many
base passes fail plus; and the tasks that pass base but fail plus (for HumanEval
Reflexion: which of its logged passes fail).

    python scripts/rescore_paper_plus.py [--data ../shared/data] [--jobs 2] [--json F]
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
}


async def _main(data: Path, jobs: int, cache_dir: str | None) -> dict[str, Any]:
    from reflexion_bench.analysis.plus_rescore import read_rows, rescore_rows
    from reflexion_bench.sandbox.local import LocalSandbox
    from reflexion_bench.scorers.code import CodeScorer
    from reflexion_bench.scorers.plus_oracles import weak_oracle_tasks

    root = data / "reflexion-original-repo" / "programming_runs" / "root"
    scorer = CodeScorer(
        tests="both",
        mbpp_plus_path=str(data / "evalplus" / "MbppPlus-v1.jsonl"),
        cache_dir=cache_dir,
    )
    sb = LocalSandbox(jobs=jobs)
    print(f"sandbox: {sb.isolation}")
    out: dict[str, Any] = {}
    try:
        for name, rel in LOGS.items():
            started = time.perf_counter()
            recs = await rescore_rows(read_rows(root / rel), sb, scorer)
            bp_pf = [r for r in recs if r["base"] and not r["plus"]]
            logged_fail_plus = [r for r in recs if r["logged"] and not r["plus"]]
            res = {
                "n": len(recs),
                "logged_pass": sum(bool(r["logged"]) for r in recs),
                "base_pass": sum(r["base"] for r in recs),
                "plus_pass": sum(r["plus"] for r in recs),
                "with_plus_inputs": sum(r["plus_inputs"] > 0 for r in recs),
                "base_pass_plus_fail": [r["task_id"] for r in bp_pf],
                "logged_pass_plus_fail": [r["task_id"] for r in logged_fail_plus],
                "details": {r["task_id"]: r["plus_detail"] for r in bp_pf},
                # Tasks judged under an MBPP+ oracle that cannot reject a base pass.
                "weak_oracles": weak_oracle_tasks(r["task_id"] for r in recs if r["plus_inputs"]),
                "seconds": round(time.perf_counter() - started, 1),
            }
            out[name] = res
            n = res["n"]
            print(
                f"{name:24s} n {n}  logged {res['logged_pass']} ({100 * res['logged_pass'] / n:.1f}%)  "
                f"base {res['base_pass']} ({100 * res['base_pass'] / n:.1f}%)  "
                f"plus {res['plus_pass']} ({100 * res['plus_pass'] / n:.1f}%)  "
                f"base-pass/plus-fail {len(bp_pf)}  logged-pass/plus-fail {len(logged_fail_plus)}  "
                f"[{res['with_plus_inputs']} tasks with plus inputs, {res['seconds']:.0f}s]",
                flush=True,
            )
            print(f"    base pass, plus fail: {', '.join(res['base_pass_plus_fail'])}", flush=True)
            if res["weak_oracles"]:
                weak = ", ".join(f"{w['task']} ({w['oracle']})" for w in res["weak_oracles"])
                print(f"    plus cannot reject a base pass (weak oracle): {weak}", flush=True)
    finally:
        await sb.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "reflexion-bench"))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if not (args.data / "reflexion-original-repo").is_dir():
        print(f"no paper logs under {args.data} (set --data)", file=sys.stderr)
        return 2
    result = asyncio.run(_main(args.data, args.jobs, args.cache_dir))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
