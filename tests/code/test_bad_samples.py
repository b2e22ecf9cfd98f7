"""`evaluate` on bad input (issue 14, item 8): a samples file with Latin-1 or binary
lines still scores its valid lines; a binary `--data` file is one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.commands.evaluate import main
from reflexion_bench.core.types import Task

GARBAGE = bytes([0xFF, 0xFE, 0x00, 0x9C, 0xC3, 0x28, 0xA0]) * 30  # not UTF-8, no newline


def test_latin1_and_binary_lines_are_errors_and_valid_lines_are_scored(
    tmp_path: Path, humaneval: dict[str, Task], capsys: pytest.CaptureFixture[str]
) -> None:
    t0, t2 = humaneval["HumanEval/0"], humaneval["HumanEval/2"]
    good0 = {"task_id": t0.id, "completion": t0.data["canonical_solution"]}
    good2 = {"task_id": t2.id, "completion": t2.data["canonical_solution"]}
    # A sample saved as Latin-1: its "é" is the single byte 0xe9.
    latin1 = json.dumps(
        {"task_id": t2.id, "completion": "    # résumé\n    return number % 1.0\n"},
        ensure_ascii=False,
    ).encode("latin-1")
    samples = tmp_path / "s.jsonl"
    samples.write_bytes(
        json.dumps(good0).encode()
        + b"\n"
        + latin1
        + b"\n"
        + GARBAGE
        + b"\n"
        + json.dumps(good2).encode()
        + b"\n"
    )
    out = tmp_path / "r.jsonl"
    rc = main(["--benchmark", "humaneval", "--samples", str(samples), "--out", str(out)])
    assert rc == 0
    results = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["status"] for r in results] == ["pass", "error", "error", "pass"]
    assert results[0]["task_id"] == t0.id and results[3]["task_id"] == t2.id
    assert "line 2: not UTF-8" in results[1]["detail"]
    assert "line 3: not UTF-8" in results[2]["detail"]
    err = capsys.readouterr().err
    assert "save --samples as UTF-8" in err and "Traceback" not in err


def test_binary_data_file_is_one_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "problems.jsonl"
    data.write_bytes(GARBAGE)
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "x", "completion": "pass"}) + "\n")
    rc = main(["--benchmark", "jsonl", "--data", str(data), "--samples", str(samples)])
    assert rc == 2
    err = capsys.readouterr().err
    assert str(data) in err and "env.path" in err and "UTF-8" in err
