"""Ctrl-C on a real `reflexion-bench run model=mock` process: a clean stop, no traceback,
the log kept, the exact resume command printed; a second Ctrl-C quits at once; the
resumed run continues the counters."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Six HumanEval tasks, each model call 0.4 s: long enough to interrupt in the middle.
RUN = [
    "model=mock",
    "model.latency_s=0.4",
    "env=humaneval",
    "limit=6",
    "strategy.max_trials=2",
    "sandbox=local",
]


def _start(run_dir: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reflexion_bench.cli", "run", *RUN, f"run_dir={run_dir}", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_trials(log: Path, n: int, proc: subprocess.Popen[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"the run ended before it could be interrupted: {proc.stderr.read()}")  # type: ignore[union-attr]
        time.sleep(0.1)
    proc.kill()
    pytest.fail("no trial logged in time")


def _tasks_done(log: Path) -> set[str]:
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return {r["task_id"] for r in recs if r.get("final")}


def test_ctrl_c_stops_cleanly_and_prints_the_resume_command(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = _start(run_dir)
    log = run_dir / "log.jsonl"
    _wait_for_trials(log, 3, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Traceback" not in out, err
    assert "interrupted" in err
    resume = [
        line.strip() for line in err.splitlines() if line.strip().startswith("reflexion-bench run")
    ]
    assert len(resume) == 1, err
    args = shlex.split(resume[0])[2:]
    assert f"run_dir={run_dir.resolve()}" in args
    assert set(RUN) <= set(args)
    # Every logged line is whole JSON (flushed as written); the interrupted outcome is recorded.
    done_before = _tasks_done(log)
    assert 1 <= len(done_before) < 6
    provenance = json.loads((run_dir / "provenance.json").read_text())
    assert provenance["outcome"] == "interrupted"

    # The printed command resumes: the earlier tasks are skipped and counted.
    again = subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *shlex.split(resume[0])[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert again.returncode == 0, again.stderr
    assert _tasks_done(log) == {f"HumanEval/{i}" for i in range(6)}
    counters = [line for line in again.stderr.splitlines() if line.startswith("[")]
    # The first progress line starts from the tasks done before, not from 0.
    assert counters[0].startswith(f"[{len(done_before)}/6]"), again.stderr
    assert counters[-1].startswith("[6/6]"), again.stderr


def test_a_second_ctrl_c_quits_at_once(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    # A model call of 60 s: the first Ctrl-C starts a clean stop, the second does not wait.
    proc = _start(run_dir, "model.latency_s=60")
    deadline = time.monotonic() + 60
    while not (run_dir / "provenance.json").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - started < 10
    assert proc.returncode == 130
    assert "Traceback" not in err, err


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_sigterm_stops_the_same_way(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = _start(run_dir)
    _wait_for_trials(run_dir / "log.jsonl", 1, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "resume with" in err
