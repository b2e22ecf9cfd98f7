"""`reflexion-bench evaluate` on LeetcodeHard and the Rust benchmarks (real data,
real sandbox): task ids are the slugs / MultiPL-E names; verdicts per line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.commands.evaluate import evaluate_solutions, main
from tests.components import missing
from tests.leetcode.reference_solutions import CORRECT, WRONG

#: The paper's spelling; the config is configs/env/leetcode_hard.yaml (both work).
LEETCODE = "leetcode-hard"


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cli_leetcode_hard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    rows: list[Any] = [
        {
            "task_id": "check-if-point-is-reachable",
            "solution": CORRECT["check-if-point-is-reachable"],
        },
        {"task_id": "put-marbles-in-bags", "solution": CORRECT["put-marbles-in-bags"]},
        {"task_id": "put-marbles-in-bags", "solution": WRONG["put-marbles-in-bags"]},
        # The published GPT-4 logs hold whole programs, sometimes LeetCode's class form.
        {
            "task_id": "cycle-length-queries-in-a-tree",
            "solution": "class Solution:\n    def cycleLengthQueries(self, n, queries):\n"
            "        return [len(bin(a ^ b)) for a, b in queries]\n",
        },
        {
            "task_id": "minimumVisitedCells",
            "solution": "def f(): pass",
        },  # a function name, not a slug
        "{not json",
    ]
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "r.jsonl"
    rc = main(
        ["--benchmark", LEETCODE, "--samples", str(samples), "--out", str(out), "--jobs", "2"]
    )
    assert rc == 0
    results = read_jsonl(out)
    assert [r["status"] for r in results] == ["pass", "pass", "fail", "fail", "error", "error"]
    assert "unknown task id 'minimumVisitedCells'" in results[4]["detail"]
    assert "ids look like: minimum-reverse-operations" in results[4]["detail"]
    printed = capsys.readouterr().out
    assert "2/6 passed" in printed
    assert "37 of the 40 leetcode_hard tasks have no sample" in printed


def test_library_form_with_fixed_timeout(shared_data: Path) -> None:
    from tests.leetcode.reference_solutions import SLOW

    slug = "count-subarrays-with-fixed-bounds"
    results = evaluate_solutions(
        [{"task_id": slug, "solution": SLOW[slug]}, {"task_id": slug, "solution": CORRECT[slug]}],
        benchmark="leetcode_hard",
        timeout_s=3.0,
    )
    assert [r["status"] for r in results] == ["timeout", "pass"]


@pytest.mark.parametrize(
    ("bench_name", "task_id", "good", "bad"),
    [
        (
            "humaneval-rs",
            "HumanEval_24_largest_divisor",
            # MultiPL-E completion style: the body only, cut before the closing brace.
            {"completion": "    (1..n).rev().find(|d| n % d == 0).unwrap_or(1)"},
            {"solution": "fn largest_divisor(n: isize) -> isize { n as usize }"},
        ),
        (
            "mbpp-rs",
            "mbpp_234_volume_cube",
            {"solution": "fn volume_cube(l: isize) -> isize {\n    l * l * l\n}\n"},
            {"solution": "fn volume_cube(l: isize) -> isize {\n    l * l\n}\n"},
        ),
    ],
)
def test_cli_rust(
    bench_name: str,
    task_id: str,
    good: dict[str, str],
    bad: dict[str, str],
    tmp_path: Path,
    shared_data: Path,
) -> None:
    import shutil

    if shutil.which("rustc") is None:
        missing("rust", "needs rustc (apt-get install rustc)")
    samples = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": task_id, **good}, {"task_id": task_id, **bad}]
    )
    out = tmp_path / "r.jsonl"
    assert main(["--benchmark", bench_name, "--samples", str(samples), "--out", str(out)]) == 0
    results = read_jsonl(out)
    assert results[0]["status"] == "pass", results[0]["detail"]
    assert results[1]["status"] in ("fail", "error")
    if bench_name == "humaneval-rs":
        assert results[1]["status"] == "fail" and "error[E0308]" in results[1]["detail"]
    else:
        assert "panicked" in results[1]["detail"]
