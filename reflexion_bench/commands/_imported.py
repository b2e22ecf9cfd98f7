"""What the import commands share: the verdict options, the error handling, and what
they print (each run folder's table and one line per run)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_verdict_options(
    p: argparse.ArgumentParser, source: str, value: str, map_example: str = ""
) -> None:
    """``--map``, ``--threshold`` (per ``source``: a scorer, a metric) and ``--force``."""
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar=f"[{source}:]VALUE=pass|fail",
        help=f"verdict of {value} (repeatable{map_example})",
    )
    p.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar=f"[{source}=]X",
        help=f"a numeric value passes at >= X (default 1.0; repeatable, per {source.lower()})",
    )
    p.add_argument("--force", action="store_true", help="replace an existing import in --out")


def run_import(args: argparse.Namespace, importer: Callable[[Any], dict[str, Any]]) -> int:
    """Parse the verdict options, call ``importer(verdicts)`` and print what it wrote; a
    bad log or option is one line and exit 2."""
    from reflexion_bench.commands._out import folder_problem, write_error
    from reflexion_bench.interop import InteropError, parse_verdict_options

    # Before the logs are read: a bad --out found after it loses the work and, from
    # Python, reads "[Errno 20] Not a directory" without naming the option.
    problem = folder_problem(args.out)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        manifest = importer(parse_verdict_options(args.map, args.threshold))
    except InteropError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {write_error(exc, args.out)}", file=sys.stderr)
        return 2
    print_import(manifest)
    return 0


def print_import(manifest: dict[str, Any]) -> None:
    from reflexion_bench.analysis.answer_key import describe
    from reflexion_bench.analysis.report import format_table, write_run_outputs

    dirs = [Path(p) for p in manifest.get("run_dirs") or []]
    for d in dirs:
        summary = write_run_outputs(d)
        if len(dirs) > 1:
            print(f"== {d}")
        print(format_table(summary))
        print(f"answer key: {describe(summary.get('answer_key'))}")
    print(
        f"imported {manifest['tasks']} tasks ({manifest['trial_records']} trial records) of "
        f"{manifest.get('benchmark', '?')} / {manifest.get('strategy', '?')} / "
        f"{manifest.get('model', '?')} into {len(dirs)} run folder{'s' if len(dirs) != 1 else ''}"
        + (f" (seeds: {', '.join(d.name for d in dirs)})" if len(dirs) > 1 else "")
    )
