"""Run the toy benchmark end to end with a scripted model (shared by strategy,
analysis and notebook tests)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.actors.base import Actor
from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.core.state import Services
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.evaluators.base import Evaluator
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies.base import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer

_WORD = re.compile(r"Say the word (\w+)\.")
_REFLECT = re.compile(r"Reflect: (\S*) failed")


class ScriptedResponder:
    """Per-task scripts: the actor's n-th call for a word returns ``script[word][n]``
    (the last entry repeats); the reflector answers ``lesson about <candidate>``.

    Keyed by task, so the replies do not depend on how concurrent tasks interleave.
    """

    def __init__(self, scripts: dict[str, list[str]]) -> None:
        self.scripts = scripts
        self.actor_calls: dict[str, int] = defaultdict(int)

    def __call__(self, messages: Sequence[Message], config: GenerateConfig) -> str:
        text = messages[-1].content
        m = _REFLECT.match(text)
        if m:
            return f"lesson about {m.group(1)}: the answer must be another word."
        word_m = _WORD.search(text)
        assert word_m, f"unexpected prompt: {text!r}"
        word = word_m.group(1)
        script = self.scripts.get(word, [word])
        i = self.actor_calls[word]
        self.actor_calls[word] += 1
        return script[min(i, len(script) - 1)]


# Default scripts: alpha fixed at trial 2, beta never fixed, gamma right first time,
# delta right at trial 1 but the lenient evaluator is not used so it stops there.
SCRIPTS = {
    "alpha": ["wrongA", "alpha"],
    "beta": ["wrongB1", "wrongB2", "wrongB3"],
    "gamma": ["gamma"],
    "delta": ["wrongD", "wrongD2", "delta"],
}


async def run_toy(
    run_dir: Path,
    strategy: Strategy,
    *,
    words: list[str] | None = None,
    scripts: dict[str, list[str]] | None = None,
    actor: Actor | None = None,
    evaluator: Evaluator | None = None,
    concurrent: int = 1,
    window: int = 1,
    budget: TaskBudget | None = None,
    benchmark: str = "toy",
    on_task_done: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> tuple[MockModel, list[dict[str, Any]]]:
    """Run the toy benchmark into ``run_dir`` (logged under ``benchmark``, so that two
    toy runs can stand for two benchmarks); return the model and the log records."""
    env = ToyEnvironment(words or ["alpha", "beta", "gamma", "delta"])
    model = MockModel(responder=ScriptedResponder(scripts or SCRIPTS))
    roles = Roles(
        actor=actor or ToyActor(),
        evaluator=evaluator or ToyEvaluator(),
        reflector=ToyReflector(),
        scorer=ToyScorer(),
        strategy=strategy,
    )
    ctx = RunContext(
        tasks=env.load_tasks(),
        roles=roles,
        services=Services(model=model, budget=budget or TaskBudget()),
        memory_factory=WindowMemory,
        memory_window=window,
        benchmark=benchmark,
        run_dir=run_dir,
        max_concurrent_tasks=concurrent,
        show_progress=False,
        on_task_done=on_task_done,
    )
    await execute(ctx)
    return model, load_run_records(run_dir)


def actor_prompts(model: MockModel, word: str) -> list[str]:
    """The actor prompts sent for the task asking for ``word``, in order."""
    return [
        p for p in model.prompts if f"Say the word {word}." in p and not p.startswith("Reflect:")
    ]


def by_task(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        out[r["task_id"]].append(r)
    return dict(out)
