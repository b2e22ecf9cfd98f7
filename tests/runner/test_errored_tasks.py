"""Errored tasks are first-class (issue 14, item 4): counted, shown, fatal past
``fail_on_error``, redone by ``retry_errored=true``, never mistaken for a verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, GenerateConfig, Message, Score
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import RunAborted, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.sandbox.base import SandboxError
from tests.runner.test_loop import make_ctx
from tests.toy import ToyScorer, toy_responder

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
WORDS = ["alpha", "beta", "gamma", "zeta"]  # the toy model solves all but zeta


def outage_responder(messages: Sequence[Message], config: GenerateConfig) -> str:
    """The toy model, down while the file named by $REFLEXION_TEST_OUTAGE exists."""
    switch = os.environ.get("REFLEXION_TEST_OUTAGE")
    if switch and Path(switch).exists():
        raise ConnectionError("connection reset by peer (simulated outage)")
    return toy_responder(list(messages), config)


class Outage:
    """A model boundary that fails for chosen words while ``down`` is true."""

    def __init__(self, words: set[str]) -> None:
        self.words, self.down = words, True

    def __call__(self, messages: Sequence[Message], config: GenerateConfig) -> str:
        if self.down and any(f"word {w}." in m.content for m in messages for w in self.words):
            raise ConnectionError("connection reset by peer")
        return toy_responder(list(messages), config)


async def test_errored_tasks_are_counted_apart_and_redone_by_retry_errored(
    tmp_path: Path,
) -> None:
    from reflexion_bench.analysis.report import format_table, load_summary

    outage = Outage({"beta", "gamma"})
    ctx = make_ctx(tmp_path, MockModel(responder=outage), WORDS)
    ctx.fail_on_error = 0.5  # 2 of 4 is not *more* than half: the run completes
    counts = await execute(ctx)
    assert counts["errored"] == 2
    s = load_summary(tmp_path)
    # Headline pass@1 counts the errored tasks as failed; beside it, over finished ones.
    assert s["errored_tasks"] == 2 and s["finished_tasks"] == 2
    assert s["final"] == pytest.approx(1 / 4)  # alpha of 4
    assert s["final_finished"] == pytest.approx(1 / 2)  # alpha of alpha, zeta
    assert s["errored_task_ids"] == ["toy/1", "toy/2"]
    table = format_table(s)
    assert "errored counted as failed" in table and "retry_errored=true" in table

    # The outage is over. A plain resume keeps the errors (nothing is silently redone) ...
    outage.down = False
    model = MockModel(responder=outage)
    counts = await execute(make_ctx(tmp_path, model, WORDS))
    assert counts["ran"] == 0 and not model.calls
    # ... and retry_errored redoes exactly the errored tasks.
    ctx = make_ctx(tmp_path, model, WORDS)
    ctx.retry_errored = True
    counts = await execute(ctx)
    assert counts["ran"] == 2 and counts["skipped"] == 2
    assert all("beta" in p or "gamma" in p or p.startswith("Reflect") for p in model.prompts)
    s = load_summary(tmp_path)
    assert s["errored_tasks"] == 0 and s["final"] == pytest.approx(3 / 4)


async def test_run_that_errored_beyond_fail_on_error_aborts_with_the_way_to_redo(
    tmp_path: Path,
) -> None:
    # Three tasks: fewer than the 5 the early check waits for, so only the check over
    # the whole run at its end can catch it.
    ctx = make_ctx(tmp_path, MockModel(responder=Outage({"alpha", "beta", "gamma"})), WORDS[:3])
    ctx.fail_on_error = 0.5
    with pytest.raises(RunAborted) as info:
        await execute(ctx)
    assert "3 of 3 tasks errored" in str(info.value)
    assert "retry_errored=true" in str(info.value)


class BrokenSandboxScorer(ToyScorer):
    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        raise SandboxError("sandbox workers never started (tmpfs: invalid size)")


async def test_a_broken_sandbox_is_an_errored_task_not_a_fail_verdict(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, MockModel(responder=toy_responder), ["alpha", "beta"])
    ctx.roles.scorer = BrokenSandboxScorer()
    counts = await execute(ctx)
    assert counts["errored"] == 2
    recs = load_run_records(tmp_path)
    assert len(recs) == 2 and all(r["final"] for r in recs)  # no further trial either
    for r in recs:
        assert r["hidden"] is None  # no verdict was made up
        assert r["error"].startswith("SandboxError: sandbox workers never started")


def test_sandbox_disk_mb_negative_is_a_config_error_at_start(tmp_path: Path) -> None:
    from hydra import compose, initialize_config_dir

    from reflexion_bench.config import CONFIG_DIR
    from reflexion_bench.core.errors import ConfigError
    from reflexion_bench.runner.run import build_context

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[SEARCH, "env=toy", "model=toy", "sandbox=local", "sandbox.disk_mb=-5"],
        )
    with pytest.raises(ConfigError, match=r"sandbox\.disk_mb"):
        build_context(cfg, tmp_path)


# --------------------------------------------------------------------------- the CLI


def run_cli(*args: str, outage: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REFLEXION_TEST_OUTAGE": str(outage or "")}
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_outage_then_resume_with_retry_errored_through_the_cli(tmp_path: Path) -> None:
    switch = tmp_path / "outage"
    switch.touch()
    run = tmp_path / "run"
    base = ["run", SEARCH, "env=toy", "model=outage", "sandbox=none", "progress=false"]
    first = run_cli(*base, f"run_dir={run}", outage=switch)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "4 of 4 tasks errored" in first.stderr and "retry_errored=true" in first.stderr
    assert "Traceback" not in first.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["errored_tasks"] == 4 and summary["final_finished"] is None

    # The report says so: an errored column and the label of the headline.
    rep = run_cli("report", str(run), "--paper", "--table", "main")
    assert rep.returncode == 0, rep.stderr
    header = next(line for line in rep.stdout.splitlines() if line.startswith("| benchmark"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in rep.stdout.splitlines() if "| toy |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[cols.index("errored")] == "4"
    assert "final (errored = failed) %" in cols
    # No task finished: pass@1 over finished tasks has no value, and a column empty in
    # every row is left out of the Markdown table (the CSV keeps it).
    assert "final of finished %" not in cols
    assert "errored task counted as failed" in rep.stdout
    assert "4 of 4 tasks errored" in rep.stdout

    switch.unlink()  # the outage is over
    again = run_cli(*base, f"run_dir={run}", outage=switch)
    assert again.returncode == 2  # a plain resume does not redo them, and says how
    assert "retry_errored=true" in again.stderr
    fixed = run_cli(*base, f"run_dir={run}", "retry_errored=true", outage=switch)
    assert fixed.returncode == 0, fixed.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["errored_tasks"] == 0 and summary["final"] == 0.75


def test_sweep_index_and_line_count_errored_tasks(tmp_path: Path) -> None:
    from reflexion_bench.runner.sweep import read_index, task_counts

    switch = tmp_path / "outage"
    switch.touch()
    out = run_cli(
        "run",
        "-m",
        SEARCH,
        "env=toy",
        "model=outage",
        "sandbox=none",
        "limit=2,3",
        "progress=false",
        f"paths.results_dir={tmp_path}",
        outage=switch,
    )
    assert out.returncode != 0  # jobs whose every task errored are failed jobs
    assert "failed 2; tasks errored 5 of 5" in out.stderr
    index = read_index(tmp_path / "sweeps" / "default")
    assert [(r["status"], r["n_tasks"], r["errored_tasks"]) for r in index] == [
        ("failed", 2, 2),
        ("failed", 3, 3),
    ]
    assert task_counts(index) == {"tasks": 5, "errored": 5}


def test_aborted_run_still_reaches_wandb_with_its_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wandb")
    from tests.analysis.wandb_offline import read_offline_run

    switch = tmp_path / "outage"
    switch.touch()
    run = tmp_path / "run"
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(run))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    out = run_cli(
        "run",
        SEARCH,
        "env=toy",
        "model=outage",
        "sandbox=none",
        "progress=false",
        "logger=wandb",
        f"run_dir={run}",
        outage=switch,
    )
    assert out.returncode == 2, out.stderr
    got = read_offline_run(run)
    assert got["summary"]["errored_tasks"] == 4
    assert got["summary"]["finished_tasks"] == 0
