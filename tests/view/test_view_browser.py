"""The viewer in a real browser: headless Chromium (Debian's) renders the exported file
(``--dump-dom``) and the served page (DevTools protocol), and the assertions read the
DOM it rendered. Screenshots are saved as test artifacts (paths printed; kept under
pytest's temporary folder, or ``$REFLEXION_VIEW_ARTIFACTS`` when set)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_bench.cli import main as cli_main
from reflexion_bench.testing.chromium import Browser, dump_dom
from reflexion_bench.view.data import Catalog
from reflexion_bench.view.server import ViewServer
from tests.view.conftest import REFLECTION_ONE, REFLECTION_TWO

pytestmark = pytest.mark.requires("chromium")

PAPER_LOG = (
    "reflexion-original-repo/programming_runs/root/reflexion_humaneval_py_pass_at_1/"
    "reflexion_humaneval_py_pass_at_1.jsonl"
)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("REFLEXION_VIEW_ARTIFACTS")
    return Path(env) if env else tmp_path_factory.mktemp("view-screenshots")


def _shot(browser: Browser, artifacts: Path, name: str) -> Path:
    path = browser.screenshot(artifacts / f"{name}.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    print(f"screenshot: {path}")
    return path


def _text(dom: str) -> str:
    """The visible text of a dumped DOM's <main> (tags dropped, entities decoded)."""
    body = dom.split('<main id="rb-main">', 1)[1].split("</main>", 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_exported_file_renders_runs_tasks_and_a_task_page(
    code_runs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "supplement.html"
    assert (
        cli_main(["view", str(code_runs["root"]), "--export", str(out), "--resamples", "500"]) == 0
    )
    url = out.resolve().as_uri()
    sweep = _text(dump_dom(url))
    assert "reflexion" in sweep and "simple" in sweep and "pass@1" in sweep
    run = _text(dump_dom(url + "#/run/0"))
    assert "HumanEval/0" in run and "HumanEval/2" in run
    task = _text(dump_dom(url + "#/run/0/task/" + "HumanEval%2F0"))
    assert REFLECTION_ONE in task and REFLECTION_TWO in task
    assert "- return True" in " ".join(task.split()) or "-     return True" in task  # the diff
    assert "hidden: fail" in task and "hidden: pass" in task  # the verdicts
    assert "assert" in task  # the failing hidden assert
    # The file alone (no server): search in the page, the compare view, offline.
    with Browser() as b:
        b.navigate(url + "#/run/0", ready="run")
        b.evaluate(
            "(() => { const s = document.getElementById('rb-search');"
            " s.value = 'weak'; s.dispatchEvent(new Event('input')); })()"
        )
        b.wait_for("document.body.dataset.rbSearched === 'weak'")
        assert b.texts("#rb-tasks tbody tr td:first-child") == []
        b.evaluate(
            "(() => { const s = document.getElementById('rb-search');"
            " s.value = 'whatever the distances'; s.dispatchEvent(new Event('input')); })()"
        )
        b.wait_for("document.body.dataset.rbSearched === 'whatever the distances'")
        assert b.texts("#rb-tasks tbody tr td:first-child") == ["HumanEval/0"]
        b.navigate(url + "#/compare/0/1", ready="compare")
        assert b.text('#rb-mcnemar td[data-cell="only_a"]') == "1"
        # One task from the two runs side by side, offered and shown from the file alone.
        b.navigate(url + "#/run/0/task/HumanEval%2F0", ready="task")
        b.wait_for("document.querySelectorAll('#rb-task-vs a').length > 0")
        assert b.texts("#rb-task-vs a") == ["simple"]
        href = b.evaluate("document.querySelector('#rb-task-vs a').getAttribute('href')")
        b.navigate(url + href, ready="pair")
        for side, run in (("a", "reflexion"), ("b", "simple")):
            logged = [
                json.loads(x)
                for x in (code_runs[run] / "log.jsonl").read_text().splitlines()
                if x.strip() and json.loads(x).get("task_id") == "HumanEval/0"
            ]
            cells = b.texts(f".pair-strip[data-side='{side}'] .cell")
            assert len(cells) == len(logged) > 0
        resources = b.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        assert resources == []  # nothing fetched: everything is in the file


def test_served_page_in_chromium(code_runs: dict[str, Path], artifacts: Path) -> None:
    catalog = Catalog([code_runs["root"]], n_resamples=500)
    with ViewServer(catalog) as server, Browser() as b:
        b.navigate(server.url, ready="sweep")
        assert b.texts("#rb-sweep tbody tr td:first-child") == ["reflexion", "simple"]
        b.wait_for("document.body.dataset.rbIntervals === '1'")
        assert "[" in b.text('#rb-sweep [data-iv="final"][data-run="1"]')
        _shot(b, artifacts, "sweep")

        b.navigate(server.url + "#/run/0", ready="run")
        assert b.texts("#rb-tasks tbody tr td:first-child") == ["HumanEval/0", "HumanEval/2"]
        b.wait_for("document.body.dataset.rbIntervals === '1'")
        # pass@1 of this run (1 of 2) with its 95% interval, filled in when computed: the
        # report's Wilson interval for 1 of 2 (9.5%, 90.5%, by the score formula).
        assert re.search(r"50\.0% \[9\.5, 90\.5\]", b.text('#rb-summary [data-iv="final"]'))
        assert not re.search(r"\b(null|undefined|NaN)\b", b.text("main"))
        assert b.evaluate("document.querySelectorAll('#rb-curve polyline').length") == 2
        # The run page has fetched no task yet: trials load when a task is opened.
        resources = "performance.getEntriesByType('resource').map(e => e.name)"
        assert not [u for u in b.evaluate(resources) if "/task?" in u]
        # Filters and search act on the rendered table.
        b.click('#rb-filters button[data-filter="self_fp"]')
        assert b.texts("#rb-tasks tbody tr td:first-child") == ["HumanEval/2"]
        b.click('#rb-filters button[data-filter="fixed"]')
        assert b.texts("#rb-tasks tbody tr td:first-child") == ["HumanEval/0"]
        b.click('#rb-filters button[data-filter="all"]')
        b.evaluate(
            "(() => { const s = document.getElementById('rb-search');"
            " s.value = 'reflection-two'; s.dispatchEvent(new Event('input')); })()"
        )
        b.wait_for("document.body.dataset.rbSearched === 'reflection-two'")
        assert b.texts("#rb-tasks tbody tr td:first-child") == ["HumanEval/0"]
        _shot(b, artifacts, "run")

        b.click('#rb-tasks tr[data-task="HumanEval/0"] a')
        b.wait_for("document.body.dataset.rbReady === 'task'")
        assert [u for u in b.evaluate(resources) if "/task?id=HumanEval%2F0" in u]
        assert b.text("#rb-task-id") == "HumanEval/0"
        assert not re.search(r"\b(undefined|NaN)\b", b.text("main"))
        assert len(b.texts(".trial")) == 3
        assert b.texts(".reflection") == [REFLECTION_ONE, REFLECTION_TWO]
        assert b.texts(".trial .verdict.fail")[0] == "hidden: fail"
        assert "    return len(numbers) > 5" in " ".join(
            b.texts('.trial[data-trial="2"] .diff .add')
        )
        assert "    return True" in " ".join(b.texts('.trial[data-trial="2"] .diff .del'))
        assert "assert" in b.text('.trial[data-trial="1"] .hidden-detail')
        # Per-test verdicts of the self-tests, and the memory shown to trial 3.
        assert len(b.texts('.trial[data-trial="1"] tr.test')) == 2
        assert b.texts('.trial[data-trial="3"] .memory li') == [REFLECTION_TWO]
        _shot(b, artifacts, "task")

        b.navigate(server.url + "#/compare/0/1", ready="compare")
        cells = {
            k: b.text(f'#rb-mcnemar td[data-cell="{k}"]')
            for k in ("both", "only_a", "only_b", "neither")
        }
        assert cells == {"both": "0", "only_a": "1", "only_b": "1", "neither": "0"}
        assert b.texts("#rb-differ tbody tr") and len(b.texts("#rb-differ tbody tr")) == 2
        assert "p = 1.00" in b.text("#rb-paired")
        _shot(b, artifacts, "compare")
        # Everything the page loaded came from the local server.
        assert all(u.startswith(server.url) for u in b.evaluate(resources))


def test_sweep_page_groups_the_seeds_of_a_configuration(
    mock_seed_sweep: Path, artifacts: Path
) -> None:
    """The judged sweep (3 seeds x simple/reflexion, mock model): the sweep page lists
    the 6 runs and one row per configuration with its 3 seeds, and warns that the
    deterministic mock's seeds cannot differ."""
    catalog = Catalog([mock_seed_sweep], n_resamples=500)
    with ViewServer(catalog) as server, Browser() as b:
        b.navigate(server.url, ready="sweep")
        assert len(b.texts("#rb-sweep tbody tr")) == 6
        assert sorted(b.texts("#rb-seeds tbody tr td:first-child")) == ["reflexion", "simple"]
        assert b.texts("#rb-seeds tbody tr td:nth-child(4)") == ["3 (0, 1, 2)"] * 2
        assert all("[" in t for t in b.texts("#rb-seeds tbody tr td:nth-child(7)"))
        assert len(b.texts("#rb-seeds tbody tr:first-child td:last-child a")) == 3
        assert "cannot differ" in b.text("main")
        assert not re.search(r"\b(null|undefined|NaN)\b", b.text("#rb-seeds"))
        _shot(b, artifacts, "sweep_seeds")


def test_a_refresh_shows_new_trials_of_a_live_run(
    code_runs: dict[str, Path], tmp_path: Path
) -> None:
    recs = [json.loads(x) for x in (code_runs["reflexion"] / "log.jsonl").read_text().splitlines()]
    he0 = [r for r in recs if r["task_id"] == "HumanEval/0"]
    live = tmp_path / "live"
    live.mkdir()
    log = live / "log.jsonl"
    log.write_text(json.dumps(he0[0]) + "\n")  # trial 1 logged, the task still running
    with ViewServer(Catalog([live], n_resamples=200)) as server, Browser() as b:
        b.navigate(server.url + "#/run/0/task/HumanEval%2F0", ready="task")
        assert len(b.texts(".trial")) == 1 and "still running" in b.text("main")
        with log.open("a") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in he0[1:]))
        b.reload()
        b.wait_for("document.querySelectorAll('.trial').length === 3")
        assert b.texts(".reflection") == [REFLECTION_ONE, REFLECTION_TWO]


def test_log_text_is_shown_as_text_not_markup(tmp_path: Path) -> None:
    """A candidate (model output) holding markup cannot break out of the page."""
    evil = "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
    rec = {
        "type": "trial",
        "task_id": "t/<b>1</b>",
        "attempt_id": "a",
        "trial": 1,
        "final": True,
        "benchmark": "humaneval",
        "strategy": "reflexion",
        "model": "m",
        "candidate": evil,
        "reflection": evil,
        "hidden": {"passed": False, "status": "fail", "detail": evil},
        "model_calls": [],
    }
    run = tmp_path / "run"
    run.mkdir()
    (run / "log.jsonl").write_text(json.dumps(rec) + "\n")
    out = tmp_path / "x.html"
    assert cli_main(["view", str(run), "--export", str(out), "--resamples", "100"]) == 0
    dom = dump_dom(out.resolve().as_uri() + "#/run/0/task/" + "t%2F%3Cb%3E1%3C%2Fb%3E")
    assert "pwned" not in dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "<img src=" not in dom.split('<main id="rb-main">', 1)[1].split("</main>", 1)[0]
    assert evil in _text(dom)  # shown, as text
    assert "t/<b>1</b>" in _text(dom)


@pytest.mark.requires("shared_data")
def test_held_out_paper_log_in_chromium(shared_data: Path, tmp_path: Path, artifacts: Path) -> None:
    """The paper's own HumanEval-py Reflexion log (all 164 tasks), imported by the CLI and
    exported: every task id, and every reflection of every task (read from the source
    file here, not from our import), is in the DOM Chromium renders."""
    src = shared_data / PAPER_LOG
    source = [json.loads(line) for line in src.read_text().splitlines()]
    run = tmp_path / "imported"
    done = subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "import-reflexion-logs", "--kind",
         "programming", str(src), "--out", str(run)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "paper.html"
    assert cli_main(["view", str(run), "--export", str(out), "--resamples", "200"]) == 0
    page = _text(dump_dom(out.resolve().as_uri()))
    rendered = re.findall(r"HumanEval/\d+", page)
    assert set(rendered) == {row["task_id"] for row in source} and len(source) == 164
    with_reflection = [r for r in source if r.get("reflections")]
    assert len(with_reflection) >= 20  # the paper's log: 30 tasks needed more than one trial
    flat = lambda t: " ".join(t.split())  # noqa: E731
    with Browser() as b:
        for row in with_reflection:
            tid = row["task_id"]
            b.navigate(out.resolve().as_uri() + "#/run/0/task/" + tid.replace("/", "%2F"))
            b.wait_for(
                "document.body.dataset.rbReady === 'task' && "
                f"document.getElementById('rb-task-id').textContent === {json.dumps(tid)}"
            )
            shown = [flat(x) for x in b.texts(".reflection")]
            assert shown == [flat(x) for x in row["reflections"]], tid
        _shot(b, artifacts, "paper_task")


def test_alfworld_run_exported_shows_the_episode(project_root: Path, tmp_path: Path) -> None:
    """The committed ALFWorld run: a task page shows the episode and the reflection."""
    run_dir = project_root / "results" / "alfworld_embedded_6x3"
    records = [json.loads(x) for x in (run_dir / "log.jsonl").read_text().splitlines()]
    first = records[0]
    trials = [r for r in records if r["task_id"] == first["task_id"]]
    out = tmp_path / "alfworld.html"
    assert cli_main(["view", str(run_dir), "--export", str(out), "--resamples", "200"]) == 0
    url = out.resolve().as_uri() + "#/run/0/task/" + first["task_id"].replace("/", "%2F")
    dom = dump_dom(url)
    # Every trial's episode: its goal, then each action and its observation.
    steps = re.findall(r'<div class="step (\w+)">', dom)
    assert len(steps) == sum(1 + 2 * len(r["extra"]["alfworld"]["steps"]) for r in trials)
    text = " ".join(_text(dom).split())
    assert " ".join(first["reflection"].split()) in text
    assert first["extra"]["alfworld"]["steps"][1][0] in text  # an action of the episode
