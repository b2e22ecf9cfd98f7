"""Each strategy through the real loop and runner with the scripted model: assertions
on the prompts the actor is sent (what memory each strategy shows) and on the log."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.strategies import (
    BestOfNStrategy,
    IrrelevantTextStrategy,
    Strategy,
    WrongReflectionStrategy,
    count_tokens,
    seeded_derangement,
)
from tests.strategies.toyrun import actor_prompts, by_task, run_toy
from tests.toy import ToyEvaluator


def strategy_from_config(name: str, **overrides: object) -> Strategy:
    """Build a strategy from its real config file (``seed`` resolved to 0)."""
    node = OmegaConf.load(CONFIG_DIR / "strategy" / f"{name}.yaml")
    # lats_oracle's `scorer: ${scorer}` reads the run's scorer (the code one here; its
    # target only, as its other keys interpolate run-level paths).
    scorer = {"_target_": OmegaConf.load(CONFIG_DIR / "scorer" / "code.yaml")["_target_"]}
    cfg = OmegaConf.create({"seed": 0, "scorer": scorer, "strategy": node})
    for k, v in overrides.items():
        OmegaConf.update(cfg, f"strategy.{k}", v)
    strategy = instantiate(cfg.strategy)
    assert isinstance(strategy, Strategy)
    return strategy


class CountingEvaluator(ToyEvaluator):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def evaluate(self, state, attempt):  # type: ignore[no-untyped-def]
        self.calls += 1
        return await super().evaluate(state, attempt)


def reflector_prompts(model) -> list[str]:  # type: ignore[no-untyped-def]
    return [p for p in model.prompts if p.startswith("Reflect:")]


async def test_retry_shows_nothing(tmp_path: Path) -> None:
    model, records = await run_toy(tmp_path / "r", strategy_from_config("retry"))
    beta = actor_prompts(model, "beta")
    assert len(beta) == 5  # K trials, never fixed
    assert all(p == "Say the word beta." for p in beta)
    assert reflector_prompts(model) == []
    assert all(r["memory_shown"] == [] for r in records)
    assert all(r["reflection"] is None for r in records)


async def test_raw_log_shows_previous_attempt_and_feedback(tmp_path: Path) -> None:
    model, _ = await run_toy(tmp_path / "r", strategy_from_config("raw_log"))
    beta = actor_prompts(model, "beta")
    assert "wrongB1" in beta[1] and "expected another word than 'wrongB1'" in beta[1]
    assert "[Previous attempt (trial 1)]" in beta[1]
    # Ω = 1: trial 3 sees trial 2's attempt only.
    assert "wrongB2" in beta[2] and "wrongB1" not in beta[2]
    assert reflector_prompts(model) == []


async def test_reflexion_shows_reflection(tmp_path: Path) -> None:
    model, records = await run_toy(tmp_path / "r", strategy_from_config("reflexion"))
    beta = actor_prompts(model, "beta")
    assert "[Reflection (trial 1)]\nlesson about wrongB1" in beta[1]
    assert "wrongB1" not in beta[1].replace("lesson about wrongB1", "")
    alpha_recs = by_task(records)["toy/0"]
    assert [r["hidden"]["passed"] for r in alpha_recs] == [False, True]


async def test_raw_log_and_reflexion_shows_both_in_one_slot(tmp_path: Path) -> None:
    model, records = await run_toy(tmp_path / "r", strategy_from_config("raw_log_and_reflexion"))
    beta = actor_prompts(model, "beta")
    assert "[Previous attempt (trial 1)]" in beta[1]
    assert "[Reflection (trial 1)]\nlesson about wrongB1" in beta[1]
    # Both entries of trial 2 replace both of trial 1 (one memory slot per trial).
    assert "lesson about wrongB2" in beta[2] and "lesson about wrongB1" not in beta[2]
    beta_recs = by_task(records)["toy/1"]
    assert beta_recs[1]["extra"]["memory_kinds"] == ["raw_log", "reflection"]


async def test_tests_no_reflection_feeds_test_output_directly(tmp_path: Path) -> None:
    model, records = await run_toy(tmp_path / "r", strategy_from_config("tests_no_reflection"))
    beta = actor_prompts(model, "beta")
    assert "[Test feedback from the previous attempt (trial 1)]" in beta[1]
    assert "expected another word than 'wrongB1'" in beta[1]
    assert reflector_prompts(model) == []
    assert all(r["reflection"] is None for r in records)


async def test_reflexion_no_tests_never_runs_self_tests(tmp_path: Path) -> None:
    evaluator = CountingEvaluator()
    model, records = await run_toy(
        tmp_path / "r", strategy_from_config("reflexion_no_tests"), evaluator=evaluator
    )
    assert evaluator.calls == 0
    # No in-loop signal: every task runs all K trials, even gamma (right at trial 1).
    assert {tid: len(rs) for tid, rs in by_task(records).items()} == {
        "toy/0": 5,
        "toy/1": 5,
        "toy/2": 5,
        "toy/3": 5,
    }
    gamma = actor_prompts(model, "gamma")
    assert "[Reflection (trial 1)]\nlesson about gamma" in gamma[1]
    # The reflector got no test feedback to work from.
    refl = reflector_prompts(model)
    assert "Reflect: gamma failed: " in refl
    assert not any("expected another word" in p for p in refl)


async def test_wrong_reflection_never_shows_own_reflection_live(tmp_path: Path) -> None:
    model, records = await run_toy(tmp_path / "r", strategy_from_config("wrong_reflection"))
    shown_any = False
    for word, tid in (("alpha", "toy/0"), ("beta", "toy/1"), ("delta", "toy/3")):
        own = "lesson about wrong" + word[0].upper()  # the reflections written for this task
        for prompt in actor_prompts(model, word)[1:]:
            assert own not in prompt, prompt
            if "lesson about" in prompt:
                shown_any = True
                assert "[Reflection (trial" in prompt  # headed exactly like a real one
        # The real reflection is still written and logged.
        for rec in by_task(records)[tid][:-1]:
            assert rec["reflection"] and rec["reflection"].startswith(
                "lesson about wrong" + word[0].upper()
            )
    assert shown_any
    # alpha fails first in a sequential run: no other task has a reflection yet, so
    # it is shown nothing rather than its own.
    alpha = actor_prompts(model, "alpha")
    assert alpha[1] == "Say the word alpha."


async def test_wrong_reflection_from_source_is_a_seeded_derangement(tmp_path: Path) -> None:
    source = tmp_path / "source"
    await run_toy(source, strategy_from_config("reflexion"))
    failed = {"toy/0": "wrongA", "toy/1": "wrongB1", "toy/3": "wrongD"}
    shown: dict[int, dict[str, str]] = {}
    for seed in (0, 1, 2, 3):
        model, _ = await run_toy(
            tmp_path / f"wrong{seed}",
            strategy_from_config("wrong_reflection", source_run=str(source), seed=seed),
        )
        shown[seed] = {}
        for tid, word in (("toy/0", "alpha"), ("toy/1", "beta"), ("toy/3", "delta")):
            trial2 = actor_prompts(model, word)[1]
            donors = [t for t, cand in failed.items() if f"lesson about {cand}:" in trial2]
            assert len(donors) == 1, trial2
            assert donors[0] != tid
            shown[seed][tid] = donors[0]
        # A derangement of the failed tasks: every donor used exactly once.
        assert sorted(shown[seed].values()) == sorted(failed)
    # Same seed, same pairing (re-run, concurrently this time); some seed gives another.
    model, _ = await run_toy(
        tmp_path / "wrong0b",
        strategy_from_config("wrong_reflection", source_run=str(source), seed=0),
        concurrent=3,
    )
    donor_cand = failed[shown[0]["toy/0"]]
    assert f"lesson about {donor_cand}:" in actor_prompts(model, "alpha")[1]
    assert len({tuple(sorted(s.items())) for s in shown.values()}) > 1


def test_seeded_derangement() -> None:
    items = [f"t{i}" for i in range(10)]
    for seed in range(20):
        pairs = seeded_derangement(items, seed)
        assert set(pairs) == set(items)
        assert sorted(pairs.values()) == sorted(items)
        assert all(k != v for k, v in pairs.items())
    assert seeded_derangement(items, 5) == seeded_derangement(list(reversed(items)), 5)
    assert seeded_derangement(["only"], 0) == {}


async def test_irrelevant_text_matches_length_and_hides_the_reflection(tmp_path: Path) -> None:
    model, records = await run_toy(tmp_path / "r", strategy_from_config("irrelevant_text"))
    beta_recs = by_task(records)["toy/1"]
    beta = actor_prompts(model, "beta")
    for k in (1, 2, 3, 4):
        real = beta_recs[k - 1]["reflection"]
        assert real.startswith("lesson about wrongB")
        shown = beta_recs[k]["memory_shown"]
        assert len(shown) == 1
        n_real, n_shown = count_tokens(real), count_tokens(shown[0])
        assert abs(n_shown - n_real) <= 0.1 * n_real
        assert beta_recs[k]["extra"]["memory_kinds"] == ["irrelevant_text"]
        # Nothing of the task or the reflection leaks into it.
        for word in ("lesson", "wrongB", "answer", "beta", "word"):
            assert word not in shown[0].lower()
        assert "[Reflection (trial" in beta[k]
        assert "lesson about" not in beta[k]
    # Different trials get different text.
    assert beta_recs[1]["memory_shown"] != beta_recs[2]["memory_shown"]


async def test_irrelevant_text_length_follows_a_long_reflection(tmp_path: Path) -> None:
    from reflexion_bench.strategies.filler import irrelevant_text

    for n in (1, 7, 60, 333):
        text = irrelevant_text(n, seed=f"s{n}")
        assert count_tokens(text) == n
    assert irrelevant_text(0) == ""
    assert irrelevant_text(40, seed="a") == irrelevant_text(40, seed="a")
    assert irrelevant_text(40, seed="a") != irrelevant_text(40, seed="b")


async def test_controls_log_the_hidden_reflection_in_extra(tmp_path: Path) -> None:
    _, records = await run_toy(tmp_path / "r", strategy_from_config("irrelevant_text"))
    failed = [r for r in records if r["reflection"]]
    if "real_reflection" not in failed[0]["extra"]:
        pytest.skip(
            "the loop does not merge state.scratch['trial_extra'] into the record yet "
            "(one-line runner change requested from the lead)"
        )
    for r in failed:
        assert r["extra"]["real_reflection"] == r["reflection"]
        assert r["extra"]["irrelevant_text_tokens"] == r["extra"]["real_reflection_tokens"]
    _, records = await run_toy(tmp_path / "w", strategy_from_config("wrong_reflection"))
    shown = 0
    for r in records:
        if r["reflection"]:
            donor = r["extra"]["wrong_reflection_from"]
            assert donor != r["task_id"]
            if donor is not None:
                shown += 1
                donor_reflections = [x["reflection"] for x in records if x["task_id"] == donor]
                assert r["extra"]["wrong_reflection"] in donor_reflections
    assert shown >= 3


async def test_best_of_n_samples_distinct_indices_and_stops_on_pass(tmp_path: Path) -> None:
    strategy = strategy_from_config("best_of_n", max_trials=4)
    assert isinstance(strategy, BestOfNStrategy)
    model, records = await run_toy(tmp_path / "r", strategy, concurrent=2)
    actor_calls = [
        (msgs[-1].content, cfg)
        for msgs, cfg in model.calls
        if not msgs[-1].content.startswith("Reflect:")
    ]
    beta = [cfg for text, cfg in actor_calls if "beta" in text]
    assert [c.sample_index for c in beta] == [0, 1, 2, 3]
    assert [c.temperature for c in beta] == [0.0, 0.8, 0.8, 0.8]
    # Identical prompts (no memory): only the sample index tells the samples apart.
    assert len({text for text, _ in actor_calls if "beta" in text}) == 1
    # gamma passed at trial 1: no sampling there, even with beta sampling beside it.
    gamma = [cfg for text, cfg in actor_calls if "gamma" in text]
    assert [(c.sample_index, c.temperature) for c in gamma] == [(0, 0.0)]
    # alpha stops at the first sample that passes the self-tests and submits it.
    alpha_recs = by_task(records)["toy/0"]
    assert len(alpha_recs) == 2 and alpha_recs[-1]["candidate"] == "alpha"
    assert reflector_prompts(model) == []


def test_best_of_n_rejects_bad_settings() -> None:
    with pytest.raises(ConfigError, match=r"strategy\.temperature"):
        BestOfNStrategy(temperature=0.0)
    with pytest.raises(ConfigError, match=r"strategy\.memory_content"):
        BestOfNStrategy(memory_content="reflection")
    with pytest.raises(ConfigError, match=r"strategy\.self_test"):
        BestOfNStrategy(self_test=False)


def test_every_strategy_config_builds() -> None:
    names = sorted(p.stem for p in (CONFIG_DIR / "strategy").glob("*.yaml"))
    mine = {
        "retry",
        "raw_log",
        "reflexion",
        "raw_log_and_reflexion",
        "wrong_reflection",
        "irrelevant_text",
        "reflexion_no_tests",
        "tests_no_reflection",
        "best_of_n",
        "simple",
    }
    assert mine <= set(names)
    for name in names:
        s = strategy_from_config(name)
        assert s.name, name
    assert isinstance(strategy_from_config("wrong_reflection"), WrongReflectionStrategy)
    assert isinstance(strategy_from_config("irrelevant_text"), IrrelevantTextStrategy)
    # Equal K for the memory-content controls.
    ks = {strategy_from_config(n).max_trials for n in mine - {"simple"}}
    assert ks == {5}
