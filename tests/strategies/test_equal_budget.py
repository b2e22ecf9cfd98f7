"""The equal-budget strategies (self_refine, lats, lats_oracle, ldb, retry_escalate), the
per-task budget and the retry sampling, through the real loop and runner on a real
HumanEval problem with the real local sandbox; only the model is scripted. Assertions
read the run log, the way every report does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import RunContext, build_context, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies.ldb import format_trace
from reflexion_bench.strategies.refine import says_no_issues

pytestmark = pytest.mark.requires("bwrap")

TESTS = (
    "```python\n"
    "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False\n"
    "assert has_close_elements([1.0, 2.8, 3.0], 0.3) == True\n"
    "```"
)
WRONG_1 = "def has_close_elements(numbers, threshold):\n    return True\n"
WRONG_2 = "def has_close_elements(numbers, threshold):\n    return len(numbers) > 5\n"
# Passes one of the two self-tests (the first): value 0.5 for LATS.
HALF = "def has_close_elements(numbers, threshold):\n    return False\n"
LOOPY = (
    "def has_close_elements(numbers, threshold):\n"
    "    best = 0.0\n"
    "    for i, a in enumerate(numbers):\n"
    "        gap = a * 2\n"
    "        best = max(best, gap)\n"
    "    return best < threshold\n"
)
ZERO = "def has_close_elements(numbers, threshold):\n    return None\n"
RIGHT = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])\n"
)
HIDDEN_LINE = "assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"


def fence(code: str) -> str:
    return f"Here is my answer.\n```python\n{code}```\n"


class Scripted:
    """Answers by role (recognised from the prompt); the actor's n-th call returns
    ``actor[n]`` (the last repeats). Records the roles and configs it saw."""

    def __init__(self, actor: list[str], critic: list[str] | None = None) -> None:
        self.actor = actor
        self.critic = critic or ["NO ISSUES"]
        self.seen: list[tuple[str, str, GenerateConfig]] = []
        self.n_actor = 0
        self.n_critic = 0

    def role(self, text: str) -> str:
        if "different unit tests" in text:
            return "self_test"
        if "Runtime values of that test" in text:
            return "debugger"
        if "review a Python function for correctness" in text:
            return "critic"
        if "Explain briefly why the implementation fails" in text:
            return "reflector"
        return "actor"

    def __call__(self, messages: Sequence[Message], config: GenerateConfig) -> str:
        text = "\n".join(m.content for m in messages)
        role = self.role(text)
        self.seen.append((role, text, config))
        if role == "self_test":
            return TESTS
        if role == "debugger":
            return "DIAGNOSIS: gap doubles a instead of comparing neighbours."
        if role == "reflector":
            return f"REFLECTION-{len([s for s in self.seen if s[0] == 'reflector'])}"
        if role == "critic":
            reply = self.critic[min(self.n_critic, len(self.critic) - 1)]
            self.n_critic += 1
            return reply
        reply = self.actor[min(self.n_actor, len(self.actor) - 1)]
        self.n_actor += 1
        return fence(reply)

    def prompts(self, role: str) -> list[str]:
        return [t for r, t, _ in self.seen if r == role]

    def configs(self, role: str) -> list[GenerateConfig]:
        return [c for r, _, c in self.seen if r == role]


def compose_cfg(*overrides: str) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(
            "config",
            overrides=["model=mock", "progress=false", "task_ids=[HumanEval/0]", *overrides],
        )


async def run(
    tmp_path: Path, script: Scripted, *overrides: str, strong: Scripted | None = None
) -> tuple[RunContext, list[dict[str, Any]]]:
    ctx = build_context(compose_cfg(*overrides), tmp_path / "run")
    ctx.services.model = MockModel(responder=script)
    if strong is not None:
        ctx.services.models["actor"] = MockModel(responder=strong, name="strong-mock")
    try:
        await execute(ctx)
    finally:
        if ctx.services.sandbox is not None:
            await ctx.services.sandbox.aclose()
    return ctx, load_run_records(ctx.run_dir)


def tokens(records: list[dict[str, Any]]) -> list[int]:
    """Cumulative prompt + completion tokens after each trial."""
    out, total = [], 0
    for r in records:
        total += sum(c["prompt_tokens"] + c["completion_tokens"] for c in r["model_calls"])
        out.append(total)
    return out


# ----------------------------------------------------------------------------- budget


async def test_the_token_budget_stops_retry_and_says_why(tmp_path: Path) -> None:
    script = Scripted([WRONG_1])
    # Spend after trial 1 (actor + self-test writer) is measured first without a budget.
    _, free = await run(
        tmp_path / "free", Scripted([WRONG_1]), "strategy=retry", "strategy.max_trials=6"
    )
    assert len(free) == 6 and free[-1]["extra"]["stop_reason"] == "max_trials"
    spend = tokens(free)
    budget = spend[2] - 1  # reached inside trial 3: no trial 4 may start
    _, records = await run(
        tmp_path, script, "strategy=retry", "strategy.max_trials=6", f"budget.tokens={budget}"
    )
    assert [r["trial"] for r in records] == [1, 2, 3]
    last = records[-1]
    assert last["final"] is True
    assert last["extra"]["stop_reason"] == "budget.tokens"
    assert last["extra"]["budget_spent"]["tokens"] == spend[2] >= budget
    assert last["extra"]["budget"] == {"tokens": budget, "usd": None, "calls": None}
    # Under the budget at every earlier trial end, so those trials were allowed to continue.
    assert all(t < budget for t in tokens(records)[:2])


async def test_the_calls_budget_counts_every_role(tmp_path: Path) -> None:
    # reflexion: trial 1 = actor, self-test writer, reflector (3 calls); trial 2 adds the
    # actor (4): a 4-call budget ends the task after trial 2, before its reflection.
    _, records = await run(
        tmp_path,
        Scripted([WRONG_1]),
        "strategy=reflexion",
        "strategy.max_trials=5",
        "budget.calls=4",
    )
    assert [r["trial"] for r in records] == [1, 2]
    assert [c["role"] for c in records[1]["model_calls"]] == ["actor"]
    assert records[-1]["extra"]["stop_reason"] == "budget.calls"
    assert records[-1]["extra"]["budget_spent"]["calls"] == 4


def test_bad_budget_values_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"budget.tokens"):
        TaskBudget.from_config({"tokens": -5})
    with pytest.raises(ConfigError, match=r"budget.calls"):
        TaskBudget.from_config({"calls": 2.5})
    with pytest.raises(ConfigError, match=r"budget.dollars"):
        TaskBudget.from_config({"dollars": 1})
    assert (
        TaskBudget.from_config({"usd": 0.5, "tokens": None}).exceeded(
            {"tokens": 10**9, "usd": 0.5, "calls": 1}
        )
        == "budget.usd"
    )


async def test_retry_temperature_samples_every_retry_and_keeps_trial_one_greedy(
    tmp_path: Path,
) -> None:
    script = Scripted([WRONG_1, WRONG_2, RIGHT])
    _, records = await run(
        tmp_path,
        script,
        "strategy=retry",
        "strategy.max_trials=5",
        "+strategy.retry_temperature=0.8",
    )
    assert [r["trial"] for r in records] == [1, 2, 3]
    assert records[-1]["extra"]["stop_reason"] == "self_test_pass"
    temps = [(c.temperature, c.sample_index) for c in script.configs("actor")]
    assert temps == [(0.0, 0), (0.8, 1), (0.8, 2)]
    # The other roles keep the run's sampling.
    assert all(c.temperature == 0.0 for c in script.configs("self_test"))
    assert [r["extra"].get("actor_temperature") for r in records] == [None, 0.8, 0.8]


# ------------------------------------------------------------------------ self_refine


async def test_self_refine_critiques_refines_and_stops_on_no_issues(tmp_path: Path) -> None:
    script = Scripted([WRONG_1, RIGHT], critic=["CRITIQUE: it always returns True.", "NO ISSUES"])
    _, records = await run(tmp_path, script, "strategy=self_refine", "strategy.max_trials=5")
    assert [r["trial"] for r in records] == [1, 2]
    assert all(r["self_test"]["passed"] is None for r in records)  # no tests ran
    assert not script.prompts("self_test")
    assert [c["role"] for c in records[0]["model_calls"]] == ["actor", "critic"]
    assert records[-1]["extra"]["stop_reason"] == "critic_no_issues"
    assert records[-1]["hidden"]["passed"] is True and records[0]["hidden"]["passed"] is False
    second_actor = script.prompts("actor")[1]
    assert "CRITIQUE: it always returns True." in second_actor and "return True" in second_actor
    assert "return True" in script.prompts("critic")[0]
    assert all(HIDDEN_LINE not in t for _, t, _ in script.seen)


def test_no_issues_is_read_from_the_first_line_only() -> None:
    assert says_no_issues("NO ISSUES")
    assert says_no_issues("\n  No issues.\n")
    assert not says_no_issues("There are NO ISSUES with the loop, but the return is wrong.")
    assert not says_no_issues("The edge case fails.\nNO ISSUES otherwise")


# ------------------------------------------------------------------------------- lats


async def test_lats_values_by_self_tests_and_backtracks_to_the_better_node(tmp_path: Path) -> None:
    # Trial 1 passes half the self-tests (value 0.5) and is expanded (a tie with the bare
    # task goes to the newer node); its child, trial 2, passes none (value 0). With
    # exploration 0.5, UCT: trial 1 = 0.25 + 0.5*sqrt(ln 3 / 2) = 0.62 beats trial 2 =
    # 0 + 0.5*sqrt(ln 3) = 0.52, so trial 3 is shown trial 1's implementation and
    # reflection, not trial 2's: the search backtracks.
    script = Scripted([HALF, ZERO, RIGHT])
    _, records = await run(
        tmp_path, script, "strategy=lats", "strategy.max_trials=6", "strategy.exploration=0.5"
    )
    assert [r["trial"] for r in records] == [1, 2, 3]
    assert [r["extra"]["lats_value"] for r in records[:2]] == [0.5, 0.0]
    assert records[0]["extra"]["lats_next_parent"] == 1
    assert records[1]["extra"]["lats_parent"] == 1
    back = records[1]["extra"]["lats_next_parent"]
    assert back == 1  # backtracking: not the newest node
    third = script.prompts("actor")[2]
    assert "return False" in third and "REFLECTION-1" in third
    assert "return None" not in third and "REFLECTION-2" not in third
    assert records[-1]["extra"]["stop_reason"] == "self_test_pass"
    assert all(r["answer_key_uses"] == {} for r in records)
    assert all(HIDDEN_LINE not in t for _, t, _ in script.seen)
    # expansions sample at the strategy's temperature
    assert [c.temperature for c in script.configs("actor")] == [0.0, 0.8, 0.8]


async def test_lats_oracle_reads_the_hidden_tests_and_is_labelled(tmp_path: Path) -> None:
    # WRONG_2 fails the hidden tests; RIGHT passes them: the oracle stops there.
    script = Scripted([WRONG_2, RIGHT, WRONG_1])
    _, records = await run(tmp_path, script, "strategy=lats_oracle", "strategy.max_trials=6")
    assert [r["trial"] for r in records] == [1, 2]
    assert records[-1]["extra"]["stop_reason"] == "oracle_hidden_pass"
    assert all(r["answer_key_uses"] == {"strategy.hidden_tests": 1} for r in records)
    from reflexion_bench.analysis.answer_key import answer_key_summary

    section = answer_key_summary(records)
    assert section["label"] == "answer-in-loop"
    assert section["by_source"] == {"strategy.hidden_tests": 2}


# -------------------------------------------------------------------------------- ldb


async def test_ldb_traces_the_failing_self_test_in_the_sandbox(tmp_path: Path) -> None:
    script = Scripted([LOOPY, RIGHT])
    _, records = await run(tmp_path, script, "strategy=ldb", "strategy.max_trials=4")
    assert [r["trial"] for r in records] == [1, 2]
    first = records[0]
    assert [c["role"] for c in first["model_calls"]] == ["actor", "self_test", "debugger"]
    trace = first["extra"]["ldb_trace"]
    # Real values from the candidate's run: the doubled first number and the return.
    assert "gap=2.0" in trace and "returns False" in trace
    assert first["extra"]["ldb_test"].startswith("assert has_close_elements(")
    second = script.prompts("actor")[1]
    assert "gap=2.0" in second and "DIAGNOSIS" in second
    assert "Tests failed:" in second  # the self-test results are still shown
    assert all(HIDDEN_LINE not in t for _, t, _ in script.seen)
    assert records[-1]["extra"]["stop_reason"] == "self_test_pass"


def test_format_trace_marks_dropped_steps() -> None:
    text = format_trace(
        {
            "events": [
                {"fn": "f", "line": 2, "locals": {"x": "1"}},
                {"fn": "f", "line": 3, "return": "5"},
            ],
            "dropped": 7,
            "outcome": "assertion failed",
        }
    )
    assert "f line 2: x=1" in text and "f line 3: returns 5" in text
    assert "7 steps not shown" in text and text.endswith("test outcome: assertion failed")


# --------------------------------------------------------------------- retry_escalate


async def test_retry_escalate_raises_temperature_then_escalates(tmp_path: Path) -> None:
    weak = Scripted([WRONG_1])
    strong = Scripted([WRONG_2, RIGHT])
    _, records = await run(
        tmp_path, weak, "strategy=retry_escalate", "strategy.max_trials=8", strong=strong
    )
    # trials 1-3 on the run's model (greedy, 0.4, 0.8), 4 on the strong one greedy, 5 at 0.8
    assert [r["trial"] for r in records] == [1, 2, 3, 4, 5]
    assert [c.temperature for c in weak.configs("actor")] == [0.0, 0.4, 0.8]
    assert [c.temperature for c in strong.configs("actor")] == [0.0, 0.8]
    assert [r["extra"]["escalated"] for r in records] == [False, False, False, True, True]
    assert [r["model_calls"][0]["model"] for r in records][3:] == ["strong-mock", "strong-mock"]
    assert records[-1]["hidden"]["passed"] is True
    # no memory: a retry's prompt is the first attempt's
    assert len(set(weak.prompts("actor"))) == 1


async def test_retry_escalate_without_a_strong_model_keeps_retrying(tmp_path: Path) -> None:
    weak = Scripted([WRONG_1, WRONG_1, WRONG_1, WRONG_1, RIGHT])
    _, records = await run(tmp_path, weak, "strategy=retry_escalate", "strategy.max_trials=8")
    assert len(records) == 5
    assert [c.temperature for c in weak.configs("actor")] == [0.0, 0.4, 0.8, 0.8, 0.8]
    assert not any(r["extra"]["escalated"] for r in records)


def test_new_strategies_reject_bad_settings() -> None:
    from reflexion_bench.strategies import LatsStrategy, RetryEscalateStrategy, SelfRefineStrategy

    with pytest.raises(ConfigError, match=r"strategy.temperatures"):
        RetryEscalateStrategy(temperatures=[])
    with pytest.raises(ConfigError, match=r"strategy.escalate_at"):
        RetryEscalateStrategy(escalate_at=1)
    with pytest.raises(ConfigError, match=r"strategy.scorer"):
        LatsStrategy(oracle=True)
    with pytest.raises(ConfigError, match=r"strategy.self_test"):
        SelfRefineStrategy(self_test=True)
    with pytest.raises(ConfigError, match=r"strategy.retry_temperature"):
        RetryEscalateStrategy(retry_temperature=-1)
