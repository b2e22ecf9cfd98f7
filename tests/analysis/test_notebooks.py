"""The notebooks run headless against a small sweep the test makes, show every figure
they promise, open by default on the folders the experiments write, and are stored
clean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.analysis.test_report import make_sweep

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ROOT = NOTEBOOKS.parent
#: Cells tagged ``figure`` per notebook: each must show a figure when executed.
FIGURES = {"runs_overview.ipynb": 2, "memory_controls.ipynb": 1}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("nb"))


def execute(
    name: str,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    nb: nbformat.NotebookNode | None = None,
    cwd: Path = ROOT,
) -> nbformat.NotebookNode:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    # The inline backend, as in Jupyter: a shown figure becomes a PNG output of its cell.
    # (Agg, as these tests once set, shows nothing, so a plot that is never drawn passed.)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nb if nb is not None else nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
    ).execute()
    return nb


def streams(nb: nbformat.NotebookNode) -> list[str]:
    return [
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    ]


def figure_problems(nb: nbformat.NotebookNode, expected: int) -> list[str]:
    """What is wrong with an executed notebook's figures: a cell tagged ``figure`` that
    shows no image, or fewer tagged cells than the notebook promises."""
    tagged = [c for c in nb.cells if "figure" in c.get("metadata", {}).get("tags", [])]
    out = [f"{len(tagged)} figure cells, expected {expected}"] if len(tagged) != expected else []
    for cell in tagged:
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if not images:
            out.append(f"cell {cell.get('id')} shows no figure: {cell.source[:60]!r}")
    return out


@pytest.mark.parametrize("name", ["runs_overview.ipynb", "memory_controls.ipynb"])
def test_notebooks_are_stored_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(not c.outputs and c.execution_count is None for c in code)


def test_runs_overview_notebook(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = execute(
        "runs_overview.ipynb",
        {"REFLEXION_BENCH_RUNS": str(sweep), "REFLEXION_BENCH_RESAMPLES": "300"},
        monkeypatch,
    )
    assert not figure_problems(nb, FIGURES["runs_overview.ipynb"])
    line = next(s for s in "".join(streams(nb)).splitlines() if s.startswith("SUMMARY "))
    finals = json.loads(line.removeprefix("SUMMARY "))
    # The same numbers the logs give (see test_report): reflexion fixes 2 of 4 failures.
    assert finals["reflexion"] == pytest.approx(4 / 6)
    assert finals["simple"] == pytest.approx(2 / 6)
    assert set(finals) == {"reflexion", "retry", "wrong_reflection", "irrelevant_text", "simple"}


def test_a_relative_folder_is_the_projects_not_the_kernels(
    sweep: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jupyter starts the kernel in notebooks/: a folder given relative to the project
    # (as every command in the docs is) must still be found there.
    relative = os.path.relpath(sweep, ROOT)
    assert not (NOTEBOOKS / relative).exists()  # read from notebooks/, it names nothing
    nb = execute(
        "runs_overview.ipynb",
        {"REFLEXION_BENCH_RUNS": relative, "REFLEXION_BENCH_RESAMPLES": "50"},
        monkeypatch,
        cwd=NOTEBOOKS,
    )
    line = next(s for s in "".join(streams(nb)).splitlines() if s.startswith("SUMMARY "))
    assert json.loads(line.removeprefix("SUMMARY "))["simple"] == pytest.approx(2 / 6)


def test_project_file_is_relative_to_the_project_or_its_root_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reflexion_bench.project import project_file, project_root

    monkeypatch.delenv("REFLEXION_BENCH_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # the working directory plays no part
    assert project_root() == ROOT
    assert project_file("results/runs") == ROOT / "results" / "runs"
    assert project_file(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("REFLEXION_BENCH_ROOT", str(tmp_path))  # where runs put results/
    assert project_file("results/runs") == tmp_path / "results" / "runs"


def test_memory_controls_notebook(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = execute(
        "memory_controls.ipynb",
        {"REFLEXION_BENCH_CONTROLS": str(sweep), "REFLEXION_BENCH_RESAMPLES": "300"},
        monkeypatch,
    )
    assert not figure_problems(nb, FIGURES["memory_controls.ipynb"])
    line = next(s for s in "".join(streams(nb)).splitlines() if s.startswith("CONTROLS "))
    controls = json.loads(line.removeprefix("CONTROLS "))
    assert controls["reflexion"] == [2, 0, 6]
    assert controls["retry"] == [1, 0, 6]
    assert controls["wrong_reflection"] == [1, 0, 6]


def test_a_plot_cell_that_draws_nothing_fails(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above catches a broken plot: the bar chart's cell emptied of its drawing
    (it still runs) leaves the executed notebook without that figure."""
    nb = nbformat.read(NOTEBOOKS / "memory_controls.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "figure" in c.metadata.get("tags", []))
    cell.source = "xs = range(len(ctrl))  # the plot was removed"
    nb = execute(
        "memory_controls.ipynb",
        {"REFLEXION_BENCH_CONTROLS": str(sweep), "REFLEXION_BENCH_RESAMPLES": "50"},
        monkeypatch,
        nb=nb,
    )
    problems = figure_problems(nb, FIGURES["memory_controls.ipynb"])
    assert len(problems) == 1 and "shows no figure" in problems[0], problems


def _default_folder(name: str, variable: str) -> Path:
    """The folder a notebook opens when ``variable`` is unset (read from its source)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    m = re.search(rf'os\.environ\.get\("{variable}", "([^"]+)"\)', source)
    assert m, f"{name} reads no default for {variable}"
    return Path(m.group(1))


def _written_folder(*overrides: str) -> Path:
    """The run folder an experiment writes, as the CLI composes it."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            *overrides,
            "--cfg",
            "job",
            "--resolve",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    m = re.search(r"^run_dir: (.+)$", out, re.M)
    assert m, out[-500:]
    return Path(m.group(1))


@pytest.mark.parametrize(
    ("name", "variable", "overrides"),
    [
        # The controls notebook reads the sweep folder holding the variants.
        (
            "memory_controls.ipynb",
            "REFLEXION_BENCH_CONTROLS",
            ["experiment=memory_controls_humaneval"],
        ),
        # The overview reads every single run (the main job's among them).
        ("runs_overview.ipynb", "REFLEXION_BENCH_RUNS", ["experiment=quickstart"]),
    ],
)
def test_notebooks_open_on_the_folders_the_experiments_write(
    name: str, variable: str, overrides: list[str]
) -> None:
    written = _written_folder(*overrides)
    assert _default_folder(name, variable) == written.parent, (name, written)
