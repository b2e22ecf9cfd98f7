"""Required components of the test suite: one marker per component, strict in CI.

A test that needs a component carries ``@pytest.mark.requires("<component>")`` (the
``docker`` marker counts as ``requires("docker")``); a fixture that finds the component
missing calls :func:`missing`. Components that can be detected cheaply (see
``DETECTORS``) are checked before the test's setup from the marker alone.

- Outside CI a missing component SKIPS the test with the reason.
- With ``CI=true`` (or ``REFLEXION_REQUIRE_DOCKER=1`` for Docker alone) the same skip
  becomes a FAILURE naming the component: CI cannot go green by skipping the real parts.
  Skips for any other reason (e.g. "needs root") are left alone.

At the end of the run the plugin prints a table (component -> tests, ran, skipped and
why) and, when ``REFLEXION_COMPONENTS_JSON`` names a file, writes the same data there
as JSON (scripts/test.sh prints it last with ``python -m tests.components FILE``).
Loaded by tests/conftest.py (``pytest_plugins``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

# The components whose absence must fail a CI run, and what each one is.
COMPONENTS: dict[str, str] = {
    "alfworld": "the alfworld package (bash scripts/setup.sh --all builds it)",
    "docker": "a Docker engine (scripts/ci/docker.sh start, as root)",
    "rust": "Debian's Rust toolchain (apt-get install rustc cargo)",
    "bwrap": "bubblewrap, working (apt-get install bubblewrap)",
    "shared_data": "the shared benchmark data (../shared/data or $REFLEXION_BENCH_DATA)",
    "chromium": "Debian's headless Chromium and the websockets package (apt-get install chromium)",
    "inspect_ai": "the inspect_ai package and its `inspect` CLI (the `inspect` extra: "
    "bash scripts/setup.sh --all)",
    "lm_eval": "the lm-eval package (the `lm-eval` extra: bash scripts/setup.sh --all)",
    "mkdocs": "mkdocs and mkdocs-material, to build the documentation site (the `docs` extra: "
    "bash scripts/setup.sh --all)",
    "slurm": "a single-node SLURM cluster: slurmctld+slurmd answering sinfo with an idle node, "
    "and hydra-submitit-launcher (scripts/ci/slurm.sh start, as root)",
    "ray": "a local Ray cluster started by scripts/ci/ray.sh start, and .venv-ray "
    "(bash scripts/setup.sh --ray)",
}

ROOT = Path(__file__).resolve().parent.parent
#: The Ray environment (hydra-ray-launcher pins cloudpickle<3: not the main venv).
RAY_PYTHON = Path(
    os.environ.get("REFLEXION_BENCH_RAY_PYTHON", ROOT / ".venv-ray" / "bin" / "python")
)
#: The GCS address of the cluster scripts/ci/ray.sh starts (exported by scripts/test.sh).
RAY_ADDRESS = os.environ.get("REFLEXION_BENCH_RAY_ADDRESS", "127.0.0.1:6390")


def shared_data_dir() -> Path:
    """``$REFLEXION_BENCH_DATA``, else ``../shared/data`` beside the project root."""
    env = os.environ.get("REFLEXION_BENCH_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def strict(component: str) -> bool:
    """Whether a missing ``component`` fails instead of skipping."""
    if os.environ.get("CI", "").lower() in ("true", "1"):
        return True
    return component == "docker" and os.environ.get("REFLEXION_REQUIRE_DOCKER") == "1"


class MissingComponent(pytest.skip.Exception):  # type: ignore[name-defined,misc]
    """A skip whose reason is a missing required component."""

    def __init__(self, component: str, reason: str) -> None:
        # reported at the test's location, as a skip marker's is (not at this line)
        super().__init__(f"[{component}] {reason}", _use_item_location=True)
        self.component = component
        self.reason = reason


def missing(component: str, reason: str) -> NoReturn:
    """Skip the current test because ``component`` is missing (a failure in CI)."""
    if component not in COMPONENTS:
        raise ValueError(f"unknown component {component!r}; known: {sorted(COMPONENTS)}")
    raise MissingComponent(component, reason)


def _alfworld() -> str | None:
    for mod in ("alfworld", "fast_downward", "textworld"):
        if importlib.util.find_spec(mod) is None:
            return f"the `{mod}` module is not installed: bash scripts/setup.sh --all"
    return None


def _rust() -> str | None:
    for tool in ("rustc", "cargo"):
        if shutil.which(tool, path="/usr/bin") is None:
            return f"Debian's {tool} is not installed (apt-get install rustc cargo)"
    return None


def _bwrap() -> str | None:
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    from reflexion_bench.sandbox.local import _probe_level, _resolve_python

    problem = _probe_level("bwrap", _resolve_python("auto"))
    return f"bwrap does not work here: {problem}" if problem else None


def _shared_data() -> str | None:
    path = shared_data_dir()
    return None if path.is_dir() else f"no shared benchmark data at {path}"


def _chromium() -> str | None:
    from reflexion_bench.testing.chromium import find_chromium

    if find_chromium() is None:
        return "no chromium on PATH (apt-get install chromium)"
    if importlib.util.find_spec("websockets") is None:
        return "the websockets package is not installed (pip install -e '.[dev]')"
    return None


def _inspect_ai() -> str | None:
    if importlib.util.find_spec("inspect_ai") is None:
        return "the inspect_ai package is not installed: bash scripts/setup.sh --all"
    # `inspect view bundle` is the CLI's: the venv's own script, not one on PATH.
    if not (Path(sys.executable).parent / "inspect").is_file():
        return f"no `inspect` CLI beside {sys.executable}: bash scripts/setup.sh --all"
    return None


def _lm_eval() -> str | None:
    if importlib.util.find_spec("lm_eval") is None:
        return "the lm_eval package is not installed: bash scripts/setup.sh --all"
    return None


def _mkdocs() -> str | None:
    # The site's theme is a separate package: mkdocs alone cannot build it.
    for module, package in (("mkdocs", "mkdocs"), ("material", "mkdocs-material")):
        if importlib.util.find_spec(module) is None:
            return f"the {package} package is not installed: bash scripts/setup.sh --all"
    return None


def _slurm() -> str | None:
    if importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None:
        return "hydra-submitit-launcher is not installed: bash scripts/setup.sh --all"
    if shutil.which("sinfo") is None:
        return "no sinfo: bash scripts/setup.sh --system (apt-get install slurm-wlm munge)"
    if not Path("/etc/slurm/slurm.conf").is_file():
        return "no /etc/slurm/slurm.conf: scripts/ci/slurm.sh start (as root)"
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=15
        )
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 15 s: scripts/ci/slurm.sh start (as root)"
    states = set(out.stdout.split())  # "idle*" (a suffix): not responding, not idle
    if out.returncode != 0 or "idle" not in states:
        why = (out.stderr.strip() or out.stdout.strip() or "no node")[:200]
        return f"no idle SLURM node ({why}): scripts/ci/slurm.sh start (as root)"
    return None


def _ray() -> str | None:
    if not RAY_PYTHON.exists():
        return f"no Ray environment at {RAY_PYTHON}: bash scripts/setup.sh --ray"
    host, _, port = RAY_ADDRESS.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=2):
            pass
    except (OSError, ValueError) as exc:
        return f"no Ray cluster answers at {RAY_ADDRESS} ({exc}): scripts/ci/ray.sh start"
    return None


# Checked from the marker before setup. Docker is not here: its fixture (tests/sandbox)
# starts an engine when it can, and calls missing("docker", ...) when it cannot.
DETECTORS: dict[str, Callable[[], str | None]] = {
    "alfworld": _alfworld,
    "rust": _rust,
    "bwrap": _bwrap,
    "shared_data": _shared_data,
    "chromium": _chromium,
    "inspect_ai": _inspect_ai,
    "lm_eval": _lm_eval,
    "mkdocs": _mkdocs,
    "slurm": _slurm,
    "ray": _ray,
}
_detected: dict[str, str | None] = {}


def problem_with(component: str) -> str | None:
    """Why ``component`` is unusable here (cached), or None when it is usable."""
    if component not in _detected:
        _detected[component] = DETECTORS[component]()
    return _detected[component]


def required_components(item: pytest.Item) -> list[str]:
    names: list[str] = []
    for mark in item.iter_markers("requires"):
        for name in mark.args:
            if name not in COMPONENTS:
                raise pytest.UsageError(
                    f"{item.nodeid}: unknown component {name!r} in requires(); "
                    f"known: {sorted(COMPONENTS)}"
                )
            names.append(name)
    if item.get_closest_marker("docker") is not None:
        names.append("docker")
    return list(dict.fromkeys(names))


# nodeid -> {"components": [...], "outcome": "passed"|"failed"|"skipped", "reason": str}
_RESULTS: dict[str, dict[str, Any]] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "requires(component): needs a required component ("
        + ", ".join(COMPONENTS)
        + "); skipped with the reason where missing, a failure when CI=true",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.requires("shared_data"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for name in required_components(item):
        if name in DETECTORS:
            problem = problem_with(name)
            if problem is not None:
                missing(name, problem)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    exc = call.excinfo.value if call.excinfo is not None else None
    components = required_components(item)
    if isinstance(exc, MissingComponent):
        components = list(dict.fromkeys([*components, exc.component]))
        if isinstance(report.longrepr, tuple):  # "Skipped: [component] reason", as pytest.skip
            path, lineno, _ = report.longrepr
            report.longrepr = (path, lineno, f"Skipped: {exc.msg}")
        if strict(exc.component):
            report.outcome = "failed"
            report.longrepr = (
                f"CI=true: required component {exc.component!r} ({COMPONENTS[exc.component]}) "
                f"is missing, so this test fails instead of skipping: {exc.reason}"
            )
    if not components:
        return
    # The record travels on the report (user_properties are serialized by pytest-xdist),
    # so the process that prints the table, the controller under `-n`, sees every
    # worker's tests: pytest_runtest_logreport below collects it there.
    record: dict[str, Any] = {"components": components}
    if isinstance(exc, MissingComponent):
        record["missing"] = f"[{exc.component}] {exc.reason}"
        record["missing_component"] = exc.component
    report.user_properties.append((_PROPERTY, record))


_PROPERTY = "reflexion_components"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    records = [value for name, value in report.user_properties if name == _PROPERTY]
    if not records:
        return
    record = records[-1]
    entry = _RESULTS.setdefault(report.nodeid, {"components": [], "outcome": "passed"})
    entry["components"] = list(dict.fromkeys([*entry["components"], *record["components"]]))
    xfailed = hasattr(report, "wasxfail")  # ran, and failed as expected: not a skip
    if report.skipped and not xfailed and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        entry["reason"] = reason.removeprefix("Skipped: ")
    elif report.failed:
        entry["outcome"] = "failed"
        if "missing" in record:
            entry["missing"] = record["missing"]
            entry["missing_component"] = record["missing_component"]


def summarize(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per component: tests, ran (passed + failed), skipped, and the skip reasons."""
    table: dict[str, dict[str, Any]] = {}
    for name in COMPONENTS:
        rows = [r for r in results.values() if name in r["components"]]
        # a test failed (CI=true) for another missing component did not run either
        blocked = [r for r in rows if r.get("missing") and r["missing_component"] != name]
        skipped = [r for r in rows if r["outcome"] == "skipped"]
        reasons: dict[str, int] = {}
        for r in skipped:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        for r in blocked:
            why = f"not run (failed, another component missing): {r['missing']}"
            reasons[why] = reasons.get(why, 0) + 1
        missing_in_ci = sorted({r["missing"] for r in rows if r.get("missing_component") == name})
        table[name] = {
            "tests": len(rows),
            "ran": sum(r["outcome"] != "skipped" and not r.get("missing") for r in rows),
            "failed": sum(r["outcome"] == "failed" for r in rows),
            "skipped": len(skipped) + len(blocked),
            "skip_reasons": reasons,
            "missing_in_ci": missing_in_ci,
        }
    return table


def format_table(table: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"{'component':<12} {'tests':>5} {'ran':>5} {'skipped':>7}  status"]
    for name, row in table.items():
        if row["missing_in_ci"]:
            status = "MISSING (failed: CI=true requires it)"
        elif row["tests"] == 0:
            status = "no test selected"
        elif row["skipped"] == 0:
            status = "ran"
        elif row["ran"] == 0:
            status = "SKIPPED"
        else:
            status = "ran, some skipped"
        lines.append(f"{name:<12} {row['tests']:>5} {row['ran']:>5} {row['skipped']:>7}  {status}")
        for why in row["missing_in_ci"]:
            lines.append(f"{'':<12}   missing: {why}")
        for why, n in sorted(row["skip_reasons"].items()):
            lines.append(f"{'':<12}   skipped {n}: {why[:160]}")
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    table = summarize(_RESULTS)
    path = os.environ.get("REFLEXION_COMPONENTS_JSON")
    if path:
        Path(path).write_text(json.dumps(table, indent=1), encoding="utf-8")
    if not _RESULTS:
        return
    terminalreporter.section("required components")
    for line in format_table(table):
        terminalreporter.write_line(line)


def main(argv: list[str]) -> int:
    """``python -m tests.components FILE``: print the table of a run's JSON summary."""
    if len(argv) != 1:
        print("usage: python -m tests.components COMPONENTS_JSON", file=sys.stderr)
        return 2
    table = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print("== required components (CI=true fails where one is missing) ==")
    print("\n".join(format_table(table)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
