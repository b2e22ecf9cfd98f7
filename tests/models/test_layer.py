"""The model layer: concurrency, rate limits, timeouts, cache/replay, accounting, budgets."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.base import BudgetExceeded, CacheMissError, ModelError
from reflexion_bench.models.cache import ResponseCache, request_key
from reflexion_bench.models.layer import ModelLayer, build_layered_model
from reflexion_bench.models.mock import MockModel
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.testing.fake_llm_server import FakeLLMServer

MSG = [Message("user", "hello world")]


def echo(messages: object, config: GenerateConfig) -> str:
    return f"reply t={config.temperature} i={config.sample_index}"


# --------------------------------------------------------------------------- concurrency


@pytest.mark.network_local
async def test_fifty_calls_overlap_under_max_connections(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(latency_s=0.2)
    model = ModelLayer(
        OpenAIChatClient(name="gpt-4o-mini", base_url=fake_server.openai_base_url),
        max_connections=10,
    )
    await model.start()
    started = time.perf_counter()
    outs = await asyncio.gather(
        *(model.generate([Message("user", f"q{i}")], GenerateConfig()) for i in range(50))
    )
    elapsed = time.perf_counter() - started
    await model.aclose()
    assert len(outs) == 50 and all(o.text.startswith("echo: q") for o in outs)
    assert elapsed < 4.0, f"50 x 0.2 s at 10 connections took {elapsed:.1f} s (serial: 10 s)"
    peak = fake_server.stats()["max_in_flight"]
    assert 5 <= peak <= 10, f"peak concurrency {peak}"


@pytest.mark.network_local
async def test_max_connections_shared_by_clients_of_one_provider(
    fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(latency_s=0.1)
    a, b = (
        ModelLayer(
            OpenAIChatClient(name=n, base_url=fake_server.openai_base_url), max_connections=4
        )
        for n in ("model-a", "model-b")
    )
    await asyncio.gather(
        *(
            m.generate([Message("user", f"q{i}")], GenerateConfig())
            for i in range(12)
            for m in (a, b)
        )
    )
    assert fake_server.stats()["max_in_flight"] <= 4


class Gauge(MockModel):
    """A mock that records how many of its calls overlap."""

    def __init__(self, **kw: object) -> None:
        super().__init__(responder=echo, latency_s=0.05, **kw)  # type: ignore[arg-type]
        self.active = 0
        self.peak = 0

    async def generate(self, messages, config):  # type: ignore[no-untyped-def]
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            return await super().generate(messages, config)
        finally:
            self.active -= 1


async def test_strictest_open_layer_sets_the_shared_limit_and_closing_releases_it() -> None:
    strict, loose = Gauge(), Gauge()
    a, b = ModelLayer(strict, max_connections=2), ModelLayer(loose, max_connections=6)
    await asyncio.gather(*(m.generate(MSG, GenerateConfig()) for m in (a, b) for _ in range(8)))
    assert strict.peak + loose.peak <= 4 and max(strict.peak, loose.peak) <= 2
    await a.aclose()  # e.g. the previous run of a sweep in this process
    later = Gauge()
    c = ModelLayer(later, max_connections=6)
    await asyncio.gather(*(c.generate(MSG, GenerateConfig()) for _ in range(12)))
    assert later.peak == 6


async def test_cancelled_waiters_do_not_leak_slots() -> None:
    gauge = Gauge()
    model = ModelLayer(gauge, max_connections=1)
    tasks = [asyncio.create_task(model.generate(MSG, GenerateConfig())) for _ in range(5)]
    await asyncio.sleep(0.01)
    for t in tasks[1:3]:
        t.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert sum(isinstance(r, asyncio.CancelledError) for r in results) == 2
    assert (
        len(await asyncio.gather(*(model.generate(MSG, GenerateConfig()) for _ in range(3)))) == 3
    )
    assert gauge.peak == 1


async def test_requests_per_minute_limit_spaces_calls() -> None:
    # 4 requests per 1 s window: 12 calls need at least (12 - 4) / 4 = 2 s.
    model = ModelLayer(MockModel(responder=echo), rpm=4, rate_window_s=1.0)
    started = time.perf_counter()
    await asyncio.gather(*(model.generate(MSG, GenerateConfig()) for _ in range(12)))
    assert time.perf_counter() - started >= 1.8


async def test_tokens_per_minute_limit_spaces_calls() -> None:
    # Each call is estimated at ~3 + 100 tokens; 250 tokens per 0.5 s lets ~2 through at once.
    model = ModelLayer(MockModel(responder=echo), tpm=250, rate_window_s=0.5)
    started = time.perf_counter()
    await asyncio.gather(*(model.generate(MSG, GenerateConfig(max_tokens=100)) for _ in range(6)))
    assert time.perf_counter() - started >= 0.6


async def test_timeout_bounds_every_call_and_is_retried() -> None:
    model = ModelLayer(
        MockModel(responder=echo, latency_s=2.0), timeout_s=0.2, retries=1, backoff_s=0.01
    )
    started = time.perf_counter()
    with pytest.raises(ModelError, match=r"timeout x2") as info:
        await model.generate(MSG, GenerateConfig())
    assert time.perf_counter() - started < 1.5
    assert info.value.retries == 1
    # The call's own timeout applies too (the smaller wins).
    model = ModelLayer(MockModel(responder=echo, latency_s=2.0), retries=0)
    with pytest.raises(ModelError, match=r"within 0\.1 s"):
        await model.generate(MSG, GenerateConfig(timeout_s=0.1))


async def test_non_transient_errors_are_not_retried() -> None:
    mock = MockModel(responses=["only one"])
    model = ModelLayer(mock, retries=5, backoff_s=0.01)
    await model.generate(MSG, GenerateConfig())
    with pytest.raises(ModelError, match="exhausted"):
        await model.generate(MSG, GenerateConfig())
    assert len(mock.calls) == 2


# --------------------------------------------------------------------------- stop, delegation


async def test_stop_sequences_enforced_for_every_client() -> None:
    model = ModelLayer(MockModel(responses=["Thought: x\nAction: y"]))
    out = await model.generate(MSG, GenerateConfig(stop=("\nAction",)))
    assert out.text == "Thought: x" and out.finish_reason == "stop"


async def test_layer_exposes_the_mock_records() -> None:
    model = ModelLayer(MockModel(responses=["a", "b"]))
    await model.generate([Message("user", "first")], GenerateConfig())
    assert model.prompts == ["first"] and len(model.calls) == 1
    assert model.provider == "mock" and model.name == "mock"


# --------------------------------------------------------------------------- cache / replay


async def test_cache_read_write_then_zero_live_calls(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    mock = MockModel(responder=echo)
    model = ModelLayer(mock, cache="read_write", cache_path=str(db))
    first = await model.generate(MSG, GenerateConfig())
    second = await model.generate(MSG, GenerateConfig())
    other = await model.generate(MSG, GenerateConfig(max_tokens=7))  # another request
    await model.aclose()
    assert not first.cached and second.cached and not other.cached
    assert second.text == first.text
    assert second.prompt_tokens == first.prompt_tokens
    assert len(mock.calls) == 2
    assert model.usage.cached_calls == 1 and model.usage.live_calls == 2


@pytest.mark.network_local
async def test_read_only_replays_and_never_calls_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: dict[str, str]
) -> None:
    db = str(tmp_path / "c.sqlite")
    with FakeLLMServer(reply="recorded reply") as srv:
        url = srv.openai_base_url
        rec = ModelLayer(
            OpenAIChatClient(name="m", base_url=url), cache="read_write", cache_path=db
        )
        await rec.generate(MSG, GenerateConfig())
        await rec.aclose()
    # Replay with a client that cannot work: no key in the environment, no server.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    replay = ModelLayer(OpenAIChatClient(name="m", base_url=url), cache="read_only", cache_path=db)
    await replay.start()  # no key needed: the client is never started
    out = await replay.generate(MSG, GenerateConfig())
    assert out.cached and out.text == "recorded reply"
    with pytest.raises(CacheMissError, match=r"read_only.*read_write"):
        await replay.generate([Message("user", "never recorded")], GenerateConfig())
    await replay.aclose()


async def test_sampled_calls_cached_only_with_sample_index_or_when_asked(tmp_path: Path) -> None:
    db = str(tmp_path / "c.sqlite")
    mock = MockModel(responder=echo)
    model = ModelLayer(mock, cache="read_write", cache_path=db)
    hot = GenerateConfig(temperature=0.8)
    await model.generate(MSG, hot)
    assert not (await model.generate(MSG, hot)).cached  # fresh samples by default
    s1 = await model.generate(MSG, hot.replace(sample_index=1))
    s2 = await model.generate(MSG, hot.replace(sample_index=2))
    assert s1.text != s2.text
    assert (await model.generate(MSG, hot.replace(sample_index=1))).cached
    assert len(mock.calls) == 4
    asked = ModelLayer(
        MockModel(responder=echo), cache="read_write", cache_path=db, cache_sampled=True
    )
    await asked.generate(MSG, hot)
    assert (await asked.generate(MSG, hot)).cached


def test_cache_key_covers_what_decides_the_answer() -> None:
    ident = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"}
    base = request_key(ident, MSG, GenerateConfig())[0]
    assert base == request_key(ident, MSG, GenerateConfig(timeout_s=5))[0]
    for other in (
        request_key({**ident, "provider": "anthropic"}, MSG, GenerateConfig()),
        request_key({**ident, "model": "m2"}, MSG, GenerateConfig()),
        request_key({**ident, "base_url": "http://127.0.0.1:2/v1"}, MSG, GenerateConfig()),
        request_key(ident, [Message("user", "hello  world")], GenerateConfig()),
        request_key(ident, MSG, GenerateConfig(stop=("x",))),
        request_key(ident, MSG, GenerateConfig(seed=1)),
        request_key(ident, MSG, GenerateConfig(sample_index=3)),
        request_key(ident, MSG, GenerateConfig(top_p=0.9)),
    ):
        assert other[0] != base


_WRITER = """
import sys
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models.cache import ResponseCache, request_key
cache = ResponseCache(sys.argv[1], busy_timeout_s=60)
for i in range(int(sys.argv[3])):
    ident = {"provider": "p", "model": "m"}
    key, req = request_key(ident, [Message("user", f"{sys.argv[2]}-{i}")], GenerateConfig())
    cache.put(key, req, ModelOutput(text=f"{sys.argv[2]}-{i}"))
    assert cache.get(key).text == f"{sys.argv[2]}-{i}"
"""


def test_cache_safe_under_concurrent_writer_processes(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(db), f"w{w}", "150"], stderr=subprocess.PIPE
        )
        for w in range(4)
    ]
    errors = [p.communicate(timeout=600)[1].decode()[-2000:] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    cache = ResponseCache(db)
    assert len(cache) == 600
    ident = {"provider": "p", "model": "m"}
    key, _ = request_key(ident, [Message("user", "w3-149")], GenerateConfig())
    hit = cache.get(key)
    assert hit is not None and hit.text == "w3-149" and hit.cached
    cache.close()


# --------------------------------------------------------------------------- budgets


async def test_token_budget_stops_live_calls() -> None:
    model = ModelLayer(MockModel(responses=["one two three"], cycle=True), max_tokens_budget=10)
    # Each call: 2 prompt words + 3 completion words = 5 tokens.
    await model.generate(MSG, GenerateConfig())
    await model.generate(MSG, GenerateConfig())
    with pytest.raises(BudgetExceeded, match="max_tokens_budget=10"):
        await model.generate(MSG, GenerateConfig())
    assert isinstance(BudgetExceeded("x"), ModelError)
    assert model.usage.tokens == 10 and model.usage.live_calls == 2


async def test_cost_budget_from_price_table() -> None:
    prices = {"mock": {"input": 100_000.0, "output": 100_000.0}}  # $0.1 per token
    model = ModelLayer(MockModel(responses=["a"], cycle=True), prices=prices, max_cost_usd=0.5)
    out = await model.generate(MSG, GenerateConfig())  # 3 tokens: $0.3
    assert out.cost_usd == pytest.approx(0.3)
    await model.generate(MSG, GenerateConfig())  # $0.6 spent now
    with pytest.raises(BudgetExceeded, match=r"max_cost_usd=0\.5"):
        await model.generate(MSG, GenerateConfig())


def test_cost_budget_needs_a_price_for_the_model() -> None:
    with pytest.raises(ConfigError, match=r"model\.prices"):
        ModelLayer(MockModel(responses=["a"]), max_cost_usd=1.0)


async def test_cached_replays_do_not_spend_budget(tmp_path: Path) -> None:
    db = str(tmp_path / "c.sqlite")
    model = ModelLayer(
        MockModel(responder=echo), cache="read_write", cache_path=db, max_tokens_budget=1
    )
    live = await model.generate(MSG, GenerateConfig())  # the live call spends the budget
    out = await model.generate(MSG, GenerateConfig())  # a replay is still served
    # It reports what the live call spent ("as run live") but pays nothing now.
    assert out.cached and out.prompt_tokens == live.prompt_tokens
    assert model.usage.tokens == live.prompt_tokens + live.completion_tokens
    with pytest.raises(BudgetExceeded):
        await model.generate([Message("user", "new")], GenerateConfig())


# --------------------------------------------------------------------------- config factory


def test_factory_routes_options_and_names_unknown_keys() -> None:
    model = build_layered_model(
        "reflexion_bench.models.mock.MockModel",
        responses=["x"],
        name="m1",
        max_connections=3,
        retries=2,
    )
    assert isinstance(model.client, MockModel) and model.client.responses == ["x"]
    assert model.name == "m1" and model.max_connections == 3 and model.retries == 2
    with pytest.raises(ConfigError, match=r"model\.respones"):
        build_layered_model("reflexion_bench.models.mock.MockModel", respones=["x"])
    with pytest.raises(ConfigError, match=r"model\.cache.*read_write"):
        build_layered_model("reflexion_bench.models.mock.MockModel", cache="sometimes")
    with pytest.raises(ConfigError, match=r"model\.max_connections"):
        build_layered_model("reflexion_bench.models.mock.MockModel", max_connections=0)
    with pytest.raises(ConfigError, match=r"model\.client_target"):
        build_layered_model("reflexion_bench.models.nope.Nope")
