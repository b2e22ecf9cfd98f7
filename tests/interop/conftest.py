"""Real Inspect AI evals for the interop tests, run here with Inspect's own mock model.

Five samples, ``includes()`` as the scorer (the target must appear in the answer):

- ``plain``: ``generate()``, 2 epochs. ``mockllm/model`` answers "Default output from
  mockllm/model", so q0 ("Default"), q1 ("output") and q3 ("mockllm") pass and q2, q4
  fail, in both epochs.
- ``react``: ``react(attempts=3)``, 1 epoch, the mock model scripted (a function of the
  conversation, as mockllm's ``custom_outputs`` allows) to submit through react's
  ``submit()`` tool:
  q0 right at once; q1 wrong then right; q2 wrong three times; q3 wrong then right; q4
  right at once. react scores every submission but the last allowed one in the loop
  and tells the model when it was wrong: 1 + 2 + 2 + 2 + 1 = 8 in-loop scorings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

TARGETS = {"q0": "Default", "q1": "output", "q2": "banana", "q3": "mockllm", "q4": "cherry"}
PLAIN_FINAL = {"q0": True, "q1": True, "q2": False, "q3": True, "q4": False}
# The answers react's submit() receives, per sample in order.
REACT_SUBMISSIONS = {
    "q0": ["Default"],
    "q1": ["apple", "output"],
    "q2": ["kiwi", "lemon", "mango"],
    "q3": ["pear", "mockllm"],
    "q4": ["cherry"],
}
REACT_TRIALS = {t: len(s) for t, s in REACT_SUBMISSIONS.items()}
REACT_FINAL = {"q0": True, "q1": True, "q2": False, "q3": True, "q4": True}
REACT_FIRST = {"q0": True, "q1": False, "q2": False, "q3": False, "q4": True}
REACT_USES = 8
INCORRECT = "Your submission was incorrect. Please proceed and attempt to find the correct answer."


def _inspect() -> Any:
    from tests.components import missing

    try:
        import inspect_ai
    except ImportError:
        missing(
            "inspect_ai", "the inspect_ai package is not installed: bash scripts/setup.sh --all"
        )
    return inspect_ai


def _dataset() -> Any:
    from inspect_ai.dataset import Sample

    return [
        Sample(id=tid, input=f"Say the word for {tid}.", target=target)
        for tid, target in TARGETS.items()
    ]


def _run(task: Any, log_dir: Path, **kwargs: Any) -> Path:
    from inspect_ai import eval as inspect_eval

    logs = inspect_eval(task, log_dir=str(log_dir), display="none", **kwargs)
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    location = logs[0].location
    return Path(location.removeprefix("file://"))


def _usage(input: list[Any], reply: str) -> Any:
    """Token counts the mock model reports (words, not a tokenizer: mockllm's default
    counts with tiktoken, whose vocabulary file would be downloaded)."""
    from inspect_ai.model import ModelUsage

    n_in = sum(len(m.text.split()) for m in input)
    n_out = len(reply.split())
    return ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)


def _sample_of(input: list[Any]) -> str:
    first = next(m.text for m in input if m.role == "user")
    return first.removeprefix("Say the word for ").removesuffix(".")


def plain_model(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """``mockllm/model``'s default answer, with usage."""
    from inspect_ai.model import ModelOutput

    reply = "Default output from mockllm/model"
    out = ModelOutput.from_content(model="mockllm/model", content=reply)
    out.usage = _usage(input, reply)
    return out


def react_model(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """Submit the sample's next scripted answer (attempt = assistant turns so far + 1)."""
    from inspect_ai.model import ModelOutput

    attempt = sum(1 for m in input if m.role == "assistant")
    answer = REACT_SUBMISSIONS[_sample_of(input)][attempt]
    out = ModelOutput.for_tool_call(
        model="mockllm/model", tool_name="submit", tool_arguments={"answer": answer}
    )
    out.usage = _usage(input, answer)
    return out


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"plain": FILE.eval, "react": FILE.eval}`` written by real Inspect evals."""
    _inspect()
    from inspect_ai import Task
    from inspect_ai.agent import react
    from inspect_ai.model import get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    root = tmp_path_factory.mktemp("inspect-logs")
    plain = _run(
        Task(dataset=_dataset(), solver=generate(), scorer=includes(), name="words"),
        root / "plain",
        model=get_model("mockllm/model", custom_outputs=plain_model),
        epochs=2,
    )
    react_log = _run(
        Task(dataset=_dataset(), solver=react(attempts=3), scorer=includes(), name="words"),
        root / "react",
        model=get_model("mockllm/model", custom_outputs=react_model),
    )
    return {"plain": plain, "react": react_log}
