"""`evaluate` on samples files that repeat task ids (pass@k: several samples per task):
one result row per input line, in input order; a note on stderr naming the repeated
ids; the samples and passes of every task after the totals."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.commands.evaluate import (
    Benchmark,
    duplicate_note,
    main,
    per_task_counts,
    per_task_line,
    read_samples,
    sample_counts,
    score_samples,
)
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score, Task
from reflexion_bench.environments.code_python import PythonLanguage


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --------------------------------------------------------------------------- counting


def test_counts_and_note_on_a_file_with_repeats_and_bad_lines(tmp_path: Path) -> None:
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"task_id": "T/1", "solution": "a"},
            {"task_id": "T/0", "solution": "b"},
            '{"task_id": "T/1", "solution": ',  # cut JSON: no task id to count
            {"task_id": "T/1", "completion": "c"},
            {"task_id": "T/0", "solution": "d"},
            {"task_id": "T/2", "solution": "e"},
            {"solution": "no id"},
            {"task_id": "T/1", "solution": "f"},
        ],
    )
    counts = sample_counts(read_samples(samples))
    assert list(counts.items()) == [("T/1", 3), ("T/0", 2), ("T/2", 1)]  # first-seen order
    note = duplicate_note(counts)
    assert note == (
        "note: 2 task ids appear more than once (pass@k samples?): T/1 x3, T/0 x2; "
        "each sample is judged independently"
    )


def test_no_note_without_repeats_and_a_capped_list_with_many() -> None:
    assert duplicate_note({"a": 1, "b": 1}) is None
    assert duplicate_note({}) is None
    many = {f"HumanEval/{i}": 12 for i in range(8)}
    note = duplicate_note(many)
    assert note is not None
    assert note.startswith("note: 8 task ids appear more than once (pass@k samples?): ")
    assert "HumanEval/4 x12, ... and 3 more;" in note and "HumanEval/5 " not in note


def test_per_task_counts_count_every_row_and_its_pass() -> None:
    rows = [
        {"task_id": "A", "passed": True},
        {"task_id": None, "passed": False},  # a line that named no task
        {"task_id": "B", "passed": False},
        {"task_id": "A", "passed": False},
        {"task_id": "A", "passed": True},
    ]
    counts = per_task_counts(rows)
    assert counts == {"A": (3, 2), "B": (1, 0)}
    assert per_task_line(counts) == "samples per task (passed/samples): A 2/3, B 0/1"


# --------------------------------------------------------------------------- order, no sandbox


class _EchoScorer:
    """Passes a program iff it is ``ok``, after a random delay (so that rows finish in
    another order than they started); the detail echoes the program."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        await asyncio.sleep(self.rng.uniform(0, 0.02))
        ok = attempt.candidate.strip().endswith("ok")
        return Score(
            passed=ok, status="pass" if ok else "fail", value=float(ok), detail=attempt.candidate
        )


async def test_one_row_per_line_in_input_order_with_repeats_and_shuffling() -> None:
    lang = PythonLanguage()
    tasks = {
        f"T/{i}": Task(
            id=f"T/{i}",
            prompt=f"def f{i}():\n",
            benchmark="toy",
            data={"language": lang, "entry_point": f"f{i}"},
        )
        for i in range(3)
    }
    rng = random.Random(7)
    lines: list[dict[str, Any]] = []
    for i in range(3):
        for j in range(6):  # six samples per task, every second one passing
            verdict = "ok" if j % 2 == 0 else "no"
            lines.append({"task_id": f"T/{i}", "completion": f"    pass  # {i}-{j} {verdict}"})
    lines.insert(5, {"task_id": "T/9", "completion": "x"})  # unknown id: its own error row
    rng.shuffle(lines)
    bench = Benchmark(name="toy", tasks=tasks, scorer=_EchoScorer(3), sandbox=None)  # type: ignore[arg-type]
    results = await score_samples(lines, bench)
    assert len(results) == len(lines)
    for line, row in zip(lines, results, strict=True):
        assert row["task_id"] == line["task_id"]
        if line["task_id"] == "T/9":
            assert row["status"] == "error"
            continue
        assert row["detail"].endswith(line["completion"])  # this line's program, not another's
        assert row["passed"] is line["completion"].endswith("ok")
    assert per_task_counts(results) == {"T/0": (6, 3), "T/1": (6, 3), "T/2": (6, 3), "T/9": (1, 0)}


# --------------------------------------------------------------------------- end to end


def test_cli_with_pass_at_k_samples_on_the_real_sandbox(
    tmp_path: Path, humaneval: dict[str, Task], capsys: pytest.CaptureFixture[str]
) -> None:
    t0, t2 = humaneval["HumanEval/0"], humaneval["HumanEval/2"]
    right0 = {"task_id": t0.id, "completion": t0.data["canonical_solution"]}
    wrong0 = {"task_id": t0.id, "completion": "    return False\n"}
    right2 = {"task_id": t2.id, "completion": t2.data["canonical_solution"]}
    wrong2 = {"task_id": t2.id, "completion": "    return int(number)\n"}
    lines = [right0] * 3 + [wrong0] * 2 + [right2] + [wrong2] * 3
    random.Random(11).shuffle(lines)
    lines.append({"task_id": "HumanEval/7777", "completion": "x"})  # unknown, unique
    expected = [line is right0 or line is right2 for line in lines]
    samples = write_jsonl(tmp_path / "s.jsonl", lines)
    out = tmp_path / "r.jsonl"
    argv = ["--benchmark", "humaneval", "--samples", str(samples), "--out", str(out)]
    assert main([*argv, "--jobs", "2"]) == 0
    results = read_jsonl(out)
    assert len(results) == len(lines)
    assert [r["task_id"] for r in results] == [line["task_id"] for line in lines]
    assert [r["passed"] for r in results] == expected
    assert [r["status"] for r in results] == [
        "error" if line["task_id"] == "HumanEval/7777" else ("pass" if ok else "fail")
        for line, ok in zip(lines, expected, strict=True)
    ]
    assert all({"passed", "status", "detail"} <= set(r) for r in results)
    captured = capsys.readouterr()
    assert "note: 2 task ids appear more than once (pass@k samples?): " in captured.err
    assert "HumanEval/0 x5" in captured.err and "HumanEval/2 x4" in captured.err
    assert "HumanEval/7777 x" not in captured.err
    assert "4/10 passed" in captured.out
    line = next(x for x in captured.out.splitlines() if x.startswith("samples per task"))
    assert "HumanEval/0 3/5" in line and "HumanEval/2 1/4" in line
    assert "HumanEval/7777 0/1" in line


def test_cli_without_repeats_prints_no_note(
    tmp_path: Path, humaneval: dict[str, Task], capsys: pytest.CaptureFixture[str]
) -> None:
    t0 = humaneval["HumanEval/0"]
    samples = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": t0.id, "completion": t0.data["canonical_solution"]}]
    )
    assert main(["--benchmark", "humaneval", "--samples", str(samples)]) == 0
    captured = capsys.readouterr()
    assert "appear more than once" not in captured.err
    assert "samples per task" not in captured.out and "1/1 passed" in captured.out
