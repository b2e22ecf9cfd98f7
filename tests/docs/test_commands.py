"""Every ``reflexion-bench run ...`` command of the docs and the README composes.

Commands are read from the Markdown the way a reader copies them: from fenced code
blocks (not YAML, JSON or Python ones), indented code lines and inline code spans,
``\\`` continuations joined, a trailing ``# comment`` and anything after ``&&``/``;``/``|``
cut, ``--estimate`` and a bare ``...`` ("your other overrides") dropped. Each is
composed with Hydra's compose API against ``configs/``, each value combination of a
``-m`` sweep expanded by Hydra's own basic sweeper: that is what ``reflexion-bench run
<overrides> --cfg job`` prints, and nothing runs. A placeholder such as ``<name>`` or an
unknown flag fails: a command in the docs must be one a reader can paste.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser

from reflexion_bench.config import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = re.compile(r"(?:^|(?<=[\s/`(]))reflexion-bench run(?=\s|`|$)")
NOT_SHELL = {"yaml", "yml", "json", "python", "py", "toml", "jsonl"}
# Hydra flags that only choose what to print or how to launch: never part of the config.
VIEW_FLAGS = {"--resolve", "--run", "-r"}
VALUE_FLAGS = {"--cfg", "-c", "--package", "-p", "--info", "-i"}


@dataclass(frozen=True)
class Command:
    """One documented ``run`` command: where it is, and its arguments after ``run``."""

    where: str
    text: str


def _after_run(text: str) -> str:
    m = RUN.search(text)
    return text[m.end() :] if m else ""


def _cut(rest: str) -> str:
    lexer = shlex.shlex(rest, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    kept: list[str] = []
    for token in lexer:
        if token.startswith("#") or set(token) <= set(";&|"):
            break
        kept.append(token)
    return shlex.join(kept)


def extract(text: str, where: str) -> list[Command]:
    """The run commands of one Markdown text (see the module docstring)."""
    lines = text.splitlines()
    out: list[Command] = []
    fence: str | None = None
    lang = ""
    paragraph: list[tuple[int, str]] = []

    def flush() -> None:
        # A span may wrap: search the paragraph as one line, report the span's own line.
        joined = " ".join(line for _, line in paragraph)
        ends = [sum(len(ln) + 1 for _, ln in paragraph[: k + 1]) for k in range(len(paragraph))]
        for m in re.finditer(r"`([^`]+)`", joined):
            if RUN.search(m.group(1)):
                number = paragraph[next(k for k, e in enumerate(ends) if m.start() < e)][0]
                out.append(Command(f"{where}:{number}", _cut(_after_run(m.group(1)))))
        paragraph.clear()

    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        stripped = line.strip()
        marker = re.match(r"^\s*(```+|~~~+)\s*(\S*)", line)
        if fence is None and marker:
            flush()
            fence, lang = marker.group(1), marker.group(2).lower()
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is not None or (line.startswith("    ") and RUN.search(line) and not paragraph):
            if (fence is not None and lang in NOT_SHELL) or not RUN.search(line):
                i += 1
                continue
            comment = stripped.startswith("#")
            command = _after_run(line)
            while command.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                more = lines[i].strip()
                command = command.rstrip()[:-1] + " " + (more.lstrip("#") if comment else more)
            out.append(Command(f"{where}:{number}", _cut(command)))
        elif not stripped:
            flush()
        else:
            paragraph.append((number, line))
        i += 1
    flush()
    return out


def documented() -> list[Command]:
    return [
        c for page in PAGES for c in extract(page.read_text("utf-8"), str(page.relative_to(ROOT)))
    ]


def jobs(command: Command) -> list[list[str]]:
    """The override lists ``command`` composes: one, or one per sweep combination."""
    args = shlex.split(command.text)
    overrides: list[str] = []
    multirun = False
    it = iter(args)
    for arg in it:
        if arg in ("-m", "--multirun"):
            multirun = True
        elif arg in VALUE_FLAGS:
            next(it, None)
        elif arg in VIEW_FLAGS or arg in ("--estimate", "..."):
            continue
        elif arg.startswith("-"):
            raise AssertionError(f"{command.where}: unhandled flag {arg!r} in {command.text!r}")
        elif "<" in arg or ">" in arg:
            raise AssertionError(f"{command.where}: placeholder {arg!r}: write a real value")
        else:
            overrides.append(arg)
    if not multirun:
        return [overrides]
    parsed = OverridesParser.create().parse_overrides(overrides)
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def compose_job(overrides: list[str]) -> object:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=True)


COMMANDS = documented()


def test_the_docs_have_run_commands() -> None:
    # The pages the commands come from exist and hold the benchmarks' commands.
    pages = {c.where.split(":")[0] for c in COMMANDS}
    assert "README.md" in pages
    assert {"docs/benchmarks/humaneval-mbpp.md", "docs/sweeps.md", "docs/models.md"} <= pages
    assert len(COMMANDS) >= 40


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.where)
def test_documented_command_composes(command: Command) -> None:
    for overrides in jobs(command):
        try:
            compose_job(overrides)
        except Exception as exc:
            raise AssertionError(
                f"{command.where}: `reflexion-bench run {command.text}` does not compose "
                f"(overrides {overrides}): {exc}"
            ) from exc


# -------------------------------------------------------------- the extractor itself
PAGE = """\
Prose with `reflexion-bench run env=mbpp
limit=3` wrapped, and `reflexion-bench report RUN` (not run).

```bash
# a comment line, not a command
reflexion-bench run -m strategy=simple,reflexion seed=0,1 \\
    limit=2   # trailing comment
reflexion-bench report results/x
bash scripts/setup.sh && .venv/bin/reflexion-bench run experiment=quickstart --estimate
```

```yaml
#   reflexion-bench run model=not_a_model
```

    reflexion-bench run env=humaneval ... limit=1
"""


def test_extract_joins_continuations_and_ignores_other_lines() -> None:
    got = [(c.where, c.text) for c in extract(PAGE, "p.md")]
    assert got == [
        ("p.md:1", "env=mbpp limit=3"),
        ("p.md:6", "-m strategy=simple,reflexion seed=0,1 limit=2"),
        ("p.md:9", "experiment=quickstart --estimate"),
        ("p.md:16", "env=humaneval ... limit=1"),
    ]


def test_a_sweep_composes_every_combination() -> None:
    sweep = extract(PAGE, "p.md")[1]
    assert sorted(map(tuple, jobs(sweep))) == sorted(
        (f"strategy={s}", f"seed={n}", "limit=2") for s in ("simple", "reflexion") for n in (0, 1)
    )
    assert jobs(extract(PAGE, "p.md")[2]) == [["experiment=quickstart"]]
    assert jobs(extract(PAGE, "p.md")[3]) == [["env=humaneval", "limit=1"]]


@pytest.mark.parametrize(
    "text",
    ["model=not_a_model", "strategy.max_trails=3", "+model@role_models.actor=no_such_model"],
)
def test_a_wrong_command_does_not_compose(text: str) -> None:
    (overrides,) = jobs(Command("p.md:1", text))
    with pytest.raises(Exception):  # noqa: B017 - Hydra raises several types
        compose_job(overrides)


def test_a_placeholder_or_unknown_flag_fails() -> None:
    for text in ("strategy=<name>", "--frobnicate env=mbpp"):
        with pytest.raises(AssertionError):
            jobs(Command("p.md:1", text))


def test_the_two_commands_print_their_config() -> None:
    """The README's main job, as a reader pastes it after setup, composes in a real
    ``reflexion-bench`` process (``--cfg job``: nothing runs)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("## The two commands") :]
    section = section[: section.index("\n## ", 1)]
    assert "bash scripts/setup.sh && .venv/bin/reflexion-bench run experiment=quickstart" in section
    assert "\nbash scripts/test.sh\n" in section
    assert (ROOT / "scripts/setup.sh").is_file() and (ROOT / "scripts/test.sh").is_file()
    exe = Path(sys.executable).parent / "reflexion-bench"
    proc = subprocess.run(
        [str(exe), "run", "experiment=quickstart", "--cfg", "job"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "name: quickstart" in proc.stdout and "limit: 10" in proc.stdout


def test_the_readme_is_short_and_links_into_the_docs() -> None:
    """The README stays an entry point (issue 32: at most ~300 lines); the detail is on the
    site, and every link from the README to a page or heading of it resolves."""
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 300
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", readme)
    assert len({path for path, _ in links}) >= 15
    for path, anchor in links:
        page = ROOT / path
        assert page.is_file(), path
        if anchor:
            # The README is read on the forge: its slugs (lower case, punctuation dropped,
            # spaces to hyphens), which for these headings are also the site's.
            heads = re.findall(r"^#+ (.+)$", page.read_text("utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}
            assert anchor in slugs, f"{path}#{anchor}"
