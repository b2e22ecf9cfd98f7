"""`model=mock` with no script: a deterministic reply of the form each benchmark asks
for, so `reflexion-bench run model=mock` is a real dry run of every environment (a
real subprocess, the real environments, sandbox and scorers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_bench.core.types import Message
from reflexion_bench.models.mock import default_reply

ROOT = Path(__file__).resolve().parents[2]


def dry_run(env: str, run_dir: Path, data: Path | None, *extra: str) -> list[dict[str, object]]:
    environ = {**os.environ}
    if data is not None:
        environ["REFLEXION_BENCH_DATA"] = str(data)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "model=mock",
            f"env={env}",
            "limit=1",
            "strategy.max_trials=2",
            f"run_dir={run_dir}",
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=environ,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    recs = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    assert recs, "no trial logged"
    # A dry run goes through every role without an error anywhere.
    assert all(not r.get("error") for r in recs), [r.get("error") for r in recs]
    assert all(c.get("error") is None for r in recs for c in r["model_calls"])
    assert (run_dir / "summary.json").exists()
    return recs


def test_python_code_benchmark(tmp_path: Path) -> None:
    recs = dry_run("humaneval", tmp_path / "r", None)
    first = recs[0]
    # The reply is the prompt's function, parsed and run; its self-test parses and
    # fails, so the run goes on to a reflection and a second trial.
    assert "def has_close_elements(" in str(first["candidate"])
    assert "Tests failed" in str(first["self_test"]["text"])  # type: ignore[index]
    assert [r["trial"] for r in recs] == [1, 2]
    assert first["hidden"]["status"] == "fail"  # type: ignore[index]


@pytest.mark.requires("shared_data")
@pytest.mark.parametrize(("env", "needle"), [("mbpp", "def "), ("leetcode_hard", "def ")])
def test_other_python_benchmarks(env: str, needle: str, tmp_path: Path, shared_data: Path) -> None:
    recs = dry_run(env, tmp_path / "r", shared_data)
    assert needle in str(recs[0]["candidate"])
    assert recs[0]["hidden"]["status"] == "fail"  # type: ignore[index]


@pytest.mark.requires("rust")
@pytest.mark.requires("shared_data")
def test_rust_benchmark(tmp_path: Path, shared_data: Path) -> None:
    recs = dry_run("humaneval_rs", tmp_path / "r", shared_data)
    assert "fn " in str(recs[0]["candidate"]) and "todo!()" in str(recs[0]["candidate"])
    # It compiled and ran: a verdict, not a compile error.
    assert recs[0]["hidden"]["status"] == "fail"  # type: ignore[index]


@pytest.mark.requires("shared_data")
def test_hotpotqa(tmp_path: Path, shared_data: Path) -> None:
    recs = dry_run("hotpotqa", tmp_path / "r", shared_data)
    assert recs[0]["candidate"] == "unknown"  # parsed from Finish[unknown]


@pytest.mark.requires("alfworld")
@pytest.mark.requires("shared_data")
def test_alfworld(tmp_path: Path, shared_data: Path) -> None:
    recs = dry_run(
        "alfworld", tmp_path / "r", None, f"env.data_dir={shared_data / 'alfworld' / 'v2.1.2'}"
    )
    assert "look" in str(recs[0]["trajectory"])


def test_replies_are_deterministic_and_follow_the_prompt() -> None:
    rust = [Message("user", "```rust\nfn add(a: i64, b: i64) -> i64 {\n```")]
    method = [Message("user", "class Solution:\n    def f(self, s: str) -> int:\n        ...")]
    assert default_reply(rust) == default_reply(rust)
    assert "fn add(a: i64, b: i64) -> i64 {\n    todo!()" in default_reply(rust)
    assert "class Solution:\n    def f(self, s: str) -> int:\n        return None" in default_reply(
        method
    )
    assert "Finish[" in default_reply([Message("user", "Answer with Finish[answer].")])
