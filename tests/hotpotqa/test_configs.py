"""Every HotpotQA config option composes from configs/config.yaml and instantiates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.actors.hotpotqa import CoTActor, ReActActor
from reflexion_bench.config import build
from reflexion_bench.environments.docstore import ContextDocstore, WikipediaDocstore
from reflexion_bench.environments.hotpotqa import HotpotQAEnvironment
from reflexion_bench.evaluators.exact_match import GoldExactMatchEvaluator
from reflexion_bench.reflectors.hotpotqa import QAReflector
from reflexion_bench.runner.run import build_context
from reflexion_bench.scorers.exact_match import ExactMatchScorer
from tests.hotpotqa.conftest import Compose
from tests.hotpotqa.helpers import run_with_model, scripted


def test_env_selects_its_roles(compose_hotpot: Compose, tmp_path: Path) -> None:
    ctx = build_context(compose_hotpot("limit=3"), tmp_path)
    assert isinstance(ctx.roles.actor, ReActActor)
    assert isinstance(ctx.roles.actor.docstore, ContextDocstore)
    assert isinstance(ctx.roles.evaluator, GoldExactMatchEvaluator)
    assert isinstance(ctx.roles.reflector, QAReflector)
    assert isinstance(ctx.roles.scorer, ExactMatchScorer)
    assert ctx.benchmark == "hotpotqa"
    assert len(ctx.tasks) == 3
    assert ctx.memory_window == 3
    assert ctx.services.sandbox is None


@pytest.mark.parametrize(
    ("actor", "cls", "with_context"),
    [("cot", CoTActor, False), ("cot_context", CoTActor, True), ("react", ReActActor, None)],
)
def test_each_actor(
    compose_hotpot: Compose, actor: str, cls: type, with_context: bool | None
) -> None:
    obj = build(compose_hotpot(f"actor={actor}").actor, "actor")
    assert isinstance(obj, cls)
    if with_context is not None:
        assert obj.with_context is with_context


def test_each_docstore(compose_hotpot: Compose, tmp_path: Path) -> None:
    ctx_store = build(compose_hotpot("docstore=context").docstore, "docstore")
    assert isinstance(ctx_store, ContextDocstore)
    assert len(ctx_store.titles) > 100
    cfg = compose_hotpot("docstore=wikipedia", f"paths.cache_dir={tmp_path}")
    actor = build(cfg.actor, "actor")
    assert isinstance(actor.docstore, WikipediaDocstore)
    assert actor.docstore.cache_dir == tmp_path / "wikipedia"
    assert actor.docstore.api_url.startswith("https://en.wikipedia.org/")


@pytest.mark.parametrize(
    ("strategy", "content", "window"),
    [
        ("retry", "none", None),
        ("last_attempt", "raw_log", 1),
        ("reflexion", "reflection", None),
        ("last_attempt_and_reflexion", "raw_log_and_reflection", 1),
    ],
)
def test_each_memory_strategy(
    compose_hotpot: Compose, tmp_path: Path, strategy: str, content: str, window: int | None
) -> None:
    ctx = build_context(compose_hotpot(f"strategy={strategy}", "limit=1"), tmp_path)
    s = ctx.roles.strategy
    assert (s.name, s.memory_content, s.memory_window, s.self_test) == (
        strategy,
        content,
        window,
        True,
    )
    assert ctx.memory_window == (window or 3)


def test_sample_and_hf_options_reach_the_environment(compose_hotpot: Compose) -> None:
    env = build(compose_hotpot("env.sample=7", "seed=3").env, "env")
    assert isinstance(env, HotpotQAEnvironment)
    assert (env.sample, env.seed) == (7, 3)
    assert len(env.load_tasks()) == 7
    env = build(compose_hotpot("env.source=hf").env, "env")
    assert (env.source, env.hf_path, env.hf_config, env.split) == (
        "hf",
        "hotpotqa/hotpot_qa",
        "distractor",
        "validation",
    )


def test_scorer_judge_option(compose_hotpot: Compose) -> None:
    scorer = build(compose_hotpot("scorer.judge=true").scorer, "scorer")
    assert scorer.judge is True


def test_external_prompt_pack_replaces_named_templates(
    compose_hotpot: Compose, tmp_path: Path
) -> None:
    pack = tmp_path / "pack.json"
    pack.write_text(
        json.dumps({"react_examples": "MY OWN DEMO", "reflect_instructions": "MY REFLECTOR"}),
        encoding="utf-8",
    )
    cfg = compose_hotpot(
        f"+prompts={pack}", "strategy=reflexion", "strategy.max_trials=2", "limit=1"
    )

    def react(n: int, user: str) -> str:
        return "Thought: x\nAction: Finish[nope]"

    model, seen = scripted(react, lambda n: "lesson")
    run_with_model(cfg, tmp_path / "run", model)
    actor_prompts = [p for msgs, _ in model.calls for p in [msgs[-1].content] if "Question:" in p]
    assert "MY OWN DEMO" in actor_prompts[0]
    assert "Budapest" not in actor_prompts[0]  # the built-in demos were replaced
    systems = [msgs[0].content for msgs, _ in model.calls]
    assert "MY REFLECTOR" in systems  # the reflector's instructions came from the pack
    assert seen["react"]  # the ReAct instructions were kept from the built-in pack


def test_bad_prompt_pack_fails_at_build_naming_the_pack(
    compose_hotpot: Compose, tmp_path: Path
) -> None:
    from reflexion_bench.core.errors import ConfigError

    cfg = compose_hotpot(f"+prompts={tmp_path / 'missing-pack'}")
    with pytest.raises(ConfigError, match="missing-pack"):
        build(cfg.actor, "actor")
