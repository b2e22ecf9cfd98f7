"""``reflexion-bench run ... --estimate`` (issue 32): calls, tokens and dollars of a run
before it runs, from a dry run with the mock model and the paper's own logs, priced by
the one dated price table. It exits 0, leaves no folder and contacts no model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.runner.estimate import (
    DryRun,
    Estimate,
    PaperFigures,
    _completion_tokens,
    _programming,
    compose_config,
    local_speed,
)
from reflexion_bench.runner.reference_logs import LoggedFigures
from reflexion_bench.testing.fake_llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
PRICES = yaml.safe_load((CONFIG_DIR / "prices" / "default.yaml").read_text(encoding="utf-8"))
LINE = re.compile(
    r"(?P<kind>expected|at most)[^:]*: (?P<calls>[\d,]+) calls, (?P<tokens>[\d,]+) tokens "
    r"\((?P<prompt>[\d,]+) prompt \+ (?P<completion>[\d,]+) completion\), \$(?P<usd>[\d,.]+)"
)


def estimate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "run", *args, "--estimate"],
        cwd=tmp_path,  # results_dir is ./results: a run would leave a folder here
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def figures(stdout: str) -> dict[str, dict[str, float]]:
    out = {}
    for m in LINE.finditer(stdout):
        out[m["kind"]] = {k: float(m[k].replace(",", "")) for k in m.groupdict() if k != "kind"}
    return out


@pytest.mark.network_local
@pytest.mark.requires("shared_data")
def test_gpt4_estimate_is_priced_dated_and_runs_nothing(tmp_path: Path, shared_data: Path) -> None:
    with FakeLLMServer(reply="never asked") as srv:
        out = estimate(
            tmp_path,
            "experiment=table1_humaneval_py",
            "model=gpt4",
            f"model.base_url={srv.openai_base_url}",  # were the model contacted, it is here
        )
        assert srv.stats()["requests"] == 0
    assert out.returncode == 0, out.stderr[-3000:]
    assert list(tmp_path.iterdir()) == []  # no run folder, no results/ folder
    assert str(PRICES["prices_date"]) in out.stdout
    got = figures(out.stdout)
    price = PRICES["prices"]["gpt-4"]
    for kind in ("expected", "at most"):
        f = got[kind]
        assert f["calls"] > 0 and f["usd"] > 0
        assert f["tokens"] == f["prompt"] + f["completion"]
        # The dollars are the tokens at the table's gpt-4 price (cents rounding).
        usd = (f["prompt"] * price["input"] + f["completion"] * price["output"]) / 1e6
        assert f["usd"] == pytest.approx(usd, abs=0.01)
    assert got["at most"]["usd"] >= got["expected"]["usd"]
    # The paper's HumanEval log gives the trials: fewer than K on average.
    assert "the paper's log" in out.stdout and "reflexion_humaneval_py" in out.stdout
    assert got["at most"]["calls"] > got["expected"]["calls"]


def test_without_the_paper_logs_the_dry_run_counts_and_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "data"
    empty.mkdir()
    work = tmp_path / "cwd"
    work.mkdir()
    out = estimate(
        work, "experiment=table1_humaneval_py", "strategy.max_trials=3", f"paths.data_dir={empty}"
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "the paper's logs are not here" in out.stdout
    got = figures(out.stdout)
    # Every task to K: the expected calls and prompts are the upper bound's; the replies
    # are at their logged mean length there, at their max_tokens in the bound.
    for key in ("calls", "prompt"):
        assert got["expected"][key] == got["at most"][key]
    assert got["expected"]["completion"] < got["at most"]["completion"]
    assert list(work.iterdir()) == []


def test_sweep_estimates_every_job_and_sums(tmp_path: Path) -> None:
    out = estimate(tmp_path, "-m", "experiment=table1_humaneval_py", "strategy=simple,retry")
    assert out.returncode == 0, out.stderr[-3000:]
    blocks = out.stdout.count("estimate for: reflexion-bench run")
    assert blocks == 2
    each = [
        float(m["usd"].replace(",", ""))
        for m in LINE.finditer(out.stdout)
        if m["kind"] == "expected"
    ]
    total = re.search(r"all 2 jobs, expected: .*\$([\d,.]+)", out.stdout)
    assert total and float(total[1].replace(",", "")) == pytest.approx(sum(each), abs=0.02)


def test_a_model_without_a_price_gets_no_dollar_figure(tmp_path: Path) -> None:
    out = estimate(tmp_path, "experiment=table1_humaneval_py", "model.name=a-model-with-no-price")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "no price for 'a-model-with-no-price'" in out.stdout
    assert "cost unknown" in out.stdout and not figures(out.stdout)


def test_a_bad_override_fails_with_one_line(tmp_path: Path) -> None:
    out = estimate(tmp_path, "experiment=no_such_experiment")
    assert out.returncode == 2
    assert out.stderr.startswith("error:") and "Traceback" not in out.stderr


def test_trials_from_a_programming_log(tmp_path: Path) -> None:
    folder = tmp_path / "programming_runs" / "root" / "reflexion_humaneval_py"
    folder.mkdir(parents=True)
    rows = [
        {"task_id": "HumanEval/0", "solution": "a" * 40, "reflections": []},
        {"task_id": "HumanEval/1", "solution": "b" * 80, "reflections": ["r" * 20]},
        {"task_id": "HumanEval/2", "solution": "c" * 120, "reflections": ["s" * 40] * 4},
    ]
    log = folder / "humaneval-py._reflexion_5_gpt-4_pass_at_k_1_py.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    found = _programming(tmp_path, "humaneval", "reflexion")
    assert isinstance(found, PaperFigures)
    trials = [1 + len(r["reflections"]) for r in rows]  # 1 + logged reflections
    assert found.expected_trials(5) == pytest.approx(sum(trials) / len(trials))
    assert found.expected_trials(2) == pytest.approx(sum(min(t, 2) for t in trials) / len(rows))
    mean_solution = sum(len(r["solution"]) for r in rows) / len(rows)
    assert found.completion["actor"] == pytest.approx(mean_solution / 4)
    assert _programming(tmp_path, "mbpp", "reflexion") is None


@pytest.mark.requires("shared_data")
def test_self_tests_are_expected_at_a_logged_length_and_bounded_at_their_cap(
    tmp_path: Path, shared_data: Path
) -> None:
    # Issue 49: the paper's logs hold no self-tests; counting them at their cap made the
    # "expected" dollars half cap. A logged mean is used, and the cap only in the bound.
    # The reflector's expected length is the paper's logs' (../shared/data): without
    # them it falls back to this project's logged mean, which this test does not pin.
    out = estimate(tmp_path, "experiment=table1_humaneval_py", "model=gpt4")
    assert out.returncode == 0, out.stderr[-3000:]
    expected = re.search(r"completion tokens per call, expected: (.*)", out.stdout)
    assert expected, out.stdout
    assert re.search(r"self_test [\d,]+ \(logged mean of [\d,]+ calls of ", expected[1])
    assert "reflector 77 (the paper's logs, chars/4)" in expected[1]
    assert "max_tokens" not in expected[1]
    assert "at most (max_tokens): actor 512, reflector 256, self_test 512" in out.stdout
    assert "upper bound" in out.stdout and "replies at their logged mean" in out.stdout
    got = figures(out.stdout)
    assert got["expected"]["usd"] < 0.8 * got["at most"]["usd"]
    price = PRICES["prices"]["gpt-4"]
    # The upper bound's completion tokens are the calls at their caps (per role, K trials).
    assert got["at most"]["completion"] == pytest.approx(164 * (512 + 512 + 4 * (512 + 256)), abs=2)
    assert got["at most"]["usd"] == pytest.approx(
        (got["at most"]["prompt"] * price["input"] + got["at most"]["completion"] * price["output"])
        / 1e6,
        abs=0.01,
    )


def test_reply_lengths_prefer_this_models_log_then_the_papers_then_another_models() -> None:
    caps = {"actor": 512.0, "self_test": 512.0, "reflector": 256.0, "critic": 64.0}
    paper = PaperFigures("p", [1.0], {"actor": 50.0, "reflector": 70.0})
    own = LoggedFigures(["o"], ["m"], 3, {"actor": (300.0, 9)})
    others = LoggedFigures(["x"], ["n"], 3, {"actor": (1.0, 1), "self_test": (200.0, 4)})
    got = _completion_tokens(caps, paper, own, others)
    assert got["actor"] == (300.0, "logged mean of 9 calls of this model")
    assert got["reflector"] == (70.0, "the paper's logs, chars/4")
    assert got["self_test"] == (200.0, "logged mean of 4 calls of n")
    assert got["critic"] == (64.0, "no log has it: its max_tokens")


def test_a_local_models_time_is_its_tokens_over_the_committed_speed(tmp_path: Path) -> None:
    cfg = compose_config(
        ["experiment=quickstart", "model.n_threads=2", "model.n_parallel=6"], tmp_path
    )
    speed = json.loads((ROOT / "results/bench/tokens_per_s.json").read_text(encoding="utf-8"))
    rates = speed["results"]["tokens_per_s"]["models"]["embedded"]
    busy = local_speed(cfg, in_flight=6)
    one = local_speed(cfg, in_flight=1)
    assert busy is not None and one is not None
    assert busy[0] == rates["defaults_every_slot_busy"]["tokens_per_s"]
    assert one[0] == rates["defaults_one_request"]["tokens_per_s"]
    assert "results/bench/tokens_per_s.json" in busy[1]
    assert "this machine" in busy[1]  # measured here, or named as not measured here
    old = compose_config(
        ["experiment=quickstart", "model.n_threads=1", "model.n_parallel=1"], tmp_path
    )
    old_speed = local_speed(old, in_flight=1)
    assert old_speed is not None and old_speed[0] == rates["old"]["tokens_per_s"]
    assert local_speed(compose_config(["model=gpt4"], tmp_path), in_flight=8) is None
    dry = DryRun(1, 1.0, {"actor": 1.0}, {"actor": 100.0}, {}, {})
    e = Estimate(
        "x",
        "m",
        10,
        1,
        6,
        None,
        None,
        dry,
        None,
        {"actor": (360.0, "logged")},
        1.0,
        caps={"actor": 720.0},
        speed=busy,
    )
    # 10 tasks x 360 tokens at the measured speed, not divided by the 6 tasks in flight.
    assert e.totals(1.0)["hours"] == pytest.approx(3600 / busy[0] / 3600)
    assert e.totals(1.0, bound=True)["hours"] == pytest.approx(7200 / busy[0] / 3600)
