"""A model budget stops the run cleanly; resume finishes it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import RunAborted, execute
from reflexion_bench.runner.runlog import load_run_records
from tests.models.test_runner_integration import make_ctx, raw_records, toy_responder

WORDS = [f"w{i}" for i in range(6)]


async def test_budget_stops_the_run_cleanly_and_resume_finishes_it(tmp_path: Path) -> None:
    # Each task: actor (wrong), reflector, actor (right) = 3 calls; ~40 tokens a task.
    model = ModelLayer(MockModel(responder=toy_responder), max_tokens_budget=60)
    with pytest.raises(RunAborted, match="model budget"):
        await execute(make_ctx(tmp_path, model, WORDS, concurrency=1))
    done = {r["task_id"] for r in load_run_records(tmp_path)}
    assert 0 < len(done) < len(WORDS)
    cut = [r for r in raw_records(tmp_path) if r["error"]]
    assert cut and all(not r["final"] and "BudgetExceeded" in r["error"] for r in cut)
    more = ModelLayer(MockModel(responder=toy_responder), max_tokens_budget=10_000)
    counts = await execute(make_ctx(tmp_path, more, WORDS, concurrency=1))
    assert counts["skipped"] == len(done)
    finals = Counter(r["task_id"] for r in raw_records(tmp_path) if r["final"])
    assert finals == {f"toy/{i}": 1 for i in range(len(WORDS))}
