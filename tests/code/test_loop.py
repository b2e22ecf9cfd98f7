"""The Reflexion loop on real HumanEval problems, end to end through the real runner.

The config is composed with Hydra like `reflexion-bench run env=humaneval model=mock`,
every object is built from it (real environment, roles, local sandbox), and only the
model is scripted. Assertions read the run log, the way every report does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import RunContext, build_context, execute
from reflexion_bench.runner.runlog import load_run_records


def compose_cfg(*overrides: str) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=["model=mock", "progress=false", *overrides])


async def run_with(ctx: RunContext, responses: list[str]) -> tuple[MockModel, list[dict[str, Any]]]:
    mock = MockModel(responses=responses)
    ctx.services.model = mock
    try:
        await execute(ctx)
    finally:
        if ctx.services.sandbox is not None:
            await ctx.services.sandbox.aclose()
    return mock, load_run_records(ctx.run_dir)


def fence(code: str) -> str:
    return f"Here is my answer.\n```python\n{code}```\n"


WRONG_1 = "def has_close_elements(numbers, threshold):\n    return True\n"
WRONG_2 = "def has_close_elements(numbers, threshold):\n    return len(numbers) > 5\n"
RIGHT = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])\n"
)
TESTS = (
    "```python\n"
    "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False\n"
    "assert has_close_elements([1.0, 2.8, 3.0], 0.3) == True\n"
    "```"
)


@pytest.fixture
def one_task_ctx(tmp_path: Path) -> Iterator[RunContext]:
    cfg = compose_cfg("env=humaneval", "task_ids=[HumanEval/0]", "strategy.max_trials=3")
    yield build_context(cfg, tmp_path / "run")


async def test_reflexion_loop_end_to_end(one_task_ctx: RunContext) -> None:
    mock, records = await run_with(
        one_task_ctx,
        [
            fence(WRONG_1),  # trial 1: actor
            TESTS,  #          trial 1: self-test generation (once per task)
            "REFLECTION-ONE: it always answers True.",  # trial 1: reflector
            fence(WRONG_2),  # trial 2: actor
            "REFLECTION-TWO: the length is irrelevant.",  # trial 2: reflector
            fence(RIGHT),  # trial 3: actor; self-tests pass -> stop
        ],
    )
    assert len(mock.calls) == 6  # no more calls: the task stopped on the self-test pass
    assert [r["trial"] for r in records] == [1, 2, 3]
    assert [r["final"] for r in records] == [False, False, True]
    assert [r["self_test"]["passed"] for r in records] == [False, False, True]
    assert [r["hidden"]["passed"] for r in records] == [False, False, True]
    assert (
        records[0]["hidden"]["status"] == "fail"
        and "assert candidate" in records[0]["hidden"]["detail"]
    )
    assert [c["role"] for c in records[0]["model_calls"]] == ["actor", "self_test", "reflector"]
    assert [c["role"] for c in records[1]["model_calls"]] == ["actor", "reflector"]
    assert records[0]["reflection"].startswith("REFLECTION-ONE")
    assert "Tests failed:" in records[0]["self_test"]["text"]
    assert "# output: True" in records[0]["self_test"]["text"]

    actor_prompts = [mock.prompts[i] for i in (0, 3, 5)]
    # trial 1 sees only the task
    assert (
        "REFLECTION" not in actor_prompts[0] and "previous implementation" not in actor_prompts[0]
    )
    # trial 2 sees the reflection, the previous code and its self-test results
    assert "REFLECTION-ONE" in actor_prompts[1]
    assert "return True" in actor_prompts[1] and "Tests failed:" in actor_prompts[1]
    # memory window Ω=1: trial 3 sees the last reflection only
    assert "REFLECTION-TWO" in actor_prompts[2] and "REFLECTION-ONE" not in actor_prompts[2]
    assert records[2]["memory_shown"] == ["REFLECTION-TWO: the length is irrelevant."]
    # the reflector saw the implementation and its feedback
    assert "return True" in mock.prompts[2] and "Tests failed:" in mock.prompts[2]
    # the hidden tests never reach any prompt
    hidden_line = "assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"
    assert all(hidden_line not in p for p in mock.prompts)
    assert all("METADATA" not in p for p in mock.prompts)

    summary = summarize(records)
    assert summary["first_try"] == 0.0 and summary["final"] == 1.0
    assert summary["fixes"] == 1


async def test_a_wrong_candidate_that_passes_weak_self_tests_is_a_false_positive(
    one_task_ctx: RunContext,
) -> None:
    weak = "```python\nassert has_close_elements([], 1.0) == False\n```"
    always_false = "def has_close_elements(numbers, threshold):\n    return False\n"
    _, records = await run_with(one_task_ctx, [fence(always_false), weak])
    (rec,) = records
    assert rec["self_test"]["passed"] is True and rec["hidden"]["passed"] is False
    assert rec["final"] is True  # the loop stopped: it believed its own tests
    conf = summarize(records)["self_test_confusion"]
    assert conf["fp"] == 1 and conf["final_fp"] == 1 and conf["tp"] == 0


async def test_malformed_replies_are_failed_trials_not_crashes(one_task_ctx: RunContext) -> None:
    _, records = await run_with(
        one_task_ctx,
        [
            "I'm sorry, I can't help with that.",
            "no tests either",
            "reflect",
            fence(RIGHT),
            "reflect again",  # no tests: on_no_tests=fail keeps the loop going to K
            fence(RIGHT),
        ],
    )
    assert [r["error"] for r in records] == [None, None, None]
    assert records[0]["extra"]["extraction"] == "none" and records[0]["hidden"]["passed"] is False
    assert [r["self_test"]["passed"] for r in records] == [False, False, False]
    assert "No unit tests are available" in records[0]["self_test"]["text"]
    assert [r["hidden"]["passed"] for r in records] == [False, True, True]


async def test_simple_strategy_makes_one_attempt_without_self_tests(tmp_path: Path) -> None:
    cfg = compose_cfg("env=humaneval", "limit=2", "strategy=simple")
    ctx = build_context(cfg, tmp_path / "run")
    mock, records = await run_with(
        ctx, [fence(RIGHT), "```python\ndef separate_paren_groups(s):\n    return []\n```"]
    )
    assert [r["task_id"] for r in records] == ["HumanEval/0", "HumanEval/1"]
    assert [r["hidden"]["passed"] for r in records] == [True, False]
    assert all(r["self_test"]["passed"] is None for r in records)
    assert len(mock.calls) == 2


def test_log_lines_are_json_with_the_candidate(one_task_ctx: RunContext, tmp_path: Path) -> None:
    # the config composes and builds the code roles for humaneval
    roles = one_task_ctx.roles
    assert type(roles.actor).__name__ == "CodeActor"
    assert type(roles.evaluator).__name__ == "SelfTestEvaluator"
    assert type(roles.reflector).__name__ == "CodeReflector"
    assert type(roles.scorer).__name__ == "CodeScorer"
    assert one_task_ctx.memory_window == 1 and one_task_ctx.benchmark == "humaneval"
    json.dumps([t.id for t in one_task_ctx.tasks])


@pytest.mark.parametrize("env", ["humaneval", "mbpp"])
async def test_every_object_builds_for_both_benchmarks(
    env: str, tmp_path: Path, shared_data: Path
) -> None:
    cfg = compose_cfg(f"env={env}", f"paths.data_dir={shared_data}")
    ctx = build_context(cfg, tmp_path / "run")
    try:
        assert len(ctx.tasks) == {"humaneval": 164, "mbpp": 397}[env]
        assert ctx.memory_window == 1
        assert ctx.services.sandbox is not None
        assert ctx.roles.strategy.name == "reflexion" and ctx.roles.strategy.max_trials == 5
        assert getattr(ctx.roles.evaluator, "n_tests", None) == 5
    finally:
        if ctx.services.sandbox is not None:
            await ctx.services.sandbox.aclose()


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("evaluator.on_no_tests=maybe", "evaluator.on_no_tests"),
        ("evaluator.n_tests=0", "evaluator.n_tests"),
        ("scorer.timeout_s=-1", "scorer.timeout_s"),
        ("env.source=ftp", "env.source"),
    ],
)
def test_config_errors_name_the_key(
    override: str, key: str, tmp_path: Path, shared_data: Path
) -> None:
    cfg = compose_cfg("env=mbpp", f"paths.data_dir={shared_data}", "sandbox=none", override)
    with pytest.raises(ConfigError) as err:
        build_context(cfg, tmp_path / "run")
    assert key in str(err.value)


def test_a_missing_mbpp_file_names_env_path(tmp_path: Path) -> None:
    cfg = compose_cfg("env=mbpp", f"paths.data_dir={tmp_path}", "sandbox=none")
    with pytest.raises(DatasetError) as err:
        build_context(cfg, tmp_path / "run")
    assert "env.path" in str(err.value) and str(tmp_path / "mbpp-py.jsonl") in str(err.value)
