"""HumanEval and MBPP task loading: real data files, selection, and clear data errors."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.environments.humaneval import HumanEvalEnvironment
from reflexion_bench.environments.mbpp import MBPPEnvironment


def test_humaneval_from_the_package_file(humaneval: dict[str, Task]) -> None:
    assert len(humaneval) == 164
    assert list(humaneval)[:2] == ["HumanEval/0", "HumanEval/1"]
    t = humaneval["HumanEval/0"]
    assert t.data["entry_point"] == "has_close_elements"
    assert t.data["test_call"] == "check(has_close_elements)"  # HumanEval only defines check
    assert "def has_close_elements" in t.prompt and "def check" not in t.prompt
    assert HumanEvalEnvironment.memory_window == 1


def test_humaneval_selection() -> None:
    env = HumanEvalEnvironment(task_ids=["HumanEval/5", "HumanEval/2"], limit=1)
    assert [t.id for t in env.load_tasks()] == ["HumanEval/5"]
    with pytest.raises(DatasetError, match="HumanEval/999"):
        HumanEvalEnvironment(task_ids=["HumanEval/999"]).load_tasks()


def test_a_missing_file_names_the_key_and_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(DatasetError) as err:
        HumanEvalEnvironment(path=str(missing)).load_tasks()
    assert "env.path" in str(err.value) and str(missing) in str(err.value)
    with pytest.raises(DatasetError, match=r"env\.path"):
        MBPPEnvironment(path=str(missing)).load_tasks()


def test_a_broken_problem_file_says_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good = {
        "task_id": "x/0",
        "prompt": "def f():\n",
        "entry_point": "f",
        "test": "def check(c):\n    pass\n",
    }
    bad.write_text(json.dumps(good) + "\n{oops\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:2"):
        HumanEvalEnvironment(path=str(bad)).load_tasks()
    bad.write_text(json.dumps({"task_id": "x/0", "prompt": "def f():\n"}) + "\n")
    with pytest.raises(DatasetError, match="entry_point, test"):
        HumanEvalEnvironment(path=str(bad)).load_tasks()


def test_any_humaneval_schema_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [
        {
            "task_id": "mine/0",
            "prompt": "def inc(x):\n",
            "entry_point": "inc",
            "test": "def check(candidate):\n    assert candidate(1) == 2\n",
        },
        {
            "name": "mine_1",
            "prompt": "def dec(x):\n",
            "entry_point": "dec",
            "test": "def check(candidate):\n    assert candidate(1) == 0\n\ncheck(dec)\n",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = HumanEvalEnvironment(path=str(path), name="mine").load_tasks()
    assert [t.id for t in tasks] == ["mine/0", "mine_1"]
    assert [t.data["test_call"] for t in tasks] == ["check(inc)", ""]
    assert {t.benchmark for t in tasks} == {"mine"}


def test_mbpp_typed_variant(shared_data: Path) -> None:
    env = MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl"))
    tasks = env.load_tasks()
    assert len(tasks) == 397
    assert tasks[0].id == "mbpp_234_volume_cube"
    assert len({t.id for t in tasks}) == 397
    for t in tasks:
        ast.parse(t.prompt)
        ast.parse(t.data["test"])  # every hidden test file parses
        # MultiPL-E test files call their checks themselves: no second call added
        assert t.data["test_call"] == ""
        assert f"check({t.data['entry_point']})" in t.data["test"]
    assert (
        MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl"), limit=3).load_tasks()[2].id
        == tasks[2].id
    )


def test_mbpp_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"env\.source"):
        MBPPEnvironment(source="ftp", path="x")
    with pytest.raises(ConfigError, match=r"env\.path"):
        MBPPEnvironment(source="jsonl", path=None)


def test_mbpp_from_a_hugging_face_dataset_folder(tmp_path: Path) -> None:
    """The `hf` source through the real `datasets` loader, on a local dataset in the
    Hugging Face mbpp schema (the Hub itself is unreachable here)."""
    import datasets

    rows = [
        {
            "task_id": 901,
            "text": "Write a function to double a number.",
            "code": "import math\ndef helper(n):\n    return n\ndef double_it(n):\n    return helper(n) * 2",
            "test_list": ["assert double_it(2) == 4", "assert double_it(0) == 0"],
            "test_setup_code": "",
            "challenge_test_list": [],
        }
    ]
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "test.parquet"))
    env = MBPPEnvironment(source="hf", hf_path=str(tmp_path), hf_config=None, hf_split="test")
    (task,) = env.load_tasks()
    assert task.id == "mbpp_901_double_it"
    assert task.data["entry_point"] == "double_it"  # the function the tests call
    assert "def double_it(n):" in task.prompt and "double a number" in task.prompt
    assert "assert double_it(2) == 4" in task.data["test"] and task.data["test_call"] == ""
    assert "helper" not in task.prompt  # the reference solution stays hidden


def test_mbpp_from_the_hub_offline_fails_clearly(tmp_path: Path) -> None:
    # HF_HUB_OFFLINE makes `datasets` fail at once instead of retrying DNS for ~25 s.
    code = (
        "from reflexion_bench.environments.mbpp import MBPPEnvironment\n"
        "MBPPEnvironment(source='hf').load_tasks()\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode != 0
    assert "DatasetError" in out.stderr and "env.hf_path=mbpp" in out.stderr
    assert "env.source=jsonl" in out.stderr  # says what to do instead
