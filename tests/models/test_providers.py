"""The real openai and anthropic SDKs over real HTTP against the fake server on 127.0.0.1."""

from __future__ import annotations

import time

import pytest

from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.anthropic import AnthropicClient
from reflexion_bench.models.base import MissingAPIKeyError, ModelError, TransientModelError
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.testing.fake_llm_server import FakeLLMServer

pytestmark = pytest.mark.network_local

MSGS = [Message("system", "Be terse."), Message("user", "say one two three four five")]


def _words(msgs: list[Message]) -> int:
    return sum(len(m.content.split()) for m in msgs)


def openai_layer(srv: FakeLLMServer, **layer: object) -> ModelLayer:
    client = OpenAIChatClient(name="gpt-4o-mini", base_url=srv.openai_base_url)
    opts: dict[str, object] = {"backoff_s": 0.01, "retries": 3, **layer}
    return ModelLayer(client, **opts)  # type: ignore[arg-type]


def anthropic_layer(srv: FakeLLMServer, **layer: object) -> ModelLayer:
    client = AnthropicClient(name="claude-3-5-haiku-20241022", base_url=srv.url)
    opts: dict[str, object] = {"backoff_s": 0.01, "retries": 3, **layer}
    return ModelLayer(client, **opts)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- OpenAI


async def test_openai_request_usage_and_cost(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(reply="alpha beta STOP gamma")
    model = openai_layer(fake_server, prices={"gpt-4o-mini": {"input": 1.0, "output": 2.0}})
    await model.start()
    try:
        out = await model.generate(MSGS, GenerateConfig(max_tokens=33, stop=("STOP",), seed=5))
    finally:
        await model.aclose()
    (req,) = fake_server.requests
    body = req["body"]
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == [m.to_dict() for m in MSGS]
    assert body["stop"] == ["STOP"] and body["max_tokens"] == 33 and body["seed"] == 5
    assert body["temperature"] == 0.0
    assert req["has_key"]
    assert out.text == "alpha beta "
    assert out.finish_reason == "stop"
    assert out.prompt_tokens == _words(MSGS) and out.completion_tokens == 2
    assert out.cost_usd == pytest.approx((_words(MSGS) * 1.0 + 2 * 2.0) / 1e6)
    assert model.usage.cost_usd == pytest.approx(out.cost_usd)
    assert out.retries == 0 and not out.cached


async def test_openai_max_tokens_is_honoured(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(reply="w1 w2 w3 w4 w5 w6")
    client = OpenAIChatClient(
        name="gpt-4o-mini",
        base_url=fake_server.openai_base_url,
        max_tokens_param="max_completion_tokens",
    )
    out = await ModelLayer(client).generate(MSGS, GenerateConfig(max_tokens=3))
    assert fake_server.requests[0]["body"]["max_completion_tokens"] == 3
    assert out.text == "w1 w2 w3" and out.finish_reason == "length"


async def test_openai_429_with_retry_after_then_success(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(script=[{"kind": "429", "retry_after": 1}])
    model = openai_layer(fake_server)
    started = time.perf_counter()
    out = await model.generate(MSGS, GenerateConfig())
    elapsed = time.perf_counter() - started
    assert out.retries == 1
    assert elapsed >= 0.95, "Retry-After: 1 must be honoured"
    assert fake_server.stats()["statuses"] == {"429": 1, "200": 1}


async def test_openai_500s_and_dropped_connection_retried(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(script=[{"kind": "500"}, {"kind": "503"}, {"kind": "drop"}])
    model = openai_layer(fake_server)
    out = await model.generate(MSGS, GenerateConfig())
    assert out.retries == 3
    assert out.text.startswith("echo:")
    assert model.retry_reasons == {"500": 1, "503": 1, "connection": 1}


async def test_openai_timeout_retried(fake_server: FakeLLMServer, keys: dict[str, str]) -> None:
    fake_server.configure(script=[{"kind": "timeout", "hang_s": 3}])
    model = openai_layer(fake_server, timeout_s=0.5)
    started = time.perf_counter()
    out = await model.generate(MSGS, GenerateConfig())
    assert out.retries == 1
    assert time.perf_counter() - started < 2.5
    assert model.retry_reasons == {"timeout": 1}


async def test_openai_permanent_failure_gives_up_with_model_error(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(fail_always=500)
    model = openai_layer(fake_server, retries=2)
    with pytest.raises(ModelError, match="gave up after 3 attempts") as info:
        await model.generate(MSGS, GenerateConfig())
    assert not isinstance(info.value, TransientModelError)
    assert info.value.retries == 2
    assert fake_server.stats()["requests"] == 3
    assert model.usage.failed_calls == 1


async def test_openai_client_errors_are_not_retried(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(fail_always=400)
    model = openai_layer(fake_server, retries=3)
    with pytest.raises(ModelError, match="HTTP 400"):
        await model.generate(MSGS, GenerateConfig())
    assert fake_server.stats()["requests"] == 1


async def test_openai_error_never_shows_the_key(
    fake_server: FakeLLMServer, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server echoes the rejected key (like real providers); a key held in a custom
    # variable is not known to the global redactor, so the client must mask it itself.
    secret = "custom-secret-value-123456"
    monkeypatch.setenv("MY_LLM_KEY", secret)
    fake_server.configure(api_key="the-right-key")
    client = OpenAIChatClient(
        name="m", base_url=fake_server.openai_base_url, api_key_env="MY_LLM_KEY"
    )
    with pytest.raises(ModelError) as info:
        await ModelLayer(client, retries=0).generate(MSGS, GenerateConfig())
    assert "HTTP 401" in str(info.value)
    assert secret not in str(info.value)


async def test_openai_missing_key_fails_at_start_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = ModelLayer(OpenAIChatClient(name="gpt-4o-mini"))
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        await model.start()
    monkeypatch.delenv("SOME_OTHER_VAR", raising=False)
    model = ModelLayer(OpenAIChatClient(name="gpt-4o-mini", api_key_env="SOME_OTHER_VAR"))
    with pytest.raises(MissingAPIKeyError, match="SOME_OTHER_VAR"):
        await model.start()


# --------------------------------------------------------------------------- Anthropic


async def test_anthropic_request_system_prompt_and_usage(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(reply="one two ### three")
    model = anthropic_layer(fake_server, prices={"claude-3-5-haiku": {"input": 0.8, "output": 4.0}})
    msgs = [*MSGS, Message("assistant", "ok"), Message("user", "again")]
    out = await model.generate(msgs, GenerateConfig(max_tokens=40, stop=("###", "\n")))
    await model.aclose()
    (req,) = fake_server.requests
    body = req["body"]
    assert req["api"] == "anthropic" and req["has_key"]
    assert body["system"] == "Be terse."
    assert body["messages"] == [
        {"role": "user", "content": "say one two three four five"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "again"},
    ]
    assert body["max_tokens"] == 40 and body["stop_sequences"] == ["###"]
    assert body["model"] == "claude-3-5-haiku-20241022"
    assert out.text == "one two " and out.finish_reason == "stop"
    assert out.prompt_tokens == _words(msgs) and out.completion_tokens == 2
    # Dated snapshot priced through the prefix entry.
    assert out.cost_usd == pytest.approx((_words(msgs) * 0.8 + 2 * 4.0) / 1e6)


async def test_anthropic_max_tokens_maps_to_length(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(reply="a b c d e f g")
    out = await anthropic_layer(fake_server).generate(MSGS, GenerateConfig(max_tokens=2))
    assert out.text == "a b" and out.finish_reason == "length"


async def test_anthropic_overload_and_rate_limit_retried(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(
        script=[{"kind": "529", "retry_after": 0.2}, {"kind": "429"}, {"kind": "500"}]
    )
    model = anthropic_layer(fake_server)
    out = await model.generate(MSGS, GenerateConfig())
    assert out.retries == 3
    assert model.retry_reasons == {"529": 1, "429": 1, "500": 1}


async def test_anthropic_permanent_failure_and_missing_key(
    fake_server: FakeLLMServer, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.configure(fail_always=529)
    with pytest.raises(ModelError, match="gave up after 2 attempts"):
        await anthropic_layer(fake_server, retries=1).generate(MSGS, GenerateConfig())
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        await anthropic_layer(fake_server).start()
