"""``reflexion-bench compare A B``: the paired comparison of any two runs.

    reflexion-bench compare A B [--format md|json|latex] [--equivalence-margin 5]
                                [--resamples N] [--seed S]

A and B are run folders (ours, or imported: the paper's logs, Inspect, lm-eval), or a
folder of one configuration's seeds (an Inspect log with several epochs). Printed: each
side (source, model, first-try, pass@1, fixes/breaks, answer key), the paired difference
with its 95% interval, exact McNemar (one seed each) or the exact sign-flip test (seeds),
the equivalence verdict, the detectable difference, and the tasks where they differ
(:mod:`reflexion_bench.analysis.compare`). Exit 0 whenever both sides read, whatever the
statistics say (no common task, no discordant task are reported in the output); 2 when
a side cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench compare",
        description="Paired comparison of two runs (any source) on their common tasks.",
    )
    p.add_argument("a", type=Path, help="run folder A (or a folder of one configuration's seeds)")
    p.add_argument("b", type=Path, help="run folder B")
    p.add_argument("--format", choices=("md", "json", "latex"), default="md")
    p.add_argument(
        "--equivalence-margin",
        type=float,
        default=5.0,
        help="equivalence margin in points of pass@1 (default 5)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=10_000,
        help="bootstrap resamples (intervals of per-task means over seeds)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.analysis.compare import CompareError, compare_paths, render

    args = _parser().parse_args(argv)
    if not 0 < args.equivalence_margin < 100:
        print(
            "error: --equivalence-margin is in points of pass@1, between 0 and 100 "
            f"(e.g. 5), got {args.equivalence_margin}",
            file=sys.stderr,
        )
        return 2
    if args.resamples < 1:
        print(f"error: --resamples must be at least 1, got {args.resamples}", file=sys.stderr)
        return 2
    try:
        result = compare_paths(
            args.a,
            args.b,
            margin=args.equivalence_margin / 100,
            n_resamples=args.resamples,
            seed=args.seed,
        )
    except (CompareError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(result, args.format))
    return 0
