"""What an import command prints: each run folder's table and one line per run."""

from __future__ import annotations

from pathlib import Path
from typing import Any


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
