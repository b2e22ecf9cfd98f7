"""The notebooks run headless against a small sweep the test makes, and are stored clean."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.analysis.test_report import make_sweep

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("nb"))


def execute(name: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS.parent)}},
    ).execute()
    return [
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    ]


@pytest.mark.parametrize("name", ["runs_overview.ipynb", "memory_controls.ipynb"])
def test_notebooks_are_stored_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(not c.outputs and c.execution_count is None for c in code)


def test_runs_overview_notebook(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    streams = execute(
        "runs_overview.ipynb",
        {"REFLEXION_BENCH_RUNS": str(sweep), "REFLEXION_BENCH_RESAMPLES": "300"},
        monkeypatch,
    )
    line = next(s for s in "".join(streams).splitlines() if s.startswith("SUMMARY "))
    finals = json.loads(line.removeprefix("SUMMARY "))
    # The same numbers the logs give (see test_report): reflexion fixes 2 of 4 failures.
    assert finals["reflexion"] == pytest.approx(4 / 6)
    assert finals["simple"] == pytest.approx(2 / 6)
    assert set(finals) == {"reflexion", "retry", "wrong_reflection", "irrelevant_text", "simple"}


def test_memory_controls_notebook(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    streams = execute(
        "memory_controls.ipynb",
        {"REFLEXION_BENCH_CONTROLS": str(sweep), "REFLEXION_BENCH_RESAMPLES": "300"},
        monkeypatch,
    )
    line = next(s for s in "".join(streams).splitlines() if s.startswith("CONTROLS "))
    controls = json.loads(line.removeprefix("CONTROLS "))
    assert controls["reflexion"] == [2, 0, 6]
    assert controls["retry"] == [1, 0, 6]
    assert controls["wrong_reflection"] == [1, 0, 6]
