"""End to end with the embedded model (served in-process from its PyPI packages): the CLI
plays a real ALFWorld game for two trials offline and writes the log, summary and curve.

The 0.5B model does not win; what is checked is that a real model's free-form replies go
through the action parser, the game workers, the evaluator, the reflector, memory and the
run log without breaking anything. Kept short (4 actions per episode).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.requires("alfworld")
@pytest.mark.timeout(900)
def test_alfworld_reflexion_with_the_embedded_model(
    shared_data: Path, tmp_path: Path, project_root: Path
) -> None:
    run_dir = tmp_path / "run"
    cmd = [
        sys.executable, "-m", "reflexion_bench.cli", "run",
        "env=alfworld", "model=embedded", "limit=1", "strategy.max_trials=2",
        "env.max_steps=4", "actor.max_tokens=48", "reflector.max_tokens=64",
        "sandbox=none", "progress=false",
        f"paths.data_dir={shared_data}", f"run_dir={run_dir}",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=project_root, capture_output=True, text=True, timeout=880)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(x) for x in (run_dir / "log.jsonl").read_text().splitlines()]
    assert records and records[-1]["final"] is True
    assert all(r.get("error") is None for r in records), records[-1].get("error")
    first = records[0]["extra"]["alfworld"]
    assert first["n_actions"] >= 1 and len(first["steps"]) == first["n_actions"]
    assert all(isinstance(a, str) and isinstance(o, str) for a, o, _ in first["steps"])
    assert records[0]["trajectory"].startswith("You are in the middle of a room.")
    if not records[0]["hidden"]["passed"]:  # failed: a reflection was written and shown
        assert records[0]["reflection"]
        assert records[1]["memory_shown"] == [records[0]["reflection"]]
        assert {c["role"] for c in records[0]["model_calls"]} == {"actor", "reflector"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n_tasks"] == 1 and summary["benchmark"] == "alfworld"
    assert (run_dir / "curve.png").stat().st_size > 0
