"""MkDocs hook: the two reference pages, generated from the code at build time.

``reference/cli.md`` is read off the argparse parsers the sub-commands build (and
Hydra's own parser for ``run``); ``reference/configuration.md`` off the YAML files under
``configs/``. They are generated at build time rather than committed because the
parsers and configs change with nearly every feature: a committed copy would need a
regeneration step in every such change (and a test to catch the forgotten one), while a
page built from the source cannot be stale. ``mkdocs build --strict`` (tests/docs) runs
this hook, so a parser or config the page cannot render fails the build.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
CLI_PAGE = "reference/cli.md"
CONFIG_PAGE = "reference/configuration.md"


# ----------------------------------------------------------------------------- CLI
class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


@contextlib.contextmanager
def _capturing() -> Iterator[None]:
    # A command's main() builds its parser and parses; stopping at the parse gives the
    # very parser the command uses, however it is built, and runs nothing of the command.
    original = argparse.ArgumentParser.parse_known_args

    def grab(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Captured(self)

    argparse.ArgumentParser.parse_known_args = grab  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]


def command_parser(module_name: str) -> argparse.ArgumentParser:
    """The argparse parser that ``module_name``'s ``main`` parses its arguments with."""
    module = importlib.import_module(module_name)
    with _capturing(), contextlib.redirect_stdout(io.StringIO()):
        try:
            module.main([])
        except _Captured as captured:
            return captured.parser
    raise RuntimeError(f"{module_name}.main([]) parsed no arguments: no parser to document")


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _first_line(text: object) -> str:
    lines = [ln for ln in str(text or "").strip().splitlines() if ln.strip()]
    return lines[0].strip() if lines else ""


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | default | help |", "| --- | --- | --- |"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        choices = action.choices is not None and not isinstance(action.choices, dict)
        value = (
            "{" + ",".join(str(c) for c in action.choices or ()) + "}"
            if choices
            else str(action.metavar or action.dest.upper())
        )
        if not action.option_strings:
            name = str(action.metavar or action.dest)
            name += f" {value}" if choices else ""
        else:
            name = ", ".join(action.option_strings) + (f" {value}" if action.nargs != 0 else "")
        if action.required or not action.option_strings:
            default = "required" if action.nargs not in ("?", "*") else ""
        elif action.default in (None, argparse.SUPPRESS) or action.nargs == 0:
            default = ""
        else:
            default = f"`{action.default}`"
        rows.append(f"| `{_cell(name)}` | {_cell(default)} | {_cell(_first_line(action.help))} |")
    return rows if len(rows) > 2 else []


def _usage(parser: argparse.ArgumentParser) -> str:
    # A fixed width: the page must not depend on the terminal that built it.
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        return parser.format_usage().strip()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def _parser_section(parser: argparse.ArgumentParser, level: int) -> list[str]:
    out = ["```text", _usage(parser), "```", ""]
    if parser.description:
        out += ["```text", parser.description.strip(), "```", ""]
    out += [*_argument_rows(parser), ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                out += [f"{'#' * level} `{parser.prog} {name}`", ""]
                if helps.get(name):
                    out += [_cell(helps[name]), ""]
                out += _parser_section(sub, level + 1)
    return out


def _run_section() -> list[str]:
    from hydra._internal.utils import get_args_parser

    groups = config_groups()
    rows = ["| group | options | default |", "| --- | --- | --- |"]
    defaults = primary_defaults()
    for group, options in groups.items():
        anchor = _slug(f"{group}")
        rows.append(
            f"| [`{group}`](configuration.md#{anchor}) | "
            + ", ".join(f"`{o}`" for o in options)
            + f" | {_cell(defaults.get(group, ''))} |"
        )
    hydra = get_args_parser()
    hydra.prog = "reflexion-bench run"
    return [
        "`run` is the Hydra application (`reflexion_bench.commands.run`): everything after",
        "`run` is Hydra's. Overrides are `group=option` (a file under `configs/<group>/`),",
        "`key=value` (a leaf of the composed config), `+key=value` (add a key),",
        "`~key` (remove one), `+group@package=option` (a second copy of a group, e.g.",
        "`+model@role_models.actor=embedded_1_5b`); with `-m` a comma list sweeps",
        "(`strategy=simple,reflexion`). `--cfg job` prints the composed config and runs",
        "nothing. Keys and defaults: [Configuration](configuration.md).",
        "",
        "Hydra's flags (from Hydra's own parser):",
        "",
        *_argument_rows(hydra),
        "",
        "Config groups (from `configs/`):",
        "",
        *rows,
        "",
        "Top-level keys (from `configs/config.yaml`):",
        "",
        *_key_rows(CONFIGS / "config.yaml"),
        "",
    ]


def cli_page() -> str:
    """The command-line reference, from ``reflexion_bench.cli.COMMANDS`` and each parser."""
    from reflexion_bench.cli import COMMANDS

    out = [
        "# Command line",
        "",
        "Generated at build time from the parsers (`docs/hooks/reference.py`):",
        "`reflexion_bench/cli.py` lists the commands, each `reflexion_bench/commands/*.py`",
        "builds its argparse parser.",
        "",
        "| command | what it does |",
        "| --- | --- |",
    ]
    out += [f"| [`{n}`](#{_slug(n)}) | {_cell(h)} |" for n, (_, h) in COMMANDS.items()]
    out.append("")
    for name, (module, help_) in COMMANDS.items():
        out += [f"## {name}", "", _cell(help_), ""]
        if name == "run":
            out += _run_section()
        else:
            out += _parser_section(command_parser(module), 3)
    return "\n".join(out) + "\n"


# -------------------------------------------------------------------- configuration
def _slug(text: str) -> str:
    # python-markdown's toc slug: what `[...](page.md#anchor)` must name.
    from markdown.extensions.toc import slugify

    return str(slugify(text, "-"))


def config_groups() -> dict[str, list[str]]:
    """``group -> options``: every folder under ``configs/`` holding YAML files."""
    groups: dict[str, list[str]] = {}
    for path in sorted(CONFIGS.rglob("*.yaml")):
        rel = path.relative_to(CONFIGS)
        if len(rel.parts) > 1:
            groups.setdefault("/".join(rel.parts[:-1]), []).append(path.stem)
    return groups


def primary_defaults() -> dict[str, str]:
    """The primary config's defaults list as ``group -> option``."""
    data = yaml.safe_load((CONFIGS / "config.yaml").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for item in data.get("defaults", []):
        if isinstance(item, dict):
            for key, value in item.items():
                key = str(key).replace("optional ", "").replace("override ", "")
                out[key] = "null" if value is None else str(value)
    return out


_KEY = re.compile(r"^(?P<indent> *)(?P<key>[^\s#:][^:#]*?):(?P<rest>.*)$")


def _comments(text: str) -> tuple[list[str], dict[str, str]]:
    """The file's header comment, and each dotted key's comment (on its line, else the
    comment block right above it)."""
    lines = text.splitlines()
    header: list[str] = []
    i = 0
    while i < len(lines) and lines[i].lstrip().startswith("#"):
        line = lines[i].strip()
        if not line.startswith("# @package"):
            # Keep the indentation after "# ": headers indent their example commands.
            header.append(line[2:].rstrip() if line.startswith("# ") else line[1:].strip())
        i += 1
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    comments: dict[str, str] = {}
    for line in lines[i:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            pending.append(stripped.lstrip("#").strip())
            continue
        m = _KEY.match(line)
        if not stripped or stripped.startswith("-") or m is None:
            pending = [] if not stripped else pending
            continue
        indent = len(m.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = m.group("key").strip().strip("'\"")
        stack.append((indent, key))
        dotted = ".".join(k for _, k in stack)
        rest = m.group("rest")
        trailing = ""
        if "#" in rest and not re.search(r"['\"][^'\"]*#", rest):
            trailing = rest.split("#", 1)[1].strip()
        note = trailing or " ".join(pending)
        if note:
            comments[dotted] = note
        pending = []
    return header, comments


def _leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            if prefix == "" and key == "defaults":
                continue
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, data


def _value(value: Any) -> str:
    if value is None:
        return "`null`"
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True)
    text = str(text).strip().removesuffix("...").strip()
    if len(text) > 80:
        text = text[:77] + "..."
    return "`" + _cell(text).replace("`", "'") + "`" if text else "`''`"


def _key_rows(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    _, comments = _comments(text)
    rows = ["| key | default | comment |", "| --- | --- | --- |"]
    for key, value in _leaves(data):
        if key.startswith("hydra.") or not key:
            continue
        rows.append(f"| `{_cell(key)}` | {_value(value)} | {_cell(comments.get(key, ''))} |")
    return rows if len(rows) > 2 else []


def _defaults_line(path: Path) -> str:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    items = data.get("defaults") if isinstance(data, dict) else None
    if not items:
        return ""
    shown = []
    for item in items:
        if isinstance(item, dict):
            shown += [f"`{k}: {'null' if v is None else v}`" for k, v in item.items()]
        else:
            shown.append(f"`{item}`")
    return "Defaults list: " + ", ".join(shown) + "."


def _package(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[:1]
    return first[0].split("@package", 1)[1].strip() if first and "@package" in first[0] else ""


def configuration_page() -> str:
    """The configuration reference: every group, option, key, default and comment."""
    defaults = primary_defaults()
    header, _ = _comments((CONFIGS / "config.yaml").read_text(encoding="utf-8"))
    out = [
        "# Configuration",
        "",
        "Generated at build time from `configs/` (`docs/hooks/reference.py`): the primary",
        "config, then every group with its options, each option's header comment and its",
        "keys with their defaults and comments, as written in the file (before",
        "composition: `${...}` interpolations are resolved when a run starts). Print the",
        "composed config of any command with `reflexion-bench run <overrides> --cfg job`.",
        "",
        "## config.yaml",
        "",
        " ".join(header),
        "",
        _defaults_line(CONFIGS / "config.yaml"),
        "",
        *_key_rows(CONFIGS / "config.yaml"),
        "",
    ]
    for group, options in config_groups().items():
        out += [f"## {group}", ""]
        if group in defaults:
            out += [f"Default: `{defaults[group]}`.", ""]
        for option in options:
            path = CONFIGS / group / f"{option}.yaml"
            out += [f"### {group}/{option}", ""]
            head, _ = _comments(path.read_text(encoding="utf-8"))
            if head:
                out += ["```text", *head, "```", ""]
            package = _package(path)
            if package:
                out += [f"Package: `{package}`.", ""]
            line = _defaults_line(path)
            if line:
                out += [line, ""]
            out += [*_key_rows(path), ""]
    if "local" not in config_groups():
        # Git-ignored and usually empty, so it has no options to list.
        out += ["## local", "", "`configs/local/default.yaml` (git-ignored, optional):", ""]
        out += ["personal overrides, applied after the primary config.", ""]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------- the hook
def on_files(files: Any, config: Any) -> Any:
    """Add the two generated pages to the site (mkdocs' ``on_files`` event)."""
    from mkdocs.structure.files import File

    for uri, render in ((CLI_PAGE, cli_page), (CONFIG_PAGE, configuration_page)):
        files.append(File.generated(config, uri, content=render()))
    return files
