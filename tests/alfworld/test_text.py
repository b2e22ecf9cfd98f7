"""The game's text conventions: action parsing, versions, observation clean-up."""

from __future__ import annotations

import pytest

from reflexion_bench.environments.alfworld.text import (
    clean_observation,
    convert_demo,
    detect_text_version,
    goal_of,
    normalize_action,
    put_syntax,
    task_params_of,
    task_type_of,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("go to desk 1", "go to desk 1"),
        ("> go to desk 1\nYou arrive at desk 1.", "go to desk 1"),
        ("\n\n  Action: Take Mug 2 from Desk 1.", "take mug 2 from desk 1"),
        ("`open drawer 3`", "open drawer 3"),
        ('"use  desklamp 1"', "use desklamp 1"),
        ("> think: First I find the Mug.", "think: First I find the Mug."),
        ("   ", ""),
    ],
)
def test_normalize_action(raw: str, expected: str) -> None:
    assert normalize_action(raw) == expected


def test_put_syntax_tells_the_versions_apart() -> None:
    assert put_syntax("move mug 1 to desk 2") == "v2.1.2"
    assert put_syntax("put mug 1 in/on desk 2") == "v2.1.1"
    assert put_syntax("put mug 1 on desk 2") == "v2.1.1"
    assert put_syntax("go to desk 2") is None
    assert put_syntax("take mug 1 from desk 2") is None


def test_detect_text_version_from_demonstrations() -> None:
    old = "> take mug 1 from desk 1\nYou pick up the mug 1 from the desk 1.\n> put mug 1 in/on shelf 1\n"
    new = "> move mug 1 to shelf 1\nYou move the mug 1 to the shelf 1.\n"
    none = "> go to desk 1\n> use desklamp 1\nYou turn on the desklamp 1.\n"
    assert detect_text_version([old]) == "v2.1.1"
    assert detect_text_version([new]) == "v2.1.2"
    assert detect_text_version([none]) is None
    assert detect_text_version([old, new]) is None  # both: no single version


def test_convert_demo_to_v211_rewrites_put_and_arrival() -> None:
    demo = (
        "> go to shelf 1\n"
        "You arrive at shelf 1. On the shelf 1, you see a vase 1.\n"
        "> move mug 1 to shelf 1\n"
        "You move the mug 1 to the shelf 1.\n"
    )
    out = convert_demo(demo, "v2.1.1")
    assert out == (
        "> go to shelf 1\n"
        "On the shelf 1, you see a vase 1.\n"
        "> put mug 1 in/on shelf 1\n"
        "You put the mug 1 in/on the shelf 1.\n"
    )
    assert detect_text_version([out]) == "v2.1.1"
    assert convert_demo(demo, "v2.1.2") == demo


def test_clean_observation() -> None:
    first = (
        "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking "
        "quickly around you, you see a desk 1.\n\nYour task is to: put a mug in desk."
    )
    assert clean_observation(first) == (
        "You are in the middle of a room. Looking quickly around you, you see a desk 1.\n"
        "Your task is to: put a mug in desk."
    )
    assert clean_observation("You arrive at loc 12. On the desk 1, you see nothing.") == (
        "On the desk 1, you see nothing."
    )
    # v2.1.2's arrival names the place: kept.
    kept = "You arrive at desk 1. On the desk 1, you see nothing."
    assert clean_observation(kept) == kept
    assert goal_of(first) == "put a mug in desk."


def test_task_folder_parsing() -> None:
    rel = "pick_heat_then_place_in_recep-Egg-None-GarbageCan-10/trial_T20190908_113432_673307"
    assert task_type_of(rel) == "pick_heat_then_place_in_recep"
    assert task_params_of(rel) == {"object": "egg", "receptacle": "garbagecan", "scene": "10"}
    assert task_type_of("pick_and_place_with_movable_recep-X-Y-Z-1/trial") is None
