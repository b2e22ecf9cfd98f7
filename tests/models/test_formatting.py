"""Chat formatting: one request builder per provider, stop sequences enforced on text."""

from __future__ import annotations

import pytest

from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.formatting import (
    anthropic_messages_request,
    normalize_finish_reason,
    openai_chat_request,
    truncate_at_stop,
)

MSGS = [
    Message("system", "You write Python."),
    Message("user", "Write add(a, b)."),
    Message("assistant", "def add(a, b):"),
    Message("user", "Now with types."),
]


def test_truncate_at_earliest_stop_and_excludes_it() -> None:
    assert truncate_at_stop("a END b STOP c", ["STOP", "END"]) == ("a ", True)
    assert truncate_at_stop("nothing here", ["STOP"]) == ("nothing here", False)
    assert truncate_at_stop("x\ny", ["", "\n"]) == ("x", True)


def test_openai_request_maps_messages_and_sampling() -> None:
    cfg = GenerateConfig(max_tokens=64, temperature=0.0, stop=("a", "b", "c", "d", "e"), seed=7)
    req = openai_chat_request("gpt-x", MSGS, cfg)
    assert req["model"] == "gpt-x"
    assert req["messages"][0] == {"role": "system", "content": "You write Python."}
    assert [m["role"] for m in req["messages"]] == ["system", "user", "assistant", "user"]
    assert req["max_tokens"] == 64 and req["temperature"] == 0.0 and req["seed"] == 7
    assert req["stop"] == ["a", "b", "c", "d"]  # the API's cap; the rest is cut client-side
    assert "top_p" not in req  # default not sent


def test_openai_request_param_name_and_omissions() -> None:
    cfg = GenerateConfig(max_tokens=10, stop=("x",))
    req = openai_chat_request(
        "o-model",
        MSGS,
        cfg,
        max_tokens_param="max_completion_tokens",
        omit_params=["temperature", "stop"],
    )
    assert req["max_completion_tokens"] == 10 and "max_tokens" not in req
    assert "temperature" not in req and "stop" not in req
    with pytest.raises(ValueError, match="omit_params"):
        openai_chat_request("m", MSGS, cfg, omit_params=["temprature"])


def test_anthropic_request_system_apart_and_roles_alternate() -> None:
    msgs = [
        Message("system", "Rule one."),
        Message("user", "Part A."),
        Message("user", "Part B."),
        Message("system", "Rule two."),
        Message("assistant", "Ok."),
    ]
    cfg = GenerateConfig(max_tokens=99, temperature=0.7, stop=("\n", "###"))
    req = anthropic_messages_request("claude-x", msgs, cfg)
    assert req["system"] == "Rule one.\n\nRule two."
    assert req["messages"] == [
        {"role": "user", "content": "Part A.\n\nPart B."},
        {"role": "assistant", "content": "Ok."},
    ]
    assert req["max_tokens"] == 99
    assert req["stop_sequences"] == ["###"]  # whitespace-only stops are enforced client-side
    assert "temperature" not in req and "top_p" not in req


def test_anthropic_request_needs_a_user_turn_first() -> None:
    with pytest.raises(ValueError, match="first non-system message"):
        anthropic_messages_request("c", [Message("assistant", "hi")], GenerateConfig())


def test_finish_reasons_share_one_vocabulary() -> None:
    assert normalize_finish_reason("end_turn") == "stop"
    assert normalize_finish_reason("max_tokens") == "length"
    assert normalize_finish_reason("length") == "length"
    assert normalize_finish_reason(None) == "stop"
