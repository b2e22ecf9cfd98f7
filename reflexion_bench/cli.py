"""``reflexion-bench``: one entry point, one sub-command per job.

Sub-command modules are imported only when chosen, so ``report`` does not pay for
Hydra or the model SDKs.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "run": ("reflexion_bench.commands.run", "run an experiment (Hydra overrides follow)"),
    "report": ("reflexion_bench.commands.report", "recompute metrics of run folders"),
    "evaluate": ("reflexion_bench.commands.evaluate", "score solutions without the loop"),
    "rescore": (
        "reflexion_bench.commands.rescore",
        "re-judge a run's logged programs under the plus tests (no model)",
    ),
    "plan": (
        "reflexion_bench.commands.plan",
        "power of a paired comparison: detectable difference, tasks needed",
    ),
    "import-reflexion-logs": (
        "reflexion_bench.commands.import_logs",
        "import the paper's own run logs",
    ),
    "import-inspect": (
        "reflexion_bench.commands.import_inspect",
        "import Inspect AI eval logs (.eval/.json) as run folders",
    ),
    "import-lm-eval": (
        "reflexion_bench.commands.import_lm_eval",
        "import lm-evaluation-harness --log_samples output as run folders",
    ),
    "export-inspect": (
        "reflexion_bench.commands.export_inspect",
        "write a run folder as an Inspect .eval log (inspect view, Scout)",
    ),
    "compare": (
        "reflexion_bench.commands.compare",
        "paired comparison of any two runs: McNemar, interval, equivalence",
    ),
    "audit-paper": (
        "reflexion_bench.commands.audit_paper",
        "the paper's numbers vs its own logs, re-scored, paired tests",
    ),
    "memory": (
        "reflexion_bench.commands.memory",
        "review/deprecate/maintain reflection stores; lifelong report",
    ),
    "bench": (
        "reflexion_bench.commands.bench",
        "benchmarks: `bench memory --n N` retrieval latency",
    ),
    "cache": (
        "reflexion_bench.commands.cache",
        "export/import the response cache (carry shared trial-1 calls across machines)",
    ),
    "view": (
        "reflexion_bench.commands.view",
        "browse runs and sweeps in a local web page (or --export FILE.html)",
    ),
}


def _usage() -> str:
    rows = "\n".join(f"  {name:<22} {help_}" for name, (_, help_) in COMMANDS.items())
    return (
        "usage: reflexion-bench <command> [args]   (reflexion-bench --version)\n\n"
        f"commands:\n{rows}\n"
    )


def version() -> str:
    """The installed distribution's version (pyproject), else the package's own."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("reflexion-bench")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from reflexion_bench import __version__

        return __version__


def _unknown_command(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(COMMANDS), n=2, cutoff=0.6)
    hint = f"; did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else ""
    return f"error: unknown command {name!r}{hint}\n`reflexion-bench --help` lists the commands"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if args[0] in ("-V", "--version"):
        print(version())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(_unknown_command(name), file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
