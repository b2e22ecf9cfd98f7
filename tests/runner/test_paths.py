"""`paths.data_dir`: relative paths found from any working directory (against the
project's folder when not there), recorded absolute, and errors print the path used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reflexion_bench.config import PROJECT_ROOT, project_path

ROOT = Path(__file__).resolve().parents[2]


def run_from(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REFLEXION_BENCH_DATA",)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            "model=mock",
            "env=mbpp",
            "limit=1",
            "strategy.max_trials=1",
            "progress=false",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**env, "PYTHONPATH": str(ROOT)},
    )


def test_project_path_prefers_the_working_directory_then_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()
    assert project_path("here") == str(tmp_path / "here")
    assert project_path("configs") == str(PROJECT_ROOT / "configs")  # not in tmp: the project's
    assert project_path("/abs/x") == "/abs/x"


@pytest.mark.requires("shared_data")
def test_default_data_dir_is_found_from_another_directory(
    tmp_path: Path, shared_data: Path
) -> None:
    if shared_data.resolve() != (ROOT / ".." / "shared" / "data").resolve():
        pytest.skip("the shared data is not at the default ../shared/data")
    run_dir = tmp_path / "r"
    out = run_from(tmp_path, f"run_dir={run_dir}")
    assert out.returncode == 0, out.stderr
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["paths"]["data_dir"] == str(shared_data.resolve())  # recorded absolute


def test_a_missing_dataset_error_prints_the_resolved_path(tmp_path: Path) -> None:
    out = run_from(tmp_path, f"run_dir={tmp_path / 'r'}", "paths.data_dir=no/such/dir")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    expected = PROJECT_ROOT / "no" / "such" / "dir" / "mbpp-py.jsonl"
    assert f"dataset file not found: {expected}" in out.stderr
    assert "paths.data_dir" in out.stderr
