"""HotpotQA (distractor setting): multi-hop questions answered by exact match.

Tasks come from the Hugging Face ``hotpot_qa`` dataset (``source: hf``, for users
online) or from any local JSON Lines file in the same schema (``source: jsonl``; the
paper's 100 questions are ``hotpotqa-distractor-100.jsonl``). Each record has ``id``,
``question``, ``answer``, ``type`` (bridge / comparison), ``level`` (easy / medium /
hard), ``supporting_facts {title, sent_id}`` and ``context {title, sentences}`` (the
two gold paragraphs plus eight distractors).

The task's ``data`` keeps the gold answer (for the exact-match evaluator and scorer),
the supporting paragraphs (for the ``cot_context`` actor) and the metadata that the
actors copy into each trial record (``type``, ``level``) for the breakdowns of
:mod:`reflexion_bench.analysis.hotpotqa`.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.base import DatasetError, select_tasks

BENCHMARK = "hotpotqa"
SOURCES = ("jsonl", "hf")
REQUIRED_FIELDS = ("id", "question", "answer", "context")

HotpotRecord = dict[str, Any]


def load_records(
    source: str = "jsonl",
    path: str | Path | None = None,
    hf_path: str = "hotpotqa/hotpot_qa",
    hf_config: str = "distractor",
    split: str = "validation",
    hf_cache_dir: str | None = None,
) -> tuple[HotpotRecord, ...]:
    """All records of the chosen source, validated, in file order (cached per process).

    Args:
        source: ``jsonl`` (a local file) or ``hf`` (``datasets.load_dataset``).
        path: The JSONL file for ``source: jsonl``.
        hf_path: Dataset repository (or local dataset folder) for ``source: hf``.
        hf_config: Dataset configuration (``distractor``; ``fullwiki`` also loads).
        split: Dataset split (the paper used ``validation``, HotpotQA's dev set).
        hf_cache_dir: ``datasets`` cache folder (None: its default, ~/.cache/huggingface).

    Raises:
        DatasetError: The file or dataset is missing or a record lacks a field.
        ConfigError: ``source`` is not one of ``jsonl``, ``hf``.
    """
    if source not in SOURCES:
        raise ConfigError("env.source", source, SOURCES)
    if source == "jsonl":
        if path in (None, ""):
            raise ConfigError("env.path", path, "a JSONL file in the hotpot_qa schema")
        return _load_jsonl(str(Path(str(path)).expanduser().resolve()))
    return _load_hf(hf_path, hf_config, split, hf_cache_dir)


@functools.lru_cache(maxsize=8)
def _load_jsonl(path: str) -> tuple[HotpotRecord, ...]:
    p = Path(path)
    if not p.is_file():
        raise DatasetError(
            f"HotpotQA file not found: {p} (set `env.path`, or `paths.data_dir` / "
            "REFLEXION_BENCH_DATA, or use `env.source=hf` online)"
        )
    records = []
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DatasetError(
            f"{p}: not UTF-8 text (a binary file?); set `env.path` to a JSONL file"
        ) from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{p}:{lineno}: not valid JSON ({exc.msg})") from None
        records.append(_validate(rec, f"{p}:{lineno}"))
    if not records:
        raise DatasetError(f"HotpotQA file {p} holds no records")
    return tuple(records)


@functools.lru_cache(maxsize=4)
def _load_hf(
    hf_path: str, hf_config: str, split: str, cache_dir: str | None
) -> tuple[HotpotRecord, ...]:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - datasets is a core dependency
        raise DatasetError(
            "`env.source=hf` needs the `datasets` package (pip install datasets)"
        ) from exc
    try:
        ds = datasets.load_dataset(hf_path, hf_config, split=split, cache_dir=cache_dir)
    except Exception as exc:
        raise DatasetError(
            f"could not load the Hugging Face dataset {hf_path!r} (config {hf_config!r}, "
            f"split {split!r}): {type(exc).__name__}: {exc}. Offline? Use "
            "`env.source=jsonl env.path=<file in the hotpot_qa schema>` "
            "(the paper's 100 questions: hotpotqa-distractor-100.jsonl)"
        ) from None
    return tuple(
        _validate(dict(row), f"{hf_path}/{hf_config}/{split}[{i}]") for i, row in enumerate(ds)
    )


def _validate(rec: Any, where: str) -> HotpotRecord:
    if not isinstance(rec, dict):
        raise DatasetError(f"{where}: a record must be a JSON object")
    missing = [k for k in REQUIRED_FIELDS if k not in rec]
    if missing:
        raise DatasetError(f"{where}: record lacks {missing} (hotpot_qa schema)")
    ctx = rec["context"]
    if not (
        isinstance(ctx, Mapping)
        and isinstance(ctx.get("title"), list)
        and isinstance(ctx.get("sentences"), list)
        and len(ctx["title"]) == len(ctx["sentences"])
    ):
        raise DatasetError(
            f"{where}: `context` must be {{title: [...], sentences: [[...], ...]}} of equal length"
        )
    return rec


def paragraphs(record: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The record's context paragraphs as (title, sentences) pairs."""
    ctx = record["context"]
    return [
        (str(t), [str(s) for s in ss]) for t, ss in zip(ctx["title"], ctx["sentences"], strict=True)
    ]


def supporting_titles(record: Mapping[str, Any]) -> list[str]:
    """Titles of the gold paragraphs, in first-mention order, without repeats."""
    facts = record.get("supporting_facts") or {}
    return list(dict.fromkeys(str(t) for t in facts.get("title", [])))


def gold_context(record: Mapping[str, Any]) -> str:
    """The gold supporting paragraphs in full, one per block (what ``cot_context`` sees).

    Whole paragraphs rather than only the supporting sentences: a supporting sentence
    often refers back ("He ...") to the paragraph's first sentence.
    """
    by_title = dict(paragraphs(record))
    blocks = []
    for title in supporting_titles(record):
        sents = by_title.get(title)
        if sents:
            blocks.append(f"{title}: {join_sentences(sents)}")
    return "\n\n".join(blocks)


def join_sentences(sentences: Sequence[str]) -> str:
    """Join HotpotQA sentences (which keep their leading spaces) into one clean text."""
    return " ".join(s.strip() for s in sentences if s.strip())


def record_to_task(record: Mapping[str, Any]) -> Task:
    """One HotpotQA record as a :class:`Task` (gold material stays in ``data``)."""
    return Task(
        id=str(record["id"]),
        prompt=str(record["question"]).strip(),
        benchmark=BENCHMARK,
        data={
            "answer": str(record["answer"]),
            "type": record.get("type"),
            "level": record.get("level"),
            "supporting_titles": supporting_titles(record),
            "gold_context": gold_context(record),
        },
    )


class HotpotQAEnvironment:
    """HotpotQA tasks, selected by ``task_ids``, then a seeded ``sample``, then ``limit``.

    Args:
        source: ``jsonl`` (``path``) or ``hf`` (``hf_path`` / ``hf_config`` / ``split``).
        path: Local JSONL file in the hotpot_qa schema.
        hf_path: Hugging Face dataset id (or a local dataset folder) for ``source: hf``.
        hf_config: Dataset configuration; the paper used ``distractor``.
        split: Dataset split; the paper used ``validation``.
        hf_cache_dir: ``datasets`` cache folder (None: its default).
        sample: Draw this many tasks at random (seeded), kept in dataset order.
        seed: Seed of the sample.
        limit: Keep the first N tasks after the other selections.
        task_ids: Keep these ids (in this order).
        memory_window: Ω, the default number of trials memory keeps (paper: 3).
    """

    name = BENCHMARK
    #: No generated code runs: the runner builds no sandbox for this benchmark.
    needs_sandbox = False

    def __init__(
        self,
        source: str = "jsonl",
        path: str | None = None,
        hf_path: str = "hotpotqa/hotpot_qa",
        hf_config: str = "distractor",
        split: str = "validation",
        hf_cache_dir: str | None = None,
        sample: int | None = None,
        seed: int = 0,
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        memory_window: int = 3,
    ) -> None:
        if source not in SOURCES:
            raise ConfigError("env.source", source, SOURCES)
        if sample is not None and sample < 0:
            raise ConfigError("env.sample", sample, "null or an integer >= 0")
        self.source = source
        self.path = path
        self.hf_path = hf_path
        self.hf_config = hf_config
        self.split = split
        self.hf_cache_dir = hf_cache_dir
        self.sample = sample
        self.seed = seed
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.memory_window = memory_window

    def records(self) -> tuple[HotpotRecord, ...]:
        """Every record of the source, before any selection."""
        return load_records(
            self.source, self.path, self.hf_path, self.hf_config, self.split, self.hf_cache_dir
        )

    def load_tasks(self) -> list[Task]:
        tasks = [record_to_task(r) for r in self.records()]
        if self.task_ids:
            tasks = select_tasks(tasks, task_ids=self.task_ids)
        if self.sample is not None and self.sample < len(tasks):
            # Sample positions, then keep dataset order: the same seed gives the same
            # questions in the same order, and `limit` then takes a prefix of the sample.
            picked = sorted(random.Random(self.seed).sample(range(len(tasks)), self.sample))
            tasks = [tasks[i] for i in picked]
        return select_tasks(tasks, limit=self.limit)
