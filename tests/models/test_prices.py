"""The one price table (issue 32): every API model an experiment names has a price, so a
real run records what each call cost (not 0) and ``model.max_cost_usd`` can start."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.layer import ModelLayer, lookup_price, parse_prices
from reflexion_bench.testing.fake_llm_server import FakeLLMServer

EXPERIMENTS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))
API_MODELS = ("openai", "anthropic", "gpt4", "gpt35_turbo")


def composed(*overrides: str) -> DictConfig:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_api_model_an_experiment_names_is_priced(experiment: str) -> None:
    model = composed(f"experiment={experiment}").model
    if "prices" not in model:  # the embedded model and the mock: local, nothing to pay
        return
    price = lookup_price(parse_prices(model.prices), str(model.name))
    assert price is not None and price.input > 0 and price.output > 0, model.name
    assert model.get("prices_date"), "the table says when its prices were read"


@pytest.mark.parametrize("option", API_MODELS)
def test_every_api_model_config_is_priced_and_a_budget_starts(option: str) -> None:
    cfg = composed(f"model={option}", "model.max_cost_usd=1")
    layer = build(cfg.model, "model")  # no ConfigError: the model has a price
    assert isinstance(layer, ModelLayer) and layer.price is not None
    assert layer.prices_date == str(cfg.model.prices_date)


@pytest.mark.parametrize("name", ["gpt-4", "gpt-3.5-turbo", "text-davinci-003"])
def test_the_papers_models_are_in_the_table(name: str) -> None:
    model = composed("model=openai").model
    assert lookup_price(parse_prices(model.prices), name) is not None


@pytest.mark.network_local
async def test_a_gpt4_call_records_its_cost(
    fake_server: FakeLLMServer, keys: dict[str, str], tmp_path: Path
) -> None:
    fake_server.configure(reply="one two three")
    cfg = composed(
        "model=gpt4",
        f"model.base_url={fake_server.openai_base_url}",
        f"paths.cache_dir={tmp_path}",
        "model.cache=off",
    )
    layer = build(cfg.model, "model")
    out = await layer.generate([Message("user", "count to three")], GenerateConfig())
    await layer.aclose()
    price = lookup_price(parse_prices(cfg.model.prices), "gpt-4")
    assert price is not None
    assert out.cost_usd == pytest.approx(price.cost(out.prompt_tokens, out.completion_tokens))
    assert out.cost_usd > 0
