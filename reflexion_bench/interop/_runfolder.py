"""Writing imported runs as run folders of ours (shared by the Inspect and lm-eval importers).

An import is one or more :class:`ImportedRun`: one per configuration and seed. One run
is written into ``--out`` itself; several go into sub-folders of ``--out`` (one per
seed of each configuration), each a complete run folder (``log.jsonl``, ``config.yaml``,
``provenance.json``, ``import.json``), with the import's manifest also in ``--out``.

Seeds are an axis (:mod:`reflexion_bench.analysis.runs`): the ``config.yaml`` of the
seeds of one configuration is equal in every key but ``seed``, so ``report`` and
``compare`` pair them as one configuration. ``config.yaml`` of an import holds what the
source says about the configuration (task, model, dataset, solver, generation settings,
the score mapping), never a Hydra config; ``strategy`` is a name, not a node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reflexion_bench.core.runlog import LOG_NAME, RunLogWriter
from reflexion_bench.interop._verdicts import InteropError

MANIFEST = "import.json"
CONFIG_NAME = "config.yaml"  # resume_guard.CONFIG_NAME, without importing Hydra's layer
PROVENANCE_NAME = "provenance.json"  # runner.provenance.PROVENANCE_NAME
#: Files an import writes into a run folder (and may replace with ``--force``).
WRITTEN = (LOG_NAME, MANIFEST, CONFIG_NAME, PROVENANCE_NAME, "summary.json", "curve.png")


@dataclass
class ImportedRun:
    """One run folder to write: its records, config, provenance and manifest."""

    name: str
    records: list[dict[str, Any]]
    config: dict[str, Any]
    provenance: dict[str, Any]
    manifest: dict[str, Any] = field(default_factory=dict)


def trial_record(
    *,
    run_id: str,
    task_id: str,
    benchmark: str,
    strategy: str,
    model: str,
    trial: int,
    final: bool,
    meta: dict[str, Any],
    missing: list[str],
    **fields: Any,
) -> dict[str, Any]:
    """A trial record of the run-log schema (:mod:`reflexion_bench.runner.runlog`),
    marked imported (readers then accept gaps in the trial numbers) with the fields the
    source lacks listed in ``extra.missing``."""
    # One definition of an imported trial record: the paper-log importer's.
    from reflexion_bench.analysis.imports import _record

    return _record(
        run_id=run_id,
        task_id=task_id,
        benchmark=benchmark,
        strategy=strategy,
        model=model,
        trial=trial,
        final=final,
        meta=meta,
        missing=sorted(set(missing)),
        **fields,
    )


def _targets(out: Path, runs: list[ImportedRun]) -> list[Path]:
    if len(runs) == 1:
        return [out]
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise InteropError(f"two imported runs would share the folder name {dupes[0]!r}")
    return [out / r.name for r in runs]


def _check_free(targets: list[Path], out: Path, force: bool) -> None:
    taken = [t for t in targets if (t / LOG_NAME).exists()]
    if out not in targets and (out / LOG_NAME).exists():
        taken.append(out)
    if taken and not force:
        raise InteropError(
            f"{taken[0] / LOG_NAME} exists; import into a new folder or pass --force to replace it"
        )
    for t in taken:
        for name in WRITTEN:
            (t / name).unlink(missing_ok=True)


def write_runs(
    out: Path, runs: list[ImportedRun], manifest: dict[str, Any], *, force: bool
) -> list[Path]:
    """Write ``runs`` under ``out`` (see the module docstring); the run folders written."""
    from reflexion_bench.config import redact

    if not runs:
        raise InteropError("nothing to import: the source has no samples")
    targets = _targets(out, runs)
    _check_free(targets, out, force)
    for target, run in zip(targets, runs, strict=True):
        target.mkdir(parents=True, exist_ok=True)
        writer = RunLogWriter(target / LOG_NAME)
        try:
            for rec in run.records:
                writer.write(rec)
        finally:
            writer.close()
        # Secrets never leave through an import: model args, base URLs and the source's
        # own config are masked as this project's configs are.
        (target / CONFIG_NAME).write_text(
            yaml.safe_dump(redact(run.config), sort_keys=False, allow_unicode=True),
            encoding="utf-8",
        )
        _dump(target / PROVENANCE_NAME, run.provenance)
        _dump(target / MANIFEST, {**manifest, **run.manifest, "run": run.name})
    if out not in targets:
        out.mkdir(parents=True, exist_ok=True)
        _dump(out / MANIFEST, {**manifest, "runs": [str(t.relative_to(out)) for t in targets]})
    return targets


def _dump(path: Path, body: dict[str, Any]) -> None:
    from reflexion_bench.config import redact

    path.write_text(json.dumps(redact(body), indent=2, default=str) + "\n", encoding="utf-8")


def harness_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("reflexion-bench")
    except metadata.PackageNotFoundError:
        return None


def package_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
