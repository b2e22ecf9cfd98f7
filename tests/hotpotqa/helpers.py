"""Shared helpers of the HotpotQA tests: run a composed config with a scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import RunContext, build_context, execute


def run_with_model(
    cfg: DictConfig, run_dir: Path, model: MockModel
) -> tuple[RunContext, list[dict[str, Any]]]:
    """Build the run from ``cfg``, swap in ``model``, run it, return the log records."""
    ctx = build_context(cfg, run_dir)
    ctx.services.model = model
    ctx.show_progress = False
    asyncio.run(execute(ctx))
    lines = (run_dir / "log.jsonl").read_text(encoding="utf-8").splitlines()
    return ctx, [json.loads(line) for line in lines if line.strip()]


def role_of(messages: Sequence[Message]) -> str:
    """Which role sent a request, from the system message of the built-in prompts."""
    system = messages[0].content if messages and messages[0].role == "system" else ""
    if "review a failed attempt" in system:
        return "reflector"
    if "Search[entity]" in system:
        return "react"
    if "Thought:" in system:
        return "cot"
    return "other"


def scripted(
    react: Callable[[int, str], str], reflect: Callable[[int], str]
) -> tuple[MockModel, dict[str, list[str]]]:
    """A mock model answering ReAct steps with ``react(n_finish_so_far, user_text)`` and
    reflections with ``reflect(n_reflections_so_far)``; records prompts per role."""
    seen: dict[str, list[str]] = {"react": [], "reflector": [], "other": [], "cot": []}
    counters = {"finish": 0, "reflect": 0}

    def responder(messages: Sequence[Message], config: GenerateConfig) -> str:
        role = role_of(messages)
        user = messages[-1].content
        seen[role].append(user)
        if role == "reflector":
            counters["reflect"] += 1
            return reflect(counters["reflect"])
        reply = react(counters["finish"], user)
        if "Finish[" in reply:
            counters["finish"] += 1
        return reply

    return MockModel(responder=responder), seen
