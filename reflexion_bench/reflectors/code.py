"""The code reflector: a short verbal lesson from a failed implementation and its
self-test results (role ``reflector``). It never sees the hidden tests."""

from __future__ import annotations

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message
from reflexion_bench.environments.code_common import (
    CodePrompts,
    base_values,
    code_language,
    role_config,
)

TEMPLATES = ("reflector_system", "reflector_user")


class CodeReflector:
    """Writes the reflection that the next trial's actor sees through memory.

    Args:
        pack: The prompt pack (``code/{language}``: the project's own).
        prompts: An external pack layered over ``pack`` (directory or JSON/YAML).
        max_tokens: Token budget of a reflection (None: the run's default).
        max_chars: Longest reflection kept (a model that rambles must not flood the
            next prompt).
    """

    role = "reflector"

    def __init__(
        self,
        pack: str = "code/{language}",
        prompts: str | None = None,
        max_tokens: int | None = 256,
        max_chars: int = 2000,
    ) -> None:
        self.prompts = CodePrompts(pack, prompts, TEMPLATES, "reflector.prompts")
        self.max_tokens = max_tokens
        self.max_chars = max_chars

    def messages(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> list[Message]:
        lang = code_language(state.task)
        values = {
            **base_values(state.task),
            "implementation": attempt.candidate.strip("\n"),
            "feedback": feedback.text.strip() or "(no test results)",
        }
        return [
            Message("system", self.prompts.render(lang, "reflector_system", **values)),
            Message("user", self.prompts.render(lang, "reflector_user", **values)),
        ]

    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        out = await state.generate(
            self.role, self.messages(state, attempt, feedback), role_config(state, self.max_tokens)
        )
        text = out.text.strip()
        if len(text) > self.max_chars:
            text = text[: self.max_chars].rstrip() + " ..."
        return text or "(the reflector returned nothing)"
