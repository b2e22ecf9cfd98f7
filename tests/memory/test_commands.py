"""The `memory` and `bench memory` sub-commands, through the real CLI entry point."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from reflexion_bench.cli import main
from reflexion_bench.memory.lifelong import ReflectionStore
from tests.memory.conftest import T0, make_ref


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, list[str]]:
    st = ReflectionStore(tmp_path / "s")
    ids = [
        st.add(make_ref("Return 0 for an empty list input.", "t/1")).id,
        st.add(
            make_ref("Return 0 for an empty list input!", "t/2", created=T0 + timedelta(hours=1))
        ).id,
        st.add(
            make_ref("Parse the date with the day first.", "t/3", created=T0 + timedelta(hours=2))
        ).id,
    ]
    st.record_retrievals([ids[2], ids[2], ids[0]], when=T0 + timedelta(days=1))
    st.close()
    return tmp_path / "s", ids


def test_review_lists_most_retrieved_duplicates_and_never_retrieved(
    filled: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, ids = filled
    assert (
        main(["memory", "review", str(store), "--no-dense", "--dup-threshold", "0.8", "--json"])
        == 0
    )
    rev = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rev["most_retrieved"]] == [ids[2], ids[0]]
    assert rev["most_retrieved"][0]["retrieval_count"] == 2
    assert {(p["a"], p["b"]) for p in rev["near_duplicates"]["pairs"]} == {(ids[0], ids[1])}
    assert (
        rev["never_retrieved"]["count"] == 1 and rev["never_retrieved"]["oldest"][0]["id"] == ids[1]
    )


def test_deprecate_then_review_and_files(
    filled: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, ids = filled
    assert (
        main(
            [
                "memory",
                "deprecate",
                ids[1],
                "--reason",
                "duplicate of " + ids[0],
                "--store",
                str(store),
            ]
        )
        == 0
    )
    st = ReflectionStore(store, read_only=True)
    assert st.get(ids[1]).deprecated["reason"] == f"duplicate of {ids[0]}"  # type: ignore[index]
    assert main(["memory", "deprecate", "r-nope", "--reason", "x", "--store", str(store)]) == 2
    assert "no reflection" in capsys.readouterr().err


def test_maintain_is_idempotent_and_reindex(
    filled: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = filled
    now = (T0 + timedelta(days=120)).isoformat()
    assert main(["memory", "maintain", str(store), "--now", now, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert len(first["archived"]) == 3
    assert main(["memory", "maintain", str(store), "--now", now, "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["archived"] == [] and second["checked"] == 3
    (store / "index.sqlite").unlink()
    assert main(["memory", "reindex", str(store)]) == 0
    assert "indexed 3" in capsys.readouterr().out


def test_missing_store_and_run_folder_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "review", str(tmp_path / "none"), "--no-dense"]) == 2
    assert "no reflection store at" in capsys.readouterr().err
    assert main(["memory", "report", str(tmp_path)]) == 2
    assert "no log.jsonl" in capsys.readouterr().err


def test_bench_memory_bm25_prints_latencies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "memory", "--n", "600", "--modes", "bm25", "--queries", "30"]) == 0
    out = json.loads(capsys.readouterr().out)
    m = out["modes"]["bm25"]
    assert out["n"] == 600 and out["store_files"] == 600
    assert 0 < m["p50_ms"] <= m["p95_ms"]
    # 300 topics, 2 reflections each at n=600: chance precision is 2/600; the ceiling 0.4.
    assert 0.05 < m["precision_at_k"] <= 0.4


def test_precision_against_a_labelled_file(
    filled: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, ids = filled
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(
        json.dumps({"query": "empty list input", "relevant": [ids[0], ids[1]]})
        + "\n"
        + json.dumps({"query": "date day first", "relevant": [ids[2]]})
        + "\n"
    )
    assert (
        main(["memory", "precision", str(store), str(labelled), "--mode", "bm25", "--k", "2"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    # Query 1: both relevant in the top 2 (1.0); query 2: one hit only -> 0.5.
    assert out["precision"] == pytest.approx(0.75) and out["queries"] == 2
