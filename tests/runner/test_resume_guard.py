"""Resuming a run folder under another config is refused (naming the keys) unless forced;
settings that do not change results may differ; re-run sweeps still resume their jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
TOY = [SEARCH, "env=toy", "model=toy", "sandbox=none", "progress=false"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    # Hydra's flags (-m) go before the overrides.
    flags = [a for a in args if a.startswith("-")]
    overrides = [a for a in args if not a.startswith("-")]
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "run", *flags, *TOY, *overrides],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def finals(run_dir: Path) -> list[str]:
    lines = (run_dir / "log.jsonl").read_text().splitlines()
    return sorted(r["task_id"] for r in map(json.loads, lines) if r["final"])


def test_resume_with_another_strategy_or_limit_is_refused_naming_the_keys(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    assert run(f"run_dir={folder}", "limit=2").returncode == 0
    config_before = (folder / "config.yaml").read_bytes()
    log_before = (folder / "log.jsonl").read_bytes()

    out = run(f"run_dir={folder}", "limit=1", "strategy=simple")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    # A smaller limit would leave logged tasks outside the selection: a difference.
    assert "limit: 2 -> 1" in out.stderr
    assert "strategy.name: 'reflexion' -> 'simple'" in out.stderr
    assert "resume_force=true" in out.stderr
    # Nothing was touched: the folder still describes (and holds) the first config only.
    assert (folder / "config.yaml").read_bytes() == config_before
    assert (folder / "log.jsonl").read_bytes() == log_before

    # Another seed or model changes results too.
    assert "seed: 0 -> 1" in run(f"run_dir={folder}", "limit=2", "seed=1").stderr
    other_model = run(f"run_dir={folder}", "limit=2", "model.name=other-mock")
    assert other_model.returncode == 2 and "model.name: 'toy-mock' -> 'other-mock'" in (
        other_model.stderr
    )


def test_settings_that_do_not_change_results_may_differ(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    assert run(f"run_dir={folder}", "limit=2").returncode == 0
    out = run(
        f"run_dir={folder}",
        "limit=2",
        "max_concurrent_tasks=4",
        "fail_on_error=0.9",
        "generate.timeout_s=30",
        f"paths.results_dir={tmp_path / 'elsewhere'}",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert yaml.safe_load((folder / "config.yaml").read_text())["max_concurrent_tasks"] == 4
    assert not list(folder.glob("config.*.yaml"))


def test_resume_force_mixes_on_purpose_and_keeps_the_record(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    assert run(f"run_dir={folder}", "limit=2").returncode == 0
    out = run(f"run_dir={folder}", "limit=3", "seed=1", "resume_force=true")
    assert out.returncode == 0, out.stderr[-2000:]
    assert finals(folder) == ["toy/0", "toy/1", "toy/2"]
    assert yaml.safe_load((folder / "config.1.yaml").read_text())["seed"] == 0
    assert yaml.safe_load((folder / "config.yaml").read_text())["seed"] == 1
    prov = json.loads((folder / "provenance.json").read_text())
    assert prov["resume_forced"]["seed"] == {"old": 0, "new": 1}
    # The larger limit was not a difference to force (see the growing-limit test).
    assert "limit" not in prov["resume_forced"]


def test_a_larger_limit_grows_the_run_in_place(tmp_path: Path) -> None:
    """A pilot (limit=2) grows into the full run (limit=3, then no limit) in the same
    folder: the logged tasks stay as they were, only the new ones run."""
    folder = tmp_path / "r"
    assert run(f"run_dir={folder}", "limit=2").returncode == 0
    log_before = (folder / "log.jsonl").read_bytes()
    out = run(f"run_dir={folder}", "limit=3")
    assert out.returncode == 0, out.stderr[-2000:]
    assert finals(folder) == ["toy/0", "toy/1", "toy/2"]
    # The pilot's records are untouched (appended to, never rewritten) and no config
    # was set aside: the grown run is one experiment.
    assert (folder / "log.jsonl").read_bytes().startswith(log_before)
    assert not list(folder.glob("config.*.yaml"))
    assert yaml.safe_load((folder / "config.yaml").read_text())["limit"] == 3
    assert run(f"run_dir={folder}", "limit=null").returncode == 0
    assert len(finals(folder)) > 3
    # ...but once grown it cannot shrink back.
    shrink = run(f"run_dir={folder}", "limit=3")
    assert shrink.returncode == 2 and "limit: None -> 3" in shrink.stderr


def test_resume_latest_with_another_limit_is_refused(tmp_path: Path) -> None:
    base = [f"paths.results_dir={tmp_path}"]
    assert run(*base, "limit=2").returncode == 0
    (folder,) = list((tmp_path / "runs").iterdir())
    out = run(*base, "limit=1", "resume=latest")
    assert out.returncode == 2 and "limit: 2 -> 1" in out.stderr
    assert finals(folder) == ["toy/0", "toy/1"]
    # The folder Hydra made for the refused attempt is not left behind as a new run.
    assert [p for p in (tmp_path / "runs").iterdir() if (p / "log.jsonl").exists()] == [folder]


def test_rerun_sweep_resumes_its_jobs_also_with_other_concurrency(tmp_path: Path) -> None:
    grid = [
        "-m",
        "strategy=simple,reflexion",
        "limit=2",
        f"paths.results_dir={tmp_path}",
    ]
    assert run(*grid).returncode == 0
    sweep = tmp_path / "sweeps" / "default"
    logs = {p: p.read_bytes() for p in sweep.glob("*/log.jsonl")}
    assert len(logs) == 2
    again = run(*grid, "max_concurrent_tasks=2")
    assert again.returncode == 0, again.stderr[-2000:]
    assert {p: p.read_bytes() for p in sweep.glob("*/log.jsonl")} == logs
    assert "failed 0" in again.stderr


def test_a_key_added_since_is_free_only_while_it_is_off(tmp_path: Path) -> None:
    """A run saved by an older harness (no ``budget`` keys yet) resumes under a newer
    one whose new keys are null (off); a new key with a value still needs the force."""
    from reflexion_bench.runner.resume_guard import config_diffs

    old = {"limit": 2, "strategy": {"name": "reflexion"}}
    new_off = {"limit": 2, "strategy": {"name": "reflexion"}, "budget": {"tokens": None}}
    new_on = {"limit": 2, "strategy": {"name": "reflexion"}, "budget": {"tokens": 2500}}
    assert config_diffs(old, new_off) == {}
    assert list(config_diffs(old, new_on)) == ["budget.tokens"]
    # A key that was set and is now null is a change (the feature was on).
    assert list(config_diffs(new_on, new_off)) == ["budget.tokens"]

    # End to end: a saved config.yaml without one key, resumed with it null.
    folder = tmp_path / "r"
    assert run(f"run_dir={folder}", "limit=2").returncode == 0
    saved = yaml.safe_load((folder / "config.yaml").read_text())
    nulls = [k for k, v in saved.items() if v is None]
    assert nulls, "the toy config has a top-level null key to drop"
    del saved[nulls[0]]
    (folder / "config.yaml").write_text(yaml.safe_dump(saved))
    out = run(f"run_dir={folder}", "limit=2")
    assert out.returncode == 0, out.stderr[-2000:]
