"""Every configs/model option composes with configs/config.yaml and builds (not started)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.models.anthropic import AnthropicClient
from reflexion_bench.models.embedded import EmbeddedModel
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.models.pool import PooledOpenAIClient

OPTIONS = sorted(p.stem for p in (CONFIG_DIR / "model").glob("*.yaml"))
REQUIRED = {
    "openai_compatible": ["model.name=served-model", "model.base_url=http://127.0.0.1:8000/v1"],
    "openai_pool": [
        "model.name=served-model",
        "model.base_urls=[http://127.0.0.1:8000/v1,http://127.0.0.1:8001/v1]",
    ],
}
CLIENTS = {
    "mock": MockModel,
    "embedded": EmbeddedModel,
    "smollm2": EmbeddedModel,
    "embedded_1_5b": EmbeddedModel,
    "openai": OpenAIChatClient,
    "openai_compatible": OpenAIChatClient,
    "openai_pool": PooledOpenAIClient,
    "anthropic": AnthropicClient,
    # Named models of the paper's experiments, built on the `openai` option.
    "gpt4": OpenAIChatClient,
    "gpt35_turbo": OpenAIChatClient,
}


def compose_cfg(*overrides: str) -> DictConfig:
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_every_provider_has_a_config() -> None:
    assert set(OPTIONS) == set(CLIENTS)


@pytest.mark.parametrize("option", OPTIONS)
def test_model_option_builds_without_starting(option: str, tmp_path: Path) -> None:
    cfg = compose_cfg(f"model={option}", f"paths.cache_dir={tmp_path}", *REQUIRED.get(option, []))
    model = build(cfg.model, "model")
    assert isinstance(model, ModelLayer)
    assert isinstance(model.client, CLIENTS[option])
    assert model.cache_mode in ("read_write", "read_only", "off")
    assert not list(tmp_path.iterdir()), "building must not touch the cache (only start does)"


def test_default_model_is_the_embedded_one() -> None:
    cfg = compose_cfg()
    model = build(cfg.model, "model")
    assert isinstance(model.client, EmbeddedModel)
    assert model.client.n_threads == 1
    assert model.client.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def test_user_keys_reach_the_right_object() -> None:
    cfg = compose_cfg(
        "model=openai",
        "model.name=gpt-4.1-mini",
        "model.base_url=http://127.0.0.1:9999/v1",
        "model.api_key_env=MY_KEY",
        "model.max_connections=3",
        "model.rpm=100",
        "model.tpm=20000",
        "model.retries=2",
        "model.timeout_s=30",
        "model.cache=read_only",
        "model.cache_path=/tmp/x.sqlite",
        "model.max_cost_usd=1.5",
        "model.max_tokens_budget=1000",
        "model.prices.gpt-4o-mini.input=7",
        "++model.prices={gpt-4.1-mini:{input:9,output:1},my-model:{input:1,output:2}}",
    )
    model = build(cfg.model, "model")
    client = model.client
    assert (client.name, client.base_url, client.api_key_env, client.timeout_s) == (
        "gpt-4.1-mini",
        "http://127.0.0.1:9999/v1",
        "MY_KEY",
        30.0,
    )
    assert (model.max_connections, model.rpm, model.tpm, model.retries, model.timeout_s) == (
        3,
        100,
        20000,
        2,
        30,
    )
    assert (model.cache_mode, model.cache_path) == ("read_only", "/tmp/x.sqlite")
    assert (model.max_cost_usd, model.max_tokens_budget) == (1.5, 1000)
    assert model.price is not None and (model.price.input, model.price.output) == (9.0, 1.0)
    assert model.prices["gpt-4o-mini"].input == 7.0 and model.prices["my-model"].output == 2.0


def test_mock_keys_still_work() -> None:
    cfg = compose_cfg(
        "model=mock", "model.responses=[a,b]", "model.cycle=true", "model.latency_s=0.01"
    )
    model = build(cfg.model, "model")
    assert (
        model.client.responses == ["a", "b"]
        and model.client.cycle
        and model.client.latency_s == 0.01
    )
    assert model.name == "mock" and model.cache_mode == "off"


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (["model=openai", "model.cache=sometimes"], "model.cache"),
        (["model=openai", "model.max_connections=0"], "model.max_connections"),
        (["model=openai", "+model.max_conections=4"], "model.max_conections"),
        (["model=openai", "model.max_tokens_param=tokens"], "model.max_tokens_param"),
        (["model=openai", "model.max_cost_usd=1", "model.name=unpriced"], "model.prices"),
        (["model=openai", "model.prices.gpt-4o-mini.input=cheap"], "model.prices.gpt-4o-mini"),
        (["model=embedded", "model.n_threads=0"], "model.n_threads"),
    ],
)
def test_config_errors_name_the_key(overrides: list[str], key: str) -> None:
    cfg = compose_cfg(*overrides)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        build(cfg.model, "model")


def test_openai_compatible_needs_name_and_base_url() -> None:
    cfg = compose_cfg("model=openai_compatible")
    with pytest.raises(MissingMandatoryValue, match=r"model\.name"):
        build(cfg.model, "model")
    cfg = compose_cfg("model=openai_compatible", "model.name=m")
    with pytest.raises(MissingMandatoryValue, match=r"model\.base_url"):
        build(cfg.model, "model")


def test_openai_pool_needs_base_urls_and_sizes_the_layer_per_endpoint() -> None:
    cfg = compose_cfg("model=openai_pool", "model.name=m")
    with pytest.raises(MissingMandatoryValue, match=r"model\.base_urls"):
        build(cfg.model, "model")
    cfg = compose_cfg(*REQUIRED["openai_pool"], "model=openai_pool", "model.max_connections=3")
    model = build(cfg.model, "model")
    assert isinstance(model.client, PooledOpenAIClient)
    assert [e.url for e in model.client.endpoints] == [
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:8001/v1",
    ]
    assert model.client.max_connections == 3 and model.max_connections == 6
