"""One task from two runs side by side (issue 33), in a real browser, on two committed
runs of the 40-task HumanEval study (``results/strategies-humaneval40``): the page
``#/run/<A>/task/<id>/vs/<B>`` shows both runs with their verdicts per trial, the
diff of their submitted programs and any trial of A beside any trial of B; the task
page offers it for the runs of the same benchmark, the compare page links to it, and a
task that one run does not have says so. Expected values are read from the logs."""

from __future__ import annotations

import difflib
import json
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.testing.chromium import Browser
from reflexion_bench.view.data import Catalog
from reflexion_bench.view.server import ViewServer
from tests.view.test_view_browser import _shot, artifacts  # noqa: F401 (fixture)

pytestmark = pytest.mark.requires("chromium")

STUDY = Path("results") / "strategies-humaneval40"
TASK = "HumanEval/0"


def _trials(run: Path, task: str) -> list[dict[str, Any]]:
    recs = [json.loads(x) for x in (run / "log.jsonl").read_text().splitlines() if x.strip()]
    return sorted((r for r in recs if r["task_id"] == task), key=lambda r: r["trial"])


def _open(b: Browser, url: str, ready: str) -> None:
    b.navigate("about:blank")
    b.wait_for("location.href === 'about:blank'")
    b.navigate(url, ready=ready)


@pytest.fixture(scope="module")
def runs(project_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    study = project_root / STUDY
    # A third run of the benchmark without HumanEval/0 (the reflexion log, that task cut).
    cut = tmp_path_factory.mktemp("cut") / "without_he0"
    cut.mkdir()
    for f in ("config.yaml", "provenance.json"):
        shutil.copy(study / "reflexion" / f, cut / f)
    lines = (study / "reflexion" / "log.jsonl").read_text().splitlines()
    kept = [x for x in lines if x.strip() and json.loads(x)["task_id"] != TASK]
    (cut / "log.jsonl").write_text("\n".join(kept) + "\n")
    return {"reflexion": study / "reflexion", "retry": study / "retry", "cut": cut}


@pytest.fixture(scope="module")
def served(runs: dict[str, Path]):  # type: ignore[no-untyped-def]
    alf = runs["reflexion"].parents[2] / "results" / "alfworld_embedded_6x3"
    dirs = [runs["reflexion"], runs["retry"], runs["cut"], alf]
    with ViewServer(Catalog(dirs, n_resamples=200)) as server, Browser() as b:
        yield server, b


def test_one_task_from_two_runs_side_by_side(
    served: tuple[ViewServer, Browser],
    runs: dict[str, Path],
    artifacts: Path,  # noqa: F811
) -> None:
    server, b = served
    a, r = _trials(runs["reflexion"], TASK), _trials(runs["retry"], TASK)
    _open(b, server.url + "#/run/reflexion/task/HumanEval%2F0/vs/retry", "pair")
    _shot(b, artifacts, "task-pair")
    # Run names are paths below the viewed folders' common parent (here "/").
    runs_h = b.texts(".pair-run h2")
    assert runs_h[0].startswith("A: ") and runs_h[0].endswith("strategies-humaneval40/reflexion")
    assert runs_h[1].startswith("B: ") and runs_h[1].endswith("strategies-humaneval40/retry")
    # Each run's strategy and model, as its log records them.
    assert b.texts(".pair-run .pair-config") == [
        f"{t[0]['strategy']} · {t[0]['model']}" for t in (a, r)
    ]
    # Each strip has one cell per logged trial, marked with its hidden verdict.
    for side, trials in (("a", a), ("b", r)):
        cells = b.texts(f".pair-strip[data-side='{side}'] .cell")
        want = [("✓" if t["hidden"]["passed"] else "✗") + str(t["trial"]) for t in trials]
        assert [c.replace(" ", "") for c in cells] == want
    # The submitted programs are chosen first, and their diff is shown line by line.
    assert b.evaluate("document.body.dataset.rbPair") == f"{a[-1]['trial']},{r[-1]['trial']}"
    sub_a, sub_b = a[-1]["candidate"], r[-1]["candidate"]
    assert sub_a != sub_b
    added = [
        line[1:].strip()
        for line in difflib.ndiff(sub_a.splitlines(), sub_b.splitlines())
        if line.startswith("+ ") and line[2:].strip()
    ]
    diff = b.text("#rb-pair-diff")
    assert added and all(x in diff for x in added)
    assert "only in A" in b.text(".pair-legend") and "only in B" in b.text(".pair-legend")
    cols = b.texts("#rb-pair-trials .trial h2")
    assert [c.split(" ")[:2] for c in cols] == [
        ["Trial", str(a[-1]["trial"])],
        ["Trial", str(r[-1]["trial"])],
    ]
    # Any trial of A beside any of B: choose A's trial 1.
    b.click(".pair-strip[data-side='a'] .cell[data-trial='1']")
    b.wait_for("document.body.dataset.rbPair === '1," + str(r[-1]["trial"]) + "'")
    cols = b.texts("#rb-pair-trials .trial h2")
    assert cols[0].startswith("Trial 1") and cols[1].startswith(f"Trial {r[-1]['trial']}")


def test_task_page_offers_and_compare_page_links_the_pair(
    served: tuple[ViewServer, Browser],
    runs: dict[str, Path],
    artifacts: Path,  # noqa: F811
) -> None:
    server, b = served
    _open(b, server.url + "#/run/reflexion/task/HumanEval%2F0", "task")
    b.wait_for("document.querySelectorAll('#rb-task-vs a').length > 0")
    offered = [x.rsplit("/", 1)[-1] for x in b.texts("#rb-task-vs a")]
    # Same benchmark and having the task only; the others are counted and why said.
    assert offered == ["retry"]
    bench = _trials(runs["reflexion"], TASK)[0]["benchmark"]
    skipped = b.text("#rb-task-vs-skipped")
    assert f"1 run of {bench} is not offered: it does not have this task" in skipped
    assert "1 run of other benchmarks is not offered: they have other tasks" in skipped
    _shot(b, artifacts, "task-page-offers-pair")
    _open(b, server.url + "#/compare/reflexion/retry", "compare")
    hrefs = b.evaluate(
        "[...document.querySelectorAll('#rb-differ a.side-by-side')].map(a => a.getAttribute('href'))"
    )
    tasks = b.evaluate(
        "[...document.querySelectorAll('#rb-differ tr[data-task]')].map(r => r.dataset.task)"
    )
    assert tasks and len(hrefs) == len(tasks)
    assert hrefs[0] == f"#/run/reflexion/task/{tasks[0].replace('/', '%2F')}/vs/retry"
    _open(b, server.url + hrefs[0], "pair")
    assert b.text("#rb-task-id") == tasks[0]


def test_a_task_missing_from_one_run_says_so(
    served: tuple[ViewServer, Browser],
    artifacts: Path,  # noqa: F811
) -> None:
    server, b = served
    _open(b, server.url + "#/run/reflexion/task/HumanEval%2F0/vs/without_he0", "pair")
    _shot(b, artifacts, "task-pair-missing")
    msg = b.text("#rb-pair-missing")
    assert "HumanEval/0 is not in run " in msg and "without_he0 (" in msg
    # The other way round (A lacks it) too, with a way to the run that has it.
    _open(b, server.url + "#/run/without_he0/task/HumanEval%2F0/vs/reflexion", "pair")
    msg = b.text("#rb-pair-missing")
    assert "HumanEval/0 is not in run " in msg and "without_he0 (" in msg
    link = b.evaluate("document.querySelector('#rb-pair-missing a').getAttribute('href')")
    assert link == "#/run/reflexion/task/HumanEval%2F0"


def test_runs_with_a_task(runs: dict[str, Path]) -> None:
    """The data behind the offer: which viewed runs have a task (served as
    /api/task-runs), read from the logs."""
    catalog = Catalog([runs["reflexion"], runs["retry"], runs["cut"]], n_resamples=50)
    ids = {name.rsplit("/", 1)[-1]: i for i, name in enumerate(catalog.names)}
    having = sorted([ids["reflexion"], ids["retry"]])
    assert catalog.runs_with_task(TASK) == having
    other = _trials(runs["cut"], _trials_ids(runs["cut"])[0])[0]["task_id"]
    assert other != TASK
    assert catalog.runs_with_task(other) == sorted(ids.values())
    assert catalog.runs_with_task("HumanEval/nonexistent") == []
    with ViewServer(catalog) as server:
        url = server.url + "api/task-runs?id=" + TASK.replace("/", "%2F")
        with urllib.request.urlopen(url, timeout=30) as res:
            assert json.loads(res.read()) == {"id": TASK, "runs": having}


def _trials_ids(run: Path) -> list[str]:
    lines = (run / "log.jsonl").read_text().splitlines()
    return sorted({json.loads(x)["task_id"] for x in lines if x.strip()})
