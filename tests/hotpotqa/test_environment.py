"""Loading HotpotQA: the shared JSONL file, selection, errors, and the `datasets` code path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.environments.hotpotqa import (
    HotpotQAEnvironment,
    gold_context,
    load_records,
    supporting_titles,
)


@pytest.fixture(scope="module")
def hotpot_file(shared_data: Path) -> Path:
    return shared_data / "hotpotqa-distractor-100.jsonl"


def _raw(path: Path) -> list[dict[str, object]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def test_loads_the_papers_100_questions(hotpot_file: Path) -> None:
    env = HotpotQAEnvironment(path=str(hotpot_file))
    tasks = env.load_tasks()
    raw = _raw(hotpot_file)
    assert [t.id for t in tasks] == [r["id"] for r in raw]
    t, r = tasks[0], raw[0]
    assert t.prompt == str(r["question"]).strip()
    assert t.benchmark == "hotpotqa"
    assert t.data["answer"] == r["answer"]
    assert (t.data["type"], t.data["level"]) == (r["type"], r["level"])
    assert env.memory_window == 3


def test_gold_context_holds_the_supporting_paragraphs_only(hotpot_file: Path) -> None:
    rec = load_records("jsonl", hotpot_file)[0]
    titles = supporting_titles(rec)
    assert titles == ["VIVA Media", "Gesellschaft mit beschränkter Haftung"]
    ctx = gold_context(rec)
    blocks = ctx.split("\n\n")
    assert [b.split(":", 1)[0] for b in blocks] == titles
    assert "Constantin Medien" not in ctx  # a distractor paragraph
    assert "  " not in ctx  # sentences joined cleanly


def test_selection_task_ids_sample_limit(hotpot_file: Path) -> None:
    all_ids = [t.id for t in HotpotQAEnvironment(path=str(hotpot_file)).load_tasks()]
    picked = [all_ids[7], all_ids[2]]
    env = HotpotQAEnvironment(path=str(hotpot_file), task_ids=picked)
    assert [t.id for t in env.load_tasks()] == picked

    s1 = [t.id for t in HotpotQAEnvironment(path=str(hotpot_file), sample=10, seed=1).load_tasks()]
    s1b = [t.id for t in HotpotQAEnvironment(path=str(hotpot_file), sample=10, seed=1).load_tasks()]
    s2 = [t.id for t in HotpotQAEnvironment(path=str(hotpot_file), sample=10, seed=2).load_tasks()]
    assert s1 == s1b and len(s1) == 10 and len(set(s1)) == 10
    assert s1 != s2
    assert s1 == [i for i in all_ids if i in set(s1)]  # dataset order kept
    limited = HotpotQAEnvironment(path=str(hotpot_file), sample=10, seed=1, limit=3).load_tasks()
    assert [t.id for t in limited] == s1[:3]
    assert len(HotpotQAEnvironment(path=str(hotpot_file), sample=1000).load_tasks()) == 100


def test_unknown_task_id_is_named(hotpot_file: Path) -> None:
    with pytest.raises(DatasetError, match="nope"):
        HotpotQAEnvironment(path=str(hotpot_file), task_ids=["nope"]).load_tasks()


def test_bad_inputs_name_what_to_fix(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"not found.*env.path"):
        HotpotQAEnvironment(path=str(tmp_path / "missing.jsonl")).load_tasks()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: not valid JSON"):
        HotpotQAEnvironment(path=str(bad)).load_tasks()
    short = tmp_path / "short.jsonl"
    short.write_text('{"id": "a", "question": "q"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"lacks \['answer', 'context'\]"):
        HotpotQAEnvironment(path=str(short)).load_tasks()
    with pytest.raises(ConfigError, match=r"env\.source"):
        HotpotQAEnvironment(source="csv")
    with pytest.raises(ConfigError, match=r"env\.path"):
        HotpotQAEnvironment(source="jsonl", path=None).load_tasks()
    with pytest.raises(ConfigError, match=r"env\.sample"):
        HotpotQAEnvironment(sample=-1)


def _write_hub_layout(root: Path, rows: list[dict[str, object]]) -> None:
    """A local copy of the hub repository's layout: README configs + parquet per split."""
    import datasets

    (root / "distractor").mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(
        str(root / "distractor" / "validation-00000-of-00001.parquet")
    )
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: distractor\n  data_files:\n"
        "  - split: validation\n    path: distractor/validation-*\n---\n",
        encoding="utf-8",
    )


def test_hf_source_through_datasets(hotpot_file: Path, tmp_path: Path) -> None:
    rows = _raw(hotpot_file)[:5]
    repo = tmp_path / "hotpot_qa"
    _write_hub_layout(repo, rows)
    env = HotpotQAEnvironment(
        source="hf",
        hf_path=str(repo),
        hf_config="distractor",
        split="validation",
        hf_cache_dir=str(tmp_path / "hf-cache"),
    )
    tasks = env.load_tasks()
    assert [t.id for t in tasks] == [r["id"] for r in rows]
    jsonl_tasks = HotpotQAEnvironment(path=str(hotpot_file), limit=5).load_tasks()
    assert [t.data for t in tasks] == [t.data for t in jsonl_tasks]  # same schema, same tasks


def test_hf_source_unavailable_gives_the_offline_hint(tmp_path: Path) -> None:
    env = HotpotQAEnvironment(
        source="hf", hf_path=str(tmp_path / "no-such-dataset"), hf_cache_dir=str(tmp_path / "c")
    )
    with pytest.raises(
        DatasetError, match=r"could not load the Hugging Face dataset.*env.source=jsonl"
    ):
        env.load_tasks()
