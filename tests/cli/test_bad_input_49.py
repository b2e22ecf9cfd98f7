"""Issue 49: more bad input that must answer in at most 4 lines naming the option or config
key to fix, exit non-zero, show no traceback and lose nothing: an unusable ``--out`` of
``report``, ``import-inspect`` and ``export-inspect`` (checked before the work), a
non-integer ``strategy.max_trials``, ``view --port`` out of range, ``evaluate`` on a file
with no sample, ``model.base_urls`` on a one-server model, ``model=openai_compatible``
without ``model.name``; and ``+model.prices.<model>={...}`` adds a price the run uses.

Each case runs the real ``reflexion-bench`` in a subprocess, as tests/cli/test_bad_input.py
does (its helpers are reused)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reflexion_bench.testing.fake_llm_server import fake_server_process
from tests.cli.test_bad_input import SEARCH, TOY, cli, short_error


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished toy run (seconds), the input of report and export-inspect."""
    folder = tmp_path_factory.mktemp("runs") / "toy"
    out = cli("run", *TOY, f"run_dir={folder}", "limit=1", "strategy.max_trials=1")
    assert out.returncode == 0, out.stderr
    return folder


def _a_file(tmp_path: Path) -> Path:
    target = tmp_path / "a_file"
    target.write_text("mine\n")
    return target


# --------------------------------------------------------------------------- report --out


@pytest.mark.parametrize("where", ["file", "under_a_file", "proc", "no_write_permission"])
def test_report_refuses_an_unusable_out_before_computing(
    tmp_path: Path, run_dir: Path, where: str
) -> None:
    a_file = _a_file(tmp_path)
    if where == "file":
        out = a_file
    elif where == "under_a_file":
        out = a_file / "sub"
    elif where == "proc":
        out = Path("/proc/x/report")  # not writable, even by root
    else:
        if os.geteuid() == 0:
            pytest.skip("running as root: permission bits do not stop root's writes")
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        out = locked / "report"
    before = (run_dir / "summary.json").read_bytes()
    result = cli("report", str(run_dir), "--out", str(out))
    text = short_error(result)
    assert "--out" in text and str(out) in text
    assert result.stdout == ""  # refused before the report was computed and printed
    assert a_file.read_text() == "mine\n"
    assert (run_dir / "summary.json").read_bytes() == before


def test_report_makes_a_missing_parent_of_out(tmp_path: Path, run_dir: Path) -> None:
    # A missing parent is not an error: the folders are made, as for `evaluate --out`.
    out = tmp_path / "new" / "report"
    result = cli("report", str(run_dir), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "manifest.txt").is_file()


# --------------------------------------------------------------------------- import/export


@pytest.mark.parametrize("where", ["file", "under_a_file"])
def test_import_inspect_names_out_when_it_cannot_be_a_folder(tmp_path: Path, where: str) -> None:
    a_file = _a_file(tmp_path)
    out = a_file if where == "file" else a_file / "run"
    log = tmp_path / "log.eval"
    log.write_text("not read: --out is checked first\n")
    text = short_error(cli("import-inspect", str(log), "--out", str(out)))
    assert "--out" in text and str(out) in text and "[Errno" not in text
    assert a_file.read_text() == "mine\n"


@pytest.mark.parametrize("where", ["under_a_file", "folder", "proc"])
def test_export_inspect_names_out_when_it_cannot_be_written(
    tmp_path: Path, run_dir: Path, where: str
) -> None:
    a_file = _a_file(tmp_path)
    out = {
        "under_a_file": a_file / "run.eval",
        "folder": tmp_path,
        "proc": Path("/proc/x/run.eval"),
    }[where]
    text = short_error(cli("export-inspect", str(run_dir), "--out", str(out)))
    assert "--out" in text and str(out) in text and "[Errno" not in text
    assert a_file.read_text() == "mine\n"


# --------------------------------------------------------------------------- view, evaluate


def test_view_names_port_and_its_range(tmp_path: Path) -> None:
    text = short_error(cli("view", str(tmp_path), "--port", "99999"))
    assert "--port" in text and "65535" in text


@pytest.mark.parametrize("content", ["garbage\n{not json\n\n", "", "[1, 2]\n"])
def test_evaluate_with_no_sample_fails_and_says_how_many_lines(
    tmp_path: Path, content: str
) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(content)
    results = tmp_path / "results.jsonl"
    text = short_error(
        cli(
            "evaluate", "--benchmark", "humaneval", "--samples", str(samples), "--out", str(results)
        )
    )
    lines = len([line for line in content.splitlines() if line.strip()])
    assert "--samples" in text and f"read {lines} non-blank lines" in text
    assert not results.exists()


# --------------------------------------------------------------------------- run config


@pytest.mark.parametrize("value", ["zero", "0", "2.5", "true"])
def test_a_bad_max_trials_names_the_key(tmp_path: Path, value: str) -> None:
    text = short_error(
        cli("run", *TOY, f"run_dir={tmp_path / 'r'}", f"strategy.max_trials={value}")
    )
    assert "`strategy.max_trials`" in text and "positive integer" in text
    assert "not supported between" not in text
    assert not (tmp_path / "r").exists()


def test_base_urls_on_a_one_server_model_points_at_the_pool(tmp_path: Path) -> None:
    text = short_error(
        cli(
            "run",
            *TOY,
            f"run_dir={tmp_path / 'r'}",
            "model=openai_compatible",
            "model.name=m",
            "model.base_urls=[http://127.0.0.1:1/v1,http://127.0.0.1:2/v1]",
        )
    )
    assert "`model=openai_pool`" in text and "did you mean" not in text


@pytest.mark.parametrize("given", [["model.base_url=http://127.0.0.1:1/v1"], []])
def test_openai_compatible_without_a_name_names_model_name(
    tmp_path: Path, given: list[str]
) -> None:
    run = tmp_path / "r"
    text = short_error(cli("run", *TOY, f"run_dir={run}", "model=openai_compatible", *given))
    assert "`model.name`" in text and "model.name=" in text
    assert ("`model.base_url`" in text) == (not given)
    assert not run.exists()


def test_an_added_price_is_the_one_the_run_pays(tmp_path: Path) -> None:
    # The form configs/model/openai_compatible.yaml documents and Hydra's error for a new
    # key of a free mapping recommends: `+model.prices.<served name>={...}`.
    run = tmp_path / "r"
    with fake_server_process() as (_, port):
        out = cli(
            "run",
            SEARCH,
            "env=toy",
            "sandbox=none",
            "progress=false",
            "limit=1",
            "strategy.max_trials=1",
            "model=openai_compatible",
            "model.name=my-model",
            f"model.base_url=http://127.0.0.1:{port}/v1",
            "model.cache=off",
            "+model.prices.my-model={input:1,output:2}",
            f"run_dir={run}",
        )
    assert out.returncode == 0, out.stderr
    total = json.loads((run / "summary.json").read_text())["usage"]["total"]
    assert total["prompt_tokens"] > 0 and total["completion_tokens"] > 0
    expected = (total["prompt_tokens"] * 1 + total["completion_tokens"] * 2) / 1e6
    assert total["cost_usd"] == pytest.approx(expected)


def test_an_added_key_under_a_built_node_that_nothing_takes_still_fails(tmp_path: Path) -> None:
    # The model's constructor gets `+model.pricez.m` as `pricez` and refuses it by name: the
    # price form above is accepted because its mapping is read, not because anything goes.
    text = short_error(
        cli("run", *TOY, f"run_dir={tmp_path / 'r'}", "model=mock", "+model.pricez.m={input:1}")
    )
    assert "model.pricez" in text
    assert not (tmp_path / "r").exists()
