"""MultiPL-E environments on the real Rust files (and the `datasets` code path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.environments.multiple import MultiPLEEnvironment

LANG = RustLanguage()


@pytest.mark.parametrize(
    ("file", "count"),
    [("humaneval-rs.jsonl", 156), ("humaneval-rs-hardest50.jsonl", 50), ("mbpp-rs.jsonl", 354)],
)
def test_real_files_load(file: str, count: int, shared_data: Path) -> None:
    tasks = MultiPLEEnvironment(LANG, path=str(shared_data / file)).load_tasks()
    assert len(tasks) == count
    ids = [t.id for t in tasks]
    assert len(set(ids)) == count
    for t in tasks:
        assert t.data["language"] is LANG
        assert f"fn {t.data['entry_point']}" in t.prompt
        assert "fn main()" in t.data["test"] and "fn main()" not in t.prompt
        assert t.data["test_call"] == ""  # the Rust test file runs itself
        # MBPP-rs tests open with the `}` closing a completion's body: dropped, since
        # programs here are whole functions.
        assert t.data["test"].lstrip().startswith("fn main()")


def test_hardest50_is_a_subset_of_humaneval_rs(shared_data: Path) -> None:
    full = {
        t.id
        for t in MultiPLEEnvironment(
            LANG, path=str(shared_data / "humaneval-rs.jsonl")
        ).load_tasks()
    }
    hard = MultiPLEEnvironment(
        LANG, path=str(shared_data / "humaneval-rs-hardest50.jsonl")
    ).load_tasks()
    assert {t.id for t in hard} <= full


def test_selection_and_timeout(shared_data: Path) -> None:
    env = MultiPLEEnvironment(
        LANG,
        path=str(shared_data / "mbpp-rs.jsonl"),
        task_ids=["mbpp_89_closest_num", "mbpp_234_volume_cube"],
        timeout_s=3.0,
    )
    tasks = env.load_tasks()
    assert [t.id for t in tasks] == ["mbpp_89_closest_num", "mbpp_234_volume_cube"]
    assert all(t.data["timeout_s"] == 3.0 for t in tasks)
    with pytest.raises(DatasetError, match="mbpp_9999"):
        MultiPLEEnvironment(
            LANG, path=str(shared_data / "mbpp-rs.jsonl"), task_ids=["mbpp_9999"]
        ).load_tasks()


def test_language_mismatch_is_an_error(shared_data: Path) -> None:
    with pytest.raises(DatasetError, match=r"language 'rs'.*runs python"):
        MultiPLEEnvironment(
            PythonLanguage(), path=str(shared_data / "humaneval-rs.jsonl")
        ).load_tasks()


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"env\.source"):
        MultiPLEEnvironment(LANG, source="web", path="x")
    with pytest.raises(ConfigError, match=r"env\.path"):
        MultiPLEEnvironment(LANG, source="jsonl", path=None)
    with pytest.raises(DatasetError, match=r"env\.path"):
        MultiPLEEnvironment(LANG, path="/nonexistent/humaneval-rs.jsonl").load_tasks()


def test_hf_source_through_datasets(shared_data: Path, tmp_path: Path) -> None:
    """The `datasets` path, offline: the `json` builder on a local copy in tmp."""
    pytest.importorskip("datasets")
    src = tmp_path / "he.jsonl"
    lines = (shared_data / "humaneval-rs.jsonl").read_text().splitlines()[:3]
    src.write_text("\n".join(lines) + "\n")
    env = MultiPLEEnvironment(
        LANG,
        source="hf",
        hf_path="json",
        hf_config=None,
        hf_split="train",
        hf_data_files=str(src),
        hf_cache_dir=str(tmp_path / "hf"),
    )
    tasks = env.load_tasks()
    assert [t.id for t in tasks] == [json.loads(line)["name"] for line in lines]
    # A dataset that cannot load names the keys to fix.
    bad = MultiPLEEnvironment(
        LANG,
        source="hf",
        hf_path=str(tmp_path / "missing"),
        hf_config="humaneval-rs",
        hf_cache_dir=str(tmp_path / "hf"),
    )
    with pytest.raises(DatasetError, match=r"env\.hf_path"):
        bad.load_tasks()
