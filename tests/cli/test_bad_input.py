"""Issue 32: every bad key, value, group option and path a new user typed exits non-zero
with at most 4 lines naming the fix ("did you mean" where a near match exists), never a
traceback; a run that fails at start leaves no folder behind (a resumed one is kept).

Each case runs the real ``reflexion-bench`` in a subprocess, with the toy benchmark and
model (tests/configs) or ``model=mock``, whichever is cheapest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
TOY = [SEARCH, "env=toy", "model=toy", "sandbox=none", "progress=false"]
MAX_LINES = 4


def cli(
    *args: str, timeout: float = 180, full_errors: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    if full_errors:
        env["HYDRA_FULL_ERROR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def short_error(out: subprocess.CompletedProcess[str]) -> str:
    """The output of a refused command, checked for the issue's three rules."""
    text = out.stdout + out.stderr
    lines = [line for line in text.splitlines() if line.strip()]
    assert out.returncode != 0, text
    assert "Traceback" not in text, text
    assert 1 <= len(lines) <= MAX_LINES, f"{len(lines)} lines:\n{text}"
    return text


# --------------------------------------------------------------------------- run


def test_multirun_with_cfg_job_says_to_drop_m() -> None:
    text = short_error(
        cli(
            "run",
            "-m",
            "experiment=table1_humaneval_py",
            "strategy=simple,reflexion",
            "--cfg",
            "job",
        )
    )
    assert "`-m`" in text and "--cfg" in text


def test_an_added_key_nothing_reads_is_an_error_and_leaves_no_folder(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    text = short_error(cli("run", *TOY, f"run_dir={run_dir}", "+typo=1"))
    assert "`+typo=1`" in text and "nothing in this run reads" in text
    assert not run_dir.exists()
    assert not (run_dir / "config.yaml").exists()  # never recorded as if it were used


def test_a_misspelled_added_sampling_key_gets_a_did_you_mean(tmp_path: Path) -> None:
    text = short_error(cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "+generate.temprature=0.5"))
    assert "did you mean `temperature`" in text


def test_an_added_key_a_constructor_reads_is_still_accepted(tmp_path: Path) -> None:
    # `+strategy.x` reaches the Strategy constructor, which names the key itself: the
    # refusal of unread keys must not fire for it (the existing "read" logic decides).
    out = cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "+strategy.not_a_field=1")
    assert "nothing in this run reads" not in out.stderr


def test_a_new_key_in_a_free_mapping_says_how_to_add_it(tmp_path: Path) -> None:
    # `model.extra_body` of an OpenAI-compatible model is one: {} in the model file.
    pool = [SEARCH, "env=toy", "sandbox=none", "model=openai_pool", "model.name=m"]
    text = short_error(
        cli("run", *pool, f"run_dir={tmp_path / 'r'}", "model.extra_body={seed_all:true}")
    )
    assert "`++model.extra_body={...}`" in text and "`+model.extra_body.seed_all=...`" in text
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("override", "key", "suggestion"),
    [
        ("typo_key=1", "typo_key", None),
        ("strategy.max_trails=3", "strategy.max_trails", "max_trials"),
        ("generate.temprature=0.5", "generate.temprature", "temperature"),
    ],
)
def test_an_unknown_key_is_one_line_with_did_you_mean(
    tmp_path: Path, override: str, key: str, suggestion: str | None
) -> None:
    text = short_error(cli("run", *TOY, f"run_dir={tmp_path / 'r'}", override))
    assert f"`{key}`" in text and "not a config key" in text
    if suggestion:
        assert f"did you mean `{suggestion}`" in text
    assert not (tmp_path / "r").exists()


def test_hydra_full_error_set_by_the_user_still_gives_the_traceback(tmp_path: Path) -> None:
    out = cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "typo_key=1", full_errors=True)
    assert out.returncode != 0
    assert "Traceback" in out.stderr and "ConfigCompositionException" in out.stderr


def test_an_unknown_group_option_lists_the_options_briefly(tmp_path: Path) -> None:
    text = short_error(cli("run", "model=mock", "env=nonexistent", f"run_dir={tmp_path / 'r'}"))
    options = sorted(p.stem for p in (ROOT / "configs" / "env").glob("*.yaml"))
    assert "env=nonexistent" in text
    assert all(o in text for o in options)  # the listing, on one line


def test_a_near_group_option_is_suggested(tmp_path: Path) -> None:
    text = short_error(cli("run", "model=mock", "strategy=reflexon", f"run_dir={tmp_path / 'r'}"))
    assert "did you mean `reflexion`" in text


@pytest.mark.parametrize("where", ["proc", "file"])
def test_a_run_dir_that_cannot_be_made_names_run_dir(tmp_path: Path, where: str) -> None:
    if where == "file":
        target = tmp_path / "a_file"
        target.write_text("not a folder\n")
    else:
        target = Path("/proc/x")
    text = short_error(cli("run", *TOY, f"run_dir={target}"))
    assert str(target) in text and "run_dir=" in text
    if where == "file":
        assert target.read_text() == "not a folder\n"  # untouched


def test_a_failed_sweep_job_is_one_line_and_the_sweep_exits_non_zero(tmp_path: Path) -> None:
    text = short_error(
        cli("run", "-m", *TOY, "limit=abc", f"paths.results_dir={tmp_path}", "sweep_name=bad")
    )
    failed = [line for line in text.splitlines() if "] failed;" in line]
    assert len(failed) == 1 and "`limit`" in failed[0]  # the job's line carries its error
    assert "1 of 1 sweep jobs failed" in text
    sweep = tmp_path / "sweeps" / "bad"
    assert [p.name for p in sweep.iterdir() if p.is_dir()] == []  # no job folder left


def test_several_failed_sweep_jobs_get_one_line_each(tmp_path: Path) -> None:
    out = cli("run", "-m", *TOY, "limit=abc,xyz", f"paths.results_dir={tmp_path}")
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Traceback" not in text
    failed = [line for line in text.splitlines() if "] failed;" in line]
    assert len(failed) == 2
    assert any("'abc'" in line for line in failed) and any("'xyz'" in line for line in failed)
    assert "Error executing job" not in text  # Hydra's extra line says nothing new


# --------------------------------------------------------------------------- folders


def test_a_failed_start_leaves_no_folder(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    short_error(cli("run", *TOY, f"run_dir={run_dir}", "limit=abc"))
    assert not run_dir.exists()


def test_a_resumed_folder_is_never_removed(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    first = cli("run", *TOY, f"run_dir={run_dir}", "limit=2")
    assert first.returncode == 0, first.stderr
    log = (run_dir / "log.jsonl").read_bytes()
    # The same folder again, with a value that fails at start.
    short_error(cli("run", *TOY, f"run_dir={run_dir}", "limit=2", "fail_on_error=abc"))
    assert (run_dir / "log.jsonl").read_bytes() == log
    assert (run_dir / "config.yaml").exists() and (run_dir / "summary.json").exists()


def test_a_folder_with_someone_elses_files_is_never_removed(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("mine\n")
    short_error(cli("run", *TOY, f"run_dir={run_dir}", "limit=abc"))
    assert (run_dir / "notes.txt").read_text() == "mine\n"


# --------------------------------------------------------------------------- top level


def test_a_misspelled_command_suggests_the_right_one() -> None:
    text = short_error(cli("veiw"))
    assert "did you mean `view`" in text


def test_version_prints_the_package_version() -> None:
    out = cli("--version")
    assert out.returncode == 0, out.stderr
    printed = out.stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", printed), printed
    assert printed == version("reflexion-bench")


# --------------------------------------------------------------------------- evaluate


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    path = tmp_path / "samples.jsonl"
    rows = [
        {"task_id": "HumanEval/0", "completion": "    return False\n"},
        {"task_id": "HumanEval/1", "completion": "    return []\n"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("out", ["/proc/x/results.jsonl", "folder"])
def test_evaluate_refuses_an_unwritable_out_before_scoring(
    tmp_path: Path, samples: Path, out: str
) -> None:
    target = tmp_path if out == "folder" else Path(out)
    text = short_error(
        cli("evaluate", "--benchmark", "humaneval", "--samples", str(samples), "--out", str(target))
    )
    assert "--out" in text and str(target) in text
    assert "passed" not in text  # nothing was scored
    assert not samples.with_name("samples_results.jsonl").exists()


def test_evaluate_refuses_an_isolation_level_that_cannot_score(
    tmp_path: Path, samples: Path
) -> None:
    results = tmp_path / "res.jsonl"
    text = short_error(
        cli(
            "evaluate",
            "--benchmark",
            "humaneval",
            "--samples",
            str(samples),
            "--out",
            str(results),
            "--set",
            "sandbox.isolation=rlimits",
        )
    )
    assert "sandbox." in text  # names the key to change
    assert "passed" not in text and not results.exists()  # refused up front, not per sample
