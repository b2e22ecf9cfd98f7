"""Retrieval: the planted relevant reflection beats the distractors in every mode."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.memory.lifelong import (
    ReflectionStore,
    RetrievalConfig,
    Retriever,
    run_maintenance,
)
from tests.memory.conftest import T0, make_ref

PLANTED = (
    "When the input list is empty, return 0 before indexing the first element; "
    "the empty list made max() raise ValueError."
)
DISTRACTORS = [
    "Strip trailing whitespace from each line before comparing strings.",
    "Use integer division // when the result must be a whole number of minutes.",
    "Sort the dictionary items by value in descending order, then by key.",
    "The recursion needs a base case for n == 1 or it never terminates.",
    "Parse the date with the day first; the month and day were swapped.",
    "Convert the number to binary with bin() and drop the 0b prefix.",
    "Count vowels case-insensitively: lower() the word first.",
    "A palindrome check must ignore punctuation and spaces.",
    "Merge overlapping intervals after sorting them by their start.",
    "Fibonacci numbers grow fast: iterate instead of recursing without memo.",
]
QUERY = (
    "def largest(xs: list[int]) -> int:\n"
    '    """Return the largest number of the list xs; an empty list gives 0."""'
)


def _fill(store: ReflectionStore) -> str:
    planted = store.add(make_ref(PLANTED, "HumanEval/35"))
    for i, text in enumerate(DISTRACTORS):
        store.add(make_ref(text, f"MBPP/{i}", created=T0 + timedelta(minutes=i + 1)))
    return planted.id


def test_bm25_ranks_planted_first(store: ReflectionStore) -> None:
    pid = _fill(store)
    hits = Retriever([store], RetrievalConfig(mode="bm25", k=3)).search(QUERY)
    assert hits and hits[0].id == pid
    assert hits[0].parts["bm25"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_dense_and_hybrid_rank_planted_first(store: ReflectionStore, minilm, mode: str) -> None:  # type: ignore[no-untyped-def]
    pid = _fill(store)
    r = Retriever([store], RetrievalConfig(mode=mode, k=3), minilm)
    hits = r.search(QUERY)
    assert hits[0].id == pid
    assert hits[0].score > hits[1].score
    # The stored vectors are cached in the index: a second retriever embeds nothing.
    r2 = Retriever([store], RetrievalConfig(mode=mode, k=3), minilm)
    r2.refresh()
    assert r2.last_embedded == 0
    assert r2.search(QUERY)[0].id == pid


@pytest.mark.slow
def test_weighted_fusion_and_mmr(store: ReflectionStore, minilm) -> None:  # type: ignore[no-untyped-def]
    pid = _fill(store)
    dup = store.add(make_ref(PLANTED + " ", "HumanEval/99", created=T0 + timedelta(hours=5)))
    cfg = RetrievalConfig(mode="hybrid", fusion="weighted", k=2)
    top = Retriever([store], cfg, minilm).search(QUERY)
    assert {h.id for h in top} == {pid, dup.id}  # the two near-identical lessons
    cfg_mmr = RetrievalConfig(mode="hybrid", fusion="weighted", k=2, mmr_lambda=0.3)
    diverse = Retriever([store], cfg_mmr, minilm).search(QUERY)
    assert diverse[0].id in {pid, dup.id}
    assert diverse[1].id not in {pid, dup.id}  # MMR skips the near-duplicate


def test_salience_multipliers_reorder(store: ReflectionStore) -> None:
    a = store.add(make_ref("empty list return zero guard", "t/a", created=T0))
    b = store.add(
        make_ref("empty list return zero guard please", "t/b", created=T0 + timedelta(days=50))
    )
    r = Retriever([store], RetrievalConfig(mode="bm25", k=2))
    first = r.search("empty list return zero")[0].id
    other = b.id if first == a.id else a.id
    # Archive the winner (old & idle): x0.3 drops it below the other one.
    winner = store.get(first)
    winner.archived = True
    store.update([winner])
    hits = r.search("empty list return zero")
    assert [h.id for h in hits] == [other, first]
    assert hits[1].parts["salience"] == pytest.approx(0.3)
    # Promotion (x1.5) of the archived one brings it back on top.
    for d in range(5):
        store.record_retrievals([first], when=T0 + timedelta(days=100 + d))
    run_maintenance(store, now=T0 + timedelta(days=105))
    hits = r.search("empty list return zero")
    assert hits[0].id == first and hits[0].parts["salience"] == pytest.approx(1.5)


def test_deprecated_and_same_task_are_never_returned(store: ReflectionStore) -> None:
    pid = _fill(store)
    r = Retriever([store], RetrievalConfig(mode="bm25", k=5))
    assert pid not in [h.id for h in r.search(QUERY, exclude_task_id="HumanEval/35")]
    store.deprecate(pid, "misleading")
    assert pid not in [h.id for h in r.search(QUERY)]


def test_cross_agent_retrieval_reads_other_store(tmp_path) -> None:  # type: ignore[no-untyped-def]
    own = ReflectionStore(tmp_path / "a", agent="a")
    other = ReflectionStore(tmp_path / "b", agent="b")
    theirs = other.add(make_ref(PLANTED, "HumanEval/35", source_agent="b"))
    other.close()
    shared = ReflectionStore(tmp_path / "b", read_only=True)
    hits = Retriever([own, shared], RetrievalConfig(mode="bm25")).search(QUERY)
    assert hits[0].id == theirs.id and hits[0].agent == "b"


def test_rerank_without_cross_encoder_fails_at_start(store: ReflectionStore) -> None:
    with pytest.raises(ConfigError, match="cross-encoder"):
        Retriever([store], RetrievalConfig(mode="hybrid_rerank"), encoder=object())  # type: ignore[arg-type]


def test_bad_mode_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"memory\.retrieval\.mode"):
        RetrievalConfig(mode="cosine")
    with pytest.raises(ConfigError, match=r"memory\.encoder"):
        Retriever([], RetrievalConfig(mode="dense"))


class WordHashEncoder:
    """A tiny bag-of-words encoder (test double at the model boundary)."""

    name = "test:wordhash"

    def encode(self, texts):  # type: ignore[no-untyped-def]
        import zlib

        import numpy as np

        from reflexion_bench.memory.lifelong.retrieval import tokenize

        out = np.zeros((len(texts), 4096), dtype=np.float32)
        for i, toks in enumerate(tokenize(list(texts))):
            for t in toks:
                out[i, zlib.crc32(t.encode()) % 4096] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class PreferReranker:
    """Scores 1.0 for documents containing a marker word, else 0.1 (test double)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def score(self, query: str, docs):  # type: ignore[no-untyped-def]
        import numpy as np

        return np.asarray([1.0 if self.marker in d else 0.1 for d in docs], dtype=np.float32)


def test_hybrid_rerank_reorders_candidates_and_keeps_salience(store: ReflectionStore) -> None:
    pid = _fill(store)
    cfg = RetrievalConfig(mode="hybrid_rerank", k=3)
    r = Retriever([store], cfg, WordHashEncoder(), reranker=PreferReranker("palindrome"))  # type: ignore[arg-type]
    hits = r.search(QUERY)
    # The reranker's favourite is among the fused candidates and now comes first.
    assert "palindrome" in hits[0].text and hits[0].parts["rerank"] == 1.0
    assert pid in [
        h.id
        for h in Retriever([store], RetrievalConfig(mode="hybrid"), WordHashEncoder()).search(QUERY)
    ]


def test_min_similarity_gates_unrelated_reflections(store: ReflectionStore) -> None:
    pid = _fill(store)
    gated = RetrievalConfig(mode="hybrid", k=3, min_similarity=0.5)
    r = Retriever([store], gated, WordHashEncoder())
    assert [h.id for h in r.search(PLANTED)] == [pid]  # only the one that really matches
    assert r.search("zebra quantum saxophone") == []
    ungated = Retriever([store], RetrievalConfig(mode="hybrid", k=3), WordHashEncoder())
    assert len(ungated.search("zebra quantum saxophone")) == 3  # fusion alone returns k


def test_lessons_shown_drop_code_and_are_short() -> None:
    from reflexion_bench.memory.lifelong.memory import lesson_text

    text = "Sort first.\n\nHere is the code:\n```python\ndef f(x):\n    return x\n```\nThen return."
    assert lesson_text(text) == "Sort first. Here is the code: (code omitted) Then return."
    assert lesson_text("```python\nunclosed") == "(code omitted)"
    assert len(lesson_text("word " * 500, 100)) == 100
