"""``export-inspect``: a committed run written as an Inspect ``.eval`` log, read back by
``inspect_ai.log.read_eval_log`` and shown by ``inspect view``'s bundled page in headless
Chromium."""

from __future__ import annotations

import functools
import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reflexion_bench.analysis.metrics import hidden_verdict
from reflexion_bench.cli import main as cli_main
from reflexion_bench.runner.runlog import load_run_records

pytestmark = pytest.mark.requires("inspect_ai")

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "strategies-humaneval40" / "reflexion"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "logs" / "reflexion.eval"
    assert cli_main(["export-inspect", str(COMMITTED), "--out", str(out)]) == 0
    return out


def test_read_eval_log_reads_every_sample_and_score(exported: Path) -> None:
    from inspect_ai.log import read_eval_log

    records = load_run_records(COMMITTED)
    by_task: dict[str, list[dict]] = {}
    for r in records:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    log = read_eval_log(str(exported))
    assert log.status == "success"
    # Inspect keeps samples in its own order (by id); every task is there once.
    assert sorted(str(s.id) for s in log.samples) == sorted(by_task)
    for s in log.samples:
        trials = by_task[str(s.id)]
        score = s.scores["hidden"]
        assert score.value == ("C" if hidden_verdict(trials[-1]) else "I")
        assert score.metadata["per_trial"] == [hidden_verdict(r) for r in trials]
        assert score.metadata["first_try"] == hidden_verdict(trials[0])
        calls = [c for r in trials for c in r["model_calls"]]
        models = [e for e in s.events if e.event == "model"]
        assert len(models) == len(calls)
        usage = s.model_usage[trials[0]["model"]]
        assert usage.input_tokens == sum(c["prompt_tokens"] for c in calls)
        assert usage.output_tokens == sum(c["completion_tokens"] for c in calls)
        # The transcript: each trial's reply, and the reflections between trials.
        text = "\n".join(m.text for m in s.messages)
        for r in trials:
            if r.get("reflection"):
                assert r["reflection"] in text
    meta = log.eval.metadata["reflexion_bench"]
    assert meta["harness_version"] and meta["provenance"]["package_version"]
    assert meta["answer_key"]["label"] == "clean"
    total = sum(c["prompt_tokens"] for r in records for c in r["model_calls"])
    assert log.stats.model_usage[records[0]["model"]].input_tokens == total
    passed = sum(hidden_verdict(trs[-1]) is True for trs in by_task.values())
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(passed / len(by_task))


def test_a_run_without_a_log_is_a_clear_error(tmp_path: Path, capsys) -> None:
    capsys.readouterr()
    assert cli_main(["export-inspect", str(tmp_path), "--out", str(tmp_path / "x.eval")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no run log at") and err.count("\n") == 1
    assert cli_main(["export-inspect", str(COMMITTED), "--out", str(tmp_path / "x.json")]) == 2
    assert "must end in .eval" in capsys.readouterr().err


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request of the viewer's assets would bury the test output


@pytest.fixture
def served_bundle(exported: Path, tmp_path: Path) -> Iterator[str]:
    bundle = tmp_path / "bundle"
    inspect_cli = Path(sys.executable).with_name("inspect")
    proc = subprocess.run(
        [
            str(inspect_cli),
            "view",
            "bundle",
            "--log-dir",
            str(exported.parent),
            "--output-dir",
            str(bundle),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (bundle / "index.html").is_file()
    handler = functools.partial(_Quiet, directory=str(bundle))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.requires("chromium")
@pytest.mark.network_local
def test_inspect_view_bundle_renders_the_tasks_in_chromium(
    served_bundle: str, tmp_path: Path
) -> None:
    """``inspect view``'s own page (bundled, served on 127.0.0.1) lists the exported tasks
    with their scores, and a task's page shows its transcript with the reflection."""
    from reflexion_bench.testing.chromium import Browser

    records = load_run_records(COMMITTED)
    ours = set(dict.fromkeys(str(r["task_id"]) for r in records))
    with Browser(width=1400, height=1200) as b:
        b.navigate(served_bundle)
        b.wait_for("document.body && /HumanEval\\/\\d+/.test(document.body.innerText)", 90)
        dom = b.evaluate("document.documentElement.outerHTML")
        shown = set(re.findall(r"HumanEval/\d+", b.evaluate("document.body.innerText")))
        b.screenshot(tmp_path / "inspect-view-samples.png")
        # The sample list is virtualised: the rows in view, all of them ours.
        assert len(shown) >= 5 and shown <= ours
        for tid in shown:
            assert tid in dom
        assert "hidden" in dom  # the scorer
        reflected = next(r for r in records if r.get("reflection") and r["task_id"] in shown)
        tid = str(reflected["task_id"])
        b.evaluate(
            "(() => { const e = [...document.querySelectorAll('*')].find(x => "
            f"x.children.length === 0 && x.textContent.trim() === {json.dumps(tid)}); "
            "if (e) e.click(); return !!e; })()"
        )
        head = reflected["reflection"][:60]
        b.wait_for(f"document.body.innerText.includes({json.dumps(head)})", 60)
        assert f"Sample {tid}" in b.evaluate("document.body.innerText")
        b.screenshot(tmp_path / "inspect-view-sample.png")


def test_an_imported_inspect_run_exports_back(
    inspect_logs: dict[str, Path], tmp_path: Path
) -> None:
    """Inspect -> run folder -> Inspect: the verdicts and the trials survive."""
    from inspect_ai.log import read_eval_log

    from tests.interop.conftest import REACT_FINAL, REACT_FIRST, REACT_TRIALS

    run = tmp_path / "react"
    assert cli_main(["import-inspect", str(inspect_logs["react"]), "--out", str(run)]) == 0
    out = tmp_path / "back.eval"
    assert cli_main(["export-inspect", str(run), "--out", str(out)]) == 0
    log = read_eval_log(str(out))
    scores = {str(s.id): s.scores["hidden"] for s in log.samples}
    assert {t: sc.value == "C" for t, sc in scores.items()} == REACT_FINAL
    assert {t: sc.metadata["first_try"] for t, sc in scores.items()} == REACT_FIRST
    assert {t: len(sc.metadata["per_trial"]) for t, sc in scores.items()} == REACT_TRIALS
    meta = log.eval.metadata["reflexion_bench"]
    assert meta["answer_key"]["label"] == "answer-in-loop"
    assert meta["import"]["kind"] == "inspect"
    # The feedback react gave between attempts is in the transcript.
    q2 = next(s for s in log.samples if s.id == "q2")
    assert "Your submission was incorrect" in "\n".join(m.text for m in q2.messages)
    assert cli_main(["export-inspect", str(run), "--out", str(out)]) == 2  # exists, no --force
    assert cli_main(["export-inspect", str(run), "--out", str(out), "--force"]) == 0


def test_each_calls_own_request_and_reply_are_exported(tmp_path: Path) -> None:
    """A run logged with every call in full: each model event carries its own call's
    request and reply (the reflector's too), not a placeholder."""
    import asyncio

    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log

    from reflexion_bench.strategies import Strategy
    from tests.strategies.toyrun import run_toy

    run = tmp_path / "toy"
    _, records = asyncio.run(
        run_toy(run, Strategy(name="reflexion", max_trials=3), words=["alpha"])
    )
    out = tmp_path / "toy.eval"
    assert cli_main(["export-inspect", str(run), "--out", str(out)]) == 0
    (sample,) = read_eval_log(str(out)).samples or []
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    from reflexion_bench.core.calllog import expand_messages

    calls = [c for r in records for c in r["model_calls"]]
    requests = [m for r in records for m in expand_messages(r["model_calls"])]
    assert [e.role for e in events] == [c["role"] for c in calls]
    for event, call, request in zip(events, calls, requests, strict=True):
        assert request and [m.text for m in event.input] == [m["content"] for m in request]
        assert event.output.completion == call["reply"]
    assert any(e.role == "reflector" and e.input[0].text.startswith("Reflect: ") for e in events)
