"""`reflexion-bench run` as a user runs it (a real subprocess, the real Hydra app)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TOY = [
    f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
    "env=toy",
    "model=toy",
    "sandbox=none",
]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_run_writes_log_summary_curve_and_config(tmp_path: Path) -> None:
    out = run_cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "strategy.max_trials=3")
    assert out.returncode == 0, out.stderr
    run = tmp_path / "r"
    lines = (run / "log.jsonl").read_text().splitlines()
    assert {json.loads(x)["task_id"] for x in lines} == {"toy/0", "toy/1", "toy/2", "toy/3"}
    summary = json.loads((run / "summary.json").read_text())
    # alpha/beta/gamma are fixed on trial 2; zeta never is.
    assert summary["first_try"] == 0.0 and summary["final"] == 0.75
    assert (run / "curve.png").stat().st_size > 0
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    assert cfg["strategy"]["max_trials"] == 3
    assert "final (pass@1)" in out.stdout

    # `report` recomputes the same numbers from the log alone.
    rep = run_cli("report", str(run), "--json")
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["final"] == summary["final"]


def test_bad_config_value_names_the_key(tmp_path: Path) -> None:
    out = run_cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "strategy.memory_content=bogus")
    assert out.returncode != 0
    assert "strategy.memory_content" in out.stderr and "reflection" in out.stderr
    assert "Traceback" not in out.stderr


def test_unknown_option_lists_available_ones(tmp_path: Path) -> None:
    out = run_cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "strategy=nope")
    assert out.returncode != 0
    assert "strategy" in out.stderr and "reflexion" in out.stderr


def test_unknown_task_id_is_a_clear_error(tmp_path: Path) -> None:
    out = run_cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "task_ids=[toy/99]")
    assert out.returncode != 0
    assert "toy/99" in out.stderr and "Traceback" not in out.stderr


def test_report_on_a_folder_without_log_is_a_clear_error(tmp_path: Path) -> None:
    out = run_cli("report", str(tmp_path))
    assert out.returncode == 2 and "log.jsonl" in out.stderr


def test_resume_latest_continues_the_newest_run_of_the_same_name(tmp_path: Path) -> None:
    base = [*TOY, f"paths.results_dir={tmp_path}", "progress=false"]
    first = run_cli("run", *base, "limit=2")
    assert first.returncode == 0, first.stderr
    (run,) = list((tmp_path / "runs").iterdir())
    # A larger selection is another config: refused unless forced (tests/runner/test_resume_guard.py).
    again = run_cli("run", *base, "limit=4", "resume=latest", "resume_force=true")
    assert again.returncode == 0, again.stderr
    assert list((tmp_path / "runs").iterdir()) == [run]  # no second folder
    finals = [json.loads(x) for x in (run / "log.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in finals if r["final"]) == [
        "toy/0",
        "toy/1",
        "toy/2",
        "toy/3",
    ]


def test_benchmarks_that_run_no_code_get_no_sandbox(tmp_path: Path) -> None:
    import asyncio

    from hydra import compose, initialize_config_dir

    from reflexion_bench.config import CONFIG_DIR
    from reflexion_bench.runner.run import build_context

    base = [
        f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
        "env=toy",
        "model=toy",
        "sandbox=local",
    ]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        without = compose("config", overrides=[*base, "+env.needs_sandbox=false"])
        with_ = compose("config", overrides=base)
    assert build_context(without, tmp_path).services.sandbox is None
    ctx = build_context(with_, tmp_path)
    assert ctx.services.sandbox is not None
    asyncio.run(ctx.services.sandbox.aclose())
