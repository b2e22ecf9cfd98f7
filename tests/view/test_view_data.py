"""The viewer's data and server, without a browser: same numbers as `report`, task
views (diffs, per-test verdicts, failing assert), live refresh, search, the CLI."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.report import build_comparison, load_summary
from reflexion_bench.cli import main as cli_main
from reflexion_bench.view.data import Catalog, dumps
from reflexion_bench.view.server import ViewServer
from tests.view.conftest import REFLECTION_ONE, REFLECTION_TWO


def wire(value: Any) -> Any:
    """``value`` as the page receives it (JSON)."""
    return json.loads(dumps(value))


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as res:
        return json.loads(res.read())


def test_run_page_numbers_are_the_reports(code_runs: dict[str, Path]) -> None:
    catalog = Catalog([code_runs["root"]], n_resamples=2000)
    assert catalog.names == ["reflexion", "simple"]
    page = catalog.run_page(0)
    # The summary is what `reflexion-bench report` computes from the same log.
    assert wire(page["summary"]) == wire(load_summary(code_runs["reflexion"]))
    report = build_comparison([code_runs["reflexion"]], n_resamples=2000)
    group = report["groups"][0]
    # Intervals: fetched apart (the slow part), the report's own group data.
    intervals = catalog.intervals(0)
    for key in ("first_try", "final", "final_finished", "success_at_trial", "solved_by_trial"):
        assert wire(intervals[key]) == wire(group[key])
        assert wire(catalog.run_page(0, with_intervals=True)[key]) == wire(group[key])
    assert page["final"] == {"estimate": 0.5} and not page["intervals"]
    # And the values are the ones this scripted run must give.
    assert page["final"]["estimate"] == 0.5 and page["first_try"]["estimate"] == 0.0
    rows = {r["id"]: r for r in page["tasks"]}
    assert rows["HumanEval/0"]["verdicts"] == [False, False, True]
    assert rows["HumanEval/0"]["fixed"] and not rows["HumanEval/0"]["self_fp"]
    assert rows["HumanEval/2"]["self_fp"] and rows["HumanEval/2"]["final"] is False
    # The run page carries no trial contents: those load when a task is opened.
    assert REFLECTION_ONE not in json.dumps(page)


def test_compare_is_the_reports_paired_row(code_runs: dict[str, Path]) -> None:
    catalog = Catalog([code_runs["reflexion"], code_runs["simple"]], n_resamples=2000)
    cmp = catalog.compare(0, 1)
    assert cmp["mcnemar"] == {
        "n": 2,
        "both": 0,
        "only_a": 1,
        "only_b": 1,
        "neither": 0,
        "p_value": 1.0,
    }
    assert {d["id"]: (d["a"], d["b"]) for d in cmp["differ"]} == {
        "HumanEval/0": (True, False),
        "HumanEval/2": (False, True),
    }
    report = build_comparison([code_runs["reflexion"], code_runs["simple"]], n_resamples=2000)
    (row,) = report["paired"]
    assert wire(cmp["mcnemar"]) == wire(row["mcnemar"]) and wire(cmp["diff"]) == wire(row["diff"])


def test_task_view_shows_diff_self_tests_reflection_and_failing_assert(
    code_runs: dict[str, Path],
) -> None:
    view = Catalog([code_runs["reflexion"]]).run(0)
    task = view.task("HumanEval/0")
    assert task is not None
    t1, t2, t3 = task["trials"]
    assert t1["diff"] is None  # nothing before trial 1
    assert ["-", "    return True"] in t2["diff"] and ["+", "    return len(numbers) > 5"] in t2[
        "diff"
    ]
    # `return True` fails the first self-test (expects False) and passes the second.
    assert [r["status"] for r in t1["self_test"]["results"]] == ["fail", "pass"]
    assert "assert" in t1["hidden"]["detail"] and t1["verdict"] is False
    assert t1["reflection"] == REFLECTION_ONE and t2["reflection"] == REFLECTION_TWO
    assert t3["memory_shown"] == [REFLECTION_TWO] and t3["verdict"] is True
    assert [c["role"] for c in t1["calls"]] == ["actor", "self_test", "reflector"]
    assert view.task("HumanEval/999") is None


def test_live_run_shows_running_tasks_and_new_trials(
    code_runs: dict[str, Path], tmp_path: Path
) -> None:
    lines = (code_runs["reflexion"] / "log.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    he0 = [r for r in recs if r["task_id"] == "HumanEval/0"]
    he2 = [r for r in recs if r["task_id"] == "HumanEval/2"]
    live = tmp_path / "live"
    live.mkdir()
    log = live / "log.jsonl"
    # HumanEval/2 finished; HumanEval/0 has logged trial 1 only (not final yet).
    log.write_text("\n".join(json.dumps(r) for r in [*he2, he0[0]]) + "\n")
    catalog = Catalog([live], n_resamples=500)
    page = catalog.run_page(0)
    assert page["n_tasks"] == 1 and page["running"] == 1  # metrics count finished tasks
    assert page["planned"] is None  # no provenance.json: the plan is unknown
    # The runner's session record says how many tasks it was asked to finish.
    from reflexion_bench.runner.provenance import write_provenance

    write_provenance(live, {"start_time": "2026-12-05T00:00:00+00:00", "tasks_planned": 2})
    page = catalog.run_page(0)
    assert page["planned"] == 2 and catalog.index()["runs"][0]["planned"] == 2
    rows = {r["id"]: r for r in page["tasks"]}
    assert rows["HumanEval/0"]["in_progress"] and rows["HumanEval/0"]["verdicts"] == [False]
    with log.open("a") as fh:  # the run goes on: trials 2 and 3 arrive
        fh.write("\n".join(json.dumps(r) for r in he0[1:]) + "\n")
    page = catalog.run_page(0)
    assert page["n_tasks"] == 2 and page["running"] == 0
    rows = {r["id"]: r for r in page["tasks"]}
    assert rows["HumanEval/0"]["verdicts"] == [False, False, True]


def test_server_is_local_and_answers_json(code_runs: dict[str, Path]) -> None:
    with ViewServer(Catalog([code_runs["root"]], n_resamples=500)) as server:
        assert server.httpd.server_address[0] == "127.0.0.1"
        base = server.url
        html = urllib.request.urlopen(base, timeout=30).read().decode()
        assert 'id="rb-boot"' in html
        # No external asset: nothing loaded from another origin, no stylesheet links.
        assert not re.search(r"""(src|href)=["']?(https?:)?//|<link |@import|url\(""", html)
        assert [r["name"] for r in _get(base + "api/index")["runs"]] == ["reflexion", "simple"]
        task = _get(base + "api/run/0/task?id=HumanEval%2F0")
        assert task["trials"][0]["reflection"] == REFLECTION_ONE
        # Search reaches the text of trials, not only task ids.
        assert _get(base + "api/run/0/search?q=reflection-two")["task_ids"] == ["HumanEval/0"]
        assert _get(base + "api/run/0/search?q=HumanEval/2")["task_ids"] == ["HumanEval/2"]
        # Another Host (a DNS-rebinding page) reads nothing.
        forged = urllib.request.Request(base + "api/index", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(forged, timeout=30)
        assert err.value.code == 403
        for bad in ("api/run/0/task?id=nope", "api/run/9", "api/nothing"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + bad, timeout=30)
            assert err.value.code == 404


def test_cli_names_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli_main(["view", str(tmp_path / "nothing-here"), "--export", str(tmp_path / "x.html")])
        == 2
    )
    assert "not a run folder" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli_main(["view", str(empty)]) == 2
    assert "no log.jsonl under" in capsys.readouterr().err


def test_alfworld_episode_reads_as_a_transcript(project_root: Path) -> None:
    """The committed ALFWorld run (real games, real model): each trial's episode."""
    run_dir = project_root / "results" / "alfworld_embedded_6x3"
    first = json.loads((run_dir / "log.jsonl").read_text().splitlines()[0])
    steps = first["extra"]["alfworld"]["steps"]
    task = Catalog([run_dir], n_resamples=200).run(0).task(first["task_id"])
    assert task is not None
    shown = task["trials"][0]["transcript"]
    assert shown[0] == {"kind": "task", "text": first["extra"]["alfworld"]["goal"]}
    assert [s["text"] for s in shown[1::2]] == [s[0] for s in steps]  # every action
    assert [s["text"] for s in shown[2::2]] == [s[1] for s in steps]  # every observation
    assert {s["kind"] for s in shown[1::2]} == {"act", "think"}


def test_hotpotqa_react_trajectory_reads_as_a_transcript() -> None:
    from reflexion_bench.actors.hotpotqa import _scratchpad
    from reflexion_bench.view.data import transcript

    steps = [
        (
            "I need the river's source.",
            "Search[Nile]",
            "The Nile is a river in Africa.\nIt flows north.",
        ),
        ("It is the White Nile's.", "Finish[Lake Victoria]", ""),
    ]
    text = "Question: Where does the Nile start?\n" + _scratchpad(steps)
    shown = transcript({"benchmark": "hotpotqa", "trajectory": text})
    assert shown == [
        {"kind": "task", "text": "Question: Where does the Nile start?"},
        {"kind": "think", "text": "I need the river's source."},
        {"kind": "act", "text": "Search[Nile]"},
        {"kind": "obs", "text": "The Nile is a river in Africa.\nIt flows north."},
        {"kind": "think", "text": "It is the White Nile's."},
        {"kind": "act", "text": "Finish[Lake Victoria]"},
    ]


def test_sweep_page_shows_overrides_failed_jobs_and_new_runs(
    code_runs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(code_runs["reflexion"], sweep / "0")
    jobs = [
        {"job_dir": str(sweep / "0"), "overrides": ["strategy=reflexion"], "status": "done"},
        {"job_dir": str(sweep / "1"), "overrides": ["strategy=simple"], "status": "running"},
        {
            "job_dir": str(sweep / "2"),
            "overrides": ["strategy=bogus"],
            "status": "failed",
            "error": "ConfigError: strategy=bogus is not a strategy",
        },
    ]
    (sweep / "index.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    catalog = Catalog([sweep], n_resamples=200)
    index = catalog.index()
    assert [(r["name"], r["overrides"], r["job_status"]) for r in index["runs"]] == [
        ("0", ["strategy=reflexion"], "done")
    ]
    assert {j["status"] for j in index["jobs_without_log"]} == {"running", "failed"}
    assert any("bogus is not" in (j["error"] or "") for j in index["jobs_without_log"])
    # Job 1 writes its log: the next page load lists it, and run 0 keeps its id.
    shutil.copytree(code_runs["simple"], sweep / "1")
    index = catalog.index()
    assert [(r["id"], r["name"]) for r in index["runs"]] == [(0, "0"), (1, "1")]
    assert index["runs"][1]["strategy"] == "simple"
    assert [j["status"] for j in index["jobs_without_log"]] == ["failed"]


def _status(url: str, host: str) -> int:
    req = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def test_forwarded_hosts_are_answered_only_when_allowed(code_runs: dict[str, Path]) -> None:
    """A port forwarded to the viewer (ssh -L 9000:127.0.0.1:PORT, VS Code, a jupyter
    proxy) arrives with its own Host: answered with --allowed-host, 403 without."""
    catalog = Catalog([code_runs["root"]], n_resamples=200)
    with ViewServer(catalog) as plain:
        assert _status(plain.url + "api/index", "localhost:9000") == 403
    with ViewServer(catalog, allowed_hosts=["localhost:9000", "Notebook.Example"]) as server:
        port = server.httpd.server_address[1]
        api = server.url + "api/index"
        assert _status(api, "localhost:9000") == 200
        assert _status(server.url, "localhost:9000") == 200  # the page itself too
        assert _status(api, f"localhost:{port}") == 200  # as opened directly
        assert _status(api, "notebook.example:443") == 200  # a bare name: any port
        for other in ("localhost:9001", "evil.example", "evil.example:9000", ""):
            assert _status(api, other) == 403, other


def test_view_help_gives_the_defaults() -> None:
    from reflexion_bench.commands.view import _parser

    text = _parser().format_help()
    assert "default: 8765" in text and "default: 127.0.0.1" in text
    assert "--allowed-host" in text


def test_task_view_carries_what_explains_a_trial(project_root: Path) -> None:
    """Issue 33, from the committed run's log: the actor's prompt, the extraction outcome
    of a placeholder, the stop reason with the budget spent against the budget, the
    temperature, every call's finish reason and retries; the task table's sort keys;
    the run folder's config and provenance."""
    run_dir = project_root / "results" / "strategies-humaneval40" / "reflexion"
    catalog = Catalog([run_dir], n_resamples=100)
    task = wire(catalog.run(0).task("HumanEval/0"))
    t1, t2 = task["trials"]
    assert t2["prompt"][0]["role"] == "system" and len(t2["prompt"]) == 2
    assert t2["extraction"] == {
        "method": "none",
        "notes": ["no code found in the model's reply"],
        "placeholder": True,
        "outcome": "no code found in the reply",
    }
    assert t1["extraction"]["placeholder"] is False and t1["extraction"]["method"] == "fenced"
    assert t2["stop_reason"] == "budget.tokens" and t1["stop_reason"] is None
    assert t2["budget_spent"]["tokens"] == 2821 and t2["budget"]["tokens"] == 2500
    assert t2["temperature"] == 0.8
    assert t2["raw_reply"].startswith("The test results for the previous implementation")
    assert [(c["role"], c["finish_reason"], c["retries"]) for c in t1["calls"]] == [
        ("actor", "stop", 0),
        ("self_test", "length", 0),
        ("reflector", "stop", 0),
    ]
    page = wire(catalog.run_page(0))
    assert page["slug"] == "reflexion"
    rows = {r["id"]: r for r in page["tasks"]}
    assert rows["HumanEval/0"]["n_fixes"] == 0 and rows["HumanEval/0"]["n_breaks"] == 1
    assert rows["HumanEval/0"]["tokens"] == 226 + 335 + 280 + 384 + 615 + 114 + 781 + 86
    assert page["files"] == {
        name: (run_dir / name).read_text(encoding="utf-8")
        for name in ("config.yaml", "provenance.json")
    }


def test_run_slugs_are_folder_names_made_distinct(tmp_path: Path) -> None:
    from reflexion_bench.view.data import _slugs

    a, b, c = tmp_path / "x" / "a" / "run", tmp_path / "y" / "a" / "run", tmp_path / "z" / "other"
    assert _slugs([c]) == ["other"]
    assert _slugs([a, c]) == ["run", "other"]
    assert _slugs([a, b, c]) == ["x/a/run", "y/a/run", "other"]
    assert _slugs([b, a]) == ["y/a/run", "x/a/run"]  # the same names whatever the order
    assert _slugs([a, a]) == ["run", "run~2"]  # the same folder twice


def test_a_budgeted_run_shows_pass_at_budget_beside_pass_as_ended(project_root: Path) -> None:
    """The committed 40-task Reflexion run had a 2,500-token budget: the viewer reads
    pass@1 at that budget the report's strategies table reads (75.0), beside pass@1 as
    the run ended (67.5)."""
    from reflexion_bench.analysis.report import build_comparison
    from reflexion_bench.view.data import load_run_view

    run = project_root / "results" / "strategies-humaneval40" / "reflexion"
    view = load_run_view(run, "reflexion")
    at = view.overview()["at_budget"]
    assert at["budget"] == 2500 and at["axis"] == "tokens"
    rows = build_comparison([run], n_resamples=100)["strategies"]["rows"]
    (row,) = [r for r in rows if r["strategy"] == "reflexion"]
    assert at["pass_at_budget"] == pytest.approx(row["pass_at_budget"]["estimate"])
    assert at["pass_at_budget"] != pytest.approx(view.summary["final"])
