"""``self_refine``: the same model reviews its own code, then refines it; no tests.

Self-Refine (Madaan et al., 2023) for code: after each attempt the model is asked,
as a critic (role ``critic``, prompts ``critic_system``/``critic_user`` of the code
pack), whether the implementation meets the docstring. The critique goes into memory
(kind ``critique``) and the next trial's actor sees the previous implementation and
the critique. When the critic answers ``NO ISSUES`` the task stops
(``extra.stop_reason = "critic_no_issues"``) and that implementation is submitted; at
the budget or K the last one is. No self-generated tests run (``self_test: false``), so
no execution feedback reaches the loop: the only signal is the model's own reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reflexion_bench.core.errors import ConfigError, StrategyStopped
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message
from reflexion_bench.environments.code_common import (
    CodePrompts,
    base_values,
    code_language,
    role_config,
)
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.strategies.base import Strategy, note_trial_extra

CRITIC_TEMPLATES = ("critic_system", "critic_user")
#: The critic's "nothing to fix" answer (case-insensitive, alone on its first line).
NO_ISSUES = re.compile(r"^\W*no issues\W*$", re.IGNORECASE)


def says_no_issues(text: str) -> bool:
    """True when the critique's first non-empty line is just ``NO ISSUES``."""
    for line in text.splitlines():
        if line.strip():
            return bool(NO_ISSUES.match(line.strip()))
    return False


@dataclass
class SelfRefineStrategy(Strategy):
    """Args:
    critic_max_tokens: Token budget of a critique.
    prompts: An external prompt pack layered over the project's code pack.
    """

    name: str = "self_refine"
    self_test: bool = False
    memory_content: str = "feedback"
    stop_on_pass: bool = False
    critic_max_tokens: int = 256
    prompts: str | None = None
    _pack: CodePrompts | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.self_test:
            raise ConfigError(
                "strategy.self_test", self.self_test, "false (self_refine runs no tests)"
            )

    def critic_messages(self, state: TaskState, attempt: Attempt) -> list[Message]:
        if self._pack is None:
            self._pack = CodePrompts(
                "code/{language}", self.prompts, CRITIC_TEMPLATES, "strategy.prompts"
            )
        lang = code_language(state.task)
        values = {**base_values(state.task), "implementation": attempt.candidate.strip("\n")}
        return [
            Message("system", self._pack.render(lang, "critic_system", **values)),
            Message("user", self._pack.render(lang, "critic_user", **values)),
        ]

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        out = await state.generate(
            "critic",
            self.critic_messages(state, attempt),
            role_config(state, self.critic_max_tokens),
        )
        critique = out.text.strip()
        note_trial_extra(state, critique=critique)
        if says_no_issues(critique):
            raise StrategyStopped(
                "critic_no_issues", "the critic found no issue: this implementation is submitted"
            )
        return critique, [MemoryEntry("critique", critique or "(no critique)", state.trial_index)]
