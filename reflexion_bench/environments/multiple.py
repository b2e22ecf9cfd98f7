"""MultiPL-E translations of the code benchmarks (HumanEval-rs, MBPP-rs, ...).

MultiPL-E (Cassano et al., 2022) rewrote HumanEval and MBPP into other languages;
each problem has a ``name`` (``HumanEval_24_largest_divisor``), a ``prompt`` (doc
comment + signature, ending with the opening brace: a completion is the body), a
``test`` (for Rust: a ``fn main`` of ``assert_eq!`` lines) and an ``entry_point``.
The Reflexion paper ran HumanEval-rs (and its 50 hardest problems) and MBPP-rs from
these files.

Two sources:

- ``jsonl`` (default): a local file in that schema (``path``), e.g.
  ``${paths.data_dir}/humaneval-rs.jsonl``;
- ``hf``: the Hugging Face dataset ``nuprl/MultiPL-E`` through ``datasets``
  (``hf_config`` e.g. ``humaneval-rs`` / ``mbpp-rs``; needs the network or a warm
  HF cache).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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

SOURCES = ("jsonl", "hf")
#: MultiPL-E's language tags, by the CodeLanguage name that runs them.
LANGUAGE_TAGS = {"rust": ("rs", "rust"), "python": ("py", "python")}


class MultiPLEEnvironment:
    """Problems of a MultiPL-E translation.

    Args:
        language: The :class:`~reflexion_bench.environments.code_common.CodeLanguage`
            that runs the programs (e.g. ``RustLanguage``).
        source: ``jsonl`` (a local file) or ``hf`` (Hugging Face ``datasets``).
        path: The JSONL file for ``source: jsonl``.
        hf_path: Dataset name or local folder for ``load_dataset`` (``nuprl/MultiPL-E``).
        hf_config: Its configuration (``humaneval-rs``, ``mbpp-rs``...).
        hf_split: Its split (``test``).
        hf_data_files: Data files for builder datasets such as ``json`` (offline use).
        hf_cache_dir: Cache folder of ``datasets`` (None: its default, ~/.cache/huggingface).
        limit: Keep the first N tasks (after ``task_ids``).
        task_ids: Keep only these ids (the ``name`` field), in this order.
        name: Benchmark name in reports.
        timeout_s: Hidden-test run timeout per task (compilation has its own, set on
            the language), overriding the scorer's default.
    """

    memory_window = 1  # the paper's Ω for code

    def __init__(
        self,
        language: CodeLanguage,
        source: str = "jsonl",
        path: str | None = None,
        hf_path: str = "nuprl/MultiPL-E",
        hf_config: str | None = None,
        hf_split: str = "test",
        hf_data_files: str | Sequence[str] | None = None,
        hf_cache_dir: str | None = None,
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        name: str = "multiple",
        timeout_s: float | None = None,
    ) -> None:
        if source not in SOURCES:
            raise ConfigError("env.source", source, SOURCES)
        if source == "jsonl" and not path:
            raise ConfigError("env.path", path, "a MultiPL-E JSONL file (or set env.source=hf)")
        if source == "hf" and not (hf_config or hf_data_files):
            raise ConfigError("env.hf_config", hf_config, "a MultiPL-E config such as humaneval-rs")
        self.language = language
        self.source = source
        self.path = Path(path).expanduser() if path else None
        self.hf_path = hf_path
        self.hf_config = hf_config
        self.hf_split = hf_split
        self.hf_data_files = hf_data_files
        self.hf_cache_dir = hf_cache_dir
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.name = name
        self.timeout_s = timeout_s

    def _rows(self) -> Iterable[Mapping[str, Any]]:
        if self.source == "jsonl":
            assert self.path is not None
            return read_jsonl(self.path, "env.path")
        try:
            import datasets
        except ImportError as exc:
            raise DatasetError("env.source=hf needs the `datasets` package") from exc
        try:
            kwargs: dict[str, Any] = {"split": self.hf_split}
            if self.hf_data_files is not None:
                kwargs["data_files"] = self.hf_data_files
            if self.hf_cache_dir:
                kwargs["cache_dir"] = self.hf_cache_dir
            ds = datasets.load_dataset(self.hf_path, self.hf_config, **kwargs)
        except Exception as exc:  # offline, unknown config, ...: say which keys to fix
            raise DatasetError(
                f"could not load {self.hf_path!r} (config {self.hf_config!r}, split "
                f"{self.hf_split!r}) with `datasets`: {type(exc).__name__}: {exc}; check "
                "env.hf_path/env.hf_config, or use env.source=jsonl with env.path"
            ) from None
        return (dict(row) for row in ds)

    def load_all(self) -> list[Task]:
        """Every task of the source, before selection."""
        tags = LANGUAGE_TAGS.get(self.language.name, (self.language.name,))
        where = "env.path" if self.source == "jsonl" else "env.hf_config"
        tasks: list[Task] = []
        for row in self._rows():
            lang = row.get("language")
            if lang is not None and str(lang) not in tags:
                raise DatasetError(
                    f"problem {row.get('name')!r} is in language {lang!r}, but the environment "
                    f"runs {self.language.name}; check `{where}` and `env.language`"
                )
            task = problem_to_task(row, self.name, self.language, where)
            test = str(task.data["test"])
            if test.lstrip().startswith("}"):
                # MBPP-rs tests start with the `}` that closes the completion's body
                # (MultiPL-E runs prompt + completion + test). Programs here are whole
                # functions (the language closes a cut-off body itself), so drop it.
                task.data["test"] = test.lstrip()[1:]
            if row.get("stop_tokens"):
                task.data["stop_tokens"] = list(row["stop_tokens"])
            tasks.append(task)
        if not tasks:
            raise DatasetError(f"no problems found; check `{where}`")
        return with_timeout(tasks, self.timeout_s)

    def load_tasks(self) -> list[Task]:
        return select_tasks(self.load_all(), self.limit, self.task_ids)
