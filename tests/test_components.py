"""The required-components plugin (tests/components.py): skip outside CI, fail under
CI=true, and the closing table counts what ran and what skipped (and why)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import components

ROOT = Path(__file__).resolve().parent.parent

SUITE = """
import pytest
from tests.components import missing

@pytest.mark.requires("alfworld")
def test_needs_alfworld():
    pass

@pytest.mark.docker
def test_engine_missing():
    missing("docker", "no Docker engine answers")

def test_data(shared_data):
    assert shared_data.is_dir()

@pytest.mark.requires("rust")
def test_other_skip():
    pytest.skip("needs root")

@pytest.mark.requires("rust")
@pytest.mark.xfail(reason="known bug", strict=True)
def test_expected_failure():
    raise AssertionError
"""


def run_suite(
    tmp_path: Path, ci: bool, data: Path, alfworld_problem: str | None, workers: int = 0
) -> tuple[int, str, dict]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "conftest.py").write_text(
        "pytest_plugins = ['tests.components']\n"
        "import pytest\nfrom tests.components import missing, shared_data_dir\n"
        "@pytest.fixture\ndef shared_data():\n"
        "    p = shared_data_dir()\n"
        "    if not p.is_dir():\n        missing('shared_data', f'no data at {p}')\n"
        "    return p\n"
        # the alfworld detector, replaced: this venv may or may not have alfworld
        "from tests import components\n"
        f"components.DETECTORS['alfworld'] = lambda: {alfworld_problem!r}\n"
    )
    out = tmp_path / "components.json"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "REFLEXION_REQUIRE_DOCKER")}
    env.update(
        PYTHONPATH=str(ROOT),
        REFLEXION_BENCH_DATA=str(data),
        REFLEXION_COMPONENTS_JSON=str(out),
    )
    if ci:
        env["CI"] = "true"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"),
            *(["-n", str(workers)] if workers else ["-p", "no:xdist"]),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr, json.loads(out.read_text())


def test_outside_ci_missing_components_skip_with_the_reason(tmp_path: Path) -> None:
    code, out, table = run_suite(tmp_path, False, tmp_path / "no-data", "not installed here")
    assert code == 0, out
    assert "[docker] no Docker engine answers" in out
    assert "[shared_data] no shared benchmark data at" in out
    assert "[alfworld] not installed here" in out
    assert table["docker"] == {
        "tests": 1,
        "ran": 0,
        "failed": 0,
        "skipped": 1,
        "skip_reasons": {"[docker] no Docker engine answers": 1},
        "missing_in_ci": [],
    }
    assert table["shared_data"]["skipped"] == 1 and table["bwrap"]["tests"] == 0
    assert "required components" in out


# workers=2: the test command runs the suite under pytest-xdist (scripts/test.sh); the
# table is printed by the controller, from records that come back from the workers.
@pytest.mark.parametrize("workers", [0, 2], ids=["one-process", "xdist"])
def test_under_ci_a_missing_component_fails_and_other_skips_stay(
    tmp_path: Path, workers: int
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    code, out, table = run_suite(tmp_path, True, data, None, workers)
    assert code == 1, out
    assert "1 failed, 2 passed, 1 skipped, 1 xfailed" in out, out
    assert "CI=true: required component 'docker'" in out
    assert table["docker"]["missing_in_ci"] == ["[docker] no Docker engine answers"]
    assert table["docker"]["ran"] == 0 and table["docker"]["failed"] == 1
    assert table["alfworld"] | {"skip_reasons": None} == {
        "tests": 1,
        "ran": 1,
        "failed": 0,
        "skipped": 0,
        "skip_reasons": None,
        "missing_in_ci": [],
    }
    assert table["shared_data"]["ran"] == 1
    # a skip for another reason is not a missing component: it stays a skip
    assert table["rust"]["skip_reasons"] == {"needs root": 1}
    assert (table["rust"]["tests"], table["rust"]["ran"], table["rust"]["skipped"]) == (2, 1, 1)
    printed = subprocess.run(
        [sys.executable, "-m", "tests.components", str(tmp_path / "components.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "MISSING (failed: CI=true requires it)" in printed


def test_the_shared_data_path_honours_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFLEXION_BENCH_DATA", "/somewhere/data")
    assert components.shared_data_dir() == Path("/somewhere/data")
    monkeypatch.delenv("REFLEXION_BENCH_DATA")
    assert components.shared_data_dir() == ROOT.parent / "shared" / "data"


def test_an_unknown_component_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown component"):
        components.missing("gpu", "nope")
