"""The documentation site builds with ``mkdocs build --strict``, as CI builds it, and its
generated reference pages hold every command's options and every config option.

``mkdocs`` is a required component (tests/components.py): under ``CI=true`` a missing
mkdocs fails these tests instead of skipping them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "docs" / "hooks" / "reference.py"
pytestmark = pytest.mark.requires("mkdocs")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    # NO_MKDOCS_2_WARNING: mkdocs-material's notice about its successor, not a warning
    # about this site.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


def test_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = _build(ROOT / "mkdocs.yml", site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"])
    for page in nav:
        built = site / (page.removesuffix(".md").removesuffix("index") + "/index.html")
        built = site / "index.html" if page == "index.md" else built
        assert built.is_file(), f"{page} was not built ({built})"
    # Every hand-written page is in the nav (an orphan page is unreachable).
    written = {
        str(p.relative_to(ROOT / "docs"))
        for p in (ROOT / "docs").rglob("*.md")
        if "hooks" not in p.parts
    }
    assert written <= set(nav), sorted(written - set(nav))
    cli = (site / "reference" / "cli" / "index.html").read_text("utf-8")
    from reflexion_bench.cli import COMMANDS

    for name in COMMANDS:
        assert f'id="{name}"' in cli, name
    conf = (site / "reference" / "configuration" / "index.html").read_text("utf-8")
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        rel = path.relative_to(ROOT / "configs").with_suffix("")
        if len(rel.parts) > 1:
            assert str(rel) in conf, rel


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The strict build has teeth: a link to a page that moved, or to a heading that is
    gone, stops it (validation settings of mkdocs.yml)."""
    for n, link in enumerate(("[gone](no-such-page.md)", "[gone](models.md#no-such-heading)")):
        docs = tmp_path / str(n) / "docs"
        shutil.copytree(ROOT / "docs", docs)
        (docs / "index.md").write_text(
            (docs / "index.md").read_text("utf-8") + f"\n{link}\n", encoding="utf-8"
        )
        config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
        config["docs_dir"] = str(docs)
        config["hooks"] = [str(HOOK)]
        (docs.parent / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        proc = _build(docs.parent / "mkdocs.yml", docs.parent / "site")
        assert proc.returncode != 0, link
        assert re.search(r"no-such-(page|heading)", proc.stdout + proc.stderr), link


def test_cli_reference_has_every_option_of_every_parser() -> None:
    """Read off the parsers themselves, including those a command builds inside main()."""
    import argparse

    from reflexion_bench.cli import COMMANDS

    hook = _hook()
    page = hook.cli_page()
    for name, (module, _) in COMMANDS.items():
        assert f"## {name}\n" in page, name
        if name == "run":
            continue
        parsers = [hook.command_parser(module)]
        while parsers:
            parser = parsers.pop()
            assert parser.prog.startswith(f"reflexion-bench {name}"), parser.prog
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    parsers += list(action.choices.values())
                for flag in action.option_strings:
                    assert f"{flag}" in page, f"{parser.prog}: {flag}"
    # run: Hydra's own flags and every config group.
    for flag in ("--multirun, -m", "--cfg, -c", "--info, -i"):
        assert flag in page
    for group in hook.config_groups():
        assert f"[`{group}`](configuration.md#" in page, group


def test_configuration_reference_has_every_key_and_header() -> None:
    hook = _hook()
    page = hook.configuration_page()
    quickstart = (ROOT / "configs" / "experiment" / "quickstart.yaml").read_text("utf-8")
    header = [
        ln[2:] for ln in quickstart.splitlines() if ln.startswith("# ") and "@package" not in ln
    ]
    assert "\n".join(header[:2]) in page
    primary = yaml.safe_load((ROOT / "configs" / "config.yaml").read_text("utf-8"))
    for key in primary:
        if key not in ("defaults", "hydra"):
            assert re.search(rf"\| `{re.escape(key)}[`.]", page), key
    # A key's own comment is shown beside it (config.yaml: `limit: null  # first N ...`).
    comment = re.search(
        r"^limit:.*#\s*(.+)$", (ROOT / "configs/config.yaml").read_text("utf-8"), re.M
    )
    assert comment is not None
    assert f"| `limit` | `null` | {comment.group(1).strip()} |" in page
