"""``docs/reproduce.md`` (issue 32): one pasteable command per published number group.

Its ``reflexion-bench run`` lines (fenced shell blocks, ``\\`` continuations joined) are
complete literal commands: no placeholder, no ``...``, no variable, no environment
prefix. Each composes with Hydra's compose API as ``reflexion-bench run <args> --cfg
job`` would (``--estimate`` removed), each Table 1 experiment file has its runs, and the
report commands read folders that the run commands write.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from reflexion_bench.config import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reproduce.md"
GROUPS = ("Table 1", "Table 2", "Table 3", "ALFWorld", "HotpotQA")
FENCE = re.compile(r"^```(\w*)\s*$")
#: ``reflexion-bench report`` options that take a value.
VALUE_FLAGS = {"--format", "--table", "--axis", "--budget", "--out", "--resamples", "--seed"}
VALUE_FLAGS |= {"--equivalence-margin"}


def shell_lines(text: str) -> list[tuple[str, str]]:
    """(section heading, line) of every line in a fenced shell block, continuations joined."""
    out: list[tuple[str, str]] = []
    section, lang, inside, pending = "", "", False, ""
    for raw in text.splitlines():
        fence = FENCE.match(raw.strip())
        if fence:
            inside, lang = not inside, fence.group(1) if not inside else ""
            continue
        if not inside:
            if raw.startswith("## "):
                section = raw[3:].strip()
            continue
        if lang not in ("", "bash", "sh", "shell", "console"):
            continue
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line:
            out.append((section, line))
    return out


LINES = shell_lines(PAGE.read_text(encoding="utf-8"))
RUNS = [(s, line) for s, line in LINES if line.startswith("reflexion-bench run ")]
REPORTS = [(s, line) for s, line in LINES if line.startswith("reflexion-bench report ")]


def args_of(line: str) -> list[str]:
    return [a for a in shlex.split(line)[2:] if a != "--estimate"]


def test_the_page_covers_every_published_group() -> None:
    headings = [s for s, _ in LINES]
    for group in GROUPS:
        assert any(h.startswith(group) for h in headings), group
        assert any(s.startswith(group) for s, _ in RUNS), f"no run command under {group}"
    assert len({line for _, line in RUNS}) >= 8


def test_table_1_runs_every_benchmark_of_its_experiment_files() -> None:
    files = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("table1_*.yaml"))
    assert len(files) >= 5  # HumanEval py/rs, MBPP py/rs, LeetcodeHard
    table1 = [args_of(line) for s, line in RUNS if s.startswith("Table 1")]
    for name in files:
        arms = {a for args in table1 if f"experiment={name}" in args for a in args}
        assert {"strategy=simple", "strategy=reflexion"} <= arms, name


@pytest.mark.parametrize("line", [line for _, line in RUNS])
def test_each_run_command_is_literal(line: str) -> None:
    for bad in ("<", ">", "...", "$", "`"):
        assert bad not in line, (bad, line)
    assert not re.match(r"^\w+=", line)  # no environment prefix
    assert all("=" in a for a in args_of(line)), line  # overrides only, no other flags


@pytest.mark.parametrize("line", sorted({line for _, line in RUNS}))
def test_each_run_command_composes(line: str) -> None:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=args_of(line), return_hydra_config=True)
    experiment = next(a.split("=", 1)[1] for a in args_of(line) if a.startswith("experiment="))
    assert cfg.hydra.runtime.choices.experiment == experiment
    # The concurrency an API model needs is set (auto would run one task at a time).
    assert str(cfg.max_concurrent_tasks).isdigit() and int(cfg.max_concurrent_tasks) > 1


def test_reports_read_what_the_runs_write() -> None:
    real = [line for _, line in RUNS if "--estimate" not in line.split()]
    written = [Path(a.split("=", 1)[1]) for line in real for a in args_of(line) if "run_dir=" in a]
    assert len(written) == len(real)  # every real run names its folder
    assert REPORTS
    for _, line in REPORTS:
        args = shlex.split(line)[2:]
        # Positional arguments only: not the flags, nor the values of flags that take one.
        paths = [
            Path(a)
            for i, a in enumerate(args)
            if not a.startswith("-") and not (i and args[i - 1] in VALUE_FLAGS)
        ]
        assert paths, line
        for p in paths:
            assert any(w == p or p in w.parents for w in written), (p, line)


def test_table_2_report_asks_for_the_self_test_table_with_the_paper() -> None:
    (line,) = [line for s, line in REPORTS if s.startswith("Table 2")]
    args = shlex.split(line)
    assert "--paper" in args and args[args.index("--table") + 1] == "self_tests"
