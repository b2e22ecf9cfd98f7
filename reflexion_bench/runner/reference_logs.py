"""What earlier runs of a model on a benchmark logged: replies' lengths, tokens per task,
how many trials a task took.

The project's committed studies (``results/<study>/.../log.jsonl``, see
``results/README.md``) are real runs of the local models; a pilot run of your own can be
put beside them. Two readers use them: ``run --estimate`` (the expected length of a
self-test or a reflection, which the paper's logs do not hold, instead of its token cap)
and the progress display (the tokens a task takes, for an ETA before the first task of a
run has finished).

Only a log's first record is read to decide whether it matches (benchmark, model,
strategy: one run has one of each); matching logs are read whole, their finished
attempts only (:func:`reflexion_bench.runner.runlog.load_run_records`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.config import PROJECT_ROOT
from reflexion_bench.core.runlog import LOG_NAME, load_run_records

log = logging.getLogger(__name__)

#: The checkout's ``results/``: the committed studies travel with the code, so they are
#: found from any working directory (``paths.results_dir`` follows the working one).
REFERENCE_DIR = PROJECT_ROOT / "results"

#: Top folders of ``results/`` that hold a user's runs and sweeps, not curated studies:
#: left out, so that an estimate does not change with whatever was run last (and a
#: mock run's replies never stand for a model's).
SKIP_FOLDERS = ("runs", "sweeps", "multirun", "outputs")


@dataclass
class LoggedFigures:
    """What matching run logs say, pooled over them."""

    #: The logs read, as given (relative to the results folder's parent where possible).
    sources: list[str]
    models: list[str]
    tasks: int
    #: Role -> (mean completion tokens per call, number of calls).
    completion: dict[str, tuple[float, int]] = field(default_factory=dict)
    #: Mean completion tokens per task (every call of its finished attempt).
    completion_per_task: float = 0.0
    #: Share of tasks still unsolved before trial t (t = 1, 2, ...; the first is 1.0).
    unsolved_before: list[float] = field(default_factory=list)

    def label(self) -> str:
        shown = ", ".join(self.sources[:2]) + (
            f" and {len(self.sources) - 2} more" if len(self.sources) > 2 else ""
        )
        return f"{shown} ({'/'.join(self.models)}, {self.tasks} tasks)"


def _head(path: Path) -> dict[str, Any] | None:
    """The first trial record of a log (None: empty or unreadable)."""
    try:
        with path.open("rb") as fh:
            for raw in fh:
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("type", "trial") == "trial":
                    return rec
    except OSError:
        return None
    return None


def reference_logs(results_dir: Path) -> list[Path]:
    """The run logs of the studies under ``results_dir``, in path order."""
    if not results_dir.is_dir():
        return []
    found: list[Path] = []
    for top in sorted(results_dir.iterdir()):
        if top.is_dir() and top.name not in SKIP_FOLDERS:
            found.extend(sorted(top.rglob(LOG_NAME)))
    return found


def _is_mock(model: str) -> bool:
    return model == "" or model.startswith("mock")


def logged_figures(
    results_dir: Path,
    benchmark: str,
    model: str | None = None,
    strategy: str | None = None,
) -> LoggedFigures | None:
    """Pooled figures of the logs under ``results_dir`` of ``benchmark`` (and ``model``,
    ``strategy`` where given; a mock model's logs never count). None: no log matches."""
    matched: list[tuple[Path, str]] = []
    for path in reference_logs(results_dir):
        head = _head(path)
        if head is None or str(head.get("benchmark")) != benchmark:
            continue
        name = str(head.get("model") or "")
        if _is_mock(name) or (model is not None and name != model):
            continue
        if strategy is not None and str(head.get("strategy")) != strategy:
            continue
        matched.append((path, name))
    if not matched:
        return None
    per_role: dict[str, list[int]] = {}
    per_task: list[int] = []
    trials: list[int] = []
    for path, _ in matched:
        by_task: dict[str, list[dict[str, Any]]] = {}
        try:
            records = load_run_records(path)
        except (OSError, ValueError) as exc:  # a broken reference is skipped, not fatal
            log.warning("reference log %s not read: %s", path, exc)
            continue
        for rec in records:
            by_task.setdefault(str(rec["task_id"]), []).append(rec)
        for recs in by_task.values():
            total = 0
            for rec in recs:
                for call in rec.get("model_calls") or []:
                    n = int(call.get("completion_tokens") or 0)
                    per_role.setdefault(str(call.get("role")), []).append(n)
                    total += n
            per_task.append(total)
            trials.append(len(recs))
    if not per_task:
        return None
    top = max(trials)
    root = results_dir.parent
    return LoggedFigures(
        sources=[
            str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p, _ in matched
        ],
        models=sorted({m for _, m in matched}),
        tasks=len(per_task),
        completion={r: (sum(v) / len(v), len(v)) for r, v in sorted(per_role.items()) if v},
        completion_per_task=sum(per_task) / len(per_task),
        unsolved_before=[sum(t > i for t in trials) / len(trials) for i in range(top)],
    )


def expected_tokens_per_task(
    results_dir: Path, benchmark: str, model: str, strategy: str
) -> tuple[float, str] | None:
    """Completion tokens per task that earlier runs of this model x benchmark x strategy
    logged, and where from (None: no such run is there)."""
    figures = logged_figures(results_dir, benchmark, model, strategy)
    if figures is None or figures.completion_per_task <= 0:
        return None
    return figures.completion_per_task, figures.label()
