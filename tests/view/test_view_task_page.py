"""The viewer's task page and navigation (issue 33) in a real browser, on the committed
run ``results/strategies-humaneval40/reflexion`` (the embedded Qwen model, 40 HumanEval
tasks, token budget 2,500): what explains a trial (the actor's prompt, every model call,
the extraction outcome, the stop reason against the budget, the temperature), the run's
config and provenance, the sortable task table, previous/next task, stable URLs.

Same driver and helpers as ``test_view_browser.py`` (Debian's headless Chromium over
the DevTools protocol); every expected value is read from the run's own files."""

from __future__ import annotations

import json
import re
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.cli import main as cli_main
from reflexion_bench.testing.chromium import Browser, dump_dom
from reflexion_bench.view.data import Catalog
from reflexion_bench.view.server import ViewServer
from tests.view.test_view_browser import _shot, _text, artifacts  # noqa: F401 (fixture)

pytestmark = pytest.mark.requires("chromium")

RUN = Path("results") / "strategies-humaneval40" / "reflexion"
TASK_URL = "#/run/reflexion/task/HumanEval%2F0"


@pytest.fixture(scope="module")
def run_dir(project_root: Path) -> Path:
    return project_root / RUN


@pytest.fixture(scope="module")
def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "log.jsonl").read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def served(run_dir: Path):  # type: ignore[no-untyped-def]
    with ViewServer(Catalog([run_dir], n_resamples=200)) as server, Browser() as b:
        yield server, b


def _open(b: Browser, url: str, *, ready: str) -> None:
    """A fresh document each time (a hash-only change to the same page would find the
    previous page's ready mark)."""
    b.navigate("about:blank")
    b.wait_for("location.href === 'about:blank'")
    b.navigate(url, ready=ready)


def _natural(tid: str) -> tuple[str, int]:
    name, num = tid.rsplit("/", 1)
    return name, int(num)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_task_page_explains_each_trial(
    served: tuple[ViewServer, Browser],
    records: list[dict[str, Any]],
    artifacts: Path,  # noqa: F811
) -> None:
    server, b = served
    he0 = sorted((r for r in records if r["task_id"] == "HumanEval/0"), key=lambda r: r["trial"])
    assert len(he0) == 2
    t2 = he0[1]
    _open(b, server.url + TASK_URL, ready="task")
    assert b.text("#rb-task-id") == "HumanEval/0"
    assert [h.split(" ")[0] + " " + h.split(" ")[1] for h in b.texts(".trial h2")] == [
        "Trial 1",
        "Trial 2",
    ]
    trial2 = '.trial[data-trial="2"]'

    # The temperature the trial sampled at, and why the task stopped against its budget:
    # the numbers are the log's (extra.budget_spent / extra.budget).
    facts = b.text(f"{trial2} p.facts")
    assert t2["extra"]["actor_temperature"] == 0.8 and "temperature 0.8" in facts
    spent, limit = t2["extra"]["budget_spent"]["tokens"], t2["extra"]["budget"]["tokens"]
    assert f"{int(spent):,} of {int(limit):,} tokens" == "2,821 of 2,500 tokens"
    assert "stop reason: budget (tokens)" in facts and "2,821 of 2,500 tokens" in facts
    assert "stop reason" not in b.text('.trial[data-trial="1"]')  # trial 1 did not stop the task

    # The extraction outcome, labelled as such, with the model's raw reply; the candidate
    # shown below it is the harness's placeholder.
    assert 'raise NotImplementedError("no code found' in t2["candidate"]
    assert b.text(f"{trial2} .extraction.placeholder") == (
        "extraction outcome: no code found in the reply"
    )
    assert b.text(f"{trial2} pre.raw-reply") == t2["trajectory"]
    assert 'raise NotImplementedError("no code found' in b.text(f"{trial2} pre.candidate")
    assert "extraction: fenced" in b.text('.trial[data-trial="1"] .extraction')

    # The actor's prompt in full, system message included, in a <details> present (and
    # folded) at load.
    for n, rec in enumerate(he0, start=1):
        sel = f'.trial[data-trial="{n}"] details.prompt'
        assert b.evaluate(f"document.querySelector('{sel}').open") is False
        assert b.texts(f"{sel} .msg .role") == [m["role"] for m in rec["prompt"]]
        assert b.texts(f"{sel} .msg pre") == [m["content"] for m in rec["prompt"]]
        assert rec["prompt"][0]["role"] == "system"
    b.click(f"{trial2} details.prompt summary")
    assert "You are a careful Python developer" in b.evaluate(
        f"document.querySelector('{trial2} details.prompt').innerText"
    )

    # Every model call: role, tokens, finish reason, retries, cached.
    rows = b.evaluate(
        "[...document.querySelectorAll('.trial[data-trial=\"1\"] details tr.call')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))"
    )
    calls = he0[0]["model_calls"]
    assert len(rows) == len(calls) == 3
    for row, c in zip(rows, calls, strict=True):
        assert row[0] == c["role"]
        assert row[1] == f"{c['prompt_tokens']:,}/{c['completion_tokens']:,}"
        assert row[2] == c["finish_reason"] and row[3] == str(c["retries"])
        assert row[-1] == ("yes" if c["cached"] else "no")
    assert "length" in [r[2] for r in rows]  # the self-test writer hit its token limit
    assert not re.search(r"\b(undefined|NaN|null)\b", b.text("main"))
    _shot(b, artifacts, "task_explained")


def test_exported_task_page_has_the_same_facts(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    assert cli_main(["view", str(run_dir), "--export", str(out), "--resamples", "100"]) == 0
    text = _flat(_text(dump_dom(out.resolve().as_uri() + TASK_URL)))
    assert "Trial 1" in text and "Trial 2" in text
    assert "temperature 0.8" in text and "2,821 of 2,500 tokens" in text
    assert "extraction outcome: no code found in the reply" in text
    assert "You are a careful Python developer." in text  # the prompt, in the DOM
    # An old URL by position still opens the same page.
    old = _flat(_text(dump_dom(out.resolve().as_uri() + "#/run/0/task/HumanEval%2F0")))
    assert "extraction outcome: no code found in the reply" in old


def test_run_page_shows_config_and_provenance(
    served: tuple[ViewServer, Browser],
    run_dir: Path,
    artifacts: Path,  # noqa: F811
) -> None:
    server, b = served
    _open(b, server.url + "#/run/reflexion", ready="run")
    assert "Config & provenance" in b.texts("main h2")
    for name in ("config.yaml", "provenance.json"):
        sel = f'#rb-files details[data-file="{name}"]'
        assert b.text(f"{sel} summary") == name
        assert b.text(f"{sel} pre") == (run_dir / name).read_text(encoding="utf-8")
    visible = b.evaluate("document.getElementById('rb-files').innerText")
    assert "budget:" in visible and "weights_sha256" in visible
    b.evaluate("document.getElementById('rb-files').scrollIntoView()")
    _shot(b, artifacts, "run_config")


def test_run_page_shows_pass_at_budget_beside_pass_as_ended(
    served: tuple[ViewServer, Browser], run_dir: Path
) -> None:
    import yaml

    from reflexion_bench.analysis.report import load_summary

    budget = yaml.safe_load((run_dir / "config.yaml").read_text())["budget"]["tokens"]
    server, b = served
    _open(b, server.url + "#/run/reflexion", ready="run")
    rows = dict(zip(b.texts("#rb-summary th"), b.texts("#rb-summary td"), strict=True))
    label = f"pass@1 at budget ({budget:,} tokens/task)"
    assert rows[label] == "75.0%"  # the study's headline for this run
    final = load_summary(run_dir)["final"]
    assert rows["final (pass@1) [95% CI]"].startswith(f"{100 * final:.1f}%")
    assert rows[label] != rows["final (pass@1) [95% CI]"].split(" ")[0]


def _ids(b: Browser) -> list[str]:
    return b.texts("#rb-tasks tbody tr td:first-child")


def test_task_table_sorts_by_clicking_headers(
    served: tuple[ViewServer, Browser], records: list[dict[str, Any]]
) -> None:
    server, b = served
    _open(b, server.url + "#/run/reflexion", ready="run")
    natural = sorted({r["task_id"] for r in records}, key=_natural)
    log_order = list(dict.fromkeys(r["task_id"] for r in records))
    assert natural != log_order  # the log is not in id order: the default sorts it
    assert _ids(b) == natural
    assert _ids(b).index("HumanEval/2") < _ids(b).index("HumanEval/10")
    b.click('#rb-tasks th[data-sort="id"]')
    assert _ids(b) == natural[::-1]
    assert b.evaluate("document.querySelector('#rb-tasks th[data-sort=\"id\"]').ariaSort") == (
        "descending"
    )

    tokens: dict[str, int] = {}
    for r in records:
        tokens[r["task_id"]] = tokens.get(r["task_id"], 0) + sum(
            c["prompt_tokens"] + c["completion_tokens"] for c in r["model_calls"]
        )
    b.click('#rb-tasks th[data-sort="tokens"]')
    shown = [int(x.replace(",", "")) for x in b.texts("#rb-tasks tbody tr td:nth-child(7)")]
    assert shown == sorted(tokens.values())
    assert _ids(b) == sorted(natural, key=lambda t: (tokens[t], _natural(t)))
    b.click('#rb-tasks th[data-sort="tokens"]')
    assert [int(x.replace(",", "")) for x in b.texts("#rb-tasks tbody tr td:nth-child(7)")] == (
        sorted(tokens.values(), reverse=True)
    )

    b.click('#rb-tasks th[data-sort="verdict"]')
    finals = b.texts("#rb-tasks tbody tr td:nth-child(3)")
    assert finals == sorted(finals, key=lambda v: v != "fail")  # failed first, then passed
    assert set(finals) == {"pass", "fail"}
    # fixes/breaks per task (fail->pass, pass->fail between trials), from the log.
    steps: dict[str, tuple[int, int]] = {}
    for tid in natural:
        v = [
            r["hidden"]["passed"]
            for r in sorted((r for r in records if r["task_id"] == tid), key=lambda r: r["trial"])
        ]
        pairs = list(pairwise(v))
        steps[tid] = (pairs.count((False, True)), pairs.count((True, False)))
    b.click('#rb-tasks th[data-sort="fixes"]')
    assert _ids(b) == sorted(natural, key=lambda t: (steps[t], _natural(t)))
    b.click('#rb-tasks th[data-sort="fixes"]')
    first = _ids(b)[0]
    assert steps[first][1] >= 1  # the run breaks tasks (0 fixes, 3 breaks): those first
    assert b.text(f'#rb-tasks tr[data-task="{first}"] td:nth-child(6)') == "0/1"
    b.click('#rb-tasks th[data-sort="id"]')
    assert _ids(b) == natural


def test_previous_and_next_task(served: tuple[ViewServer, Browser]) -> None:
    server, b = served
    # Opened directly: natural order.
    _open(b, server.url + "#/run/reflexion/task/HumanEval%2F9", ready="task")
    b.wait_for("document.body.dataset.rbNav === 'HumanEval/9'")
    assert b.text("#rb-task-nav a.prev") == "← previous: HumanEval/8"
    assert b.text("#rb-task-nav a.next") == "next →: HumanEval/10"
    b.click("#rb-task-nav a.next")
    b.wait_for("document.body.dataset.rbNav === 'HumanEval/10'")
    assert b.text("#rb-task-id") == "HumanEval/10"
    assert b.evaluate("location.hash") == "#/run/reflexion/task/HumanEval%2F10"
    b.click("#rb-task-nav a.prev")
    b.wait_for("document.body.dataset.rbNav === 'HumanEval/9'")
    _open(b, server.url + "#/run/reflexion/task/HumanEval%2F0", ready="task")
    b.wait_for("document.body.dataset.rbNav === 'HumanEval/0'")
    assert b.texts("#rb-task-nav a.prev") == []  # the first task has no previous
    assert "task 1 of 40" in b.text("#rb-task-nav")

    # From the run page sorted by tokens: previous/next follow that order.
    _open(b, server.url + "#/run/reflexion", ready="run")
    b.click('#rb-tasks th[data-sort="tokens"]')
    order = _ids(b)
    b.click(f'#rb-tasks tr[data-task="{order[5]}"] a')
    b.wait_for(f"document.body.dataset.rbNav === {json.dumps(order[5])}")
    assert b.text("#rb-task-nav a.prev") == f"← previous: {order[4]}"
    assert b.text("#rb-task-nav a.next") == f"next →: {order[6]}"
    assert "sorted by tokens" in b.text("#rb-task-nav")


def test_stable_urls_by_run_folder_name(
    served: tuple[ViewServer, Browser], code_runs: dict[str, Path], tmp_path: Path
) -> None:
    server, b = served
    # Old URLs by position redirect to the folder name.
    _open(b, server.url + "#/run/0", ready="run")
    assert b.evaluate("location.hash") == "#/run/reflexion"
    _open(b, server.url + "#/run/0/task/HumanEval%2F0", ready="task")
    assert b.evaluate("location.hash") == TASK_URL
    assert b.text("#rb-task-id") == "HumanEval/0"
    _open(b, server.url + "#/run/nosuchrun", ready="error")
    assert "no run" in b.text("#rb-error")

    # Two viewed runs with the same folder name: parent/name, whatever the order given.
    for parent, src in (("a", "reflexion"), ("b", "simple")):
        (tmp_path / parent / "reflexion").mkdir(parents=True)
        shutil.copy(code_runs[src] / "log.jsonl", tmp_path / parent / "reflexion" / "log.jsonl")
    dirs = [tmp_path / "b" / "reflexion", tmp_path / "a" / "reflexion"]
    catalog = Catalog(dirs, n_resamples=100)
    assert [r["slug"] for r in catalog.routes()] == ["b/reflexion", "a/reflexion"]
    with ViewServer(catalog) as two, Browser() as b2:
        _open(b2, two.url + "#/run/a%2Freflexion/task/HumanEval%2F0", ready="task")
        assert len(b2.texts(".trial")) == 3  # a/: the reflexion run, three trials
        _open(b2, two.url + "#/run/b%2Freflexion/task/HumanEval%2F0", ready="task")
        # (the same page, another hash: wait for the new run's trials)
        b2.wait_for("document.querySelectorAll('.trial').length === 1")  # b/: the simple run
        assert b2.evaluate("location.hash") == "#/run/b%2Freflexion/task/HumanEval%2F0"
        _open(b2, two.url + "#/run/1", ready="run")
        assert b2.evaluate("location.hash") == "#/run/a%2Freflexion"
        _open(b2, two.url, ready="sweep")
        assert b2.evaluate(
            "[...document.querySelectorAll('#rb-sweep tbody a')].map(a => a.getAttribute('href'))"
        ) == ["#/run/b%2Freflexion", "#/run/a%2Freflexion"]


def test_every_calls_request_and_reply_are_logged_and_shown(tmp_path: Path) -> None:
    """A run made with the full-call logging: the reflector's request (not only the
    actor's) is in the log, and its page shows it in the call's folded block."""
    import asyncio

    from reflexion_bench.strategies import Strategy
    from tests.strategies.toyrun import run_toy

    run = tmp_path / "toy-reflexion"
    _, records = asyncio.run(
        run_toy(run, Strategy(name="reflexion", max_trials=3), words=["alpha"])
    )
    calls = [c for r in records for c in r["model_calls"]]
    reflector = [c for c in calls if c["role"] == "reflector"]
    assert reflector, "the toy reflexion run reflects at least once"
    for c in calls:
        assert c["messages"] and c["reply"] is not None
    request = reflector[0]["messages"][0]["content"]
    assert request.startswith("Reflect: ")  # ToyReflector's own prompt, as sent
    with ViewServer(Catalog([run], n_resamples=50)) as server, Browser() as b:
        _open(b, f"{server.url}#/run/{run.name}/task/toy%2F0", ready="task")
        shown = b.evaluate(
            "[...document.querySelectorAll('details.call-io[data-role=\"reflector\"]')]"
            ".map(d => d.textContent)"
        )
        assert any(request in text and reflector[0]["reply"] in text for text in shown)
        assert b.evaluate("document.querySelector('details.call-io').open") is False
