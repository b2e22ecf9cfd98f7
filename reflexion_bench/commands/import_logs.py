"""``reflexion-bench import-reflexion-logs``: the paper's own run outputs -> a run folder.

    reflexion-bench import-reflexion-logs SRC --out RUN_DIR
        [--kind programming|hotpotqa|alfworld] [--benchmark B] [--strategy S] [--model M]
        [--no-rescore] [--repair-rust-braces] [--data DIR] [--jobs N] [--sandbox local]
        [--rescore-benchmark NAME [--problems FILE]] [--limit N] [--force]

SRC is any log of the original repository (noahshinn/reflexion): a programming
``.jsonl`` (HumanEval/MBPP/LeetcodeHard, Python or Rust, any strategy), a HotpotQA
``.txt`` (CoT with or without context, ReAct; every strategy) or an ALFWorld run folder
of ``env_results_trial_<i>.json``. Kind, benchmark, language, strategy, model and the
iteration bound are read from the file, its name and its folder; the flags override.

Programming logs are re-scored with the hidden tests, faithfully: the program is
assembled as the original harness assembled it (a function body goes under the
prompt; a Rust solution is compiled as logged) and nothing else is changed. Appending
a closing brace the original did not is opt-in (``--repair-rust-braces``) and counted
in ``import.json``. HumanEval/MBPP logs are scored against the problems they carry;
LeetcodeHard against the offline hidden tests in ``--data`` (default: the project's
data folder). The logged verdict stays beside the re-scored one. Then
``reflexion-bench report RUN_DIR [--paper]`` shows the published run beside new ones.
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
    p.add_argument(
        "src",
        type=Path,
        help="a programming .jsonl, a HotpotQA .txt log, or an ALFWorld folder of trial files",
    )
    p.add_argument("--out", required=True, type=Path, help="run folder to create")
    p.add_argument(
        "--kind",
        choices=("programming", "hotpotqa", "alfworld"),
        help="what SRC is (default: from SRC: .jsonl, .txt, folder)",
    )
    p.add_argument("--benchmark", help="benchmark name in reports (default: detected)")
    p.add_argument("--strategy", help="strategy name (default: detected from the file/folder)")
    p.add_argument(
        "--model",
        help="model name (default: from the file or folder name, else the one model every "
        "other log of the benchmark beside it names, else unknown)",
    )
    p.add_argument("--no-rescore", action="store_true", help="keep only the logged verdicts")
    p.add_argument(
        "--repair-rust-braces",
        action="store_true",
        help="append the closing braces a Rust solution lacks before scoring (a repair the "
        "original harness did not make; counted in import.json)",
    )
    p.add_argument(
        "--data",
        type=Path,
        help="benchmark data folder (LeetcodeHard hidden tests; default: REFLEXION_BENCH_DATA "
        "or ../shared/data)",
    )
    p.add_argument(
        "--rescore-benchmark",
        default=None,
        help="score with this evaluate benchmark instead of the detected one",
    )
    p.add_argument("--problems", help="problem file for --rescore-benchmark (sets env.path)")
    p.add_argument("--jobs", type=int, default=2, help="programs scored at once")
    p.add_argument("--sandbox", default="local", help="sandbox config for re-scoring")
    p.add_argument("--limit", type=int, help="import only the first N problems")
    p.add_argument("--force", action="store_true", help="replace an existing log in --out")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.analysis.imports import ImportError_, evaluate_rescorer, import_log
    from reflexion_bench.analysis.report import format_table, write_run_outputs

    args = _parser().parse_args(argv)
    try:
        rescorer = None
        if args.rescore_benchmark and not args.no_rescore:
            rescorer = evaluate_rescorer(
                args.rescore_benchmark, args.problems, jobs=args.jobs, sandbox=args.sandbox
            )
        manifest = import_log(
            args.src,
            args.out,
            kind=args.kind,
            benchmark=args.benchmark,
            strategy=args.strategy,
            model=args.model,
            rescore=not args.no_rescore,
            rescorer=rescorer,
            data_dir=args.data,
            jobs=args.jobs,
            sandbox=args.sandbox,
            repair_rust_braces=args.repair_rust_braces,
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
    rescored = manifest.get("rescored_passed")
    source = manifest.get("model_source")
    if source and source not in ("file name", "folder name", "--model"):
        # A model inferred from the logs beside it (or none found) is said, so that a
        # wrong inference is seen and overridden with --model.
        print(f"model {manifest['model']}: from {source} (--model sets it)")
    print(
        f"imported {manifest['tasks']} tasks ({manifest['trial_records']} trial records) of "
        f"{manifest['benchmark']} / {manifest['strategy']} / {manifest['model']} into {args.out}: "
        f"logged {manifest['logged_passed']}"
        + (f", re-scored {rescored}" if rescored is not None else "")
        + (f" ({manifest['rescore_note']})" if manifest.get("rescore_note") else "")
    )
    return 0
