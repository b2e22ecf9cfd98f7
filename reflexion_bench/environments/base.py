"""Environment: a benchmark's task source.

How a candidate is executed lives with the scorer/evaluator of that benchmark (they
share the sandbox); the environment only loads and selects tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from reflexion_bench.core.types import Task


class DatasetError(RuntimeError):
    """A dataset could not be found or parsed; the message says which path/key to fix."""


@runtime_checkable
class Environment(Protocol):
    #: Benchmark name as it appears in reports (``humaneval``, ``mbpp``...).
    name: str

    def load_tasks(self) -> list[Task]:
        """All tasks after ``limit`` / ``task_ids`` selection, in a stable order."""
        ...


def select_tasks(
    tasks: list[Task], limit: int | None = None, task_ids: Sequence[str] | None = None
) -> list[Task]:
    """Apply the ``task_ids`` then ``limit`` selection every environment supports.

    Unknown ids are an error naming them, since a typo would otherwise silently
    shrink an experiment.
    """
    if task_ids:
        by_id = {t.id: t for t in tasks}
        missing = [i for i in task_ids if i not in by_id]
        if missing:
            sample = ", ".join(list(by_id)[:3])
            raise DatasetError(
                f"task_ids not in the dataset: {missing[:5]} (ids look like: {sample})"
            )
        tasks = [by_id[i] for i in task_ids]
    if limit is not None:
        if limit < 0:
            raise DatasetError(f"limit must be >= 0, got {limit}")
        tasks = tasks[:limit]
    return tasks
