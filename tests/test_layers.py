"""The package's import graph has no circle, and the layers contract holds (issue 49).

Two checks of one rule ("a lower layer never imports an upper one, not even inside a
function", docs/concepts/index.md#architecture):

- the graph built here from the source: every ``import`` of a ``reflexion_bench``
  module, at module level or inside a function, class or ``try``; importing
  ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``, so those count as imported
  too. Only what sits under ``if TYPE_CHECKING:`` is left out (never run). No module
  may reach itself through it.
- ``lint-imports`` (import-linter) with the contract of ``[tool.importlinter]`` in
  pyproject.toml: the layers, and no circle between the modules of one package.
"""

from __future__ import annotations

import ast
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "reflexion_bench"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's ``__init__``)."""
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all but the body of ``if TYPE_CHECKING:``
    (its ``else`` runs)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            yield from _imports(node)


def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {imported module of the package: line of the first such import}."""
    modules = _modules()

    def resolve(name: str) -> str | None:
        # `from a.b import c`: c is the module a.b.c when there is one, else a name of a.b
        parts = name.split(".")
        while parts:
            if ".".join(parts) in modules:
                return ".".join(parts)
            parts.pop()
        return None

    graph: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                targets = [f"{source}.{a.name}" for a in node.names]
            for target in targets:
                if target != PACKAGE and not target.startswith(PACKAGE + "."):
                    continue
                imported = resolve(target)
                if imported is None:
                    continue
                # Importing a.b.c runs the __init__ of a and of a.b first.
                parts = imported.split(".")
                for i in range(2, len(parts) + 1):
                    ran = ".".join(parts[:i])
                    if ran in modules and ran != module and not module.startswith(ran + "."):
                        graph[module].setdefault(ran, node.lineno)
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One circle of ``graph`` as ``[m0, m1, ..., m0]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_graph_sees_imports_inside_functions_and_skips_type_checking() -> None:
    graph = import_graph()
    # runner/run.py imports analysis/report.py inside run_experiment
    assert "reflexion_bench.analysis.report" in graph["reflexion_bench.runner.run"]
    # core/state.py names Memory and ModelClient under `if TYPE_CHECKING:` only
    assert "reflexion_bench.memory.base" not in graph["reflexion_bench.core.state"]
    assert "reflexion_bench.models.base" not in graph["reflexion_bench.core.state"]
    # importing models.base runs models/__init__.py first
    assert "reflexion_bench.models" in graph["reflexion_bench.runner.loop"]


def test_find_cycle_names_the_circle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1}, "b": {}}) is None


def test_no_import_circle() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    if cycle is not None:
        steps = [f"{a} -> {b} (line {graph[a][b]})" for a, b in itertools.pairwise(cycle)]
        pytest.fail("import circle (move the shared piece down a layer):\n  " + "\n  ".join(steps))


def _lint_imports() -> str | None:
    beside = Path(sys.executable).parent / "lint-imports"
    return str(beside) if beside.is_file() else shutil.which("lint-imports")


def test_lint_imports_keeps_the_contract() -> None:
    exe = _lint_imports()
    if exe is None:
        reason = "no lint-imports (import-linter, the dev extra: pip install -e '.[dev]')"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(reason)
        pytest.skip(reason)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [exe, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout
