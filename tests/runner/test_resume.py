"""Resume after an interruption: finished tasks are not redone, nothing is lost or duplicated."""

from __future__ import annotations

import json
from pathlib import Path

from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import execute
from reflexion_bench.runner.runlog import iter_records, load_run_records
from tests.runner.test_loop import make_ctx
from tests.toy import toy_responder

WORDS = ["alpha", "beta", "gamma", "delta"]


async def test_resume_skips_finished_and_redoes_partial_tasks(tmp_path: Path) -> None:
    full_dir = tmp_path / "full"
    await execute(make_ctx(full_dir, MockModel(responder=toy_responder), WORDS))
    full_lines = (full_dir / "log.jsonl").read_text().splitlines()

    # A killed run: tasks 0 and 1 finished, task 2 got only its first trial, and the
    # write of the next record was cut short mid-line.
    killed = tmp_path / "killed"
    killed.mkdir()
    recs = [json.loads(x) for x in full_lines]
    keep = [r for r in recs if r["task_id"] in ("toy/0", "toy/1")]
    partial = [r for r in recs if r["task_id"] == "toy/2" and r["trial"] == 1]
    text = "".join(json.dumps(r) + "\n" for r in keep + partial) + '{"type": "trial", "task_'
    (killed / "log.jsonl").write_text(text)

    model = MockModel(responder=toy_responder)
    counts = await execute(make_ctx(killed, model, WORDS))
    assert counts["skipped"] == 2 and counts["ran"] == 2
    # Finished tasks made no model call on resume.
    assert not any("alpha" in p or "beta" in p for p in model.prompts)

    resumed = load_run_records(killed)
    reference = load_run_records(full_dir)

    def essence(rs: list[dict]) -> list[tuple]:  # type: ignore[type-arg]
        return sorted(
            (
                r["task_id"],
                r["trial"],
                r["candidate"],
                r["hidden"]["passed"],
                r["reflection"],
                r["final"],
            )
            for r in rs
        )

    assert essence(resumed) == essence(reference)
    # The raw file still holds the abandoned partial attempt (append-only) ...
    raw = list(iter_records(killed / "log.jsonl"))
    assert sum(1 for r in raw if r["task_id"] == "toy/2" and r["trial"] == 1) == 2
    # ... but readers count each task's trials once.
    assert sum(1 for r in resumed if r["task_id"] == "toy/2" and r["trial"] == 1) == 1


async def test_resume_false_reruns_everything(tmp_path: Path) -> None:
    await execute(make_ctx(tmp_path, MockModel(responder=toy_responder), WORDS[:2]))
    model = MockModel(responder=toy_responder)
    counts = await execute(make_ctx(tmp_path, model, WORDS[:2]), resume=False)
    assert counts["ran"] == 2 and len(model.calls) == 6
    assert len(load_run_records(tmp_path)) == 4  # the newer attempts replace the older
