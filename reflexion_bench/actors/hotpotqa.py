"""HotpotQA actors: chain of thought with or without the gold paragraphs, and ReAct.

- :class:`CoTActor` (``actor=cot`` / ``actor=cot_context``): one generation,
  ``Thought: ...`` then ``Action: Finish[answer]``; ``cot_context`` also sees the gold
  supporting paragraphs (the paper's "CoT (GT)").
- :class:`ReActActor` (``actor=react``): ``Thought n`` / ``Action n`` /
  ``Observation n`` steps over a document store (``Search[entity]``,
  ``Lookup[keyword]``, ``Finish[answer]``), stopped by a step limit and by a limit on
  the prompt's length, like the paper's agent.

Malformed model output never crashes an attempt: a step whose action is missing,
unknown, empty or has unbalanced brackets is counted as invalid, and the observation
tells the model the valid format. Every actor puts its memory in the prompt through
:func:`reflexion_bench.memory.format_memory`, writes the question and its steps to
``Attempt.trajectory`` (what the raw-log memory shows next trial) and the answer to
``Attempt.candidate``, and copies the task's ``type`` / ``level`` into
``Attempt.extra`` so that the run log carries them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Message
from reflexion_bench.environments.docstore import Docstore
from reflexion_bench.memory.base import format_memory
from reflexion_bench.prompts import PromptPack, load_prompts

ACTIONS = {"search": "Search", "lookup": "Lookup", "finish": "Finish"}

_THOUGHT_LABEL = re.compile(r"^[\s*#>`]*thought(?:\s*\d+)?\s*[*`]*\s*:[\s*`]*", re.I)
_ACTION_LINE = re.compile(r"^[ \t*#>`]*action(?:[ \t]*\d+)?[ \t]*[*`]*[ \t]*:[ \t*]*", re.I | re.M)
# A line that starts with a tool call is an action even without its `Action n:` label.
_BARE_CALL = re.compile(r"^[ \t*#>`]*(?=(?:search|lookup|finish)[ \t]*\[)", re.I | re.M)
_OBSERVATION = re.compile(r"^[ \t*#>`]*observation\b", re.I | re.M)
_ANSWER_LINE = re.compile(r"^[ \t*#>`]*(?:final[ \t]+)?answer[ \t]*[*`]*:[ \t]*(.+)$", re.I | re.M)
_TOKEN = re.compile(r"\w+|[^\w\s]")


def approx_tokens(text: str) -> int:
    """Approximate token count: words and punctuation marks.

    English BPE vocabularies give about one token per word or mark, so this tracks
    the paper's tiktoken count closely without downloading a tokenizer.
    """
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class Step:
    """One parsed model reply.

    ``action`` is the canonical tool name (``Search`` / ``Lookup`` / ``Finish``) or
    None when the reply is invalid, in which case ``error`` says why.
    """

    thought: str
    action: str | None
    argument: str
    raw_action: str
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None

    def action_text(self) -> str:
        """The action as it goes into the scratchpad (canonical when valid)."""
        if self.action is not None:
            return f"{self.action}[{self.argument}]"
        return self.raw_action or "(none)"


def parse_step(text: str) -> Step:
    """Parse ``Thought n: ...`` / ``Action n: Tool[argument]`` from a model reply.

    Anything from an ``Observation`` line on is ignored (the model must not write
    observations). Markdown decoration around the labels and the action is
    tolerated, and a line starting with a tool call (``Search[...]``) is the action
    even without its ``Action:`` label. No action at all, an action not of the form
    ``Tool[argument]``, an unknown tool, an empty argument and unbalanced brackets
    are errors.
    """
    obs = _OBSERVATION.search(text)
    if obs is not None:
        text = text[: obs.start()]
    labelled, bare = _ACTION_LINE.search(text), _BARE_CALL.search(text)
    m = labelled if bare is None or (labelled and labelled.start() <= bare.start()) else bare
    if m is None:
        return Step(
            thought=_clean_thought(text),
            action=None,
            argument="",
            raw_action="",
            error="the reply has no `Action:` line",
        )
    thought = _clean_thought(text[: m.start()])
    rest = text[m.end() :].strip()
    first_line = rest.splitlines()[0].strip() if rest else ""
    action, argument, error = _parse_call(rest)
    return Step(thought, action, argument, first_line, error)


def _clean_thought(text: str) -> str:
    text = _THOUGHT_LABEL.sub("", text.strip())
    return " ".join(text.split())


def _parse_call(text: str) -> tuple[str | None, str, str | None]:
    """``Tool[argument]`` -> (canonical tool, argument, None) or (None, "", why)."""
    text = text.strip().strip("`*").strip()
    if not text:
        return None, "", "the `Action:` line is empty"
    open_at = text.find("[")
    if open_at < 0:
        return None, "", "an action must look like Tool[argument]"
    name = text[:open_at].strip().strip("`*").strip()
    depth = 0
    close_at = -1
    for i in range(open_at, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                close_at = i
                break
    if close_at < 0:
        return None, "", "unbalanced brackets (a `[` is never closed)"
    if name.casefold() not in ACTIONS:
        shown = name or "(nothing)"
        return None, "", f"unknown action {shown!r} (allowed: Search, Lookup, Finish)"
    argument = " ".join(text[open_at + 1 : close_at].split())
    if not argument:
        return None, "", f"{ACTIONS[name.casefold()]}[...] needs an argument"
    return ACTIONS[name.casefold()], argument, None


def extract_answer(text: str) -> tuple[str, str | None]:
    """The answer of a chain-of-thought reply: ``Finish[answer]``, else an
    ``Answer: ...`` line; returns (answer, why there is none)."""
    step = parse_step(text)
    if step.action == "Finish":
        return step.argument, None
    m = _ANSWER_LINE.search(text)
    if m is not None:
        answer = m.group(1).strip()
        inner = re.fullmatch(r"Finish\[(.*)\]\.?", answer)
        answer = (inner.group(1) if inner else answer).strip().rstrip(".").strip()
        if answer:
            return answer, None
    if step.action is not None:
        return "", f"{step.action}[...] is not available here; answer with Finish[answer]"
    return "", step.error or "no Finish[answer]"


def task_tags(state: TaskState) -> dict[str, Any]:
    """What every trial record carries for the analysis: the question's type and level
    (breakdowns) and K (so a curve spans every trial even when all stopped early)."""
    tags = {k: state.task.data[k] for k in ("type", "level") if state.task.data.get(k) is not None}
    return {**tags, "max_trials": state.max_trials}


def _memory_text(pack: PromptPack, state: TaskState) -> str:
    memory = format_memory(state.memory.render())
    if not memory:
        return ""
    return "\n" + pack.render("memory_block", memory=memory).strip() + "\n"


def _messages_tokens(messages: Sequence[Message]) -> int:
    return sum(approx_tokens(m.content) for m in messages)


# --------------------------------------------------------------------------- CoT


class CoTActor:
    """Chain of thought in one generation, optionally given the gold paragraphs.

    Args:
        with_context: Show the gold supporting paragraphs (``cot_context``).
        prompts: External prompt pack layered over the built-in ``hotpotqa`` pack.
        max_tokens: Completion budget (None: the run's ``generate.max_tokens``).
    """

    def __init__(
        self, with_context: bool = False, prompts: str | None = None, max_tokens: int | None = None
    ) -> None:
        self.with_context = with_context
        self.kind = "cot_context" if with_context else "cot"
        self.max_tokens = max_tokens
        names = [f"{self.kind}_instructions", f"{self.kind}_examples", f"{self.kind}_prompt"]
        self.pack = load_prompts("hotpotqa", prompts, required=[*names, "memory_block"])

    def messages(self, state: TaskState) -> list[Message]:
        values: dict[str, Any] = {
            "examples": self.pack[f"{self.kind}_examples"].strip(),
            "memory": _memory_text(self.pack, state),
            "question": state.task.prompt,
        }
        if self.with_context:
            context = state.task.data.get("gold_context")
            if not context:
                raise ConfigError(
                    "actor", self.kind, "a task with gold paragraphs (HotpotQA `supporting_facts`)"
                )
            values["context"] = context
        return [
            Message("system", self.pack.render(f"{self.kind}_instructions").strip()),
            Message("user", self.pack.render(f"{self.kind}_prompt", **values).strip()),
        ]

    async def act(self, state: TaskState) -> Attempt:
        messages = self.messages(state)
        cfg = state.services.generate_config
        cfg = cfg.replace(
            max_tokens=self.max_tokens or cfg.max_tokens,
            stop=(*cfg.stop, "\nObservation", "\nQuestion:"),
        )
        out = await state.generate("actor", messages, cfg)
        answer, problem = extract_answer(out.text)
        step = parse_step(out.text)
        thought = step.thought or " ".join(out.text.split())
        trajectory = f"Question: {state.task.prompt}\nThought: {thought}\nAction: " + (
            f"Finish[{answer}]" if answer else (step.raw_action or "(none)")
        )
        extra: dict[str, Any] = {"actor": self.kind, **task_tags(state)}
        if problem:
            extra.update(halted="no_answer", parse_error=problem)
        return Attempt(candidate=answer, trajectory=trajectory, prompt=messages, extra=extra)


# --------------------------------------------------------------------------- ReAct


class ReActActor:
    """Thought / Action / Observation over a document store.

    Args:
        docstore: Where ``Search`` and ``Lookup`` read pages (``docstore=`` config).
        prompts: External prompt pack layered over the built-in ``hotpotqa`` pack.
        max_steps: Steps per attempt before it is stopped unanswered (paper: 6).
        max_prompt_tokens: Stop the attempt, unanswered, once the prompt for the next
            step would exceed this many (approximate) tokens (paper: 3896).
        max_step_tokens: Completion budget of one step.
        observation_chars: Longest observation kept; longer ones are cut.
        memory_trajectory_tokens: Budget of the trajectory this attempt leaves for
            raw-log memory and the reflector; the longest observations are elided
            until it fits (the full scratchpad stays in the log).
    """

    kind = "react"

    def __init__(
        self,
        docstore: Docstore,
        prompts: str | None = None,
        max_steps: int = 6,
        max_prompt_tokens: int = 3896,
        max_step_tokens: int = 256,
        observation_chars: int = 1200,
        memory_trajectory_tokens: int = 1600,
    ) -> None:
        if max_steps < 1:
            raise ConfigError("actor.max_steps", max_steps, "an integer >= 1")
        if max_prompt_tokens < 1:
            raise ConfigError("actor.max_prompt_tokens", max_prompt_tokens, "an integer >= 1")
        if not hasattr(docstore, "session"):
            raise ConfigError("docstore", type(docstore).__name__, "a Docstore (a `session()`)")
        self.docstore = docstore
        self.max_steps = max_steps
        self.max_prompt_tokens = max_prompt_tokens
        self.max_step_tokens = max_step_tokens
        self.observation_chars = observation_chars
        self.memory_trajectory_tokens = memory_trajectory_tokens
        self.pack = load_prompts(
            "hotpotqa",
            prompts,
            required=[
                "react_instructions",
                "react_examples",
                "react_prompt",
                "invalid_action",
                "memory_block",
            ],
        )

    def messages(self, state: TaskState, scratchpad: str, step: int) -> list[Message]:
        return [
            Message(
                "system", self.pack.render("react_instructions", max_steps=self.max_steps).strip()
            ),
            Message(
                "user",
                self.pack.render(
                    "react_prompt",
                    examples=self.pack["react_examples"].strip(),
                    memory=_memory_text(self.pack, state),
                    question=state.task.prompt,
                    scratchpad=scratchpad,
                    step=step,
                ).strip(),
            ),
        ]

    async def act(self, state: TaskState) -> Attempt:
        session = self.docstore.session()
        base_cfg = state.services.generate_config
        steps: list[tuple[str, str, str]] = []  # (thought, action, observation)
        answer = ""
        halted: str | None = None
        invalid = 0
        actions: dict[str, int] = {}
        messages: list[Message] = []
        prompt_tokens = 0
        for n in range(1, self.max_steps + 1):
            scratchpad = _scratchpad(steps)
            messages = self.messages(state, scratchpad, n)
            prompt_tokens = _messages_tokens(messages)
            if prompt_tokens > self.max_prompt_tokens:
                halted = "prompt_length"
                break
            cfg = base_cfg.replace(
                max_tokens=self.max_step_tokens,
                stop=(*base_cfg.stop, "\nObservation", f"Observation {n}:"),
            )
            out = await state.generate("actor", messages, cfg)
            step = parse_step(out.text)
            if not step.valid:
                invalid += 1
                obs = self.pack.render("invalid_action", reason=step.error, step=n).strip()
                steps.append((step.thought, step.action_text(), obs))
                continue
            assert step.action is not None
            actions[step.action] = actions.get(step.action, 0) + 1
            if step.action == "Finish":
                answer = step.argument
                steps.append((step.thought, step.action_text(), ""))
                break
            if step.action == "Search":
                obs = await session.search(step.argument)
            else:
                obs = await session.lookup(step.argument)
            steps.append((step.thought, step.action_text(), self._clip(obs)))
        else:
            halted = "max_steps"
        if answer:
            halted = None
        full = f"Question: {state.task.prompt}\n{_scratchpad(steps)}".rstrip()
        trajectory = _fit_trajectory(state.task.prompt, steps, self.memory_trajectory_tokens)
        extra: dict[str, Any] = {
            "actor": self.kind,
            **task_tags(state),
            "steps": len(steps),
            "invalid_steps": invalid,
            "actions": actions,
            "halted": halted,
            "last_prompt_tokens": prompt_tokens,
            "docstore_errors": session.errors,
        }
        if trajectory != full:
            extra["full_trajectory"] = full
        return Attempt(candidate=answer, trajectory=trajectory, prompt=messages, extra=extra)

    def _clip(self, obs: str) -> str:
        obs = " ".join(obs.split())
        if len(obs) <= self.observation_chars:
            return obs
        return obs[: self.observation_chars].rstrip() + " [...]"


def _scratchpad(steps: Sequence[tuple[str, str, str]]) -> str:
    lines = []
    for i, (thought, action, obs) in enumerate(steps, 1):
        lines.append(f"Thought {i}: {thought}")
        lines.append(f"Action {i}: {action}")
        if obs:
            lines.append(f"Observation {i}: {obs}")
    return "\n".join(lines) + ("\n" if lines else "")


ELIDED = "[observation elided to save space]"


def _fit_trajectory(question: str, steps: Sequence[tuple[str, str, str]], budget: int) -> str:
    """The trajectory text, with the longest observations elided until it fits ``budget``."""
    steps = list(steps)

    def render() -> str:
        return f"Question: {question}\n{_scratchpad(steps)}".rstrip()

    text = render()
    while approx_tokens(text) > budget:
        longest = max(
            (i for i, s in enumerate(steps) if s[2] and s[2] != ELIDED),
            key=lambda i: len(steps[i][2]),
            default=None,
        )
        if longest is None:
            break
        t, a, _ = steps[longest]
        steps[longest] = (t, a, ELIDED)
        text = render()
    return text
