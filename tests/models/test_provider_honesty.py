"""Provider honesty (issue 32): a sampling setting a provider cannot take (Anthropic's
temperature) is either sent or not sent with a warning, and the cache key, the identity
(provenance) and config.yaml record what was sent. The real ``anthropic`` SDK over real
HTTP against the fake server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.anthropic import AnthropicClient
from reflexion_bench.models.cache import ResponseCache
from reflexion_bench.models.layer import ModelLayer, build_layered_model
from reflexion_bench.runner.run import run_experiment
from reflexion_bench.testing.fake_llm_server import FakeLLMServer
from tests.models.test_runner_integration import run_cfg

pytestmark = pytest.mark.network_local

MSGS = [Message("system", "Be terse."), Message("user", "say one two three")]
ANTHROPIC = "reflexion_bench.models.anthropic.AnthropicClient"


def layer(srv: FakeLLMServer, tmp_path: Path, sampling: str) -> ModelLayer:
    client = AnthropicClient(name="claude-3-5-haiku-20241022", base_url=srv.url, sampling=sampling)
    return ModelLayer(
        client, cache="read_write", cache_path=str(tmp_path / "cache.sqlite"), backoff_s=0.01
    )


def stored_requests(path: Path) -> list[dict[str, object]]:
    cache = ResponseCache(path)
    try:
        rows = cache._conn.execute("SELECT request FROM responses").fetchall()
    finally:
        cache.close()
    return [json.loads(r[0]) for r in rows]


async def test_omitted_temperature_is_not_sent_warned_and_keyed_as_not_sent(
    fake_server: FakeLLMServer,
    keys: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_server.configure(reply="one two")
    model = layer(fake_server, tmp_path, "omit")
    cfg = GenerateConfig(max_tokens=20, temperature=0.0, top_p=0.5)
    with caplog.at_level(logging.WARNING, logger="reflexion_bench.models.layer"):
        await model.generate(MSGS, cfg)
        await model.generate(MSGS, cfg)
    await model.aclose()
    bodies = [r["body"] for r in fake_server.requests]
    assert bodies and all("temperature" not in b and "top_p" not in b for b in bodies)
    # Not sent, the API samples at its own default: a temperature-0 request is not a
    # greedy one, so the second identical call is not a replay of the first.
    assert len(bodies) == 2
    warnings = [r.getMessage() for r in caplog.records if "not sent" in r.getMessage()]
    assert len(warnings) == 1 and "temperature=0.0" in warnings[0]
    assert "top_p=0.5" in warnings[0]
    ident = model.identity()
    assert set(ident["request_settings"]["not_sent"]) >= {"temperature", "top_p"}


async def test_omitted_temperature_keys_the_cache_as_null_when_cached(
    fake_server: FakeLLMServer, keys: dict[str, str], tmp_path: Path
) -> None:
    fake_server.configure(reply="one two")
    model = layer(fake_server, tmp_path, "omit")
    # With a sample index the call is cached: the key must hold what was sent.
    await model.generate(MSGS, GenerateConfig(temperature=0.7, sample_index=3))
    await model.generate(MSGS, GenerateConfig(temperature=0.0, sample_index=3))
    await model.aclose()
    # 0.7 and 0.0 were the same request on the wire: one live call, one replay.
    assert len(fake_server.requests) == 1
    (stored,) = stored_requests(tmp_path / "cache.sqlite")
    assert stored["temperature"] is None and stored["top_p"] is None


async def test_sent_temperature_reaches_the_wire_and_the_key(
    fake_server: FakeLLMServer,
    keys: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_server.configure(reply="one two")
    model = layer(fake_server, tmp_path, "send")
    with caplog.at_level(logging.WARNING, logger="reflexion_bench.models.layer"):
        await model.generate(MSGS, GenerateConfig(temperature=0.0, top_p=0.9))
        await model.generate(MSGS, GenerateConfig(temperature=0.0, top_p=0.9))
    await model.aclose()
    (req,) = fake_server.requests  # greedy and sent: the second call is a replay
    assert req["body"]["temperature"] == 0.0 and req["body"]["top_p"] == 0.9
    (stored,) = stored_requests(tmp_path / "cache.sqlite")
    assert stored["temperature"] == 0.0 and stored["top_p"] == 0.9
    assert not [r for r in caplog.records if "temperature=" in r.getMessage()]
    assert "temperature" not in model.identity()["request_settings"]["not_sent"]


def test_unknown_sampling_mode_names_the_key() -> None:
    with pytest.raises(ConfigError, match="model"):
        build_layered_model(ANTHROPIC, name="c", sampling="sometimes")


async def test_run_records_what_was_sent(
    fake_server: FakeLLMServer, keys: dict[str, str], tmp_path: Path
) -> None:
    fake_server.configure(reply="word")
    cfg = run_cfg(
        tmp_path,
        fake_server,
        client_target=ANTHROPIC,
        name="claude-3-5-haiku-20241022",
        base_url=fake_server.url,
        api_key_env="ANTHROPIC_API_KEY",
        sampling="omit",
    )
    run_dir = tmp_path / "run"
    await run_experiment(cfg, run_dir)
    assert fake_server.requests
    assert all("temperature" not in r["body"] for r in fake_server.requests)
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["model"]["sampling"] == "omit"
    prov = json.loads((run_dir / "provenance.json").read_text())
    assert {"temperature", "top_p"} <= set(prov["model"]["request_settings"]["not_sent"])
