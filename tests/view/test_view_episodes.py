"""ALFWorld task pages say what the loop really saw (issue 33): the game's success signal
is the in-loop evaluator's verdict (the log's ``answer_key_uses`` records each read), so
nothing on the page calls it a self-test or a hidden test, and two trials are compared
by their episodes (the actions taken), not by their outcome texts.

On the committed run ``results/alfworld_embedded_6x3`` (the embedded model, 6 games x 3
trials); every expected value is read from the run's own log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from reflexion_bench.view.data import Catalog, trial_view
from reflexion_bench.view.server import ViewServer
from tests.view.test_view_browser import _shot, artifacts  # noqa: F401 (fixture)

RUN = Path("results") / "alfworld_embedded_6x3"


@pytest.fixture(scope="module")
def records(project_root: Path) -> list[dict[str, Any]]:
    text = (project_root / RUN / "log.jsonl").read_text()
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def _two_trials(records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first game with two trials whose actions differ."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_task.setdefault(r["task_id"], []).append(r)
    for recs in by_task.values():
        recs.sort(key=lambda r: r["trial"])
        if len(recs) >= 2:
            a1 = [s[0] for s in recs[0]["extra"]["alfworld"]["steps"]]
            a2 = [s[0] for s in recs[1]["extra"]["alfworld"]["steps"]]
            if a1 != a2:
                return recs[0], recs[1]
    raise AssertionError("no game with two differing trials in the committed run")


def test_episode_diff_compares_actions_and_labels_say_the_game_is_in_the_loop(
    records: list[dict[str, Any]],
) -> None:
    t1, t2 = _two_trials(records)
    view = trial_view(t2, t1)
    assert view["diff_of"] == "episode"
    added = [line for op, line in view["diff"] if op == "+"]
    removed = [line for op, line in view["diff"] if op == "-"]
    actions2 = [s[0] for s in t2["extra"]["alfworld"]["steps"]]
    actions1 = [s[0] for s in t1["extra"]["alfworld"]["steps"]]
    # Every diff line is an action (or thought) of one of the two episodes, and the
    # actions only the second trial took are among the added lines.
    assert added and set(added) <= set(actions2)
    assert set(removed) <= set(actions1)
    assert set(actions2) - set(actions1) <= set(added)
    # Not the outcome text ("not won: step limit reached ...").
    assert str(t2["candidate"]) not in added
    assert view["in_loop_title"].startswith("Game signal (in the loop")
    # The score is the game's success too: the page says it is the signal the loop saw.
    assert "the same signal the loop saw" in view["score_title"]
    assert "evaluator.env_success" in view["score_title"]
    assert "hidden" not in (view["in_loop_title"] + view["score_title"]).lower()
    assert (view["in_loop_label"], view["score_label"]) == ("in loop", "score")


def test_code_trials_keep_self_tests_and_hidden_tests(project_root: Path) -> None:
    log = project_root / "results" / "strategies-humaneval40" / "reflexion" / "log.jsonl"
    recs = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    rec = next(r for r in recs if r.get("answer_key_uses") == {})
    view = trial_view(rec, None)
    assert view["diff_of"] == "candidate" and view["episode"] is None
    assert view["in_loop_title"] == "Self-tests (in the loop)"
    assert view["score_title"] == "Hidden tests (never shown to the loop)"
    # A loop that read the answer key (e.g. a search strategy told the hidden verdict)
    # no longer shows its score as hidden.
    seen = dict(rec, answer_key_uses={"strategy.hidden_tests": 2})
    assert "strategy.hidden_tests" in trial_view(seen, None)["score_title"]
    assert trial_view(seen, None)["score_label"] == "score"


@pytest.mark.requires("chromium")
def test_alfworld_task_page_in_a_browser(
    project_root: Path,
    records: list[dict[str, Any]],
    artifacts: Path,  # noqa: F811
) -> None:
    from reflexion_bench.testing.chromium import Browser

    t1, t2 = _two_trials(records)
    url = f"#/run/{RUN.name}/task/{quote(t2['task_id'], safe='')}"
    with ViewServer(Catalog([project_root / RUN], n_resamples=200)) as server, Browser() as b:
        b.navigate(server.url + url, ready="task")
        heads = b.texts(".trial h3")
        _shot(b, artifacts, "alfworld-task-page")
        text = b.text("main")
    assert any(h.startswith("Game signal (in the loop") for h in heads), heads
    assert any(h.startswith("Score: the game's success, the same signal") for h in heads), heads
    assert not any(h.startswith(("Self-tests", "Hidden tests")) for h in heads), heads
    assert "hidden:" not in text and "self-tests:" not in text
    assert any(h.startswith(f"Episode diff to trial {t2['trial'] - 1}") for h in heads), heads
    # A line only the second episode has is shown as added.
    only_second = sorted(
        {s[0] for s in t2["extra"]["alfworld"]["steps"]}
        - {s[0] for s in t1["extra"]["alfworld"]["steps"]}
    )
    assert only_second and f"+ {only_second[0]}" in text


@pytest.mark.requires("shared_data")
def test_imported_alfworld_and_hotpotqa_logs_say_what_they_do_not_record(
    shared_data: Path, tmp_path: Path
) -> None:
    """The paper's imported logs carry no ``answer_key_uses``: their score is named
    for what it is and the page says the log does not record what the loop saw.
    (Imported here from ../shared/data: imported run logs are not committed.)"""
    from reflexion_bench.analysis.imports import import_alfworld, import_hotpotqa

    repo = shared_data / "reflexion-original-repo"
    import_alfworld(repo / "alfworld_runs" / "root" / "base_run_logs", tmp_path / "alf")
    import_hotpotqa(
        repo / "hotpotqa_runs" / "root" / "ReAct" / "reflexion" / "100_questions_5_trials.txt",
        tmp_path / "hotpot",
    )
    for folder, what in (
        ("alf", "the game's success"),
        ("hotpot", "exact match with the gold"),
    ):
        line = (tmp_path / folder / "log.jsonl").read_text().splitlines()[0]
        rec = json.loads(line)
        assert "answer_key_uses" not in rec
        view = trial_view(rec, None)
        assert view["score_title"].startswith(f"Score: {what}"), view["score_title"]
        assert "does not record what the loop saw" in view["score_title"]
        assert "hidden" not in view["score_title"].lower()
        assert view["score_label"] == "score"


@pytest.mark.requires("shared_data")
def test_hotpotqa_trials_say_the_loop_sees_the_scores_exact_match(
    shared_data: Path, tmp_path: Path
) -> None:
    """A real HotpotQA run (the paper's exact-match evaluator, mock model): the loop's
    verdict is exact match with the gold answer, the same verdict as the score, on
    every trial; the page says so and diffs the trials' episodes (their actions)."""
    from tests.hotpotqa.conftest import compose_hotpot_config
    from tests.hotpotqa.helpers import run_with_model, scripted

    def react(n: int, user: str) -> str:
        if n == 0:
            return "Thought: guess\nAction: Finish[VIVA]"
        return "Thought: now I know\nAction: Finish[Gesellschaft mit beschränkter Haftung]"

    cfg = compose_hotpot_config(
        shared_data, "strategy=reflexion", "strategy.max_trials=3", "limit=1"
    )
    model, _ = scripted(react, lambda n: f"Reflection: lesson {n}.")
    _, records = run_with_model(cfg, tmp_path / "hotpot", model)
    trials = [r for r in records if r.get("type") == "trial"]
    assert len(trials) == 2
    for prev, rec in ((None, trials[0]), (trials[0], trials[1])):
        # What the log holds: the evaluator read the gold answer, and its verdict is
        # the scorer's on this trial.
        assert "evaluator.gold_answer" in rec["answer_key_uses"]
        assert rec["self_test"]["passed"] == rec["hidden"]["passed"]
        view = trial_view(rec, prev)
        assert view["in_loop_title"].startswith("Exact match with the gold answer (in the loop")
        assert "the same signal the loop saw" in view["score_title"]
        assert "hidden" not in (view["in_loop_title"] + view["score_title"]).lower()
        assert (view["in_loop_label"], view["score_label"]) == ("in loop", "score")
    view = trial_view(trials[1], trials[0])
    assert view["diff_of"] == "episode"
    added = [line for op, line in view["diff"] if op == "+"]
    assert any("Gesellschaft" in line for line in added), view["diff"]
