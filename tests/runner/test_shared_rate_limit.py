"""A sweep of two jobs, on two providers sharing one account limit, never exceeds it.

The fake server (real HTTP on 127.0.0.1) answers 429 as soon as more than `rpm`
requests arrive in its sliding window, so any excess shows up in its counters; the
model layer is told to retry nothing, so an excess would also fail tasks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from reflexion_bench.models.shared_limit import SharedRateLimit
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.testing.fake_llm_server import fake_server_process

ROOT = Path(__file__).resolve().parents[2]
RATE, WINDOW = 6, 1.5


def test_slots_are_held_while_in_flight_then_for_a_window(tmp_path: Path) -> None:
    lim = SharedRateLimit(tmp_path / "l.sqlite", "k", rate=2, window_s=10.0)
    w1, a = lim.try_acquire(now=100.0)
    w2, b = lim.try_acquire(now=101.0)
    assert (w1, w2) == (0.0, 0.0) and a is not None and b is not None
    # Both in flight: no slot, however long ago they started.
    wait, none = lim.try_acquire(now=500.0)
    assert none is None and wait > 0
    lim.release(a, now=501.0)
    wait, none = lim.try_acquire(now=505.0)
    assert none is None and wait == pytest.approx(6.0)  # a's slot frees 10 s after its end
    other = SharedRateLimit(tmp_path / "l.sqlite", "other-key", rate=2, window_s=10.0)
    assert other.try_acquire(now=505.0)[1] is not None  # keys are independent
    assert lim.try_acquire(now=511.5)[1] is not None


@pytest.mark.slow
def test_two_provider_sweep_respects_one_shared_limit(tmp_path: Path) -> None:
    with fake_server_process(
        "--rpm", str(RATE), "--rate-window-s", str(WINDOW), "--reply", "wrong"
    ) as (_, port):
        base = f"http://127.0.0.1:{port}"
        words = "[" + ",".join(f"w{i}" for i in range(8)) + "]"
        limit = [
            "model.shared_rpm=" + str(RATE),
            "model.shared_limit_key=account-1",
            f"model.shared_limit_path={tmp_path / 'limits.sqlite'}",
            f"model.rate_window_s={WINDOW}",
            "model.retries=0",
            "model.cache=off",
        ]
        common = [
            "run",
            "-m",
            "hydra/launcher=local_parallel",
            f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
            "env=toy",
            "sandbox=none",
            f"env.words={words}",
            "strategy.max_trials=2",
            "max_concurrent_tasks=8",
            f"paths.results_dir={tmp_path}",
            "progress=false",
        ]
        env = {
            **os.environ,
            "OPENAI_API_KEY": "test-key-openai",
            "ANTHROPIC_API_KEY": "test-key-anthropic",
        }
        # Two jobs at once: one per provider, both against the same account.
        jobs = [
            ["model=openai_compatible", "model.name=fake-gpt", f"model.base_url={base}/v1"],
            ["model=anthropic", "model.name=fake-claude", f"model.base_url={base}"],
        ]
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "reflexion_bench.cli",
                    *common,
                    *job,
                    *limit,
                    f"sweep_name=s{i}",
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i, job in enumerate(jobs)
        ]
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err[-3000:]
        stats = json.loads(urllib.request.urlopen(f"{base}/_stats", timeout=10).read())
    # 2 jobs x 8 tasks x (actor, reflector, actor) = 48 calls, all accepted.
    assert stats["requests"] == 48
    assert stats["rate_limited"] == 0, stats["statuses"]
    for run in tmp_path.glob("sweeps/*/*/log.jsonl"):
        assert all(r["error"] is None for r in load_run_records(run.parent))
