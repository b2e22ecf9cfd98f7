"""The hidden-test evaluators (``oracle``, ``oracle_verdict``, ``noisy_oracle``) on a
stand-in scorer: what the reflector is told, what is counted as an answer-key use, how
the noise is drawn, and the config errors. The real scorer's path is exercised by the
runs in ``test_runs.py``."""

from __future__ import annotations

import random
import statistics

import pytest

from reflexion_bench.core.answer_key import (
    EVALUATOR_HIDDEN_TESTS,
    EVALUATOR_HIDDEN_VERDICT,
    EVALUATOR_NOISY_HIDDEN_VERDICT,
    take_answer_key_uses,
)
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState, TrialRecord
from reflexion_bench.core.types import Attempt, Score, Task
from reflexion_bench.evaluators.oracle import (
    FAIL_TEXT,
    PASS_TEXT,
    HiddenTestsEvaluator,
    NoisyOracleEvaluator,
    OracleEvaluator,
    noise_draw,
)
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel


class StubScorer:
    """Passes exactly the candidates in ``passing``; the failure detail names the test."""

    def __init__(self, passing: set[str] | None = None) -> None:
        self.passing = passing or set()
        self.calls = 0

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        self.calls += 1
        if attempt.candidate in self.passing:
            return Score(passed=True, status="pass", value=1.0)
        return Score(
            passed=False, status="fail", value=0.0, detail="AssertionError: assert f(2) == 4"
        )


def state_for(task_id: str = "T/0", seed: int = 0, trial: int = 1) -> TaskState:
    st = TaskState(
        task=Task(id=task_id, prompt="def f(x): ...", benchmark="toy"),
        strategy="reflexion",
        max_trials=10,
        memory=WindowMemory(1),
        services=Services(model=MockModel(responses=[]), seed=seed),
    )
    st.trials = [TrialRecord(trial=k) for k in range(1, trial)]
    return st


async def test_oracle_reports_the_first_failure_and_counts_the_read() -> None:
    scorer = StubScorer(passing={"good"})
    ev = OracleEvaluator(scorer=scorer)
    st = state_for()
    bad = await ev.evaluate(st, Attempt(candidate="bad"))
    assert bad.passed is False
    assert bad.text.startswith(FAIL_TEXT) and "assert f(2) == 4" in bad.text
    good = await ev.evaluate(st, Attempt(candidate="good"))
    assert good.passed is True and good.text == PASS_TEXT
    assert take_answer_key_uses(st) == {EVALUATOR_HIDDEN_TESTS: 2}
    assert scorer.calls == 2


async def test_oracle_verdict_says_pass_or_fail_only() -> None:
    ev = HiddenTestsEvaluator(scorer=StubScorer())
    st = state_for()
    fb = await ev.evaluate(st, Attempt(candidate="bad"))
    assert (fb.passed, fb.text) == (False, FAIL_TEXT)
    assert "assert" not in fb.text
    assert take_answer_key_uses(st) == {EVALUATOR_HIDDEN_VERDICT: 1}


async def test_noisy_oracle_rates_match_the_config_over_many_trials() -> None:
    n = 2000
    fp = NoisyOracleEvaluator(scorer=StubScorer(), fp_rate=0.3)
    fn = NoisyOracleEvaluator(scorer=StubScorer(passing={"good"}), fn_rate=0.2)
    reported_pass = reported_fail = 0
    for i in range(n):
        st = state_for(task_id=f"T/{i % 200}", trial=1 + i // 200)
        reported_pass += bool((await fp.evaluate(st, Attempt(candidate="bad"))).passed)
        reported_fail += not (await fn.evaluate(st, Attempt(candidate="good"))).passed
    for rate, count in ((0.3, reported_pass), (0.2, reported_fail)):
        se = (rate * (1 - rate) / n) ** 0.5
        assert abs(count / n - rate) < 3.3 * se, (rate, count / n)


async def test_noisy_oracle_is_reproducible_and_ignores_global_random_state() -> None:
    ev = NoisyOracleEvaluator(scorer=StubScorer(), fp_rate=0.5)

    async def verdicts(seed: int) -> list[bool | None]:
        out = []
        for i in range(50):
            random.seed(i)  # other code touching the global RNG changes nothing
            st = state_for(task_id=f"T/{i}", seed=seed, trial=1 + i % 3)
            out.append((await ev.evaluate(st, Attempt(candidate="bad"))).passed)
        return out

    first = await verdicts(0)
    assert first == await verdicts(0)
    assert first != await verdicts(1)  # the run's seed decides the draws
    # The same text for a true and a flipped verdict; the flip is logged, not shown.
    st = state_for()
    fb = await ev.evaluate(st, Attempt(candidate="bad"))
    assert fb.text in (PASS_TEXT, FAIL_TEXT)
    assert fb.details["hidden_passed"] is False
    assert fb.details["flipped"] is bool(fb.passed)
    assert take_answer_key_uses(st) == {EVALUATOR_NOISY_HIDDEN_VERDICT: 1}


def test_noise_draws_are_uniform_and_keyed_by_seed_task_and_trial() -> None:
    draws = [noise_draw(0, f"T/{i}", k) for i in range(500) for k in (1, 2)]
    assert all(0 <= u < 1 for u in draws)
    assert abs(statistics.mean(draws) - 0.5) < 0.03
    assert noise_draw(0, "T/1", 1) == noise_draw(0, "T/1", 1)
    assert len({noise_draw(0, "T/1", 1), noise_draw(1, "T/1", 1), noise_draw(0, "T/1", 2)}) == 3


@pytest.mark.parametrize("key", ["fp_rate", "fn_rate"])
@pytest.mark.parametrize("value", [-0.1, 1.5, "0.3", True])
def test_a_rate_outside_0_1_names_its_key(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=rf"`evaluator\.{key}`"):
        NoisyOracleEvaluator(scorer=StubScorer(), **{key: value})  # type: ignore[arg-type]


def test_an_oracle_without_the_scorer_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"`evaluator\.scorer`"):
        OracleEvaluator(scorer=None)
