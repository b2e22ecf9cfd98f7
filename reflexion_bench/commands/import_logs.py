"""``reflexion-bench import-reflexion-logs``: the paper's own run outputs -> a run folder.

    reflexion-bench import-reflexion-logs --kind programming SRC.jsonl --out RUN_DIR
        [--benchmark humaneval] [--strategy reflexion] [--model gpt-4]
        [--rescore-benchmark jsonl|humaneval|mbpp|...] [--no-rescore] [--jobs N]
    reflexion-bench import-reflexion-logs --kind alfworld SRC_DIR --out RUN_DIR
        [--strategy reflexion] [--model text-davinci-003]

Then ``reflexion-bench report RUN_DIR [...]`` shows the published run beside new ones.
Programming logs are re-scored with the hidden tests: by default with the problems
the log itself carries (its ``prompt``/``entry_point``/``test`` fields, read by the
HumanEval-schema loader), or with ``--rescore-benchmark NAME [--data FILE]`` (any
``evaluate`` benchmark); the logged verdict is kept beside the re-scored one. What the logs do
not hold (tokens, prompts, earlier candidates...) is marked missing, never invented:
see ``import.json`` in the run folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench import-reflexion-logs",
        description="Import the original Reflexion repository's run logs into a run folder.",
    )
    p.add_argument("--kind", required=True, choices=("programming", "alfworld"))
    p.add_argument(
        "src", type=Path, help="programming: a .jsonl log; alfworld: the folder of trial files"
    )
    p.add_argument("--out", required=True, type=Path, help="run folder to create")
    p.add_argument("--benchmark", help="benchmark name in reports (default: from the file name)")
    p.add_argument("--strategy", help="strategy name (default: from the file/folder name)")
    p.add_argument("--model", default="unknown", help="model name (the logs do not record it)")
    p.add_argument(
        "--rescore-benchmark",
        default=None,
        help="evaluate benchmark used to re-score (default: the log's own problems through "
        "the HumanEval-schema loader; Rust logs need a Rust benchmark config)",
    )
    p.add_argument("--data", help="problem file for --rescore-benchmark (default: SRC itself)")
    p.add_argument("--no-rescore", action="store_true", help="keep only the logged verdicts")
    p.add_argument("--jobs", type=int, default=2, help="programs scored at once")
    p.add_argument("--sandbox", default="local", help="sandbox config for re-scoring")
    p.add_argument("--limit", type=int, help="import only the first N problems")
    p.add_argument("--force", action="store_true", help="replace an existing log in --out")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.analysis.imports import (
        ImportError_,
        evaluate_rescorer,
        guess_benchmark,
        import_alfworld,
        import_programming,
    )
    from reflexion_bench.analysis.report import format_table, write_run_outputs

    args = _parser().parse_args(argv)
    try:
        if args.kind == "alfworld":
            manifest = import_alfworld(
                args.src, args.out, strategy=args.strategy, model=args.model, force=args.force
            )
        else:
            rescorer = None
            if not args.no_rescore:
                target = args.rescore_benchmark
                if target is None:
                    bench = args.benchmark or guess_benchmark(args.src.name) or ""
                    if bench.endswith("_rs"):
                        raise ImportError_(
                            f"{args.src.name} looks like a Rust log: pass --rescore-benchmark "
                            "with a Rust benchmark config (and --data), or --no-rescore"
                        )
                    # The humaneval environment reads any HumanEval-schema file, and the
                    # log carries its own problems: score against exactly those.
                    target = "humaneval"
                data = args.data or (str(args.src) if args.rescore_benchmark is None else None)
                rescorer = evaluate_rescorer(target, data, jobs=args.jobs, sandbox=args.sandbox)
            manifest = import_programming(
                args.src,
                args.out,
                benchmark=args.benchmark,
                strategy=args.strategy,
                model=args.model,
                rescorer=rescorer,
                limit=args.limit,
                force=args.force,
            )
    except (ImportError_, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # e.g. the evaluate library's config errors
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    summary = write_run_outputs(args.out)
    print(format_table(summary))
    print(
        f"imported {manifest['tasks']} tasks ({manifest['trial_records']} trial records) into {args.out}"
    )
    return 0
