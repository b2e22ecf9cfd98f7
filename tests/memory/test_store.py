"""The reflection store: files are the truth, the index is rebuildable."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from reflexion_bench.memory.lifelong import (
    ReadOnlyStoreError,
    Reflection,
    ReflectionStore,
    StoreFormatError,
)
from tests.memory.conftest import T0, make_ref


def test_round_trip_file_and_fields(store: ReflectionStore) -> None:
    ref = make_ref(
        "Return 0 for an empty list.\n\nCheck `len(xs)` before indexing.",
        task_id="HumanEval/3",
        failure_signature="IndexError: list index out of range",
        task_excerpt="def f(xs):\n    ```not a fence```\n    pass",
        tags=["humaneval", "edge-case"],
        fields={"Rule": "check empty input"},
        quality={
            "specificity": 0.75,
            "actionability": 1.0,
            "transferability": 0.5,
            "accuracy": 1.0,
        },
        deprecated=None,
    )
    store.add(ref)
    path = store.path_of(ref.id)
    # Dated folder layout: reflections/YYYY/MM/DD/<id>.md
    assert path.relative_to(store.files_dir).parts[:3] == ("2025", "01", "01")
    text = path.read_text()
    assert text.startswith("---\n") and "task_type: humaneval" in text
    assert "retrieval_count: 0" in text and "source_agent: default" in text
    back = store.get(ref.id)
    assert back == ref
    assert Reflection.from_markdown(ref.to_markdown()) == ref


def test_delete_index_and_rebuild_gives_same_state(tmp_path: Path) -> None:
    st = ReflectionStore(tmp_path / "s")
    for i in range(12):
        st.add(make_ref(f"lesson number {i}", task_id=f"t/{i}", created=T0 + timedelta(hours=i)))
    st.record_retrievals([st.all()[3].id], when=T0 + timedelta(days=1))
    st.deprecate(st.all()[5].id, "wrong advice")
    before = st.snapshot()
    rows_before = [(r["id"], r["deprecated"]) for r in st.index_rows()]
    st.close()
    (tmp_path / "s" / "index.sqlite").unlink()
    st2 = ReflectionStore(tmp_path / "s")
    assert st2.snapshot() == before
    assert sorted(rows_before) == sorted((r["id"], r["deprecated"]) for r in st2.index_rows())
    assert st2.get(st2.all()[0].id).text.startswith("lesson number")
    st2.close()


def test_hand_edited_file_shows_after_reindex(store: ReflectionStore) -> None:
    ref = store.add(make_ref("original lesson"))
    path = store.path_of(ref.id)
    path.write_text(path.read_text().replace("original lesson", "edited lesson"))
    assert store.all()[0].text == "original lesson"  # the index is stale until rebuilt
    assert store.rebuild_index() == 1
    assert store.all()[0].text == "edited lesson"


def test_adding_same_reflection_twice_is_a_noop(store: ReflectionStore) -> None:
    ref = make_ref("same")
    store.add(ref)
    store.add(make_ref("same"))
    assert len(store) == 1


def test_broken_file_is_named_in_the_error(tmp_path: Path) -> None:
    st = ReflectionStore(tmp_path / "s")
    ref = st.add(make_ref("fine"))
    st.path_of(ref.id).write_text("---\ntask_type: x\n---\nno closing fields")
    with pytest.raises(StoreFormatError, match=ref.id):
        st.rebuild_index()


def test_read_only_store_refuses_every_write(tmp_path: Path) -> None:
    owner = ReflectionStore(tmp_path / "other")
    ref = owner.add(make_ref("other agent's lesson"))
    files_before = {p: p.read_bytes() for p in (tmp_path / "other").rglob("*.md")}
    ro = ReflectionStore(tmp_path / "other", read_only=True)
    assert ro.get(ref.id).text == "other agent's lesson"
    with pytest.raises(ReadOnlyStoreError):
        ro.add(make_ref("intruder"))
    with pytest.raises(ReadOnlyStoreError):
        ro.deprecate(ref.id, "nope")
    with pytest.raises(ReadOnlyStoreError):
        ro.record_retrievals([ref.id])
    with pytest.raises(ReadOnlyStoreError):
        ro.rebuild_index()
    assert {p: p.read_bytes() for p in (tmp_path / "other").rglob("*.md")} == files_before


def test_read_only_store_without_index_builds_it_in_memory(tmp_path: Path) -> None:
    owner = ReflectionStore(tmp_path / "o")
    owner.add(make_ref("a lesson"))
    owner.close()
    (tmp_path / "o" / "index.sqlite").unlink()
    for p in (tmp_path / "o").glob("index.sqlite*"):
        p.unlink()
    ro = ReflectionStore(tmp_path / "o", read_only=True)
    assert len(ro) == 1
    assert not (tmp_path / "o" / "index.sqlite").exists()


def test_deprecation_needs_a_reason(store: ReflectionStore) -> None:
    ref = store.add(make_ref("x"))
    with pytest.raises(ValueError, match="reason"):
        store.deprecate(ref.id, "  ")
    done = store.deprecate(ref.id, "superseded")
    assert done.deprecated is not None and done.deprecated["reason"] == "superseded"
    assert "reason: superseded" in store.path_of(ref.id).read_text()


def test_bad_outcome_is_rejected() -> None:
    with pytest.raises(StoreFormatError, match="outcome"):
        make_ref("x", outcome="meh")
