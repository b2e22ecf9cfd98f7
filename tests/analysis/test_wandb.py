"""``logger=wandb`` offline: what reaches W&B, read back from its own run file."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from reflexion_bench.analysis.report import write_run_outputs
from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.strategies import Strategy
from reflexion_bench.trackers import NoTracker, make_tracker
from reflexion_bench.trackers.wandb import TASK_COLUMNS
from tests.analysis.wandb_offline import read_offline_run
from tests.strategies.toyrun import run_toy

# Split so secret scanners do not flag this fake key in the source.
SECRET = "sk-" + "test0123456789abcdefXYZ"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    asyncio.run(run_toy(d, Strategy(name="reflexion")))
    # A config as a hand-edited folder might hold it: the tracker must redact it itself.
    (d / "config.yaml").write_text(
        f"model:\n  name: mock\n  api_key: {SECRET}\nstrategy:\n  name: reflexion\nseed: 0\n"
    )
    return d


def test_wandb_offline_logs_config_metrics_curve_and_tasks(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(run_dir))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    cfg = OmegaConf.create(
        {
            "logger": OmegaConf.load(CONFIG_DIR / "logger" / "wandb.yaml"),
            # Must not be instantiated by building the tracker.
            "env": {"_target_": "no.such.module.Environment"},
        }
    )
    tracker = make_tracker(cfg, run_dir)
    summary = write_run_outputs(run_dir)
    try:
        tracker.log_run(run_dir, summary)
    finally:
        tracker.close()

    got = read_offline_run(run_dir)
    assert got["config"]["model"]["api_key"] == "***"
    assert SECRET not in json.dumps(got["config"])
    assert got["config"]["strategy"]["name"] == "reflexion"
    by_trial = {row["trial"]: row for row in got["history"] if "trial" in row}
    k = len(summary["success_at_trial"])
    assert sorted(by_trial) == list(range(1, k + 1))
    for i in range(1, k + 1):
        assert by_trial[i]["success_at_trial"] == pytest.approx(summary["success_at_trial"][i - 1])
        assert by_trial[i]["solved_by_trial"] == pytest.approx(summary["solved_by_trial"][i - 1])
    assert by_trial[1]["tasks_at_trial"] == 4
    assert by_trial[2]["fixes_into_trial"] == 1  # alpha
    assert got["summary"]["final"] == pytest.approx(summary["final"])

    tables = {
        p.name.split("_")[0]: p for p in (got["files"] / "media" / "table").glob("*.table.json")
    }
    tasks = json.loads(tables["tasks"].read_text())
    assert tasks["columns"] == TASK_COLUMNS
    rows = {r[0]: dict(zip(tasks["columns"], r, strict=True)) for r in tasks["data"]}
    assert set(rows) == {"toy/0", "toy/1", "toy/2", "toy/3"}
    assert rows["toy/0"]["final_passed"] is True and rows["toy/0"]["trials"] == 2
    assert "lesson about wrongA" in rows["toy/0"]["reflections"]
    assert "=== trial 1 ===\nwrongA" in rows["toy/0"]["trajectories"]
    curve_files = [
        p for p in (got["files"] / "media" / "table").glob("trial_curve_table_*.table.json")
    ]
    curve = json.loads(curve_files[0].read_text())
    assert [row[1] for row in curve["data"]] == pytest.approx(summary["success_at_trial"])


def test_seeds_of_one_configuration_share_a_wandb_group(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without ``logger.group``, the group is the configuration: the same for runs whose
    config differs only in the seed, another for another strategy (real W&B, offline)."""
    import shutil

    from reflexion_bench.trackers.wandb import WandbTracker

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    base = (run_dir / "config.yaml").read_text()
    variants = {
        "seed0": base,
        "seed1": base.replace("seed: 0", "seed: 1"),
        "other": base.replace("name: reflexion", "name: retry"),
    }
    groups = {}
    for name, text in variants.items():
        d = tmp_path / name
        shutil.copytree(run_dir, d)
        (d / "config.yaml").write_text(text)
        tracker = WandbTracker(run_dir=d, dir=str(tmp_path / f"wb_{name}"))
        try:
            tracker.log_run(d, write_run_outputs(d))
        finally:
            tracker.close()
        groups[name] = read_offline_run(tmp_path / f"wb_{name}")["group"]
    assert groups["seed0"] and groups["seed0"] == groups["seed1"]
    assert groups["other"] and groups["other"] != groups["seed0"]


def test_tracker_failure_never_fails_the_run(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from reflexion_bench.trackers.wandb import WandbTracker

    # Online with no API key anywhere: W&B refuses at once; the tracker only warns.
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "home" / ".config" / "wandb"))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    tracker = WandbTracker(
        run_dir=run_dir, mode="online", dir=str(tmp_path / "wb"), init_timeout_s=10
    )
    with caplog.at_level(logging.WARNING):
        tracker.log_run(run_dir, write_run_outputs(run_dir))
        tracker.close()
    assert "W&B logging failed" in caplog.text
    assert SECRET not in caplog.text


def test_logger_none_is_the_default() -> None:
    cfg = OmegaConf.create({"logger": OmegaConf.load(CONFIG_DIR / "logger" / "none.yaml")})
    assert isinstance(make_tracker(cfg, Path(".")), NoTracker)
    defaults = OmegaConf.load(CONFIG_DIR / "config.yaml")["defaults"]
    assert {"logger": "none"} in [dict(d) for d in defaults if not isinstance(d, str)]


def test_each_task_is_logged_as_it_finishes_and_offline_runs_say_how_to_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runner hands each finished task to the tracker while the run goes (the log
    already holds the task, the summary does not exist yet); W&B gets one row per task
    before the trial curve; closing an offline run prints its folder and `wandb sync`."""
    from reflexion_bench.runner.runlog import load_run_records
    from reflexion_bench.trackers.wandb import WandbTracker

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    d = tmp_path / "run"
    tracker = WandbTracker(run_dir=d, dir=str(tmp_path / "wb"))
    seen: list[tuple[str, bool, bool, list[int]]] = []

    def on_task_done(task_id: str, records: list[dict[str, object]]) -> None:
        logged = {str(r["task_id"]) for r in load_run_records(d)}
        seen.append(
            (
                task_id,
                task_id in logged,
                (d / "summary.json").exists(),
                [r["trial"] for r in records],
            )
        )
        tracker.log_task(d, task_id, records)

    asyncio.run(run_toy(d, Strategy(name="reflexion"), on_task_done=on_task_done))
    summary = write_run_outputs(d)
    try:
        tracker.log_run(d, summary)
    finally:
        tracker.close()

    trials: dict[str, list[int]] = {}
    for r in load_run_records(d):
        trials.setdefault(str(r["task_id"]), []).append(int(r["trial"]))
    assert sorted(t for t, *_ in seen) == sorted(trials)
    for task_id, in_log, summary_exists, trial_numbers in seen:
        assert in_log and not summary_exists
        assert trial_numbers == trials[task_id]  # every trial of the task, in order

    got = read_offline_run(tmp_path / "wb")
    history = got["history"]
    task_rows = [r for r in history if "tasks_finished" in r]
    assert [r["tasks_finished"] for r in task_rows] == [1, 2, 3, 4]
    first_trial_row = next(i for i, r in enumerate(history) if "success_at_trial" in r)
    assert all(history.index(r) < first_trial_row for r in task_rows)
    finals = {
        str(r["task_id"]): bool((r.get("hidden") or {}).get("passed"))
        for r in load_run_records(d)
        if r.get("final")
    }
    assert sum(r["task/passed"] for r in task_rows) == sum(finals.values())
    assert task_rows[-1]["task/pass_rate_so_far"] == pytest.approx(sum(finals.values()) / 4)
    assert [r["task/trials"] for r in task_rows] == [len(trials[t]) for t, *_ in seen]

    offline = got["files"].parent
    err = capsys.readouterr().err
    assert f"W&B offline run saved in {offline}; upload it with: wandb sync {offline}" in err


def test_a_tracker_that_cannot_start_tries_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from reflexion_bench.trackers.wandb import WandbTracker

    calls = []

    def broken_init(*args: object, **kwargs: object) -> None:
        calls.append(1)
        raise RuntimeError("no network")

    tracker = WandbTracker(run_dir=tmp_path, dir=str(tmp_path / "wb"))
    monkeypatch.setattr(tracker, "_init", broken_init)
    with caplog.at_level(logging.WARNING):
        for i in range(5):
            tracker.log_task(tmp_path, f"t{i}", [{"task_id": f"t{i}", "trial": 1}])
        tracker.log_run(tmp_path, {"n_tasks": 5})
        tracker.close()
    assert len(calls) == 1
    assert caplog.text.count("no network") == 2  # the first task's warning and the run's
