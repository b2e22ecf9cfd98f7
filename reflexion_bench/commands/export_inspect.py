"""``reflexion-bench export-inspect``: a run folder -> an Inspect ``.eval`` log.

    reflexion-bench export-inspect RUN_DIR --out FILE.eval [--force]

The log is written with ``inspect_ai.log.write_eval_log``, so ``read_eval_log``,
``inspect view`` and Inspect Scout read it: one sample per task, its trials as the
transcript (each logged model call, the self-test feedback, the reflection), the hidden
verdict of the submitted trial as the score (``C``/``I``) with first-try and per-trial
verdicts in the score's metadata, usage per model, and the harness version and the run's
provenance in the eval's metadata. See :mod:`reflexion_bench.interop.inspect_out`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench export-inspect",
        description="Write a run folder as an Inspect .eval log (inspect view, Inspect Scout).",
    )
    p.add_argument("run_dir", type=Path, help="a run folder (with log.jsonl)")
    p.add_argument("--out", required=True, type=Path, help="the .eval file to write")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.commands._out import file_problem, write_error
    from reflexion_bench.interop import InteropError, export_inspect

    args = _parser().parse_args(argv)
    # Before the run is read: Python's own error ("[Errno 20] Not a directory") would
    # name neither --out nor the fix.
    problem = file_problem(args.out, example="run.eval")
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        info = export_inspect(args.run_dir, args.out, force=args.force)
    except InteropError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {write_error(exc, args.out)}", file=sys.stderr)
        return 2
    print(
        f"wrote {args.out}: {info['samples']} samples ({info['trials']} trials) of "
        f"{info['task']} / {info['model']}, pass@1 {info['accuracy']:.3f}; open it with "
        f"`inspect view --log-dir {args.out.parent}`"
    )
    return 0
