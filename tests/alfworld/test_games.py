"""The real games through the worker pool, played by the real actor with a scripted model.

Marked slow: a game load takes ~1-4 s here. Together these take about a minute.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.actors import alfworld as actor_mod
from reflexion_bench.actors.alfworld import AlfWorldReActActor
from reflexion_bench.analysis.alfworld import report_section
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, GenerateConfig, Message, Task
from reflexion_bench.environments.alfworld import (
    AlfWorldEnvironment,
    GameWorkerError,
    get_pool,
)
from reflexion_bench.evaluators.alfworld import AlfWorldEvaluator
from reflexion_bench.memory import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.reflectors.alfworld import AlfWorldReflector
from reflexion_bench.runner.loop import Roles, run_task
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.scorers.alfworld import AlfWorldScorer
from reflexion_bench.strategies import Strategy
from tests.alfworld.conftest import walkthrough

pytestmark = [pytest.mark.slow, pytest.mark.requires("alfworld")]


def one_per_type(tasks: Sequence[Task]) -> list[Task]:
    out: dict[str, Task] = {}
    for t in tasks:
        out.setdefault(t.data["type_key"], t)
    return list(out.values())


def script_by_goal(scripts: dict[str, list[str]]) -> Any:
    """A responder that plays, for each game (told apart by its goal), its script in order.

    Works with concurrent tasks: the position in the script is the number of steps
    already in the prompt's episode.
    """

    def respond(messages: Sequence[Message], config: GenerateConfig) -> str:
        start = max(i for i, m in enumerate(messages) if "Here is your game." in m.content)
        goal = re.search(r"Your task is to: (.+)", messages[start].content)
        assert goal is not None
        script = scripts[goal.group(1).strip()]
        done = sum(1 for m in messages[start:] if m.role == "assistant")
        return script[done] if done < len(script) else "look"

    return respond


def roles(actor: AlfWorldReActActor | None = None, max_trials: int = 1) -> Roles:
    return Roles(
        actor=actor or AlfWorldReActActor(),
        evaluator=AlfWorldEvaluator(),
        reflector=AlfWorldReflector(),
        scorer=AlfWorldScorer(),
        strategy=Strategy(max_trials=max_trials),
    )


def ctx(tmp_path: Path, tasks: list[Task], model: MockModel, r: Roles, conc: int = 4) -> RunContext:
    return RunContext(
        tasks=tasks,
        roles=r,
        services=Services(model=model),
        memory_factory=WindowMemory,
        memory_window=3,
        benchmark="alfworld",
        run_dir=tmp_path,
        max_concurrent_tasks=conc,
        show_progress=False,
    )


def state(task: Task, model: MockModel, trials: int = 1) -> TaskState:
    return TaskState(
        task=task,
        strategy="reflexion",
        max_trials=trials,
        memory=WindowMemory(3),
        services=Services(model=model),
    )


async def test_walkthrough_of_each_task_type_wins_in_parallel_workers(
    v212: Path, tmp_path: Path
) -> None:
    tasks = one_per_type(AlfWorldEnvironment(v212).load_tasks())
    assert len(tasks) == 6
    scripts = {t.prompt: walkthrough(t.data["gamefile"]) for t in tasks}
    model = MockModel(responder=script_by_goal(scripts))
    await execute(ctx(tmp_path, tasks, model, roles()))
    recs = load_run_records(tmp_path)
    assert len(recs) == 6
    for r in recs:
        info = r["extra"]["alfworld"]
        assert r["error"] is None, r["error"]
        assert r["hidden"]["passed"] is True and info["won"] is True, r["task_id"]
        assert info["stop_reason"] == "won"
        assert info["n_actions"] == len(scripts[info["goal"]])
        assert info["invalid_actions"] == 0 and info["inadmissible_actions"] == 0
        assert r["self_test"]["passed"] is True
    # Both worker processes served games.
    assert {r["extra"]["alfworld"]["worker"] for r in recs} == {0, 1}


async def test_v211_walkthrough_wins_and_arrival_is_cleaned(v211: Path) -> None:
    task = AlfWorldEnvironment(v211, version="v2.1.1", limit=1).load_tasks()[0]
    walk = walkthrough(task.data["gamefile"])
    model = MockModel(responses=walk)
    st = state(task, model)
    await run_task(st, roles(AlfWorldReActActor(version="v2.1.1")))
    rec = st.trials[0]
    assert rec.hidden is not None and rec.hidden.passed
    assert "You arrive at loc" not in rec.trajectory
    # The prompt the model saw speaks v2.1.1.
    assert "put <object> in/on <receptacle>" in model.prompts[0]


async def test_won_not_done_is_success(v212: Path) -> None:
    task = AlfWorldEnvironment(v212, limit=1, max_steps=3).load_tasks()[0]
    walk = walkthrough(task.data["gamefile"])
    assert len(walk) > 3
    st = state(task, MockModel(responses=walk[:3]))
    await run_task(st, roles())
    rec = st.trials[0]
    info = rec.extra["alfworld"]
    # The episode is over (done) at the step limit, but the game was not won.
    assert info["done"] is True and info["won"] is False and info["stop_reason"] == "step_limit"
    assert rec.hidden is not None and rec.hidden.passed is False
    assert rec.self_test is not None and rec.self_test.passed is False
    assert "step limit" in rec.self_test.text


async def test_think_is_answered_ok_without_touching_the_game(v212: Path) -> None:
    task = AlfWorldEnvironment(v212, limit=1).load_tasks()[0]
    walk = walkthrough(task.data["gamefile"])
    script = ["think: I will look for the object first.", walk[0], "think: go to desk 1", *walk[1:]]
    st = state(task, MockModel(responses=script))
    await run_task(st, roles())
    info = st.trials[0].extra["alfworld"]
    assert info["won"] is True and info["n_actions"] == len(walk) + 2 and info["n_think"] == 2
    assert info["steps"][0][1] == "OK." and info["steps"][0][2] is None
    # A thought that reads like a command moved nothing: the next real step behaves as
    # in the walkthrough (had the game run `go to desk 1`, the plan would not win).
    assert info["steps"][2][1] == "OK."
    assert info["invalid_actions"] == 0


async def test_repeat_heuristic_stops_the_episode(v212: Path) -> None:
    task = AlfWorldEnvironment(v212, limit=1).load_tasks()[0]
    # `inventory` gets the same answer every time: stopped at the 3rd.
    st = state(task, MockModel(responses=["inventory"] * 10))
    await run_task(st, roles())
    info = st.trials[0].extra["alfworld"]
    assert info["stop_reason"] == "repeated_action" and info["n_actions"] == 3
    fb = st.trials[0].self_test
    assert fb is not None and fb.passed is False and "same answer 3 times" in fb.text
    # A repeated action whose answer changes is not a loop yet: the first `go to` arrives,
    # the next three are `Nothing happens.`, so the stop comes at the 4th.
    place = walkthrough(task.data["gamefile"])[0]
    st2 = state(task, MockModel(responses=[place] * 10))
    await run_task(st2, roles())
    info2 = st2.trials[0].extra["alfworld"]
    assert info2["stop_reason"] == "repeated_action" and info2["n_actions"] == 4
    # Turned off (max_repeats=0), the same script runs to the step limit.
    task_off = AlfWorldEnvironment(v212, limit=1, max_repeats=0, max_steps=5).load_tasks()[0]
    st3 = state(task_off, MockModel(responses=["inventory"] * 10))
    await run_task(st3, roles())
    assert st3.trials[0].extra["alfworld"]["stop_reason"] == "step_limit"


async def test_memory_keeps_three_reflections_and_they_reach_the_prompt(v212: Path) -> None:
    task = AlfWorldEnvironment(v212, limit=1).load_tasks()[0]
    script: list[str] = []
    for k in range(1, 6):
        script += ["inventory"] * 3 + [f"Lesson number {k}: search desk 2 first."]
    model = MockModel(responses=script)
    st = state(task, model, trials=5)
    await run_task(st, roles(max_trials=5))
    assert len(st.trials) == 5
    assert [len(r.memory_shown) for r in st.trials] == [0, 1, 2, 3, 3]
    # The actor prompts of trial 5 (calls 16-18) hold lessons 2-4, not lesson 1.
    trial5 = model.prompts[16]
    assert all(f"Lesson number {k}:" in trial5 for k in (2, 3, 4))
    assert "Lesson number 1:" not in trial5
    assert "Lesson number 4:" not in model.prompts[0]
    # Each reflection call saw its trial's failure.
    reflect_prompt = model.prompts[3]
    assert "> inventory" in reflect_prompt and "same answer 3 times" in reflect_prompt
    assert [c.role for c in st.trials[0].model_calls] == ["actor"] * 3 + ["reflector"]


async def test_v211_prompt_on_v212_games_is_detected_while_playing(v211: Path, v212: Path) -> None:
    # A game whose plan contains a put; played with its v2.1.1 (old) commands.
    t212 = next(t for t in AlfWorldEnvironment(v212).load_tasks() if t.data["type_key"] == "put")
    old = walkthrough(v211 / "json_2.1.1" / "valid_unseen" / t212.id / "game.tw-pddl")
    assert any(a.startswith("put ") for a in old)
    before = len(actor_mod.VERSION_SYMPTOM_EPISODES)
    st = state(t212, MockModel(responses=[*old, old[-1], "look", "look", "look"]))
    await run_task(st, roles(AlfWorldReActActor(version="v2.1.2")))
    rec = st.trials[0]
    info = rec.extra["alfworld"]
    assert info["won"] is False and info["version_symptoms"] >= 2
    assert rec.self_test is not None and "put syntax" in rec.self_test.text
    assert actor_mod.VERSION_SYMPTOM_EPISODES[before:] == [t212.id]
    del actor_mod.VERSION_SYMPTOM_EPISODES[before:]  # no end-of-run warning for a test
    record = {
        "task_id": t212.id,
        "trial": 1,
        "benchmark": "alfworld",
        "hidden": {"passed": False},
        "extra": {"alfworld": info},
    }
    assert "WARNING" in (report_section([record]) or "")


async def test_a_crashed_worker_loses_only_its_games(v212: Path) -> None:
    tasks = AlfWorldEnvironment(v212, limit=2).load_tasks()
    pool = get_pool(**tasks[0].data["pool"])
    a = await pool.open(tasks[0].data["gamefile"])
    b = await pool.open(tasks[1].data["gamefile"])
    assert {a.worker_index, b.worker_index} == {0, 1}
    pid = pool.worker_pids()[a.worker_index]
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(GameWorkerError):
        await a.step("look")
    assert (await b.step("look")).observation  # the other worker is untouched
    await a.close()
    await b.close()
    # The crashed worker is restarted for the next game.
    c = await pool.open(tasks[0].data["gamefile"])
    assert not (await c.step("inventory")).won
    await c.close()
    assert pool.restarts() >= 1


async def test_a_broken_game_errors_its_task_and_the_run_goes_on(
    v212: Path, tmp_path: Path
) -> None:
    good = AlfWorldEnvironment(v212, limit=1).load_tasks()[0]
    broken_file = tmp_path / "broken" / "game.tw-pddl"
    broken_file.parent.mkdir()
    broken_file.write_text(json.dumps({"grammar": "", "pddl_domain": "(oops"}), encoding="utf-8")
    broken = Task(
        id="broken",
        prompt="x",
        benchmark="alfworld",
        data={**good.data, "gamefile": str(broken_file)},
    )
    model = MockModel(responder=script_by_goal({good.prompt: walkthrough(good.data["gamefile"])}))
    await execute(ctx(tmp_path / "run", [broken, good], model, roles()))
    recs = {r["task_id"]: r for r in load_run_records(tmp_path / "run")}
    assert recs["broken"]["error"] and "GameError" in recs["broken"]["error"]
    assert recs[good.id]["hidden"]["passed"] is True


async def test_pool_stops_its_worker_processes(v212: Path) -> None:
    from reflexion_bench.environments.alfworld import close_all_pools

    task = AlfWorldEnvironment(v212, limit=1, workers=1).load_tasks()[0]
    pool = get_pool(**task.data["pool"])
    pids = await pool.ping()
    close_all_pools()
    await asyncio.sleep(0.2)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_scorer_reads_won_not_done() -> None:
    scorer = AlfWorldScorer()

    def attempt(won: bool, done: bool) -> Attempt:
        return Attempt(candidate="", extra={"alfworld": {"won": won, "done": done}})

    st = TaskState(
        task=Task("t", "", "alfworld"),
        strategy="s",
        max_trials=1,
        memory=WindowMemory(3),
        services=Services(model=MockModel(responses=["x"])),
    )
    assert asyncio.run(scorer.score(st, attempt(False, True))).passed is False
    assert asyncio.run(scorer.score(st, attempt(True, True))).passed is True
