"""The ReAct step parser and the CoT answer extraction on well-formed and malformed replies."""

from __future__ import annotations

import pytest

from reflexion_bench.actors.hotpotqa import approx_tokens, extract_answer, parse_step


def test_well_formed_step() -> None:
    s = parse_step("Thought 2: I need the band.\nAction 2: Search[Creed (band)]")
    assert s.valid
    assert (s.thought, s.action, s.argument) == ("I need the band.", "Search", "Creed (band)")


def test_tool_names_are_case_insensitive_and_canonicalised() -> None:
    s = parse_step("Thought: x\nAction: lookup[ album ]")
    assert (s.action, s.argument, s.action_text()) == ("Lookup", "album", "Lookup[album]")


def test_markdown_decoration_tolerated() -> None:
    s = parse_step("**Thought 1:** find it\n**Action 1:** `Finish[Bath, Maine]`")
    assert s.valid and s.action == "Finish" and s.argument == "Bath, Maine"
    assert s.thought == "find it"


def test_nested_brackets_kept_in_argument() -> None:
    s = parse_step("Action 3: Finish[The [Remastered] Album]")
    assert s.valid and s.argument == "The [Remastered] Album"


def test_a_line_starting_with_a_tool_call_is_the_action() -> None:
    s = parse_step("Thought 1: I should look.\nSearch[Nick Park]")
    assert s.valid and (s.thought, s.action, s.argument) == (
        "I should look.",
        "Search",
        "Nick Park",
    )
    assert parse_step("Finish[Benvolio]").argument == "Benvolio"
    # A call inside a sentence is not an action line.
    assert not parse_step("Thought: maybe Search[Nick Park] would help").valid


def test_invented_observation_and_later_steps_ignored() -> None:
    text = (
        "Thought 1: search it\nAction 1: Search[Nick Park]\n"
        "Observation 1: Nick Park is a bird.\nThought 2: done\nAction 2: Finish[bird]"
    )
    s = parse_step(text)
    assert s.action == "Search" and s.argument == "Nick Park"


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("Thought 1: I think the answer is Paris.", "no `Action:` line"),
        ("", "no `Action:` line"),
        ("Thought: x\nAction 1: Google[Paris]", "unknown action 'Google'"),
        ("Thought: x\nAction 1: Search[Paris", "unbalanced brackets"),
        ("Thought: x\nAction 1: Search Paris", "must look like Tool[argument]"),
        ("Thought: x\nAction 1:", "the `Action:` line is empty"),
        ("Thought: x\nAction 1: Search[   ]", "needs an argument"),
        ("Thought: x\nAction 1: [Paris]", "unknown action '(nothing)'"),
    ],
)
def test_malformed_replies_are_invalid_with_a_reason(reply: str, why: str) -> None:
    s = parse_step(reply)
    assert not s.valid
    assert s.action is None
    assert s.error is not None and why in s.error


def test_invalid_step_keeps_raw_action_for_the_scratchpad() -> None:
    s = parse_step("Thought: x\nAction 1: Google[Paris]")
    assert s.action_text() == "Google[Paris]"
    assert parse_step("just text").action_text() == "(none)"


def test_extract_answer_variants() -> None:
    assert extract_answer("Thought: a\nAction: Finish[Virginia]") == ("Virginia", None)
    assert extract_answer("Thought: a\nAnswer: Virginia.") == ("Virginia", None)
    assert extract_answer("Final Answer: Finish[Virginia]") == ("Virginia", None)
    assert extract_answer("Finish[Benvolio]") == ("Benvolio", None)
    answer, why = extract_answer("Thought: a\nAction: Search[Virginia]")
    assert answer == "" and why is not None and "not available" in why
    answer, why = extract_answer("I am not sure.")
    assert answer == "" and why is not None


def test_approx_tokens_counts_words_and_marks() -> None:
    assert approx_tokens("Search[Creed (band)]") == 7
    assert approx_tokens("") == 0
