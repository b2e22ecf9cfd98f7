"""End to end with a real model shipped on PyPI (SmolLM2-135M, served in-process): the
CLI runs ReAct + Reflexion on HotpotQA offline and writes the log, summary and curve.

The model is far too small to answer these questions; what is checked is that a real
model's free-form output goes through the parser, the document store, the evaluator,
the reflector and the run log without breaking anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_react_reflexion_with_a_real_model(
    shared_data: Path, tmp_path: Path, project_root: Path
) -> None:
    run_dir = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "reflexion_bench.cli",
        "run",
        "env=hotpotqa",
        "actor=react",
        "strategy=reflexion",
        "limit=1",
        "strategy.max_trials=2",
        "actor.max_steps=2",
        "actor.max_step_tokens=48",
        "reflector.max_tokens=48",
        "sandbox=none",
        "model=smollm2",
        "max_concurrent_tasks=1",
        "progress=false",
        f"paths.data_dir={shared_data}",
        f"run_dir={run_dir}",
    ]
    proc = subprocess.run(cmd, cwd=project_root, capture_output=True, text=True, timeout=880)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    assert records and records[-1]["final"] is True
    assert all(r.get("error") is None for r in records), records[-1].get("error")
    first = records[0]
    assert first["benchmark"] == "hotpotqa" and first["extra"]["actor"] == "react"
    assert first["extra"]["type"] in ("bridge", "comparison")
    assert 1 <= first["extra"]["steps"] <= 2
    assert first["trajectory"].startswith("Question: ")
    roles = {c["role"] for r in records for c in r["model_calls"]}
    assert "actor" in roles
    if len(records) == 2:  # the first trial failed, so a reflection was written and shown
        assert records[0]["reflection"] is not None
        assert records[1]["memory_shown"] == [records[0]["reflection"]]
        assert "reflector" in roles
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n_tasks"] == 1 and summary["benchmark"] == "hotpotqa"
    assert (run_dir / "curve.png").stat().st_size > 0
