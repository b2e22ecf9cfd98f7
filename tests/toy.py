"""A toy benchmark for loop tests: each task asks the model to say a word.

It sits at the boundary the brief allows mocking (the model is scripted); the roles
here are tiny but real implementations of the interfaces, so the loop, the log, the
runner and the metrics run end to end with them.
"""

from __future__ import annotations

from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message, Score, Task
from reflexion_bench.environments.base import select_tasks
from reflexion_bench.memory.base import format_memory


class ToyEnvironment:
    name = "toy"
    memory_window = 1

    def __init__(
        self,
        words: list[str] | None = None,
        limit: int | None = None,
        task_ids: list[str] | None = None,
        needs_sandbox: bool = True,
    ) -> None:
        self.words = words or ["alpha", "beta", "gamma"]
        self.needs_sandbox = needs_sandbox
        self.limit = limit
        self.task_ids = task_ids

    def load_tasks(self) -> list[Task]:
        tasks = [
            Task(id=f"toy/{i}", prompt=f"Say the word {w}.", benchmark="toy", data={"answer": w})
            for i, w in enumerate(self.words)
        ]
        return select_tasks(tasks, self.limit, self.task_ids)


class ToyActor:
    async def act(self, state: TaskState) -> Attempt:
        memory = format_memory(state.memory.render())
        content = state.task.prompt + (f"\n\n{memory}" if memory else "")
        msgs = [Message("user", content)]
        out = await state.generate("actor", msgs)
        return Attempt(candidate=out.text.strip(), trajectory=out.text, prompt=msgs)


class ToyEvaluator:
    """In-loop check: optionally lenient (passes anything starting with the answer's
    first letter) so that self-test false positives can be produced on purpose."""

    def __init__(self, lenient: bool = False) -> None:
        self.lenient = lenient

    async def evaluate(self, state: TaskState, attempt: Attempt) -> Feedback:
        answer = state.task.data["answer"]
        ok = attempt.candidate == answer or (self.lenient and attempt.candidate[:1] == answer[:1])
        return Feedback(
            passed=ok, text="" if ok else f"expected another word than {attempt.candidate!r}"
        )


class ToyReflector:
    async def reflect(self, state: TaskState, attempt: Attempt, feedback: Feedback) -> str:
        msgs = [Message("user", f"Reflect: {attempt.candidate} failed: {feedback.text}")]
        out = await state.generate("reflector", msgs)
        return out.text.strip()


class ToyScorer:
    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        ok = attempt.candidate == state.task.data["answer"]
        return Score(passed=ok, status="pass" if ok else "fail")


def toy_responder(messages: list[Message], config: object) -> str:
    """Deterministic replies that depend only on the prompt (safe under concurrency):
    the first attempt answers in upper case (wrong), a reflection says to use lower
    case, and an attempt that sees a reflection answers correctly. Words starting
    with "z" are never answered correctly, so some tasks fail every trial."""
    text = messages[-1].content
    if text.startswith("Reflect:"):
        return "I must answer with the exact word in lower case."
    word = text.split("Say the word ", 1)[1].split(".", 1)[0]
    if word.startswith("z"):
        return "no"
    return word if "[Reflection" in text else word.upper()
