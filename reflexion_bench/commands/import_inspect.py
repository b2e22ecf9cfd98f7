"""``reflexion-bench import-inspect``: Inspect AI eval logs -> run folders.

    reflexion-bench import-inspect LOG_OR_DIR --out RUN_DIR [--scorer NAME]
        [--map [SCORER:]VALUE=pass|fail ...] [--threshold [SCORER=]X ...] [--force]

LOG_OR_DIR is one ``.eval``/``.json`` log or a folder of them (read with
``inspect_ai.log``). Each sample becomes a task (its id), each epoch a seed (one
sub-folder per epoch when there are several), each in-loop scoring by the solver
(``react(attempts=N)``, ``incorrect_message``) a trial boundary, and such runs are
labelled answer-in-loop with their count. Scores map to our pass/fail verdict: ``C``
passes, ``I``/``P``/``N`` fail, numbers pass at >= 1.0 (``--map``, ``--threshold``
change that per scorer). See :mod:`reflexion_bench.interop.inspect_in`. Then
``report``, ``view`` and ``compare`` read RUN_DIR as any run of ours.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench import-inspect",
        description="Import Inspect AI eval logs (.eval/.json) as run folders.",
    )
    p.add_argument("src", type=Path, help="an Inspect .eval/.json log, or a folder of them")
    p.add_argument("--out", required=True, type=Path, help="run folder to create")
    p.add_argument(
        "--scorer", help="the scorer whose score is the verdict (default: the log's first)"
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="[SCORER:]VALUE=pass|fail",
        help="verdict of a score value (repeatable; e.g. P=pass, match:P=pass)",
    )
    p.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="[SCORER=]X",
        help="numeric scores pass at >= X (default 1.0; repeatable, per scorer)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing import in --out")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.interop import InteropError, import_inspect, parse_verdict_options

    args = _parser().parse_args(argv)
    try:
        vmap = parse_verdict_options(args.map, args.threshold)
        manifest = import_inspect(
            args.src, args.out, scorer=args.scorer, verdicts=vmap, force=args.force
        )
    except (InteropError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from reflexion_bench.commands._imported import print_import

    print_import(manifest)
    return 0
