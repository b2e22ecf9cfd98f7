"""Every env/actor/scorer config this area adds composes with the real config tree,
instantiates, loads its tasks, and its roles render their prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry, WindowMemory
from reflexion_bench.models.mock import MockModel

ENVS = {
    # env -> (benchmark name, language, scorer class, first task id)
    "leetcode_hard": (
        "leetcode_hard",
        "python",
        "LeetcodeHiddenScorer",
        "minimum-reverse-operations",
    ),
    "leetcode_hard_rs": (
        "leetcode_hard_rs",
        "rust",
        "LeetcodeHiddenScorer",
        "minimum-reverse-operations",
    ),
    "humaneval_rs": ("humaneval_rs", "rust", "CodeScorer", "HumanEval_24_largest_divisor"),
    "humaneval_rs_hard50": ("humaneval_rs_hard50", "rust", "CodeScorer", "HumanEval_111_histogram"),
    "mbpp_rs": ("mbpp_rs", "rust", "CodeScorer", "mbpp_234_volume_cube"),
}


def cfg_for(*overrides: str) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=["model=mock", *overrides])


@pytest.mark.parametrize("env_name", sorted(ENVS))
def test_env_config_builds_every_role(env_name: str, shared_data: Path) -> None:
    name, language, scorer_cls, first = ENVS[env_name]
    cfg = cfg_for(f"env={env_name}", "limit=2")
    env = build(cfg.env, "env")
    tasks = env.load_tasks()
    assert env.name == name and len(tasks) == 2 and tasks[0].id == first
    assert tasks[0].data["language"].name == language
    assert type(build(cfg.scorer, "scorer")).__name__ == scorer_cls
    actor = build(cfg.actor, "actor")
    evaluator = build(cfg.evaluator, "evaluator")
    reflector = build(cfg.reflector, "reflector")

    # Render every prompt of every role on a retry (all templates used).
    state = TaskState(
        task=tasks[0],
        strategy="reflexion",
        max_trials=2,
        memory=WindowMemory(1),
        services=Services(model=MockModel(responses=["x"])),
    )
    state.memory.add(MemoryEntry("reflection", "REFLECTION-TEXT", 1))
    from reflexion_bench.core.state import TrialRecord

    state.trials.append(
        TrialRecord(trial=1, candidate="PREVIOUS-CODE", self_test=Feedback(False, "FEEDBACK-TEXT"))
    )
    actor_msgs = actor.messages(state)
    text = "\n".join(m.content for m in actor_msgs)
    assert "REFLECTION-TEXT" in text and "PREVIOUS-CODE" in text and tasks[0].prompt.strip() in text
    test_msgs = "\n".join(m.content for m in evaluator.messages(state))
    refl_msgs = "\n".join(
        m.content
        for m in reflector.messages(state, Attempt(candidate="CODE"), Feedback(False, "FB"))
    )
    if language == "rust":
        assert "```rust" in text and "rustc 1.63" in text
        assert "assert_eq!" in test_msgs
        assert "did not compile" in refl_msgs
    else:
        assert "```python" in text and "assert " in test_msgs
    if env_name.startswith("leetcode"):
        assert "LeetCode" in actor_msgs[0].content  # the LeetCode actor pack
        assert "Examples (from the problem statement)" in tasks[0].prompt


def test_leetcode_task_selection_by_slug(shared_data: Path) -> None:
    cfg = cfg_for("env=leetcode_hard", "task_ids=[count-anagrams,put-marbles-in-bags]")
    tasks = build(cfg.env, "env").load_tasks()
    assert [t.id for t in tasks] == ["count-anagrams", "put-marbles-in-bags"]


def test_online_scorer_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from reflexion_bench.core.errors import ConfigError

    monkeypatch.setenv("REFLEXION_BENCH_CACHE", str(tmp_path))
    monkeypatch.delenv("LEETCODE_SESSION", raising=False)
    cfg = cfg_for("env=leetcode_hard", "scorer=leetcode_online")
    with pytest.raises(ConfigError, match="LEETCODE_SESSION"):
        build(cfg.scorer, "scorer")
    secret = "cookie-value-1234567890"
    monkeypatch.setenv("LEETCODE_SESSION", secret)
    scorer: Any = build(cfg.scorer, "scorer")
    assert scorer.cache.path == tmp_path / "leetcode_verdicts.sqlite"
    # The cookie is never part of the config (only the variable's name is), so never
    # of the saved one.
    node = OmegaConf.to_yaml(cfg.scorer, resolve=True)
    assert "cookie_env: LEETCODE_SESSION" in node and secret not in node


def test_scorer_options_reach_the_judge() -> None:
    cfg = cfg_for("env=leetcode_hard", "scorer.stack_mb=64", "scorer.timeout_scale=2.0")
    scorer = build(cfg.scorer, "scorer")
    assert scorer.settings.stack_mb == 64 and scorer.settings.timeout_scale == 2.0
