"""Resume after an interruption: finished tasks are not redone, nothing is lost or duplicated."""

from __future__ import annotations

import json
from pathlib import Path

from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import execute
from reflexion_bench.runner.runlog import finished_attempts, iter_records, load_run_records
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


async def test_finished_attempts_yield_each_tasks_finished_attempt_only(tmp_path: Path) -> None:
    # A real resumed log: toy/2 was cut after its first trial, then redone in full.
    full_dir = tmp_path / "full"
    await execute(make_ctx(full_dir, MockModel(responder=toy_responder), WORDS))
    recs = [json.loads(x) for x in (full_dir / "log.jsonl").read_text().splitlines()]
    killed = tmp_path / "killed"
    killed.mkdir()
    kept = [r for r in recs if r["task_id"] in ("toy/0", "toy/1")]
    cut = [r for r in recs if r["task_id"] == "toy/2" and r["trial"] == 1]
    (killed / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept + cut))
    await execute(make_ctx(killed, MockModel(responder=toy_responder), WORDS))

    raw = list(iter_records(killed / "log.jsonl"))
    abandoned = cut[0]["attempt_id"]
    assert any(r["attempt_id"] == abandoned for r in raw)  # still in the file

    attempts = list(finished_attempts(killed))
    assert [a.task_id for a in attempts] == ["toy/0", "toy/1", "toy/2", "toy/3"]
    by_task = {a.task_id: a for a in attempts}
    redone = by_task["toy/2"]
    assert redone.attempt_id != abandoned and redone.superseded == 1
    assert {a.superseded for t, a in by_task.items() if t != "toy/2"} == {0}
    for a in attempts:
        # One finished attempt per task: its own trials only, 1..k in order, final last.
        assert {r["attempt_id"] for r in a.trials} == {a.attempt_id}
        assert [r["trial"] for r in a.trials] == list(range(1, len(a.trials) + 1))
        assert a.trials[-1]["final"] and not any(r["final"] for r in a.trials[:-1])
    # The loaders' records are exactly these attempts' trials (the log path works too).
    flat = [r for a in attempts for r in a.trials]
    assert load_run_records(killed) == flat
    assert [r for a in finished_attempts(killed / "log.jsonl") for r in a.trials] == flat
    assert len(raw) == len(flat) + 1  # the abandoned trial is the only line left out
