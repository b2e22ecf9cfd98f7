"""Broken visible tests: detected on the real files, left out of the prompt, reported."""

from __future__ import annotations

import ast
import json
import logging
from pathlib import Path

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.leetcode import (
    LeetcodeHardEnvironment,
    PySignature,
    check_python_visible_test,
    check_rust_visible_test_static,
    python_signature,
    rust_signature,
)

SIG = PySignature("f", 2, 2)


@pytest.mark.parametrize(
    ("test", "reason"),
    [
        ("assert f(1, 2) == 3", None),
        ("assert f(1, b=2) == [1, 2]", None),
        ("assert f('a', 'b') == True", None),
        ("assert f(1, 2) == inf", None),  # defined by LeetCode's prelude
        ("assert f(1, 2) == rue", "undefined name `rue`"),
        ("assert f(1, 2) == alse", "undefined name `alse`"),
        ("assert f(1, 2) == false", "undefined name `false`"),
        ("assert f() == 1", "with 0 argument(s); its signature takes 2"),
        ("assert f(3) == 1", "with 1 argument(s); its signature takes 2"),
        ("assert g(1, 2) == 3", "does not call f"),
        ("assert f(1, 2 == 3", "does not parse"),
        ("f(1, 2)", "not a single assert"),
    ],
)
def test_python_detector(test: str, reason: str | None) -> None:
    why = check_python_visible_test(test, SIG)
    if reason is None:
        assert why is None
    else:
        assert why is not None and reason in why


def test_signature_with_defaults() -> None:
    sig = python_signature('def f(a: int, b: int = 2) -> int:\n    """doc"""\n')
    assert (sig.name, sig.required, sig.total) == ("f", 1, 2)
    assert check_python_visible_test("assert f(1) == 3", sig) is None
    assert check_python_visible_test("assert f(1, 2, 3) == 3", sig) is not None


def test_real_python_file_has_eight_broken_problems(
    py_env: LeetcodeHardEnvironment, py_tasks: dict[str, Task], caplog: pytest.LogCaptureFixture
) -> None:
    # The count comes from the detector, compared with the data README's statement.
    assert len(py_env.broken_report) == 8
    assert set(py_env.broken_report) == {
        "subsequence-with-the-minimum-score",
        "check-if-point-is-reachable",
        "count-anagrams",
        "add-edges-to-make-degrees-of-all-nodes-even",
        "count-palindromic-subsequences",
        "number-of-beautiful-partitions",
        "split-message-based-on-limit",
        "maximum-number-of-non-overlapping-palindrome-substrings",
    }
    # Checked by eye against the file: mangled booleans, and dropped string arguments.
    reach = py_env.broken_report["check-if-point-is-reachable"]
    assert {b["test"] for b in reach} == {
        "assert isReachable(6, 9) == false",
        "assert isReachable(4, 7) == rue",
    }
    beautiful = py_env.broken_report["number-of-beautiful-partitions"]
    assert all("2 argument(s); its signature takes 3" in b["reason"] for b in beautiful)
    # The other 32 problems keep every visible test.
    for slug, task in py_tasks.items():
        if slug not in py_env.broken_report:
            assert task.data["n_broken_visible_tests"] == 0
            assert task.data["visible_tests"]
    # Reported per task and in the log.
    assert py_tasks["count-anagrams"].data["n_broken_visible_tests"] == 2
    with caplog.at_level(logging.INFO):
        py_env.load_tasks()
    assert "left out 19 broken visible test(s) in 8 of 40 problem(s)" in caplog.text


def test_broken_tests_never_reach_the_prompt(py_tasks: dict[str, Task]) -> None:
    for task in py_tasks.values():
        for b in task.data["broken_visible_tests"]:
            assert b["test"] not in task.prompt
        for t in task.data["visible_tests"]:
            assert t in task.prompt
        # The stub still parses with examples added to its docstring.
        ast.parse(task.prompt + "    pass\n")


def test_hidden_fields_come_from_the_hidden_file(
    py_tasks: dict[str, Task], shared_data: Path
) -> None:
    hidden = {
        r["task_id"]: r
        for r in map(json.loads, (shared_data / "leetcode-hard-py-40-hidden.jsonl").open())
    }
    assert len(py_tasks) == 40
    for slug, task in py_tasks.items():
        h = hidden[slug]
        assert task.data["entry_point"] == h["entry_point"]  # not the slug of the problem file
        assert task.data["test"] == h["hidden_test"]
        assert task.data["test_call"] == f"check({h['entry_point']})"
        assert task.data["timeout_s"] == h["recommended_timeout_s"]
        assert "def check" not in task.prompt  # hidden material stays in data


def test_missing_file_names_the_key(tmp_path: Path) -> None:
    from reflexion_bench.environments.base import DatasetError

    with pytest.raises(DatasetError, match=r"env\.path"):
        LeetcodeHardEnvironment(tmp_path / "nope.jsonl").load_tasks()


def test_rust_static_detector() -> None:
    sig = rust_signature("// doc\nfn f(s: String, k: i32) -> i32 {\n")
    assert sig.params == (("s", "String"), ("k", "i32"))
    assert check_rust_visible_test_static('assert_eq!(f(String::from("a,b"), 2), 1);', sig) is None
    why = check_rust_visible_test_static("assert_eq!(f(3), 1);", sig)
    assert why is not None and "1 argument(s)" in why


@pytest.mark.requires("rust")
def test_real_rust_file_type_checked_with_rustc(shared_data: Path) -> None:
    from reflexion_bench.environments.code_rust import RustLanguage

    env = LeetcodeHardEnvironment(
        shared_data / "leetcode-hard-rs-40.jsonl",
        shared_data / "leetcode-hard-py-40-hidden.jsonl",
        language=RustLanguage(),
    )
    tasks = {t.id: t for t in env.load_tasks()}
    report = env.broken_report
    # Dropped arguments, found without a compiler (the same 7 problems as in Python
    # minus the boolean ones, which the Rust file spells correctly)...
    assert "number-of-beautiful-partitions" in report
    assert "check-if-point-is-reachable" not in report
    # ...and arrays/tuples where the signature takes Vec<Vec<i32>>, found by rustc.
    edges = report["add-edges-to-make-degrees-of-all-nodes-even"]
    assert all(
        "does not compile" in b["reason"] and "mismatched types" in b["reason"] for b in edges
    )
    assert "vec![[1,2],[2,3]" in edges[0]["test"]
    assert tasks["add-edges-to-make-degrees-of-all-nodes-even"].data["visible_tests"] == []
    # A valid Rust test survives.
    assert tasks["minimum-reverse-operations"].data["n_broken_visible_tests"] == 0
    assert len(report) == 15
    assert sum(len(v) for v in report.values()) == 35
