"""The viewer's HTML: one Jinja2 template with the bundled CSS and JS inlined.

The same page serves both modes. Served, it carries the run list and fetches a run's
task table and a task's trials from the server when opened. Exported, it carries
every page's data: the run pages and comparisons as one JSON block, and each task's
trials in a JSON block of its own that the page parses only when the task is opened,
so a large run stays usable in one file. No external assets: it works offline.
"""

from __future__ import annotations

import itertools
from importlib import resources
from pathlib import Path
from typing import Any

from reflexion_bench.view.data import Catalog, dumps

ASSETS = ("view.css", "view.js")


def _asset(name: str) -> str:
    return resources.files("reflexion_bench.view").joinpath("assets", name).read_text("utf-8")


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` can close it or open a comment."""
    return dumps(value).replace("<", "\\u003c")


def render(boot: dict[str, Any], tasks: dict[str, str] | None = None, title: str = "") -> str:
    """The page, with ``boot`` (mode and data) and optional per-task JSON blocks."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reflexion_bench.view", "assets"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
    )
    template = env.get_template("page.html.j2")
    return template.render(
        title=title or "reflexion-bench view",
        css=_asset("view.css"),
        js=_asset("view.js"),
        boot=script_json(boot),
        tasks=tasks or {},
    )


def served_page(catalog: Catalog) -> str:
    # Nothing loaded here: the page asks for what it shows, so it appears at once.
    return render({"mode": "served"}, title=_title(catalog))


def _title(catalog: Catalog) -> str:
    names = catalog.names
    return f"reflexion-bench view: {names[0] if len(names) == 1 else f'{len(names)} runs'}"


def export_page(catalog: Catalog) -> str:
    """One self-contained HTML file holding every run, task and comparison."""
    runs: dict[str, Any] = {}
    task_blocks: dict[str, str] = {}
    for i in range(len(catalog)):
        page = catalog.run_page(i, with_intervals=True)
        view = catalog.run(i)
        keys = {}
        for n, tid in enumerate(view.task_ids):
            block = f"rb-task-{i}-{n}"
            keys[tid] = block
            task_blocks[block] = script_json(view.task(tid))
        page["task_blocks"] = keys
        runs[str(i)] = page
    comparisons: dict[str, Any] = {}
    for i, j in itertools.combinations(range(len(catalog)), 2):
        if set(catalog.run(i).task_ids) & set(catalog.run(j).task_ids):
            comparisons[f"{i}/{j}"] = catalog.compare(i, j)
    boot = {
        "mode": "export",
        "index": catalog.index(with_intervals=True),
        "runs": runs,
        "comparisons": comparisons,
    }
    return render(boot, task_blocks, title=_title(catalog))


def write_export(catalog: Catalog, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(export_page(catalog), encoding="utf-8")
    return out
