"""Exact match and F1 against a gold answer (HotpotQA / SQuAD answer normalisation).

``normalize_answer`` is the standard normalisation of the SQuAD and HotpotQA
evaluation scripts, so numbers are comparable with published ones: lowercase, drop
ASCII punctuation, drop the articles a/an/the, collapse whitespace. F1 is the token
overlap of the normalised strings, with the HotpotQA rule that yes/no/noanswer only
ever match themselves.

:class:`ExactMatchScorer` is the final judge: ``passed`` is exact match (the paper's
metric), ``value`` is F1. An optional LLM judge (role ``judge``) of answer
equivalence is recorded beside them in ``Score.extra["judge"]`` for analysis; it never
changes ``passed``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Message, Score

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)
_SPECIAL = ("yes", "no", "noanswer")


def normalize_answer(text: str) -> str:
    """Lowercase, strip ASCII punctuation and articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> bool:
    """Whether the normalised strings are equal."""
    return normalize_answer(prediction) == normalize_answer(gold)


@dataclass(frozen=True)
class F1:
    f1: float
    precision: float
    recall: float


def f1_score(prediction: str, gold: str) -> F1:
    """Token-overlap F1 of the normalised answers (HotpotQA's definition)."""
    pred = normalize_answer(prediction)
    ref = normalize_answer(gold)
    zero = F1(0.0, 0.0, 0.0)
    # A yes/no answer is right or wrong as a whole: "no" must not score on "no way".
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return zero
    pred_toks, ref_toks = pred.split(), ref.split()
    same = sum((Counter(pred_toks) & Counter(ref_toks)).values())
    if same == 0:
        return zero
    precision = same / len(pred_toks)
    recall = same / len(ref_toks)
    return F1(2 * precision * recall / (precision + recall), precision, recall)


def answer_metrics(prediction: str, gold: str) -> dict[str, Any]:
    """EM, F1, precision, recall and the normalised strings, for logs."""
    f = f1_score(prediction, gold)
    return {
        "em": exact_match(prediction, gold),
        "f1": f.f1,
        "precision": f.precision,
        "recall": f.recall,
        "normalized_prediction": normalize_answer(prediction),
    }


def gold_answer(data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        raise KeyError(
            f"task data has no gold answer under `{key}` (set `answer_key` of the "
            f"evaluator/scorer; the task has: {', '.join(sorted(data))})"
        )
    return str(data[key])


class ExactMatchScorer:
    """The final scorer: exact match (``passed``), F1 (``value``), optional LLM judge.

    Args:
        answer_key: Key of the gold answer in ``Task.data``.
        judge: Ask the ``judge`` role whether a non-matching, non-empty answer means
            the same as the gold one; logged in ``extra["judge"]``, never in ``passed``.
        prompts: External prompt pack layered over the built-in ``hotpotqa`` pack
            (the judge uses its ``judge_prompt`` template).
        judge_max_tokens: Completion budget of a judge call.
    """

    def __init__(
        self,
        answer_key: str = "answer",
        judge: bool = False,
        prompts: str | None = None,
        judge_max_tokens: int = 8,
    ) -> None:
        self.answer_key = answer_key
        self.judge = judge
        self.judge_max_tokens = judge_max_tokens
        self._pack = None
        if judge:
            from reflexion_bench.prompts import load_prompts

            self._pack = load_prompts("hotpotqa", prompts, required=["judge_prompt"])

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        gold = gold_answer(state.task.data, self.answer_key)
        metrics = answer_metrics(attempt.candidate, gold)
        extra: dict[str, Any] = dict(metrics)
        for key in ("type", "level"):
            if state.task.data.get(key) is not None:
                extra[key] = state.task.data[key]
        if self.judge:
            extra["judge"] = await self._judge(state, attempt.candidate, gold, metrics["em"])
        passed = bool(metrics["em"])
        return Score(
            passed=passed,
            status="pass" if passed else "fail",
            value=float(metrics["f1"]),
            detail="" if passed else f"no exact match (F1 {metrics['f1']:.2f})",
            extra=extra,
        )

    async def _judge(
        self, state: TaskState, prediction: str, gold: str, em: bool
    ) -> dict[str, Any]:
        if em:
            return {"equivalent": True, "by": "exact_match"}
        if not prediction.strip():
            return {"equivalent": False, "by": "empty_answer"}
        assert self._pack is not None
        text = self._pack.render(
            "judge_prompt", question=state.task.prompt, gold=gold, prediction=prediction
        )
        cfg = state.services.generate_config.replace(
            max_tokens=self.judge_max_tokens, temperature=0.0
        )
        out = await state.generate("judge", [Message("user", text)], cfg)
        return {
            "equivalent": parse_yes_no(out.text),
            "by": "judge",
            "reply": out.text.strip()[:200],
        }


def parse_yes_no(text: str) -> bool | None:
    """The first yes/no word of a reply, or None when there is none."""
    m = re.search(r"\b(yes|no)\b", text.lower())
    return None if m is None else m.group(1) == "yes"


__all__ = [
    "F1",
    "ExactMatchScorer",
    "answer_metrics",
    "exact_match",
    "f1_score",
    "normalize_answer",
    "parse_yes_no",
]
