"""EM / F1 normalisation, the gold exact-match evaluator, and the scorer's optional judge."""

from __future__ import annotations

import pytest

from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Task
from reflexion_bench.evaluators.exact_match import GoldExactMatchEvaluator
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.scorers.exact_match import (
    ExactMatchScorer,
    exact_match,
    f1_score,
    normalize_answer,
    parse_yes_no,
)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Beatles", "beatles"),  # leading article
        ("a  failed   coup attempt", "failed coup attempt"),  # article + whitespace runs
        ("An Apple", "apple"),
        ("Theatre", "theatre"),  # "the" inside a word stays
        ('Jonny" Craig', "jonny craig"),  # punctuation inside
        ("Bath, Maine.", "bath maine"),
        ("  2 March 1972 ", "2 march 1972"),
        ("U.S.A.", "usa"),
        ("Rock-n-roll", "rocknroll"),  # hyphens are ASCII punctuation: removed, not split
        ("Gesellschaft mit beschränkter Haftung", "gesellschaft mit beschränkter haftung"),
        ("the Cold War (1947–91)", "cold war 1947–91"),  # en dash is not ASCII punctuation
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, normalized: str) -> None:
    assert normalize_answer(raw) == normalized


def test_exact_match_uses_normalisation() -> None:
    assert exact_match("the Bears", "The Bears")
    assert exact_match("Jonny Craig", 'Jonny" Craig')
    assert exact_match("NO", "no")
    assert not exact_match("Bath", "Bath, Maine")
    assert not exact_match("", "yes")


def test_f1_partial_overlap() -> None:
    f = f1_score("Bath", "Bath, Maine")
    assert f.precision == 1.0
    assert f.recall == 0.5
    assert f.f1 == pytest.approx(2 / 3)
    f = f1_score("the city of Bath in England", "Bath, Maine")
    assert f.precision == pytest.approx(1 / 5)  # city, of, bath, in, england
    assert f.recall == pytest.approx(1 / 2)


def test_f1_counts_repeated_tokens_once_per_match() -> None:
    f = f1_score("new new york", "new york")
    assert f.precision == pytest.approx(2 / 3)
    assert f.recall == 1.0


def test_f1_yes_no_all_or_nothing() -> None:
    assert f1_score("no way", "no").f1 == 0.0
    assert f1_score("yes", "yes indeed").f1 == 0.0
    assert f1_score("No.", "no").f1 == 1.0
    assert f1_score("", "Paris").f1 == 0.0


def test_parse_yes_no() -> None:
    assert parse_yes_no("Yes.") is True
    assert parse_yes_no("no, they differ") is False
    assert parse_yes_no("I cannot tell") is None
    assert parse_yes_no("Yesterday") is None  # whole words only


def _state(model: MockModel | None = None, **data: object) -> TaskState:
    task = Task(
        id="q1",
        prompt="Which city?",
        benchmark="hotpotqa",
        data={"answer": "Bath, Maine", "type": "bridge", "level": "hard", **data},
    )
    return TaskState(
        task=task,
        strategy="reflexion",
        max_trials=3,
        memory=WindowMemory(3),
        services=Services(model=model or MockModel(responses=[])),
    )


async def test_evaluator_feedback_never_reveals_gold() -> None:
    ev = GoldExactMatchEvaluator()
    state = _state()
    ok = await ev.evaluate(state, Attempt(candidate="bath maine"))
    assert ok.passed is True
    wrong = await ev.evaluate(state, Attempt(candidate="Portland"))
    assert wrong.passed is False
    assert "Finish[Portland] is incorrect" in wrong.text
    assert "Bath" not in wrong.text
    assert wrong.details == {"em": False, "f1": 0.0}


async def test_evaluator_explains_a_missing_answer() -> None:
    ev = GoldExactMatchEvaluator()
    fb = await ev.evaluate(_state(), Attempt(candidate="", extra={"halted": "max_steps"}))
    assert fb.passed is False
    assert "step limit" in fb.text
    fb = await ev.evaluate(_state(), Attempt(candidate="", extra={"halted": "prompt_length"}))
    assert "length limit" in fb.text


async def test_evaluator_names_missing_gold_key() -> None:
    with pytest.raises(KeyError, match="answer_key"):
        await GoldExactMatchEvaluator(answer_key="gold").evaluate(_state(), Attempt(candidate="x"))


async def test_scorer_em_f1_and_tags_without_judge() -> None:
    model = MockModel(responses=[])
    score = await ExactMatchScorer().score(_state(model), Attempt(candidate="Bath"))
    assert score.passed is False
    assert score.value == pytest.approx(2 / 3)
    assert score.extra["em"] is False
    assert score.extra["type"] == "bridge"
    assert score.extra["level"] == "hard"
    assert "judge" not in score.extra
    assert model.calls == []


async def test_judge_is_logged_apart_and_never_changes_passed() -> None:
    model = MockModel(responses=["Yes"])
    state = _state(model)
    score = await ExactMatchScorer(judge=True).score(state, Attempt(candidate="Bath in Maine"))
    assert score.passed is False  # EM decides, whatever the judge says
    assert score.extra["judge"]["equivalent"] is True
    assert score.extra["judge"]["by"] == "judge"
    # The judge saw the question, the reference and the proposal, through role "judge".
    assert "Reference answer: Bath, Maine" in model.prompts[0]
    assert "Proposed answer: Bath in Maine" in model.prompts[0]
    assert [c.role for c in state.pending_calls] == ["judge"]


async def test_judge_skipped_when_em_decides_or_answer_empty() -> None:
    model = MockModel(responses=[])
    scorer = ExactMatchScorer(judge=True)
    s = await scorer.score(_state(model), Attempt(candidate="Bath, Maine"))
    assert s.passed and s.extra["judge"] == {"equivalent": True, "by": "exact_match"}
    s = await scorer.score(_state(model), Attempt(candidate=""))
    assert s.extra["judge"] == {"equivalent": False, "by": "empty_answer"}
    assert model.calls == []
