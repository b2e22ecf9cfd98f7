"""The model layer inside real runs (runner + toy roles): errored tasks, fault injection,
cache replay, no secrets in the run folder, missing keys at start."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from reflexion_bench.core.state import Services
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.base import MissingAPIKeyError, ModelClient
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute, run_experiment
from reflexion_bench.runner.runlog import LOG_NAME, iter_records
from reflexion_bench.strategies.base import Strategy
from reflexion_bench.testing.fake_llm_server import FakeLLMServer
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer

WORDS = ["alpha", "beta", "gamma", "delta"]


def make_ctx(
    run_dir: Path, model: ModelClient, words: list[str], concurrency: int = 4
) -> RunContext:
    env = ToyEnvironment(words=words)
    return RunContext(
        tasks=env.load_tasks(),
        roles=Roles(
            actor=ToyActor(),
            evaluator=ToyEvaluator(),
            reflector=ToyReflector(),
            scorer=ToyScorer(),
            strategy=Strategy(name="reflexion", max_trials=2),
        ),
        services=Services(model=model, generate_config=GenerateConfig(max_tokens=32)),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="toy",
        run_dir=run_dir,
        max_concurrent_tasks=concurrency,
        fail_on_error=1.0,
        show_progress=False,
    )


def raw_records(run_dir: Path) -> list[dict[str, Any]]:
    return list(iter_records(run_dir / LOG_NAME))


def openai_layer(srv: FakeLLMServer, **layer: Any) -> ModelLayer:
    client = OpenAIChatClient(name="gpt-4o-mini", base_url=srv.openai_base_url)
    return ModelLayer(client, **{"backoff_s": 0.01, **layer})


@pytest.mark.network_local
async def test_permanently_failing_endpoint_errors_one_task_and_the_run_goes_on(
    tmp_path: Path, fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    # The first task's first call meets 3 server errors in a row (all its attempts).
    fake_server.configure(script=[{"kind": "500"}] * 3)
    model = openai_layer(fake_server, retries=2)
    await model.start()
    counts = await execute(make_ctx(tmp_path, model, WORDS, concurrency=1))
    await model.aclose()
    assert counts["ran"] == 4 and counts["errored"] == 1
    recs = raw_records(tmp_path)
    assert sorted({r["task_id"] for r in recs}) == [f"toy/{i}" for i in range(4)]
    errored = [r for r in recs if r["error"]]
    assert [r["task_id"] for r in errored] == ["toy/0"]
    assert "gave up after 3 attempts" in errored[0]["error"]
    (call,) = errored[0]["model_calls"]
    assert call["retries"] == 2 and call["finish_reason"] == "error"
    assert "500 x3" in call["error"]


@pytest.mark.network_local
async def test_fault_injection_run_completes_with_every_task_once(
    tmp_path: Path, fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    fake_server.configure(fail_rate=0.2, fault_kinds=["429", "500", "timeout"], seed=7, hang_s=1.5)
    model = openai_layer(fake_server, retries=8, timeout_s=0.3, max_connections=8)
    words = [f"w{i}" for i in range(20)]
    await model.start()
    counts = await execute(make_ctx(tmp_path, model, words, concurrency=8))
    await model.aclose()
    recs = raw_records(tmp_path)
    finals = Counter(r["task_id"] for r in recs if r["final"])
    assert finals == {f"toy/{i}": 1 for i in range(20)}
    assert counts["errored"] == 0 and not any(r["error"] for r in recs)
    # Every injected fault cost exactly one retry, and the log recorded each of them.
    statuses = fake_server.stats()["statuses"]
    faults = sum(n for status, n in statuses.items() if status != "200")
    assert faults >= 5, statuses
    logged_retries = sum(c["retries"] for r in recs for c in r["model_calls"])
    assert logged_retries == faults
    assert statuses["200"] == sum(len(r["model_calls"]) for r in recs)


def toy_responder(messages: Sequence[Message], config: GenerateConfig) -> str:
    text = messages[-1].content
    if text.startswith("Reflect"):
        return "Say the exact word, lower case."
    word = text.split("Say the word ")[1].split(".")[0]
    # Wrong on the first trial (no reflection in the prompt yet), right on the second.
    return word if "Reflection" in text else word.upper()


_TIMING = {"time", "run_id", "attempt_id", "wall_time_s"}


def comparable(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in recs:
        r = {k: v for k, v in r.items() if k not in _TIMING}
        # A replay logs the live call's tokens, cost and latency: only `cached` differs.
        r["model_calls"] = [{k: v for k, v in c.items() if k != "cached"} for c in r["model_calls"]]
        out.append(r)
    return sorted(out, key=lambda r: (r["task_id"], r["trial"]))


async def test_mock_recorded_run_replays_from_cache_without_a_model(tmp_path: Path) -> None:
    db = str(tmp_path / "cache.sqlite")
    recorder = ModelLayer(MockModel(responder=toy_responder), cache="read_write", cache_path=db)
    await execute(make_ctx(tmp_path / "recorded", recorder, WORDS))
    await recorder.aclose()

    # No model: an empty script raises on any call. Replay must not need it.
    nothing = MockModel(responses=[])
    replay = ModelLayer(nothing, cache="read_only", cache_path=db)
    await replay.start()
    counts = await execute(make_ctx(tmp_path / "replayed", replay, WORDS))
    await replay.aclose()

    assert nothing.calls == [] and counts["errored"] == 0
    first = raw_records(tmp_path / "recorded")
    second = raw_records(tmp_path / "replayed")
    assert all(not c["cached"] for r in first for c in r["model_calls"])
    assert all(c["cached"] for r in second for c in r["model_calls"])
    assert comparable(first) == comparable(second)
    assert any(r["hidden"]["passed"] for r in second)  # the replay is a real run's content
    assert replay.usage.live_calls == 0 and replay.usage.cached_calls == recorder.usage.live_calls


def run_cfg(tmp_path: Path, srv: FakeLLMServer, **model: Any) -> Any:
    return OmegaConf.create(
        {
            "env": {"_target_": "tests.toy.ToyEnvironment", "words": WORDS[:3]},
            "actor": {"_target_": "tests.toy.ToyActor"},
            "evaluator": {"_target_": "tests.toy.ToyEvaluator"},
            "reflector": {"_target_": "tests.toy.ToyReflector"},
            "scorer": {"_target_": "tests.toy.ToyScorer"},
            "strategy": {"_target_": "reflexion_bench.strategies.Strategy", "max_trials": 2},
            "memory": {"_target_": "reflexion_bench.memory.WindowMemory", "_partial_": True},
            "sandbox": None,
            "model": {
                "_target_": "reflexion_bench.models.layer.build_layered_model",
                "client_target": "reflexion_bench.models.openai.OpenAIChatClient",
                "name": "gpt-4o-mini",
                "base_url": srv.openai_base_url,
                "api_key_env": "OPENAI_API_KEY",
                "retries": 1,
                "backoff_s": 0.01,
                "cache": "read_write",
                "cache_path": str(tmp_path / "run" / "cache.sqlite"),
                **model,
            },
            "generate": {"max_tokens": 16},
            "max_concurrent_tasks": 2,
            "fail_on_error": 1.0,
            "progress": False,
            "seed": 0,
            "name": "secrets",
        }
    )


@pytest.mark.network_local
async def test_fake_key_never_reaches_the_run_folder(
    tmp_path: Path, fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    run_dir = tmp_path / "run"
    # First a clean run, then one the server rejects while echoing the key back.
    fake_server.configure(api_key=keys["openai"])
    await run_experiment(run_cfg(tmp_path, fake_server), run_dir)
    fake_server.configure(api_key="another-key")
    await run_experiment(run_cfg(tmp_path, fake_server, name="gpt-4.1"), tmp_path / "run2")
    errors = [r["error"] for r in raw_records(tmp_path / "run2")]
    assert errors and all("HTTP 401" in e for e in errors)
    files = [p for d in (run_dir, tmp_path / "run2") for p in d.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"config.yaml", "log.jsonl", "summary.json", "cache.sqlite"}
    for path in files:
        assert keys["openai"].encode() not in path.read_bytes(), path
    assert "OPENAI_API_KEY" in (run_dir / "config.yaml").read_text()  # the name, not the value


async def test_missing_key_fails_at_start_naming_the_variable(
    tmp_path: Path, fake_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REFLEXION_TEST_KEY", raising=False)
    cfg = run_cfg(tmp_path, fake_server, api_key_env="REFLEXION_TEST_KEY")
    with pytest.raises(MissingAPIKeyError, match="REFLEXION_TEST_KEY"):
        await run_experiment(cfg, tmp_path / "run")
    assert fake_server.stats()["requests"] == 0
    log = tmp_path / "run" / LOG_NAME
    assert not log.exists() or log.read_text() == ""
