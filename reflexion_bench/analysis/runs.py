"""Find run folders, load their logs, and group runs by benchmark x strategy x model.

Accepts run folders, ``log.jsonl`` paths and sweep folders (any folder is searched
recursively for ``log.jsonl``). Runs of the same group whose task sets do not overlap
(e.g. shards of one experiment) are pooled into one group; runs that repeat tasks
(seeds, replicates) stay separate rows, labelled by folder name, and so do a ``clean``
and an ``answer-in-loop`` run (:mod:`reflexion_bench.analysis.answer_key`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.answer_key import run_answer_key
from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.runner.runlog import LOG_NAME, load_run_records

# Folders never holding run logs of ours (W&B's offline copies, caches).
_SKIP_DIRS = {"wandb", ".git", "__pycache__", ".ipynb_checkpoints", ".hydra"}


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Every run folder under ``paths`` (folders holding a ``log.jsonl``), de-duplicated,
    in the order given (sorted within a searched folder)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_file() and p.name == LOG_NAME:
            found = [p.parent]
        elif (p / LOG_NAME).is_file():
            found = [p]
        elif p.is_dir():
            found = sorted(
                log.parent
                for log in p.rglob(LOG_NAME)
                if not (_SKIP_DIRS & set(log.relative_to(p).parts[:-1]))
            )
            if not found:
                raise FileNotFoundError(f"no {LOG_NAME} under {p} (not a run or sweep folder)")
        else:
            raise FileNotFoundError(f"{p} is not a run folder, a sweep folder or a {LOG_NAME}")
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


@dataclass
class Run:
    """One run folder's effective records and summary."""

    path: Path
    records: list[dict[str, Any]]
    summary: dict[str, Any]

    @property
    def key(self) -> tuple[str, str, str]:
        s = self.summary
        return (_label(s.get("benchmark")), _label(s.get("strategy")), _label(s.get("model")))

    @property
    def task_ids(self) -> set[str]:
        return {str(r["task_id"]) for r in self.records}


def _label(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(map(str, value))
    return "?" if value is None else str(value)


def load_run(path: Path) -> Run:
    from reflexion_bench.analysis.rescore import with_rescore

    # A run re-judged by `reflexion-bench rescore` gets its plus verdicts from the file.
    records = with_rescore(load_run_records(path), path)
    summary = summarize(records)
    summary["answer_key"] = run_answer_key(records, [path])
    return Run(path=path, records=records, summary=summary)


def _answer_label(summary: dict[str, Any]) -> str:
    return str((summary.get("answer_key") or {}).get("label"))


@dataclass
class Group:
    """A row of the report: one benchmark x strategy x model (possibly several runs)."""

    benchmark: str
    strategy: str
    model: str
    runs: list[Run] = field(default_factory=list)
    label: str = ""
    records: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.benchmark, self.strategy, self.model)

    @property
    def name(self) -> str:
        return self.label or self.strategy


def group_runs(runs: Sequence[Run]) -> list[Group]:
    """Pool runs of one benchmark x strategy x model unless they repeat tasks."""
    groups: list[Group] = []
    by_key: dict[tuple[str, str, str], list[Group]] = {}
    for run in runs:
        if not run.records:
            continue
        candidates = by_key.setdefault(run.key, [])
        # A clean run and an answer-in-loop run are never pooled into one number.
        target = next(
            (
                g
                for g in candidates
                if not (g_tasks(g) & run.task_ids)
                and _answer_label(g.runs[0].summary) == _answer_label(run.summary)
            ),
            None,
        )
        if target is None:
            target = Group(*run.key)
            candidates.append(target)
            groups.append(target)
        target.runs.append(run)
        target.records.extend(run.records)
    for key, gs in by_key.items():
        for g in gs:
            g.summary = summarize(g.records)
            g.summary["answer_key"] = run_answer_key(g.records, [r.path for r in g.runs])
            if len(gs) > 1:
                g.label = f"{key[1]} ({', '.join(r.path.name for r in g.runs)})"
    return groups


def g_tasks(group: Group) -> set[str]:
    return {str(r["task_id"]) for r in group.records}


def load_groups(paths: Iterable[str | Path]) -> list[Group]:
    """Find, load and group every run under ``paths``."""
    return group_runs([load_run(p) for p in find_run_dirs(paths)])
