"""ALFWorld's reflector: a short diagnosis and a concrete plan after a failed episode."""

from __future__ import annotations

from reflexion_bench.core.answer_key import REFLECTOR_ENV_SUCCESS, note_answer_key_use
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message
from reflexion_bench.prompts import PromptPack, load_prompts


class AlfWorldReflector:
    """Writes the reflection the next trial's actor sees (role ``reflector``).

    Args:
        prompts: An external pack layered over the project's own ``alfworld`` pack.
        examples: The template holding the worked reflection examples (for the paper's
            file, ``alfworld_reflexion_few_shot_examples``); empty for none.
        max_tokens: Length budget of one reflection.
        max_trajectory_chars: Keep only the end of very long attempts (the start, with
            the task, is always kept).
    """

    def __init__(
        self,
        prompts: str | None = None,
        examples: str = "reflection_examples",
        max_tokens: int = 256,
        max_trajectory_chars: int = 12000,
    ) -> None:
        if max_trajectory_chars < 500:
            raise ConfigError("reflector.max_trajectory_chars", max_trajectory_chars, ">= 500")
        required = ["reflect_prompt", *([examples] if examples else [])]
        self.pack: PromptPack = load_prompts("alfworld", prompts, required=required)
        self.examples = examples
        self.max_tokens = int(max_tokens)
        self.max_trajectory_chars = int(max_trajectory_chars)

    def messages(self, attempt: Attempt, feedback: Feedback) -> list[Message]:
        trajectory = attempt.trajectory or attempt.candidate
        if len(trajectory) > self.max_trajectory_chars:
            head_end = trajectory.find("\n>")
            head = trajectory[: head_end if head_end > 0 else 600]
            tail = trajectory[-(self.max_trajectory_chars - len(head)) :]
            tail = tail[tail.find("\n>") + 1 :] if "\n>" in tail else tail
            trajectory = f"{head}\n(... earlier steps not shown ...)\n{tail}"
        examples = self.pack[self.examples].strip() if self.examples else ""
        text = self.pack.render(
            "reflect_prompt",
            examples=examples,
            trajectory=trajectory.strip(),
            outcome=feedback.text or attempt.candidate,
        )
        return [Message("user", text)]

    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        if not feedback.text:
            # No evaluator feedback (e.g. strategy=reflexion_no_tests): the outcome shown
            # is the actor's candidate, "won ..."/"not won ...", i.e. the game's own
            # success signal: the answer key inside the loop.
            note_answer_key_use(state, REFLECTOR_ENV_SUCCESS)
        cfg = state.services.generate_config.replace(max_tokens=self.max_tokens, stop=())
        out = await state.generate("reflector", self.messages(attempt, feedback), cfg)
        text = out.text.strip()
        # A model that keeps writing invents a next example; the reflection is the first block.
        for marker in ("\nExample attempt:", "\nYour attempt:"):
            if marker in text:
                text = text.split(marker, 1)[0].strip()
        if text.lower().startswith("reflection:"):
            text = text.split(":", 1)[1].strip()
        return text or "(the reflector wrote nothing)"
