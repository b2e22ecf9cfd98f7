"""Each of the paper's memory strategies puts exactly the right content into the next
trial's prompt: the real config (configs/config.yaml, env=hotpotqa) and the real runner,
with the scripted model at the model boundary."""

from __future__ import annotations

import re
from pathlib import Path

from tests.hotpotqa.conftest import Compose
from tests.hotpotqa.helpers import run_with_model, scripted

HEADER = "You have answered this question before and did not get it right."


def _react(n_finished: int, user: str) -> str:
    """Trial k: Search the first gold page, then answer `wrong<k>`."""
    pad = user.split("(End of examples.)")[-1]
    pad = pad.rsplit("\nQuestion: ", 1)[-1]  # the current question's own steps only
    if "Observation 1:" not in pad:
        return "Thought 1: Look it up.\nAction 1: Search[VIVA Media]"
    return f"Thought 2: I will guess.\nAction 2: Finish[wrong{n_finished + 1}]"


def _reflect(n: int) -> str:
    return f"Reflection: lesson {n}: search the second page too."


def _memory_section(user: str) -> str:
    """What a prompt shows between the examples and the current question."""
    tail = user.split("(End of examples.)", 1)[1]
    return tail.rsplit("\nQuestion: ", 1)[0].strip()


def _trial_prompts(seen: list[str]) -> list[str]:
    """The first ReAct prompt of each trial (every trial starts with 'Thought 1')."""
    return [u for u in seen if u.rstrip().endswith("Write Thought 1 and Action 1 now.")]


def _run(compose_hotpot: Compose, tmp_path: Path, strategy: str, trials: int):  # type: ignore[no-untyped-def]
    cfg = compose_hotpot(
        "actor=react", f"strategy={strategy}", f"strategy.max_trials={trials}", "limit=1"
    )
    model, seen = scripted(_react, _reflect)
    ctx, records = run_with_model(cfg, tmp_path / strategy, model)
    return ctx, records, _trial_prompts(seen["react"]), seen


def test_retry_shows_nothing(compose_hotpot: Compose, tmp_path: Path) -> None:
    ctx, records, prompts, seen = _run(compose_hotpot, tmp_path, "retry", 3)
    assert len(records) == 3 and len(prompts) == 3
    assert [r["candidate"] for r in records] == ["wrong1", "wrong2", "wrong3"]
    for p in prompts:
        assert _memory_section(p) == ""
        assert HEADER not in p
    assert seen["reflector"] == []
    assert all(r["memory_shown"] == [] for r in records)
    assert ctx.memory_window == 3  # the env's Ω, unused here


def test_last_attempt_shows_only_the_previous_trajectory_and_its_outcome(
    compose_hotpot: Compose, tmp_path: Path
) -> None:
    _, records, prompts, seen = _run(compose_hotpot, tmp_path, "last_attempt", 3)
    assert seen["reflector"] == []
    assert _memory_section(prompts[0]) == ""
    for k in (2, 3):
        prev = records[k - 2]
        expected = (
            f"{HEADER} Use these notes from your earlier attempts:\n\n"
            f"[Previous attempt (trial {k - 1})]\n{prev['trajectory']}\n\n"
            f"[feedback]\nFinish[wrong{k - 1}] is incorrect (it does not exactly match the reference answer)."
        )
        assert _memory_section(prompts[k - 1]) == expected
        # The remembered trajectory is the whole previous attempt, observation included.
        assert "Action 1: Search[VIVA Media]\nObservation 1: VIVA Media GmbH" in prev["trajectory"]
        assert prev["trajectory"].endswith(f"Action 2: Finish[wrong{k - 1}]")
    assert "wrong1" not in _memory_section(prompts[2])  # Ω=1: only the last attempt
    assert records[2]["extra"]["memory_kinds"] == ["raw_log"]


def test_reflexion_shows_the_last_three_reflections(
    compose_hotpot: Compose, tmp_path: Path
) -> None:
    _, records, prompts, seen = _run(compose_hotpot, tmp_path, "reflexion", 5)
    assert len(prompts) == 5 and len(seen["reflector"]) == 4
    assert _memory_section(prompts[0]) == ""
    assert _memory_section(prompts[1]) == (
        f"{HEADER} Use these notes from your earlier attempts:\n\n"
        "[Reflection (trial 1)]\nlesson 1: search the second page too."
    )
    fifth = _memory_section(prompts[4])
    assert re.findall(r"\[Reflection \(trial (\d)\)\]", fifth) == ["2", "3", "4"]  # Ω=3
    assert "lesson 1:" not in fifth
    for p in prompts:
        assert "[Previous attempt" not in p and "Finish[wrong" not in _memory_section(p)
    # The reflector saw the failed attempt and its outcome, never the gold answer.
    first_reflection_prompt = seen["reflector"][0]
    assert records[0]["trajectory"] in first_reflection_prompt
    assert "Finish[wrong1] is incorrect" in first_reflection_prompt
    assert "Gesellschaft" not in first_reflection_prompt.split("(End of examples.)")[-1]
    assert records[0]["reflection"] == "lesson 1: search the second page too."


def test_last_attempt_and_reflexion_shows_last_trajectory_and_its_reflection(
    compose_hotpot: Compose, tmp_path: Path
) -> None:
    _, records, prompts, _ = _run(compose_hotpot, tmp_path, "last_attempt_and_reflexion", 3)
    third = _memory_section(prompts[2])
    prev = records[1]
    assert third == (
        f"{HEADER} Use these notes from your earlier attempts:\n\n"
        f"[Previous attempt (trial 2)]\n{prev['trajectory']}\n\n"
        "[feedback]\nFinish[wrong2] is incorrect (it does not exactly match the reference answer).\n\n"
        "[Reflection (trial 2)]\nlesson 2: search the second page too."
    )
    assert "lesson 1" not in third and "wrong1" not in third
    assert records[2]["extra"]["memory_kinds"] == ["raw_log", "reflection"]


def test_a_correct_answer_stops_the_task(compose_hotpot: Compose, tmp_path: Path) -> None:
    def react(n: int, user: str) -> str:
        if n == 0:
            return "Thought: guess\nAction: Finish[VIVA]"
        return "Thought: now I know\nAction: Finish[Gesellschaft mit beschränkter Haftung]"

    cfg = compose_hotpot("strategy=reflexion", "strategy.max_trials=5", "limit=1")
    model, _ = scripted(react, _reflect)
    _, records = run_with_model(cfg, tmp_path / "stop", model)
    assert [r["hidden"]["passed"] for r in records] == [False, True]
    assert records[-1]["final"] is True
    assert records[-1]["self_test"]["passed"] is True
    assert records[-1]["extra"]["type"] == "bridge"
