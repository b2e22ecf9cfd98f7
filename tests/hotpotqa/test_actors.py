"""ReAct and CoT actors with the scripted model: steps, invalid steps, limits, context."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from reflexion_bench.actors.hotpotqa import ELIDED, CoTActor, ReActActor, approx_tokens
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import GenerateConfig, Message, Task
from reflexion_bench.environments.docstore import ContextDocstore
from reflexion_bench.memory.base import MemoryEntry, WindowMemory
from reflexion_bench.models.mock import MockModel

PAGES = [
    (
        "Jaclyn Stapp",
        [
            "Jaclyn Stapp is a beauty queen.",
            " She is married to Scott Stapp, former frontman of the band Creed.",
        ],
    ),
    (
        "Creed (band)",
        [
            "Creed is an American rock band formed in 1993.",
            " The band disbanded in 2004.",
            " Creed released albums.",
        ],
    ),
]


def _state(model: MockModel, data: dict[str, object] | None = None) -> TaskState:
    task = Task(
        id="q",
        prompt="Jaclyn Stapp is married to the former frontman of a band that disbanded in what year?",
        benchmark="hotpotqa",
        data={"answer": "2004", "type": "bridge", "level": "hard", **(data or {})},
    )
    return TaskState(
        task=task,
        strategy="reflexion",
        max_trials=3,
        memory=WindowMemory(3),
        services=Services(model=model),
    )


def _react(**kw: object) -> ReActActor:
    return ReActActor(docstore=ContextDocstore.from_pages(PAGES), **kw)  # type: ignore[arg-type]


async def test_react_search_lookup_finish() -> None:
    model = MockModel(
        responses=[
            "Thought 1: Find her husband.\nAction 1: Search[Jaclyn Stapp]",
            "Thought 2: The band is Creed.\nAction 2: Search[Creed (band)]",
            "Thought 3: Check when.\nAction 3: Lookup[disbanded]",
            "Thought 4: 2004.\nAction 4: Finish[2004]",
        ]
    )
    attempt = await _react().act(_state(model))
    assert attempt.candidate == "2004"
    assert attempt.extra["steps"] == 4
    assert attempt.extra["invalid_steps"] == 0
    assert attempt.extra["halted"] is None
    assert attempt.extra["actions"] == {"Search": 2, "Lookup": 1, "Finish": 1}
    assert (attempt.extra["type"], attempt.extra["level"]) == ("bridge", "hard")
    assert attempt.extra["max_trials"] == 3
    t = attempt.trajectory
    assert t.startswith("Question: Jaclyn Stapp is married")
    assert "Observation 1: Jaclyn Stapp is a beauty queen. She is married to Scott Stapp" in t
    assert "Observation 3: (Result 1 / 1) The band disbanded in 2004." in t
    assert t.endswith("Action 4: Finish[2004]")
    # Each step's prompt holds the scratchpad so far and asks for the next step.
    assert "Observation 2: Creed is an American rock band" in model.prompts[2]
    assert "Write Thought 3 and Action 3 now." in model.prompts[2]
    # Stop sequences keep the model from writing its own observation.
    _, cfg = model.calls[0]
    assert "\nObservation" in cfg.stop and "Observation 1:" in cfg.stop
    assert cfg.max_tokens == 256
    assert attempt.prompt and attempt.prompt[0].role == "system"


async def test_react_malformed_steps_are_counted_and_explained() -> None:
    model = MockModel(
        responses=[
            "Thought 1: I just know it.",  # missing Action
            "Thought 2: x\nAction 2: Google[Creed]",  # unknown tool
            "Thought 3: x\nAction 3: Search[Creed (band)",  # unbalanced
            "Thought 4: ok\nAction 4: Finish[2004]",
        ]
    )
    attempt = await _react().act(_state(model))
    assert attempt.candidate == "2004"
    assert attempt.extra["invalid_steps"] == 3
    assert attempt.extra["steps"] == 4
    t = attempt.trajectory
    assert "Action 1: (none)\nObservation 1: Invalid action: the reply has no `Action:` line." in t
    assert "Observation 2: Invalid action: unknown action 'Google'" in t
    assert "Observation 3: Invalid action: unbalanced brackets" in t
    # The observation tells the model the valid format with the right step number.
    assert "`Action 3: Search[entity]`" in t


async def test_react_step_limit_leaves_no_answer() -> None:
    model = MockModel(responses=["Thought: again\nAction: Search[Nothing here]"], cycle=True)
    attempt = await _react(max_steps=3).act(_state(model))
    assert attempt.candidate == ""
    assert attempt.extra["halted"] == "max_steps"
    assert len(model.calls) == 3
    assert "Could not find [Nothing here]. Similar:" in attempt.trajectory


async def test_react_prompt_length_limit_stops_before_the_call() -> None:
    long_obs_pages = [("Big", ["word " * 300 + "."])]
    model = MockModel(responses=["Thought: read\nAction: Search[Big]"], cycle=True)
    actor = ReActActor(
        docstore=ContextDocstore.from_pages(long_obs_pages), max_steps=6, observation_chars=100_000
    )
    first_prompt = sum(approx_tokens(m.content) for m in actor.messages(_state(model), "", 1))
    # Room for the first prompt plus one observation, not two.
    actor.max_prompt_tokens = first_prompt + 400
    attempt = await actor.act(_state(model))
    assert attempt.extra["halted"] == "prompt_length"
    assert attempt.candidate == ""
    assert len(model.calls) == 2  # the third prompt was too long and never sent
    assert attempt.extra["last_prompt_tokens"] > actor.max_prompt_tokens
    # Every prompt actually sent was within the limit.
    for msgs, _ in model.calls:
        assert sum(approx_tokens(m.content) for m in msgs) <= actor.max_prompt_tokens


async def test_react_trajectory_for_memory_elides_longest_observations() -> None:
    pages = [("Big", ["word " * 400 + "."]), ("Small", ["tiny fact."])]
    model = MockModel(
        responses=[
            "Thought: a\nAction: Search[Big]",
            "Thought: b\nAction: Search[Small]",
            "Thought: c\nAction: Finish[x]",
        ]
    )
    actor = ReActActor(
        docstore=ContextDocstore.from_pages(pages),
        observation_chars=100_000,
        memory_trajectory_tokens=200,
    )
    attempt = await actor.act(_state(model))
    assert approx_tokens(attempt.trajectory) <= 200
    assert f"Observation 1: {ELIDED}" in attempt.trajectory
    assert "Observation 2: tiny fact." in attempt.trajectory
    assert "word word" in attempt.extra["full_trajectory"]


async def test_react_puts_formatted_memory_in_the_prompt() -> None:
    model = MockModel(responses=["Thought: a\nAction: Finish[2004]"])
    state = _state(model)
    state.memory.add(MemoryEntry("reflection", "Search the band's page, not the person's.", 1))
    await _react().act(state)
    assert "[Reflection (trial 1)]\nSearch the band's page, not the person's." in model.prompts[0]
    assert "did not get it right" in model.prompts[0]


async def test_react_without_memory_has_no_memory_block() -> None:
    model = MockModel(responses=["Thought: a\nAction: Finish[2004]"])
    await _react().act(_state(model))
    assert "did not get it right" not in model.prompts[0]


def _cot_model(reply: str) -> MockModel:
    return MockModel(responses=[reply])


async def test_cot_context_shows_gold_paragraphs_and_cot_does_not() -> None:
    data = {"gold_context": "Creed (band): Creed disbanded in 2004."}
    model = _cot_model("Thought: it says 2004.\nAction: Finish[2004]")
    attempt = await CoTActor(with_context=True).act(_state(model, data))
    assert attempt.candidate == "2004"
    assert "Context:\nCreed (band): Creed disbanded in 2004." in model.prompts[0]
    assert attempt.extra["actor"] == "cot_context"
    assert attempt.trajectory.endswith("Thought: it says 2004.\nAction: Finish[2004]")
    assert "Creed disbanded" not in attempt.trajectory  # context is not part of the attempt

    model = _cot_model("Thought: guess.\nAction: Finish[2001]")
    attempt = await CoTActor(with_context=False).act(_state(model, data))
    assert "Creed disbanded in 2004" not in model.prompts[0]
    assert attempt.extra["actor"] == "cot"


async def test_cot_without_finish_is_recorded_not_raised() -> None:
    model = _cot_model("I believe it is around the year two thousand.")
    attempt = await CoTActor().act(_state(model))
    assert attempt.candidate == ""
    assert attempt.extra["halted"] == "no_answer"
    assert "parse_error" in attempt.extra


async def test_cot_context_without_gold_paragraphs_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="gold paragraphs"):
        await CoTActor(with_context=True).act(_state(_cot_model("x")))


async def test_cot_keeps_run_stop_sequences_and_adds_its_own() -> None:
    model = _cot_model("Thought: a\nAction: Finish[b]")
    state = _state(model)
    state.services.generate_config = GenerateConfig(stop=("<END>",), max_tokens=77)
    await CoTActor().act(state)
    _, cfg = model.calls[0]
    assert cfg.stop[0] == "<END>" and "\nObservation" in cfg.stop
    assert cfg.max_tokens == 77


def test_react_rejects_bad_limits() -> None:
    with pytest.raises(ConfigError, match=r"actor\.max_steps"):
        _react(max_steps=0)
    with pytest.raises(ConfigError, match=r"actor\.max_prompt_tokens"):
        _react(max_prompt_tokens=0)


def _roles(msgs: Sequence[Message]) -> list[str]:
    return [m.role for m in msgs]


def test_messages_are_system_then_user() -> None:
    actor = _react()
    assert _roles(actor.messages(_state(MockModel(responses=[])), "", 1)) == ["system", "user"]
