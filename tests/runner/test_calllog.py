"""Every call's request is logged as what it adds to the same role's previous call of the
trial (core/calllog.py), and reads back in full."""

from __future__ import annotations

import random

import pytest

from reflexion_bench.core.calllog import delta, expand_messages
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import GenerateConfig, Message, Task, to_jsonable
from reflexion_bench.memory import WindowMemory
from reflexion_bench.models.mock import MockModel


def _state(cap: int = 200_000) -> TaskState:
    return TaskState(
        task=Task(id="t/0", prompt="p", benchmark="toy"),
        strategy="reflexion",
        max_trials=1,
        memory=WindowMemory(),
        services=Services(
            model=MockModel(responder=lambda m, c: "ok"),
            generate_config=GenerateConfig(max_reply_chars=cap),
        ),
    )


async def test_a_growing_transcript_logs_each_step_once_and_reads_back_whole() -> None:
    state = _state()
    system = Message("system", "You play a text game. " * 20)
    transcript = "Observation: you are in a kitchen."
    sent = []
    for step in range(6):
        msgs = [system, Message("user", transcript)]
        sent.append([m.to_dict() for m in msgs])
        await state.generate("actor", msgs)
        if step == 2:
            await state.generate("reflector", [Message("user", "what went wrong?")])
        transcript += f"\n> go to drawer {step}\nNothing happens."
    calls = [to_jsonable(c) for c in state.pending_calls]
    actor = [c for c in calls if c["role"] == "actor"]
    # After the first, each actor call logs only the text it appended.
    assert actor[0]["messages_base"] is None
    for c in actor[1:]:
        assert c["messages_base"]["kept"] == 1  # the system message, unchanged
        (added,) = c["messages"]
        assert added["continues"] and added["content"].startswith("\n> go to drawer")
    full = expand_messages(calls)
    assert [m for c, m in zip(calls, full, strict=True) if c["role"] == "actor"] == sent
    assert full[3] == [{"role": "user", "content": "what went wrong?"}]
    logged = sum(len(m["content"]) for c in calls for m in c["messages"])
    whole = sum(len(m["content"]) for req in sent for m in req)
    assert logged < whole / 3


def test_delta_and_expand_are_inverse_on_random_requests() -> None:
    rng = random.Random(7)
    for _ in range(300):
        calls, requests, last = [], [], None
        for _ in range(rng.randint(1, 6)):
            if last and rng.random() < 0.7:
                req = [dict(m) for m in last[: rng.randint(0, len(last))]]
                if req and rng.random() < 0.5:
                    req[-1]["content"] += rng.choice(["", " more", "\nstep"])
                req += [
                    {
                        "role": rng.choice(["user", "assistant"]),
                        "content": rng.choice(["a", "bb", ""]),
                    }
                    for _ in range(rng.randint(0, 2))
                ]
            else:
                req = [{"role": "user", "content": rng.choice(["x", "y z", ""])}]
            base, logged = delta(last, req)
            calls.append(
                {
                    "messages": logged,
                    "messages_base": None if base is None else {"call": len(calls) - 1, **base},
                }
            )
            requests.append(req)
            last = req
        assert expand_messages(calls) == requests


@pytest.mark.parametrize("missing_base", [True, False])
def test_old_logs_and_broken_bases_read_as_no_request(missing_base: bool) -> None:
    calls = [
        {"role": "actor"},
        {
            "messages": [{"role": "user", "content": "x"}],
            "messages_base": {"call": 5 if missing_base else 0, "kept": 1},
        },
    ]
    assert expand_messages(calls) == [None, None]


async def test_a_temperature_the_client_does_not_send_is_logged_as_not_sent() -> None:
    class Unsent(MockModel):
        unsent_params = ("temperature",)

    state = _state()
    await state.generate("actor", [Message("user", "hi")])
    state.services.model = Unsent(responder=lambda m, c: "ok")
    await state.generate("actor", [Message("user", "hi")])
    first, second = state.pending_calls
    assert first.temperature_sent == 0.0 and second.temperature_sent is None
    assert second.temperature == first.temperature  # what was asked is kept beside it
