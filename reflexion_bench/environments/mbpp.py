"""MBPP (Austin et al., 2021), in the two forms a Reflexion user meets.

- ``source: jsonl`` (default): the paper's typed 397-problem variant rewritten by
  MultiPL-E (``name``, ``prompt`` = typed signature + docstring, ``test`` =
  ``def check(candidate)`` with asserts that calls itself, ``entry_point``), read
  from a local file (``path``, default ``${paths.data_dir}/mbpp-py.jsonl``). Task ids
  are the ``name`` field (``mbpp_234_volume_cube``).
- ``source: hf``: the Hugging Face ``mbpp`` dataset through ``datasets`` (needs the
  network or a warm HF cache). Each row becomes a task whose prompt is the reference
  solution's signature with the problem text as docstring, and whose hidden test is
  the row's ``test_list`` (after ``test_setup_code``); ids follow MultiPL-E's pattern
  ``mbpp_<task_id>_<function>``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.base import DatasetError, select_tasks
from reflexion_bench.environments.code_common import (
    CodeLanguage,
    problem_to_task,
    read_jsonl,
    with_timeout,
)
from reflexion_bench.environments.code_python import PythonLanguage

SOURCES = ("jsonl", "hf")


class MBPPEnvironment:
    """MBPP tasks.

    Args:
        source: ``jsonl`` (a local MultiPL-E-style file) or ``hf`` (Hugging Face).
        path: The JSONL file for ``source: jsonl``.
        hf_path: Dataset name (or local dataset folder) for ``load_dataset``.
        hf_config: Its configuration (``full`` or ``sanitized``).
        hf_split: Its split (the benchmark's is ``test``: 500 problems).
        limit: Keep the first N tasks (after ``task_ids``).
        task_ids: Keep only these ids, in this order.
        language: The language of the programs.
        name: Benchmark name in reports.
        timeout_s: Hidden-test timeout per task, overriding the scorer's default.
    """

    memory_window = 1  # the paper's Ω for code

    def __init__(
        self,
        source: str = "jsonl",
        path: str | None = None,
        hf_path: str = "mbpp",
        hf_config: str | None = "full",
        hf_split: str = "test",
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        language: CodeLanguage | None = None,
        name: str = "mbpp",
        timeout_s: float | None = None,
    ) -> None:
        if source not in SOURCES:
            raise ConfigError("env.source", source, SOURCES)
        if source == "jsonl" and not path:
            raise ConfigError("env.path", path, "the path of an MBPP JSONL file (MultiPL-E schema)")
        self.source = source
        self.path = Path(path).expanduser() if path else None
        self.hf_path = hf_path
        self.hf_config = hf_config
        self.hf_split = hf_split
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.language = language or PythonLanguage()
        self.name = name
        self.timeout_s = timeout_s

    def load_all(self) -> list[Task]:
        """Every task of the source, before selection."""
        if self.source == "hf":
            tasks = [hf_row_to_task(row, self.name, self.language) for row in self._hf_rows()]
        else:
            assert self.path is not None
            tasks = [
                problem_to_task(row, self.name, self.language, "env.path")
                for row in read_jsonl(self.path, "env.path")
            ]
        if not tasks:
            raise DatasetError(f"no MBPP problems found ({self._where()})")
        return with_timeout(tasks, self.timeout_s)

    def load_tasks(self) -> list[Task]:
        return select_tasks(self.load_all(), self.limit, self.task_ids)

    def _where(self) -> str:
        if self.source == "hf":
            return f"env.hf_path={self.hf_path}, env.hf_config={self.hf_config}, env.hf_split={self.hf_split}"
        return f"env.path={self.path}"

    def _hf_rows(self) -> list[dict[str, Any]]:
        try:
            import datasets
        except ImportError as exc:
            raise DatasetError(
                "env.source=hf needs the `datasets` package (pip install datasets)"
            ) from exc
        try:
            ds = datasets.load_dataset(self.hf_path, self.hf_config, split=self.hf_split)
        except Exception as exc:
            raise DatasetError(
                f"could not load the Hugging Face dataset ({self._where()}): "
                f"{type(exc).__name__}: {exc}. Offline? Use the local file instead: "
                "env.source=jsonl env.path=/path/to/mbpp-py.jsonl"
            ) from None
        return [dict(row) for row in ds]


def _entry_point(code: str, tests: Sequence[str]) -> ast.FunctionDef:
    """The reference solution's function that the tests call (MBPP rows name none)."""
    tree = ast.parse(code)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    called: set[str] = set()
    for test in tests:
        try:
            called |= {
                n.func.id
                for n in ast.walk(ast.parse(test))
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
        except SyntaxError:
            continue
    for fn in functions:
        if fn.name in called:
            return fn
    if functions:
        return functions[-1]
    raise ValueError("the reference code defines no function")


def hf_row_to_task(row: Mapping[str, Any], benchmark: str, language: CodeLanguage) -> Task:
    """A row of the Hugging Face ``mbpp`` dataset (``full`` or ``sanitized``) -> Task."""
    try:
        text = str(row.get("text") or row.get("prompt") or "").strip()
        code = str(row["code"])
        tests = [str(t) for t in row["test_list"]]
        fn = _entry_point(code, tests)
    except (KeyError, TypeError, ValueError, SyntaxError) as exc:
        raise DatasetError(
            f"MBPP row {row.get('task_id')!r} is not in the Hugging Face mbpp schema "
            f"(text/prompt, code, test_list): {exc}; check `env.hf_path`"
        ) from None
    signature = ast.FunctionDef(
        name=fn.name,
        args=fn.args,
        body=[ast.Expr(ast.Constant(f"\n    {text}\n    "))],
        decorator_list=[],
        returns=fn.returns,
    )
    prompt = ast.unparse(ast.fix_missing_locations(ast.Module(body=[signature], type_ignores=[])))
    setup = "\n".join(
        s
        for s in (str(row.get("test_setup_code") or ""), *map(str, row.get("test_imports") or []))
        if s.strip()
    )
    test = (setup + "\n\n" if setup else "") + "\n".join(tests) + "\n"
    return Task(
        id=f"mbpp_{row.get('task_id')}_{fn.name}",
        prompt=prompt + "\n",
        benchmark=benchmark,
        data={
            "language": language,
            "entry_point": fn.name,
            "test": test,
            "test_call": "",
            "canonical_solution": code,
        },
    )
