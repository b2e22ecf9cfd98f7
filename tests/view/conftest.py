"""Run folders for the viewer's tests, made by the real loop on real HumanEval problems
(real environment, roles, local sandbox and hidden tests); only the model is scripted.

- ``reflexion``: HumanEval/0 fails twice (two reflections), then passes (a fix, with
  diffs between trials); HumanEval/2 passes its own weak self-tests with a wrong
  program (a self-test false positive) and stops.
- ``simple``: one attempt each, no self-tests: HumanEval/0 wrong, HumanEval/2 right.
So the two runs disagree on both tasks in opposite directions (McNemar: 0/1/1/0).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import build_context, execute


def fence(code: str) -> str:
    return f"Here is my answer.\n```python\n{code}```\n"


WRONG_1 = "def has_close_elements(numbers, threshold):\n    return True\n"
WRONG_2 = "def has_close_elements(numbers, threshold):\n    return len(numbers) > 5\n"
RIGHT_0 = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])\n"
)
TESTS_0 = (
    "```python\n"
    "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False\n"
    "assert has_close_elements([1.0, 2.8, 3.0], 0.3) == True\n"
    "```"
)
# Wrong (always 0.5) but it passes the one weak self-test: a false positive.
WRONG_2_TASK = "def truncate_number(number: float) -> float:\n    return 0.5\n"
RIGHT_2_TASK = "def truncate_number(number: float) -> float:\n    return number % 1.0\n"
TESTS_2 = "```python\nassert truncate_number(3.5) == 0.5\n```"
REFLECTION_ONE = "REFLECTION-ONE: it always answers True, whatever the distances."
REFLECTION_TWO = "REFLECTION-TWO: the length of the list is irrelevant."


def _run(run_dir: Path, overrides: list[str], responses: list[str]) -> Path:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "model=mock",
                "progress=false",
                "env=humaneval",
                "task_ids=[HumanEval/0,HumanEval/2]",
                "max_concurrent_tasks=1",  # the scripted replies are in task order
                *overrides,
            ],
        )
    ctx = build_context(cfg, run_dir)
    ctx.services.model = MockModel(responses=responses)

    async def go() -> None:
        try:
            await execute(ctx)
        finally:
            if ctx.services.sandbox is not None:
                await ctx.services.sandbox.aclose()

    asyncio.run(go())
    return run_dir


@pytest.fixture(scope="session")
def code_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("view-runs") / "sweep"
    reflexion = _run(
        root / "reflexion",
        ["strategy.max_trials=3"],
        [
            fence(WRONG_1),  # HumanEval/0 trial 1
            TESTS_0,
            REFLECTION_ONE,
            fence(WRONG_2),  # trial 2
            REFLECTION_TWO,
            fence(RIGHT_0),  # trial 3: self-tests pass, stop
            fence(WRONG_2_TASK),  # HumanEval/2 trial 1
            TESTS_2,  # weak self-test: passes the wrong program, the task stops
        ],
    )
    simple = _run(
        root / "simple",
        ["strategy=simple"],
        [fence(WRONG_1), fence(RIGHT_2_TASK)],
    )
    yield {"root": root, "reflexion": reflexion, "simple": simple}
