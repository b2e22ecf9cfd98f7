"""``reflexion-bench report RUN_DIR [--json]``: recompute a run's metrics from its log."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reflexion_bench.analysis.report import format_table, write_run_outputs


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="reflexion-bench report", description=__doc__)
    p.add_argument("run_dirs", nargs="+", type=Path, help="run folder(s) holding log.jsonl")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = p.parse_args(argv)
    out = []
    for run_dir in args.run_dirs:
        if not (run_dir / "log.jsonl").exists():
            print(f"error: {run_dir} has no log.jsonl (not a run folder)", file=sys.stderr)
            return 2
        summary = write_run_outputs(run_dir)
        summary["run_dir"] = str(run_dir)
        out.append(summary)
    if args.json:
        print(json.dumps(out[0] if len(out) == 1 else out, indent=2))
    else:
        for s in out:
            print(format_table(s))
            print()
    return 0
