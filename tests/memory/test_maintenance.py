"""Decay and promotion on an injected clock; idempotent."""

from __future__ import annotations

from datetime import timedelta

from reflexion_bench.memory.lifelong import DecayPolicy, ReflectionStore, run_maintenance
from tests.memory.conftest import T0, make_ref


def _files(store: ReflectionStore) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in store.files_dir.rglob("*.md")}


def test_archive_promote_and_idempotence(store: ReflectionStore) -> None:
    now = T0 + timedelta(days=200)
    old_idle = store.add(make_ref("old, never retrieved", "t/1", created=T0))
    old_used = store.add(make_ref("old, retrieved 10 days ago", "t/2", created=T0))
    young = store.add(make_ref("young", "t/3", created=now - timedelta(days=20)))
    hot = store.add(make_ref("retrieved often lately", "t/4", created=T0))
    lapsed = store.add(
        make_ref("retrieved often but not this week", "t/5", created=now - timedelta(days=40))
    )
    store.record_retrievals([old_used.id], when=now - timedelta(days=10))
    for d in (1, 3, 6, 12, 20):
        store.record_retrievals([hot.id], when=now - timedelta(days=d))
    for d in (8, 9, 10, 11, 12):
        store.record_retrievals([lapsed.id], when=now - timedelta(days=d))

    rep = run_maintenance(store, DecayPolicy(), now)
    assert rep.archived == [old_idle.id]
    assert rep.promoted == [hot.id]
    state = {r.id: (r.archived, r.promoted) for r in store.all()}
    assert state[old_idle.id] == (True, False)
    assert state[old_used.id] == (False, False)
    assert state[young.id] == (False, False)
    assert state[hot.id] == (False, True)
    assert state[lapsed.id] == (False, False)  # 5 in 30 days, but none in the last 7
    assert store.get(old_idle.id).archived  # written to the file, not only the index

    files = _files(store)
    gen = store.generation()
    again = run_maintenance(store, DecayPolicy(), now)
    assert again.changed == 0
    assert _files(store) == files
    assert store.generation() == gen  # nothing rewritten, index untouched


def test_thresholds_are_config(store: ReflectionStore) -> None:
    ref = store.add(make_ref("a", created=T0))
    rep = run_maintenance(
        store, DecayPolicy(archive_after_days=5, archive_idle_days=1), T0 + timedelta(days=6)
    )
    assert rep.archived == [ref.id]


def test_retrieval_reactivates_an_archived_reflection(store: ReflectionStore) -> None:
    ref = store.add(make_ref("a", created=T0))
    later = T0 + timedelta(days=100)
    run_maintenance(store, now=later)
    assert store.get(ref.id).archived
    store.record_retrievals([ref.id], when=later + timedelta(days=1))
    rep = run_maintenance(store, now=later + timedelta(days=2))
    assert rep.unarchived == [ref.id]
    assert not store.get(ref.id).archived


def test_deprecation_is_never_touched_by_maintenance(store: ReflectionStore) -> None:
    ref = store.add(make_ref("a", created=T0))
    store.deprecate(ref.id, "bad")
    run_maintenance(store, now=T0 + timedelta(days=365))
    assert store.get(ref.id).deprecated is not None
