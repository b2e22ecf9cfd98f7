"""The overview notebook lays many runs out readably: panels in rows of two, not a
1 x n strip (each panel a sliver) as it drew six imported runs before."""

from __future__ import annotations

import base64
import json
import shutil
import struct
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from reflexion_bench.analysis.plots import panel_grid
from tests.analysis.test_report import make_sweep

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def six_benchmarks(root: Path) -> Path:
    """Six (benchmark, model) clusters, as six imported runs give: the toy sweep's
    reflexion run copied under six benchmark names."""
    src = make_sweep(root / "src") / "strategy=reflexion"
    out = root / "six"
    for i in range(6):
        dest = out / f"bench{i}"
        shutil.copytree(src, dest)
        log = dest / "log.jsonl"
        recs = [json.loads(line) for line in log.read_text().splitlines()]
        log.write_text("".join(json.dumps({**r, "benchmark": f"bench{i}"}) + "\n" for r in recs))
    return out


def png_size(data: str) -> tuple[int, int]:
    raw = base64.b64decode(data)
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def test_panel_grid_uses_rows_of_two() -> None:
    fig, axes = panel_grid(5)
    assert len(axes) == 5
    shape = fig.axes[0].get_subplotspec().get_gridspec().get_geometry()
    assert shape == (3, 2)
    assert not fig.axes[5].get_visible()  # the sixth cell is hidden


def test_overview_notebook_draws_many_runs_in_a_grid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = six_benchmarks(tmp_path)
    monkeypatch.setenv("REFLEXION_BENCH_RUNS", str(runs))
    monkeypatch.setenv("REFLEXION_BENCH_RESAMPLES", "200")
    # The inline backend: figures become cell outputs (PNG), as in Jupyter.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOKS / "runs_overview.ipynb", as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS.parent)}},
    ).execute()
    images = [
        out["data"]["image/png"]
        for cell in nb.cells
        if cell.cell_type == "code" and "panel_grid(" in cell.source
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {})
    ]
    assert len(images) == 2  # the trial curves and the budget curves
    for data in images:
        width, height = png_size(data)
        # Six panels in a 3 x 2 grid: taller than wide; a 1 x 6 strip was ~9 times wider.
        assert width / height < 1.5, (width, height)
