"""LLM-judged reflection quality: a four-criterion rubric, each 0-1 in quarter steps.

The judge is a model role like any other (``judge``): it is called through
``state.generate("judge", ...)``, so its calls are accounted, and its model is set
with ``role_models.judge=...``. An unparseable verdict is recorded as such (no
scores invented).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Message

CRITERIA = ("specificity", "actionability", "transferability", "accuracy")

_SYSTEM = (
    "You grade lessons that a programming agent wrote for itself after attempting a task. "
    "Reply with one JSON object and nothing else."
)
_USER = """Grade the lesson below on four criteria, each a number from 0 to 1 in steps of 0.25:
- specificity: names the concrete cause (inputs, values, lines), not generic advice;
- actionability: says exactly what to do differently next time;
- transferability: would help on a different but similar task;
- accuracy: agrees with the evidence (the feedback), claims nothing it does not support.

Task (start):
{task}

Feedback the agent saw:
{feedback}

Lesson:
{lesson}

Reply as {{"specificity": x, "actionability": x, "transferability": x, "accuracy": x}}."""

_PAIR = re.compile(r"\"?(specificity|actionability|transferability|accuracy)\"?\s*[:=]\s*([0-9.]+)")


def snap(value: float) -> float:
    """Clamp to [0, 1] and round to the nearest quarter."""
    return round(min(1.0, max(0.0, value)) * 4) / 4


def parse_rubric(text: str) -> dict[str, float] | None:
    """The four scores from a judge reply (JSON, or ``name: value`` pairs); None if absent."""
    found: dict[str, float] = {}
    m = re.search(r"\{.*\}", text, re.S)
    if m:
        try:
            obj = json.loads(m.group(0))
            if isinstance(obj, dict):
                for c in CRITERIA:
                    if isinstance(obj.get(c), int | float):
                        found[c] = snap(float(obj[c]))
        except json.JSONDecodeError:
            pass
    for name, value in _PAIR.findall(text):
        if name not in found:
            try:
                found[name] = snap(float(value))
            except ValueError:
                continue
    if set(found) != set(CRITERIA):
        return None
    return {c: found[c] for c in CRITERIA}


@dataclass
class ReflectionJudge:
    """Args:
    max_tokens: Token budget of a verdict.
    task_chars: How much of the task prompt the judge sees.
    """

    max_tokens: int = 96
    task_chars: int = 1200

    async def judge(self, state: TaskState, lesson: str, feedback: str = "") -> dict[str, Any]:
        """Grade one lesson; returns ``{"scores": {...} | None, "mean": ..., "raw": ...}``."""
        msgs = [
            Message("system", _SYSTEM),
            Message(
                "user",
                _USER.format(
                    task=state.task.prompt[: self.task_chars],
                    feedback=(feedback or "(none)")[:1500],
                    lesson=lesson,
                ),
            ),
        ]
        cfg = state.services.generate_config.replace(max_tokens=self.max_tokens, temperature=0.0)
        out = await state.generate("judge", msgs, cfg)
        scores = parse_rubric(out.text)
        mean = sum(scores.values()) / len(scores) if scores else None
        return {"scores": scores, "mean": mean, "raw": out.text[:400]}
