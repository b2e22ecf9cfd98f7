"""Fixtures of the lifelong-memory tests: stores, reflections, the real encoder (slow)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reflexion_bench.memory.lifelong import Reflection, ReflectionStore

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def make_ref(text: str, task_id: str = "t/0", **kw: object) -> Reflection:
    kw.setdefault("task_type", "humaneval")
    kw.setdefault("outcome", "failure")
    kw.setdefault("created", T0)
    return Reflection(text=text, task_id=task_id, **kw)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ReflectionStore]:
    st = ReflectionStore(tmp_path / "store")
    yield st
    st.close()


@pytest.fixture(scope="session")
def minilm():  # type: ignore[no-untyped-def]
    """The real PyPI-shipped all-MiniLM-L6-v2 encoder (loaded once; ~10 s)."""
    pytest.importorskip("sentence_transformers")
    from reflexion_bench.memory.lifelong import SentenceTransformerEncoder

    return SentenceTransformerEncoder()
