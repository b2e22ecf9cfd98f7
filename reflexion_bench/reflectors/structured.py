"""Structured reflections: the lesson as named fields instead of free text.

Two variants, selected by config (``reflector=structured`` / ``structured_repro``):

- ``why_rule``: what happened; why, split into what was *observed* (in the test
  output) and what is *guessed*; the rule to remember;
- ``repro``: the reproduction conditions, the evidence that showed the failure, the
  cause hypothesis, and the one next change.

They work on every benchmark: on code tasks they show the implementation and the
self-test results (never the hidden tests), elsewhere the attempt's trajectory and
the feedback. After a *successful* task (lifelong memory asks for a post-success
lesson) the same fields are asked about what worked. A reply missing a field keeps
the field, marked "(not stated)", so the format is stable for readers and parsers;
the free-text reflector of the paper stays the default for reproductions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState, note_trial_extra
from reflexion_bench.core.types import Attempt, Feedback, Message


@dataclass(frozen=True)
class Variant:
    #: (label shown in the reflection, header the model is asked to write, what it means)
    fields: tuple[tuple[str, str, str], ...]


VARIANTS: dict[str, Variant] = {
    "why_rule": Variant(
        (
            (
                "What happened",
                "WHAT HAPPENED",
                "one sentence: what the attempt did and how it failed",
            ),
            ("Why (observed)", "OBSERVED", "only facts visible in the test output or feedback"),
            ("Why (guessed)", "GUESSED", "your hypothesis about the cause, marked as a guess"),
            ("Rule", "RULE", "one imperative rule to remember for this and similar tasks"),
        )
    ),
    "repro": Variant(
        (
            ("Reproduction", "REPRODUCTION", "the input or condition that triggers the failure"),
            ("Evidence", "EVIDENCE", "the exact test line or output that showed it"),
            ("Cause hypothesis", "CAUSE", "the most likely cause in the code"),
            ("Next change", "NEXT CHANGE", "the ONE change to make in the next attempt"),
        )
    ),
}

_SUCCESS_HINT = {
    "why_rule": "The attempt PASSED its checks. Describe what worked and the rule that made it work.",
    "repro": (
        "The attempt PASSED its checks. Under REPRODUCTION give the kind of input that "
        "mattered, under EVIDENCE the check that passed, under CAUSE why it worked, and "
        "under NEXT CHANGE what to keep doing on similar tasks."
    ),
}

NOT_STATED = "(not stated)"


def parse_fields(text: str, variant: str = "why_rule") -> dict[str, str]:
    """Read the fields of a reply (``HEADER: value``, any case, markdown tolerated).

    Also parses the formatted output of :meth:`StructuredReflector.format` (labels
    instead of headers), so a stored structured reflection can be read back.
    """
    spec = VARIANTS[variant].fields
    names = {h.lower(): label for label, h, _ in spec} | {
        label.lower(): label for label, _, _ in spec
    }
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    head = re.compile(rf"^[\s>*#\-_]*({alternatives})[\s*_]*:[\s*_]*(.*)$", re.I)
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = head.match(line)
        if m:
            current = names[m.group(1).lower()]
            found.setdefault(current, [])
            if m.group(2).strip():
                found[current].append(m.group(2).strip())
        elif current is not None and line.strip():
            found[current].append(line.strip())
    return {label: " ".join(found.get(label, [])).strip() for label, _, _ in spec}


class StructuredReflector:
    """A reflector that writes named fields.

    Args:
        variant: ``why_rule`` or ``repro``.
        max_tokens: Token budget of a reflection.
        max_chars: Longest candidate/feedback text shown (the prompt must stay small
            for small local models).
        max_field_chars: Longest value kept per field.
    """

    role = "reflector"

    def __init__(
        self,
        variant: str = "why_rule",
        max_tokens: int | None = 256,
        max_chars: int = 2500,
        max_field_chars: int = 400,
    ) -> None:
        if variant not in VARIANTS:
            raise ConfigError("reflector.variant", variant, tuple(VARIANTS))
        self.variant = variant
        self.max_tokens = max_tokens
        self.max_chars = max_chars
        self.max_field_chars = max_field_chars

    def messages(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> list[Message]:
        spec = VARIANTS[self.variant].fields
        task = state.task
        language = _language(state)
        fence = language[1] if language else ""
        what = f"{language[0]} implementation" if language else "attempt"
        body = (attempt.candidate if language else attempt.trajectory or attempt.candidate).strip()
        format_lines = "\n".join(f"{h}: <{desc}>" for _, h, desc in spec)
        system = (
            "You analyse an agent's attempt at a task and write a short structured lesson. "
            "Separate facts you can see from guesses. Never rewrite the whole solution."
        )
        if feedback.passed is None:
            # No verdict exists (no in-loop check ran): the lesson must rest on the
            # reflector's own reading, not on an outcome nobody observed.
            outcome = (
                "Nothing checked this attempt. Judge yourself whether it is right; "
                "explain what to keep or what to fix."
            )
        elif feedback.passed:
            outcome = _SUCCESS_HINT[self.variant]
        else:
            outcome = "The attempt FAILED. Explain the failure."
        user = (
            f"Task:\n```{fence}\n{task.prompt.strip()[: self.max_chars]}\n```\n\n"
            f"The {what}:\n```{fence}\n{_clip(body, self.max_chars)}\n```\n\n"
            f"Feedback:\n{_clip(feedback.text.strip() or '(no feedback text)', self.max_chars)}\n\n"
            f"{outcome}\nAnswer with exactly these lines and nothing else:\n{format_lines}"
        )
        return [Message("system", system), Message("user", user)]

    def format(self, fields: dict[str, str]) -> str:
        """The reflection text: one ``Label: value`` line per field, in order."""
        return "\n".join(
            f"{label}: {_clip(fields.get(label) or NOT_STATED, self.max_field_chars)}"
            for label, _, _ in VARIANTS[self.variant].fields
        )

    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        cfg = state.services.generate_config
        if self.max_tokens is not None:
            cfg = cfg.replace(max_tokens=self.max_tokens)
        out = await state.generate(self.role, self.messages(state, attempt, feedback), cfg)
        fields = parse_fields(out.text, self.variant)
        missing = [k for k, v in fields.items() if not v]
        if len(missing) == len(fields) and out.text.strip():
            # The model ignored the format: keep its words as the most likely field
            # rather than dropping them (the log shows which fields were missing).
            main = "What happened" if self.variant == "why_rule" else "Cause hypothesis"
            fields[main] = " ".join(out.text.split())
        note_trial_extra(
            state, structured_reflection={"variant": self.variant, "missing_fields": missing}
        )
        return self.format(fields)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 4].rstrip() + " ..."


def _language(state: TaskState) -> tuple[str, str] | None:
    """(display name, fence tag) of a code task's language, None for other tasks."""
    lang = state.task.data.get("language")
    if lang is None or not hasattr(lang, "display_name"):
        return None
    return str(lang.display_name), str(getattr(lang, "fence", ""))
