"""Bad input gives a short error naming the key or file, never a traceback (issue 14,
item 8): config values, binary data files, corrupt run logs, runaway model replies."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import execute
from reflexion_bench.runner.runlog import load_run_records
from tests.runner.test_loop import make_ctx
from tests.toy import toy_responder

ROOT = Path(__file__).resolve().parents[2]
TOY = [
    f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
    "env=toy",
    "model=toy",
    "sandbox=none",
    "progress=false",
]
WORDS = ["alpha", "beta", "gamma"]
# Bytes that are not UTF-8 anywhere (0xff never occurs in UTF-8) and hold no newline.
GARBAGE = bytes([0xFF, 0xFE, 0x00, 0x9C, 0xC3, 0x28, 0xA0, 0xE2, 0x82]) * 40


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def binary_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bin") / "data.jsonl"
    path.write_bytes(GARBAGE + b"\n" + GARBAGE)
    return path


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("limit=abc", "limit"),
        ("fail_on_error=abc", "fail_on_error"),
        ("fail_on_error=2", "fail_on_error"),
        ("generate.temperature=hot", "generate.temperature"),
        ("generate.max_reply_chars=0", "generate.max_reply_chars"),
    ],
)
def test_bad_config_value_is_one_line_naming_the_key(
    tmp_path: Path, override: str, key: str
) -> None:
    out = run_cli("run", *TOY, f"run_dir={tmp_path / 'r'}", override)
    assert out.returncode == 2, out.stderr
    assert f"`{key}`" in out.stderr and "allowed:" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "r" / "log.jsonl").exists()  # refused at start, nothing ran


def test_env_path_to_a_binary_file_names_the_key_and_file(
    tmp_path: Path, binary_file: Path
) -> None:
    out = run_cli(
        "run",
        "env=humaneval",
        "model=mock",
        "sandbox=none",
        "progress=false",
        f"run_dir={tmp_path / 'r'}",
        f"env.path={binary_file}",
    )
    assert out.returncode == 2
    assert "env.path" in out.stderr and str(binary_file) in out.stderr
    assert "UTF-8" in out.stderr and "Traceback" not in out.stderr


async def test_log_ending_in_random_bytes_still_reports_and_resumes(tmp_path: Path) -> None:
    await execute(make_ctx(tmp_path, MockModel(responder=toy_responder), WORDS))
    before = load_run_records(tmp_path)
    with (tmp_path / "log.jsonl").open("ab") as fh:
        fh.write(GARBAGE)  # a crash mid-write on a failing disk: no newline either

    rep = run_cli("report", str(tmp_path), "--json", "--no-write")
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["n_tasks"] == 3
    assert "dropped a corrupt record" in rep.stderr and "Traceback" not in rep.stderr

    model = MockModel(responder=toy_responder)
    counts = await execute(make_ctx(tmp_path, model, WORDS))
    assert counts["skipped"] == 3 and not model.calls
    assert load_run_records(tmp_path) == before


async def test_corrupt_record_mid_log_is_dropped_with_a_warning_and_its_task_redone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ref = tmp_path / "ref"
    await execute(make_ctx(ref, MockModel(responder=toy_responder), WORDS))
    run = tmp_path / "run"
    run.mkdir()
    lines = (ref / "log.jsonl").read_bytes().splitlines(keepends=True)
    # beta's first trial (not its final one) is garbled on disk.
    hit = next(
        i
        for i, line in enumerate(lines)
        if json.loads(line)["task_id"] == "toy/1" and json.loads(line)["trial"] == 1
    )
    lines[hit] = GARBAGE + b"\n"
    (run / "log.jsonl").write_bytes(b"".join(lines))

    with caplog.at_level(logging.WARNING, logger="reflexion_bench.runner.runlog"):
        recs = load_run_records(run)
    assert f"log.jsonl:{hit + 1}: dropped a corrupt record" in caplog.text
    # beta's surviving trial-2 record alone must not pass for a finished task.
    assert {r["task_id"] for r in recs} == {"toy/0", "toy/2"}

    model = MockModel(responder=toy_responder)
    counts = await execute(make_ctx(run, model, WORDS))
    assert counts["ran"] == 1 and counts["skipped"] == 2
    assert all("beta" in p.lower() for p in model.prompts)

    def essence(rs: Sequence[dict[str, object]]) -> list[tuple[object, ...]]:
        return sorted((r["task_id"], r["trial"], r["candidate"], r["final"]) for r in rs)

    assert essence(load_run_records(run)) == essence(load_run_records(ref))


async def test_a_50_mb_reply_is_cut_and_the_cut_recorded(tmp_path: Path) -> None:
    huge = "alpha " * (50_000_000 // 6)

    def runaway(messages: Sequence[Message], config: GenerateConfig) -> str:
        if messages[-1].content.startswith("Say the word alpha") and "[Reflection" not in (
            messages[-1].content
        ):
            return huge
        return toy_responder(list(messages), config)

    await execute(make_ctx(tmp_path, MockModel(responder=runaway), ["alpha"]))
    size = (tmp_path / "log.jsonl").stat().st_size
    assert size < 2_000_000, f"log grew to {size} bytes"
    first = load_run_records(tmp_path)[0]
    call = first["model_calls"][0]
    assert call["reply_chars"] == len(huge)
    assert call["max_reply_chars"] == GenerateConfig().max_reply_chars == 200_000
    assert len(first["candidate"]) <= 200_000
    # Calls that were not cut say nothing of a cut.
    assert first["model_calls"][1]["reply_chars"] is None


async def test_model_layer_caps_before_the_cache_stores_the_reply(tmp_path: Path) -> None:
    reply = "x" * 5_000
    model = ModelLayer(
        MockModel(responses=[reply]), cache="read_write", cache_path=str(tmp_path / "c.sqlite")
    )
    cfg = GenerateConfig(max_reply_chars=100)
    msgs = [Message("user", "talk")]
    out = await model.generate(msgs, cfg)
    assert out.text == "x" * 100 and out.reply_chars == 5_000
    replay = await model.generate(msgs, cfg)  # the script is spent: this is the cache
    assert replay.cached and replay.text == "x" * 100
    await model.aclose()
