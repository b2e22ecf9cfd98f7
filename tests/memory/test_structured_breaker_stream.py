"""Structured reflectors, the circuit breaker strategy and the stream environment."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Feedback, Task
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.environments.stream import StreamEnvironment
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.reflectors.structured import StructuredReflector, parse_fields
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies.circuit_breaker import CircuitBreakerStrategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer

CODE_TASK_PROMPT = 'def add(a, b):\n    """Return a + b."""\n'
FEEDBACK = "Tested passed:\n\nTests failed:\nassert add(1, 2) == 3 # output: None"


def code_state(model: MockModel) -> TaskState:
    from reflexion_bench.environments.code_python import PythonLanguage

    task = Task(
        id="HumanEval/x",
        prompt=CODE_TASK_PROMPT,
        benchmark="humaneval",
        data={"language": PythonLanguage(), "entry_point": "add", "test": "assert False"},
    )
    return TaskState(task=task, strategy="reflexion", max_trials=2, memory=WindowMemory(1),
                     services=Services(model=model))  # fmt: skip


async def test_why_rule_variant_on_a_code_task() -> None:
    reply = (
        "**WHAT HAPPENED:** add returned nothing.\n"
        "OBSERVED: the test got None instead of 3.\n"
        "GUESSED: the return statement is missing\nafter the addition.\n"
        "RULE: always return the computed value."
    )
    model = MockModel([reply])
    state = code_state(model)
    text = await StructuredReflector("why_rule").reflect(
        state, Attempt(candidate="def add(a, b):\n    a + b"), Feedback(False, FEEDBACK)
    )
    assert text.splitlines() == [
        "What happened: add returned nothing.",
        "Why (observed): the test got None instead of 3.",
        "Why (guessed): the return statement is missing after the addition.",
        "Rule: always return the computed value.",
    ]
    prompt = model.prompts[0]
    assert "```python" in prompt and "a + b" in prompt and "# output: None" in prompt
    assert "assert False" not in prompt  # hidden tests never reach the reflector
    assert state.pending_calls[0].role == "reflector"
    # The stored text reads back into the same fields.
    assert parse_fields(text)["Rule"] == "always return the computed value."


async def test_repro_variant_marks_missing_fields_and_logs_them() -> None:
    model = MockModel(["REPRODUCTION: add(1, 2)\nNEXT CHANGE: add `return a + b`"])
    state = code_state(model)
    text = await StructuredReflector("repro").reflect(
        state, Attempt("x"), Feedback(False, FEEDBACK)
    )
    fields = parse_fields(text, "repro")
    assert fields["Reproduction"] == "add(1, 2)"
    assert fields["Evidence"] == "(not stated)" and fields["Cause hypothesis"] == "(not stated)"
    assert fields["Next change"] == "add `return a + b`"
    assert state.scratch["trial_extra"]["structured_reflection"]["missing_fields"] == [
        "Evidence",
        "Cause hypothesis",
    ]


async def test_free_text_reply_is_kept_not_dropped() -> None:
    model = MockModel(["You forgot to return the sum."])
    text = await StructuredReflector("repro").reflect(
        code_state(model), Attempt("x"), Feedback(False, "")
    )
    assert "Cause hypothesis: You forgot to return the sum." in text


async def test_success_lesson_asks_what_worked() -> None:
    model = MockModel(["WHAT HAPPENED: passed\nOBSERVED: all tests\nGUESSED: -\nRULE: keep it"])
    await StructuredReflector().reflect(code_state(model), Attempt("x"), Feedback(True, "ok"))
    assert "PASSED" in model.prompts[0]


def test_bad_variant_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"reflector\.variant"):
        StructuredReflector("essay")


# --------------------------------------------------------------------------- circuit breaker


def _run(tmp: Path, evaluator: Any, max_trials: int = 5) -> list[dict[str, Any]]:
    import asyncio

    ctx = RunContext(
        tasks=ToyEnvironment(words=["alpha"]).load_tasks(),
        roles=Roles(
            ToyActor(),
            evaluator,
            ToyReflector(),
            ToyScorer(),
            CircuitBreakerStrategy(max_trials=max_trials),
        ),
        services=Services(model=MockModel(responses=["wrong", "same fix again"], cycle=True)),
        memory_factory=WindowMemory,
        memory_window=3,
        benchmark="toy",
        run_dir=tmp,
        show_progress=False,
    )
    asyncio.run(execute(ctx))
    return load_run_records(tmp)


def test_same_cause_twice_asks_for_evidence_and_thrice_stops(tmp_path: Path) -> None:
    recs = _run(tmp_path, ToyEvaluator())
    assert [r["trial"] for r in recs] == [1, 2, 3]  # stopped before max_trials=5
    assert "new_evidence_required" not in recs[1]["extra"]["memory_kinds"]
    assert "new_evidence_required" in recs[2]["extra"]["memory_kinds"]
    assert any("gather new evidence" in m for m in recs[2]["memory_shown"])
    # Stopped on purpose, not errored: it does not count toward fail_on_error.
    assert recs[2]["final"] and recs[2]["error"] is None
    assert recs[2]["extra"]["stopped"].startswith("CircuitBreakerOpen")
    assert "human review" in recs[2]["extra"]["stopped"]


class AlternatingEvaluator:
    """Fails with a different cause every trial."""

    def __init__(self) -> None:
        self._causes = itertools.cycle(["TypeError: bad operand", "IndexError: out of range"])

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        return Feedback(False, next(self._causes))


def test_different_causes_never_trip(tmp_path: Path) -> None:
    recs = _run(tmp_path, AlternatingEvaluator(), max_trials=4)
    assert [r["trial"] for r in recs] == [1, 2, 3, 4]
    assert all(r["error"] is None for r in recs)
    assert not any("new_evidence_required" in r["extra"]["memory_kinds"] for r in recs)


def test_breaker_thresholds_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"strategy\.stop_after"):
        CircuitBreakerStrategy(probe_after=3, stop_after=3)


# --------------------------------------------------------------------------- stream


def _envs() -> dict[str, ToyEnvironment]:
    a = ToyEnvironment(words=[f"a{i}" for i in range(6)])
    b = ToyEnvironment(words=[f"b{i}" for i in range(4)])
    b_tasks = b.load_tasks()
    for t in b_tasks:  # distinct ids and benchmark, like HumanEval vs MBPP
        t.id, t.benchmark = t.id.replace("toy", "other"), "other"
    b.load_tasks = lambda: b_tasks  # type: ignore[method-assign]
    return {"toy": a, "other": b}


def test_stream_order_is_seeded_and_fixed() -> None:
    ids = [t.id for t in StreamEnvironment(_envs(), seed=3).load_tasks()]
    assert ids == [t.id for t in StreamEnvironment(_envs(), seed=3).load_tasks()]
    assert ids != [t.id for t in StreamEnvironment(_envs(), seed=4).load_tasks()]
    assert sorted(ids) == sorted([f"toy/{i}" for i in range(6)] + [f"other/{i}" for i in range(4)])


def test_stream_interleave_concat_and_limits() -> None:
    inter = StreamEnvironment(_envs(), order="interleave", per_env_limit=2).load_tasks()
    assert [t.id for t in inter] == ["toy/0", "other/0", "toy/1", "other/1"]
    assert {t.benchmark for t in inter} == {"toy", "other"}
    concat = StreamEnvironment(_envs(), order="concat", limit=7).load_tasks()
    assert [t.id for t in concat][5:] == ["toy/5", "other/0"]


def test_stream_rejects_duplicate_ids() -> None:
    with pytest.raises(DatasetError, match="unique ids"):
        StreamEnvironment({"x": ToyEnvironment(), "y": ToyEnvironment()}).load_tasks()
