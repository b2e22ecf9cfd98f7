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
from pathlib import Path

from reflexion_bench.commands._imported import add_verdict_options, run_import


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
    add_verdict_options(p, "METRIC", "a non-numeric metric value")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.interop import import_lm_eval

    args = _parser().parse_args(argv)
    return run_import(
        args,
        lambda verdicts: import_lm_eval(
            args.src,
            args.out,
            metric=args.metric,
            filter_name=args.filter_name,
            task=args.task,
            model=args.model,
            verdicts=verdicts,
            force=args.force,
        ),
    )
