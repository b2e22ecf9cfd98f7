"""The project's own demonstrations, and the prompt/version checks of the actor."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from reflexion_bench.actors.alfworld import AlfWorldReActActor, split_demo
from reflexion_bench.analysis.alfworld import classify_episode
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.alfworld.text import (
    TYPE_KEYS,
    convert_demo,
    detect_text_version,
)
from reflexion_bench.prompts import load_pack

COMMAND = re.compile(
    r"^(?:go to|open|close|use|examine) [a-z]+ \d+$"
    r"|^take [a-z]+ \d+ from [a-z]+ \d+$"
    r"|^move [a-z]+ \d+ to [a-z]+ \d+$"
    r"|^(?:clean|heat|cool) [a-z]+ \d+ with [a-z]+ \d+$"
    r"|^(?:look|inventory)$"
    r"|^think: .+$"
)
GOALS = {
    "put": re.compile(r"^put (?:a|some) (\w+) (?:in|on) (\w+)\.$"),
    "clean": re.compile(r"^(?:put a clean (\w+) in (\w+)|clean some (\w+) and put it in (\w+))\.$"),
    "heat": re.compile(r"^(?:put a hot (\w+) in (\w+)|heat some (\w+) and put it in (\w+))\.$"),
    "cool": re.compile(r"^(?:put a cool (\w+) in (\w+)|cool some (\w+) and put it in (\w+))\.$"),
    "examine": re.compile(
        r"^(?:look at (\w+) under the (desklamp)|examine the (\w+) with the (desklamp))\.$"
    ),
    "puttwo": re.compile(r"^(?:put two (\w+) in (\w+)|find two (\w+) and put them in (\w+))\.$"),
}
NEEDS = {"clean": "clean", "heat": "heat", "cool": "cool"}


def parse_demo(text: str) -> tuple[str, list[list[str]]]:
    lines = text.strip("\n").splitlines()
    goal = lines[1].removeprefix("Your task is to: ")
    steps = []
    for i in range(2, len(lines), 2):
        assert lines[i].startswith("> "), f"line {i + 1} should be an action: {lines[i]!r}"
        steps.append([lines[i][2:], lines[i + 1]])
    return goal, steps


def final_state_meets_goal(type_key: str, goal: str, steps: list[list[str]]) -> bool:
    """Replay the demonstration's answers and check the goal like the game would."""
    m = GOALS[type_key].match(goal)
    assert m, f"goal {goal!r} does not read like an ALFWorld {type_key} goal"
    obj, recep = [g for g in m.groups() if g][:2]
    held: set[str] = set()
    changed: dict[str, set[str]] = {}
    placed: list[tuple[str, str]] = []
    lamp_on_while_holding = False
    for _action, obs in steps:
        if mm := re.match(r"You pick up the (.+?) from the", obs):
            held.add(mm.group(1))
        if mm := re.match(r"You move the (.+?) to the (.+?)\.", obs):
            held.discard(mm.group(1))
            placed.append((mm.group(1), mm.group(2)))
        if mm := re.match(r"You (clean|heat|cool) the (.+?) using", obs):
            changed.setdefault(mm.group(2), set()).add(mm.group(1))
        if re.match(r"You turn on the desklamp \d+\.", obs):
            lamp_on_while_holding = any(h.split()[0] == obj for h in held)
    if type_key == "examine":
        return lamp_on_while_holding
    good = [
        o
        for o, r in placed
        if o.split()[0] == obj
        and r.split()[0] == recep
        and (type_key not in NEEDS or NEEDS[type_key] in changed.get(o, set()))
    ]
    return len(set(good)) >= (2 if type_key == "puttwo" else 1)


@pytest.mark.parametrize("type_key", TYPE_KEYS)
@pytest.mark.parametrize("k", [0, 1])
def test_own_demonstrations_are_valid_winning_games(type_key: str, k: int) -> None:
    text = load_pack("alfworld")[f"react_{type_key}_{k}"]
    goal, steps = parse_demo(text)
    for action, obs in steps:
        assert COMMAND.match(action), f"not a v2.1.2 command: {action!r}"
        if action.startswith("think:"):
            assert obs == "OK."
        assert obs != "Nothing happens.", f"a demonstration should not show a failed {action!r}"
    assert final_state_meets_goal(type_key, goal, steps), f"react_{type_key}_{k} does not win"
    # No step acts on an object it does not hold or never saw (the classifier's rules).
    m = GOALS[type_key].match(goal)
    assert m is not None
    obj, recep = [g for g in m.groups() if g][:2]
    info = {"won": False, "steps": steps, "type_key": type_key, "object": obj, "receptacle": recep}
    c = classify_episode(info)
    assert c.hits == []
    assert detect_text_version([text]) in ("v2.1.2", None)


def test_a_broken_demonstration_fails_the_checks() -> None:
    # The checks above can fail: a heat demonstration without the heating step.
    text = load_pack("alfworld")["react_heat_1"]
    broken = "\n".join(
        ln for ln in text.splitlines() if "heat egg 2" not in ln and "You heat" not in ln
    )
    goal, steps = parse_demo(broken)
    assert not final_state_meets_goal("heat", goal, steps)
    c = classify_episode(
        {
            "won": False,
            "steps": steps,
            "type_key": "heat",
            "object": "egg",
            "receptacle": "countertop",
        }
    )
    assert [h["rule"] for h in c.hits] == ["placed_untransformed"]


def test_own_pack_is_adapted_to_v211_games() -> None:
    actor = AlfWorldReActActor(version="v2.1.1")
    for type_key in TYPE_KEYS:
        demos = actor.demos(type_key, "v2.1.1")
        assert all("> move " not in d and "You arrive at " not in d for d in demos)
        if type_key != "examine":
            assert detect_text_version(demos) == "v2.1.1"
    own = load_pack("alfworld")["react_put_0"].strip("\n")
    assert actor.demos("put", "v2.1.1")[0] == convert_demo(own, "v2.1.1")


def test_paper_pack_on_v212_games_is_caught_at_start(paper_pack: Path) -> None:
    with pytest.raises(ConfigError) as err:
        AlfWorldReActActor(prompts=str(paper_pack), version="v2.1.2")
    assert "actor.prompts" in str(err.value) and "v2.1.1" in str(err.value)
    # On the games it was written for it is accepted and shown as is.
    actor = AlfWorldReActActor(prompts=str(paper_pack), version="v2.1.1")
    assert "in/on" in actor.demos("put", "v2.1.1")[0]
    # warn: the run goes on with the pack as given.
    warned = AlfWorldReActActor(prompts=str(paper_pack), version="v2.1.2", version_check="warn")
    assert "in/on" in warned.demos("put", "v2.1.2")[0]


def test_an_own_v211_demo_in_an_external_pack_is_caught(tmp_path: Path) -> None:
    # A hand-written pack in the old syntax, without the paper's text.
    pack = tmp_path / "pack.json"
    demo = convert_demo(load_pack("alfworld")["react_put_0"], "v2.1.1")
    pack.write_text('{"react_put_0": ' + __import__("json").dumps(demo) + "}", encoding="utf-8")
    with pytest.raises(ConfigError):
        AlfWorldReActActor(prompts=str(pack), version="v2.1.2")


STEPS = [
    [f"go to shelf {i}", f"You arrive at shelf {i}. On the shelf {i}, you see nothing."]
    for i in range(1, 31)
]
MEMORY = "[Reflection (trial 1)]\nTry drawer 2."


def test_transcript_prompt_shows_memory_and_episode_and_trims_history() -> None:
    actor = AlfWorldReActActor(version="v2.1.2", format="transcript", max_prompt_tokens=1300)
    msgs = actor.messages("put", "v2.1.2", MEMORY, "INITIAL", STEPS)
    assert [m.role for m in msgs] == ["system", "user"]
    user = msgs[1].content
    assert user.index("candle 3") < user.index("Try drawer 2.") < user.index("INITIAL")
    assert user.rstrip().endswith(">")
    assert "move <object> to <receptacle>" in user
    # The prompt was too long for 1300 tokens: the oldest steps are left out, the newest kept.
    assert "earlier steps not shown" in user
    assert "> go to shelf 30\n" in user and "> go to shelf 1\n" not in user
    full = AlfWorldReActActor(version="v2.1.2", format="transcript", max_prompt_tokens=None)
    text = full.messages("put", "v2.1.2", "", "INITIAL", STEPS)[1].content
    assert "> go to shelf 1\n" in text and "not shown" not in text and "Try drawer" not in text


def test_chat_prompt_alternates_game_and_player_turns() -> None:
    actor = AlfWorldReActActor(version="v2.1.1", max_prompt_tokens=None)
    msgs = actor.messages("put", "v2.1.1", MEMORY, "INITIAL", STEPS[:2])
    assert msgs[0].role == "system" and "put <object> in/on <receptacle>" in msgs[0].content
    roles = [m.role for m in msgs[1:]]
    assert all(a != b for a, b in itertools.pairwise(roles))  # strictly alternating
    assert roles[0] == "user" and roles[-1] == "user"
    # The demonstrations' actions are assistant turns, in the games' version.
    demo_actions = [m.content for m in msgs if m.role == "assistant"][:-2]
    assert "put candle 3 in/on toilet 1" in demo_actions
    game = max(i for i, m in enumerate(msgs) if "Here is your game." in m.content)
    assert "Try drawer 2." in msgs[game].content and "INITIAL" in msgs[game].content
    # The game's opening joined the last demonstration's final answer in one user turn.
    assert msgs[game].content.index("You put the saltshaker 2 in/on the drawer 1.") < (
        msgs[game].content.index("Here is your game.")
    )
    assert [m.content for m in msgs[game + 1 :]] == [
        STEPS[0][0],
        STEPS[0][1],
        STEPS[1][0],
        STEPS[1][1],
    ]
    trimmed = AlfWorldReActActor(version="v2.1.2", max_prompt_tokens=1200).messages(
        "put", "v2.1.2", "", "INITIAL", STEPS
    )
    assert any("earlier steps not shown" in m.content for m in trimmed)
    assert trimmed[-2].content == "go to shelf 30"


def test_split_demo_handles_thoughts_without_answer() -> None:
    head, turns = split_demo(
        "Room.\nYour task is to: x.\n> think: plan\n> go to desk 1\nOn the desk 1, you see nothing.\n"
    )
    assert head == "Room.\nYour task is to: x."
    assert turns == [("think: plan", "OK."), ("go to desk 1", "On the desk 1, you see nothing.")]
