"""The code actor: writes a program for a code task, the Reflexion way on retries.

What a retry shows is decided by the memory (the strategy fills it, the actor only
renders it): with nothing in memory a trial is a fresh first attempt (the ``retry``
control / the paper's base agent). When memory holds something from an earlier
trial, the prompt also shows that trial's implementation and its self-test results,
as the paper's Reflexion programming agent does (previous implementation, unit-test
feedback, reflection), unless a memory entry already carries them (``raw_log``
holds both; ``feedback`` holds the test results). The memory entries themselves are
rendered with :func:`~reflexion_bench.memory.format_memory`, the one rendering all
actors share, so the memory controls differ only in content.
"""

from __future__ import annotations

from reflexion_bench.core.state import TaskState, TrialRecord
from reflexion_bench.core.types import Attempt, Message
from reflexion_bench.environments.code_common import (
    CodeLanguage,
    CodePrompts,
    base_values,
    code_language,
    entry_point_of,
    role_config,
)
from reflexion_bench.memory.base import MemoryEntry, format_memory

TEMPLATES = (
    "actor_system",
    "actor_task",
    "actor_previous",
    "actor_feedback",
    "actor_memory",
    "actor_first",
    "actor_retry",
)


class CodeActor:
    """Writes one implementation per trial.

    Args:
        pack: The prompt pack (``code/{language}``: the project's own, under
            ``reflexion_bench/prompts/``); see its README for the templates.
        prompts: An external pack layered over ``pack`` (directory or JSON/YAML).
        max_tokens: Token budget of a generation (None: the run's ``generate.max_tokens``).
        show_previous: Show the previous trial's implementation and self-test results
            on retries when memory holds something (the paper's Reflexion prompt).
    """

    role = "actor"

    def __init__(
        self,
        pack: str = "code/{language}",
        prompts: str | None = None,
        max_tokens: int | None = None,
        show_previous: bool = True,
    ) -> None:
        self.prompts = CodePrompts(pack, prompts, TEMPLATES, "actor.prompts")
        self.max_tokens = max_tokens
        self.show_previous = show_previous

    def messages(self, state: TaskState) -> list[Message]:
        """The prompt of this trial (separate from :meth:`act` so tests can read it)."""
        lang = code_language(state.task)
        entries = state.memory.render()
        values = base_values(state.task)
        parts = [self.prompts.render(lang, "actor_task", **values)]
        previous = self._previous_trial(state, entries)
        if previous is not None:
            kinds = {e.kind for e in entries if e.trial == previous.trial}
            if "raw_log" not in kinds:  # a raw log already holds the code and its feedback
                parts.append(
                    self.prompts.render(
                        lang,
                        "actor_previous",
                        **values,
                        trial=previous.trial,
                        implementation=previous.candidate.strip("\n"),
                    )
                )
                feedback = previous.self_test.text.strip() if previous.self_test else ""
                if feedback and "feedback" not in kinds:
                    parts.append(
                        self.prompts.render(lang, "actor_feedback", **values, feedback=feedback)
                    )
        if entries:
            parts.append(
                self.prompts.render(lang, "actor_memory", **values, memory=format_memory(entries))
            )
        closing = "actor_retry" if previous is not None else "actor_first"
        parts.append(self.prompts.render(lang, closing, **values))
        return [
            Message("system", self.prompts.render(lang, "actor_system", **values)),
            Message("user", "\n\n".join(p for p in parts if p)),
        ]

    def _previous_trial(self, state: TaskState, entries: list[MemoryEntry]) -> TrialRecord | None:
        if not self.show_previous or not entries:
            return None
        newest = max((e.trial for e in entries), default=0)
        for rec in reversed(state.trials):
            if rec.trial == newest and rec.candidate:
                return rec
        return None

    async def act(self, state: TaskState) -> Attempt:
        lang: CodeLanguage = code_language(state.task)
        messages = self.messages(state)
        out = await state.generate(self.role, messages, role_config(state, self.max_tokens))
        extracted = lang.extract_code(out.text, state.task.prompt, entry_point_of(state.task))
        return Attempt(
            candidate=extracted.program,
            trajectory=out.text,
            prompt=messages,
            extra={"extraction": extracted.kind, "extraction_notes": extracted.notes},
        )
