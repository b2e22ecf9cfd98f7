"""The code roles' prompts: the project's own pack, an external pack layered over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from reflexion_bench.actors.code import CodeActor
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Task
from reflexion_bench.evaluators.self_tests import SelfTestEvaluator
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel


def state_for(task: Task) -> TaskState:
    return TaskState(task, "reflexion", 2, WindowMemory(1), Services(MockModel()))


def test_first_trial_prompt_shows_the_task_only(humaneval: dict[str, Task]) -> None:
    task = humaneval["HumanEval/0"]
    system, user = CodeActor().messages(state_for(task))
    assert system.role == "system" and "Python" in system.content
    assert task.prompt.strip() in user.content
    assert "{" + "entry_point}" not in user.content  # every placeholder was filled
    assert "previous implementation" not in user.content


def test_an_external_pack_replaces_only_what_it_names(
    humaneval: dict[str, Task], tmp_path: Path
) -> None:
    (tmp_path / "actor_first.md").write_text("Solve `{entry_point}` in one line, please.")
    _, user = CodeActor(prompts=str(tmp_path)).messages(state_for(humaneval["HumanEval/0"]))
    assert user.content.endswith("Solve `has_close_elements` in one line, please.")
    assert "Implement the function `has_close_elements`" in user.content  # the default rest


def test_prompt_errors_name_the_config_key(humaneval: dict[str, Task], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"actor\.prompts"):
        CodeActor(prompts=str(tmp_path / "missing")).messages(state_for(humaneval["HumanEval/0"]))
    (tmp_path / "self_test_user.md").write_text("Write {how_many} tests.")
    with pytest.raises(ConfigError, match=r"evaluator\.prompts.*how_many"):
        SelfTestEvaluator(prompts=str(tmp_path)).messages(state_for(humaneval["HumanEval/0"]))
