"""``reflexion-bench import-lm-eval``: lm-evaluation-harness ``--log_samples`` -> run folders.

    reflexion-bench import-lm-eval SAMPLES.jsonl [MORE...] --out RUN_DIR [--metric NAME]
        [--filter NAME] [--task NAME] [--model NAME] [--threshold [METRIC=]X ...]
        [--map [METRIC:]VALUE=pass|fail ...] [--force]

SAMPLES are lm-eval's ``samples_<task>_<date>.jsonl`` files (or folders holding them);
the ``results_<date>.json`` beside each gives the model and the configuration. The doc
id is the task id, the task's metric (``--metric``, default the first it lists) the
verdict (1.0 passes; ``--threshold`` for graded metrics), one trial per document (clean),
and several files of one task, model and configuration are its seeds. See
:mod:`reflexion_bench.interop.lm_eval`. Then ``compare`` pairs two models' runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench import-lm-eval",
        description="Import lm-evaluation-harness --log_samples output as run folders.",
    )
    p.add_argument("src", nargs="+", type=Path, help="samples_<task>_<date>.jsonl files or folders")
    p.add_argument("--out", required=True, type=Path, help="run folder to create")
    p.add_argument(
        "--metric", help="the metric whose value is the verdict (default: the first listed)"
    )
    p.add_argument(
        "--filter", dest="filter_name", help="the filter to import (where there are several)"
    )
    p.add_argument("--task", help="task name (default: from the file name)")
    p.add_argument("--model", help="model name (default: from the results file)")
    p.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="[METRIC=]X",
        help="a metric value passes at >= X (default 1.0; repeatable, per metric)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="[METRIC:]VALUE=pass|fail",
        help="verdict of a non-numeric metric value (repeatable)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing import in --out")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.interop import InteropError, import_lm_eval, parse_verdict_options

    args = _parser().parse_args(argv)
    try:
        vmap = parse_verdict_options(args.map, args.threshold)
        manifest = import_lm_eval(
            args.src,
            args.out,
            metric=args.metric,
            filter_name=args.filter_name,
            task=args.task,
            model=args.model,
            verdicts=vmap,
            force=args.force,
        )
    except (InteropError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from reflexion_bench.commands._imported import print_import

    print_import(manifest)
    return 0
