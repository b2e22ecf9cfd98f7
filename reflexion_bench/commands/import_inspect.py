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
from pathlib import Path

from reflexion_bench.commands._imported import add_verdict_options, run_import


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
    add_verdict_options(p, "SCORER", "a score value", "; e.g. P=pass, match:P=pass")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.interop import import_inspect

    args = _parser().parse_args(argv)
    return run_import(
        args,
        lambda verdicts: import_inspect(
            args.src, args.out, scorer=args.scorer, verdicts=verdicts, force=args.force
        ),
    )
