"""One tiny real run per equal-budget strategy with the embedded model (slow): one
HumanEval problem, K = 2, short generations, the real sandbox. What the model writes
is not scripted, so the assertions are about the strategy's mechanics on real
output: every trial's calls are recorded with real token counts, the task stops for
a logged reason, and the strategy's own step ran whenever the first trial failed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.runner.run import build_context, execute
from reflexion_bench.runner.runlog import load_run_records

pytestmark = [pytest.mark.slow, pytest.mark.requires("bwrap")]

STOPS = {"self_test_pass", "max_trials", "budget.tokens", "critic_no_issues", "oracle_hidden_pass"}


@pytest.mark.parametrize(
    "strategy", ["self_refine", "lats", "lats_oracle", "ldb", "retry_escalate"]
)
def test_strategy_runs_on_the_embedded_model(strategy: str, tmp_path: Path) -> None:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                f"strategy={strategy}",
                "model=embedded",
                "model.n_threads=1",
                "model.cache=off",
                "task_ids=[HumanEval/1]",
                "strategy.max_trials=2",
                "+strategy.retry_temperature=0.8" if strategy == "self_refine" else "seed=0",
                "generate.max_tokens=96",
                "reflector.max_tokens=96",
                "evaluator.max_tokens=128",
                "budget.tokens=6000",
                "progress=false",
            ],
        )
    ctx = build_context(cfg, tmp_path / "run")

    async def go() -> None:
        await ctx.services.model.start()
        try:
            await execute(ctx)
        finally:
            await ctx.services.model.aclose()
            if ctx.services.sandbox is not None:
                await ctx.services.sandbox.aclose()

    asyncio.run(go())
    records = load_run_records(ctx.run_dir)
    assert 1 <= len(records) <= 2
    assert all(r["error"] is None for r in records), records[-1]["error"]
    assert records[-1]["final"] and records[-1]["extra"]["stop_reason"] in STOPS
    first = records[0]
    actor = [c for c in first["model_calls"] if c["role"] == "actor"]
    assert actor and actor[0]["completion_tokens"] > 0 and not actor[0]["cached"]
    roles = {c["role"] for c in first["model_calls"]}
    failed_first = first["self_test"]["passed"] is False
    if strategy == "self_refine":
        assert "critic" in roles and "self_test" not in roles
        assert first["extra"]["critique"]
    elif strategy == "lats" and failed_first:
        assert "reflector" in roles and first["extra"]["lats_next_parent"] in (0, 1)
    elif strategy == "lats_oracle":
        # K = 2: trial 1 always goes on to the search step, which reads the hidden tests.
        assert first["answer_key_uses"] == {"strategy.hidden_tests": 1}
    elif strategy == "ldb" and failed_first and first["self_test"]["details"].get("results"):
        assert "debugger" in roles and first["extra"]["ldb_trace"]
    elif strategy == "retry_escalate" and len(records) == 2:
        assert records[1]["extra"]["actor_temperature"] == 0.4
    assert records[-1]["extra"]["budget_spent"]["tokens"] > 0
