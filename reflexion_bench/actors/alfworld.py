"""ReAct over an ALFWorld game: think/act lines, one model call per action.

Each step the model sees the few-shot demonstrations of the task's type, the memory
(the last Ω reflections, rendered by :func:`~reflexion_bench.memory.format_memory`),
and the episode so far, either as alternating chat turns (``format=chat``: the game
speaks as the user, the player answers) or as the paper's single transcript ending with
``>`` (``format=transcript``); the first line of the reply is the next command. A
``think:`` line is answered ``OK.`` without touching the game. The episode ends when
the game is won, after ``env.max_steps`` actions, or when the same action gets the same
answer ``env.max_repeats`` times in a row (the paper's heuristic).

Everything the failure analysis needs (actions, answers, which were valid commands,
why the episode ended) goes into ``Attempt.extra["alfworld"]``, hence into the run log.
"""

from __future__ import annotations

import atexit
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, GenerateConfig, Message
from reflexion_bench.environments.alfworld.environment import VERSION_CHECKS
from reflexion_bench.environments.alfworld.pool import get_pool
from reflexion_bench.environments.alfworld.text import (
    NOTHING,
    THINK_OK,
    TYPE_KEYS,
    VERSIONS,
    clean_observation,
    convert_demo,
    detect_text_version,
    is_think,
    normalize_action,
    put_syntax,
)
from reflexion_bench.evaluators.alfworld import should_stop
from reflexion_bench.memory.base import format_memory
from reflexion_bench.prompts import PromptPack, load_pack, load_prompts

log = logging.getLogger(__name__)

#: The version the project's own demonstrations are written in.
OWN_PACK_VERSION = "v2.1.2"
PUT_COMMAND = {
    "v2.1.1": "put <object> in/on <receptacle>",
    "v2.1.2": "move <object> to <receptacle>",
}
FORMATS = ("chat", "transcript")
#: Per process: episodes whose put commands looked like the other version's (reported at exit).
VERSION_SYMPTOM_EPISODES: list[str] = []


_TOKEN = re.compile(r"\w+|[^\w\s]")


def approx_tokens(text: str) -> int:
    """Approximate token count (words and punctuation marks; BPE gives about as many)."""
    return len(_TOKEN.findall(text))


def split_demo(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A demonstration as (opening observation, [(action, answer), ...]).

    Lines starting with ``>`` are actions; the lines up to the next action are the
    answer. A thought with no written answer (the paper's files have a few) gets ``OK.``.
    """
    head: list[str] = []
    turns: list[tuple[str, list[str]]] = []
    for line in text.strip("\n").splitlines():
        if line.startswith(">"):
            turns.append((line[1:].strip(), []))
        elif turns:
            turns[-1][1].append(line)
        else:
            head.append(line)
    out = []
    for action, answer in turns:
        text_answer = "\n".join(answer).strip()
        if not text_answer:
            text_answer = THINK_OK if is_think(action) else NOTHING
        out.append((action, text_answer))
    return "\n".join(head).strip(), out


def demo_names(demo_ids: Sequence[int]) -> list[str]:
    return [f"react_{t}_{i}" for t in TYPE_KEYS for i in demo_ids]


class AlfWorldReActActor:
    """The ReAct actor for ALFWorld.

    Args:
        prompts: An external prompt pack layered over the project's own ``alfworld``
            pack (e.g. a JSON file with ``react_<type>_<k>`` demonstrations).
        version: The games' text version (``${env.version}``); the demonstrations must
            be written for it. The project's own are adapted; an external pack's are not.
        version_check: ``error`` / ``warn`` / ``off`` for a pack written for the other
            version (``${env.version_check}``).
        demo_ids: Which demonstrations of the task's type to show, in order.
        max_tokens: Tokens per action (a thought needs a few dozen).
        stop: Stop sequences; a newline ends the action line.
        temperature: Sampling temperature of the actor; None keeps the run's.
        max_history_steps: Show only the last N steps of the episode (None: all).
        max_prompt_tokens: Drop the oldest steps of the episode from the prompt (with a
            note) while it is longer than this many approximate tokens, so that models
            with a small context (the embedded one has 4096) can play 50 steps; None: never.
        format: ``chat`` (demonstrations and the episode as alternating user/assistant
            turns) or ``transcript`` (the paper's layout: one prompt ending with ``>``).
    """

    def __init__(
        self,
        prompts: str | None = None,
        version: str | None = None,
        version_check: str = "error",
        demo_ids: Sequence[int] = (0, 1),
        max_tokens: int = 100,
        stop: Sequence[str] = ("\n",),
        temperature: float | None = None,
        max_history_steps: int | None = None,
        max_prompt_tokens: int | None = 3500,
        format: str = "chat",
    ) -> None:
        if version is not None and version not in VERSIONS:
            raise ConfigError("actor.version", version, VERSIONS)
        if version_check not in VERSION_CHECKS:
            raise ConfigError("actor.version_check", version_check, VERSION_CHECKS)
        if format not in FORMATS:
            raise ConfigError("actor.format", format, FORMATS)
        if not demo_ids:
            raise ConfigError("actor.demo_ids", list(demo_ids), "a non-empty list such as [0, 1]")
        self.demo_ids = [int(i) for i in demo_ids]
        required = [
            *demo_names(self.demo_ids),
            "actor_system",
            "actor_rules",
            "memory_section",
            *(["chat_example", "chat_game"] if format == "chat" else ["actor_prompt"]),
        ]
        self.external = prompts not in (None, "")
        self.pack: PromptPack = load_prompts("alfworld", prompts, required=required)
        self._own: PromptPack = load_pack("alfworld")
        self.version = version
        self.version_check = version_check
        self.max_tokens = int(max_tokens)
        self.stop = tuple(stop)
        self.temperature = temperature
        self.max_history_steps = max_history_steps
        self.max_prompt_tokens = max_prompt_tokens
        self.format = format
        self._demo_cache: dict[tuple[str, str], list[str]] = {}
        if version is not None:  # check every type now: a mismatch fails at start
            for type_key in TYPE_KEYS:
                self.demos(type_key, version)

    # ------------------------------------------------------------------ prompts

    def demos(self, type_key: str, version: str) -> list[str]:
        """The demonstrations shown for ``type_key`` on games of ``version``."""
        key = (type_key, version)
        if key in self._demo_cache:
            return self._demo_cache[key]
        out = []
        for i in self.demo_ids:
            name = f"react_{type_key}_{i}"
            text = self.pack[name].strip("\n")
            if name in self._own and text == self._own[name].strip("\n"):
                out.append(convert_demo(text, version))  # ours: adapt to the games
                continue
            written_for = detect_text_version([text])
            if written_for is not None and written_for != version:
                self._mismatch(name, written_for, version)
            out.append(text)
        self._demo_cache[key] = out
        return out

    def _mismatch(self, name: str, written_for: str, version: str) -> None:
        msg = (
            f"the prompt pack {self.pack.source} shows `{name}` written for {written_for} "
            f"games ({PUT_COMMAND[written_for].split(' <')[0]} ...), but the games are "
            f"{version} (their put command is `{PUT_COMMAND[version]}`)"
        )
        if self.version_check == "error":
            raise ConfigError(
                "actor.prompts",
                self.pack.source,
                f"a pack written for {version} games ({msg}); use games of its version "
                f"(env=alfworld_v211 for v2.1.1) or set env.version_check=warn",
            )
        if self.version_check == "warn":
            log.warning("ALFWorld version mismatch: %s; going on (version_check=warn)", msg)

    def messages(
        self,
        type_key: str,
        version: str,
        memory: str,
        initial: str,
        steps: Sequence[Sequence[Any]],
    ) -> list[Message]:
        """The chat messages of one step: demonstrations, memory, the episode so far."""
        demos = self.demos(type_key, version)
        skipped = 0
        if self.max_history_steps is not None:
            skipped = max(0, len(steps) - self.max_history_steps)
        render = self._chat if self.format == "chat" else self._transcript
        while True:
            msgs = render(demos, version, memory, initial, steps, skipped)
            if (
                self.max_prompt_tokens is None
                or skipped >= len(steps)
                or sum(approx_tokens(m.content) for m in msgs) <= self.max_prompt_tokens
            ):
                return msgs
            skipped += max(1, (len(steps) - skipped) // 8)  # a few steps at a time

    def _memory_block(self, memory: str) -> str:
        return self.pack.render("memory_section", memory=memory) if memory else ""

    def _transcript(
        self,
        demos: Sequence[str],
        version: str,
        memory: str,
        initial: str,
        steps: Sequence[Sequence[Any]],
        skipped: int,
    ) -> list[Message]:
        # The paper's layout: one prompt holding the demonstrations and the episode as
        # `> action` / answer lines, ending with `>` for the model to continue.
        lines = [initial]
        if skipped:
            lines.append(f"(... {skipped} earlier steps not shown ...)")
        for row in steps[skipped:]:
            lines.append(f"> {row[0]}\n{row[1]}")
        user = self.pack.render(
            "actor_prompt",
            rules=self.pack.render("actor_rules", put_command=PUT_COMMAND[version]).strip(),
            n_examples=len(demos),
            examples="\n\n".join(demos),
            memory=self._memory_block(memory),
            episode="\n".join(lines) + "\n>",
        )
        return [Message("system", self.pack["actor_system"].strip()), Message("user", user)]

    def _chat(
        self,
        demos: Sequence[str],
        version: str,
        memory: str,
        initial: str,
        steps: Sequence[Sequence[Any]],
        skipped: int,
    ) -> list[Message]:
        # The same content as alternating turns: the game speaks as the user, the player
        # as the assistant. Small chat models follow this far better than a transcript
        # (the embedded 0.5B model answers a transcript with "OK." every time).
        rules = self.pack.render("actor_rules", put_command=PUT_COMMAND[version]).strip()
        msgs = [Message("system", f"{self.pack['actor_system'].strip()}\n\n{rules}")]

        def say(role: str, text: str) -> None:
            # Turns strictly alternate (some APIs require it): a game text that follows
            # another (a demonstration's last answer, then the next game) joins it.
            if msgs[-1].role == role == "user":
                msgs[-1] = Message("user", f"{msgs[-1].content}\n\n{text}")
            else:
                msgs.append(Message("user" if role == "user" else "assistant", text))

        for k, demo in enumerate(demos, 1):
            head, turns = split_demo(demo)
            say(
                "user",
                self.pack.render("chat_example", k=k, n=len(demos), observation=head).strip(),
            )
            for action, observation in turns:
                say("assistant", action)
                say("user", observation)
        game = initial
        if skipped:
            game += f"\n(... {skipped} earlier steps not shown ...)"
        say(
            "user",
            self.pack.render(
                "chat_game", memory=self._memory_block(memory), observation=game
            ).strip(),
        )
        for row in steps[skipped:]:
            say("assistant", str(row[0]))
            say("user", str(row[1]))
        return msgs

    # ------------------------------------------------------------------ acting

    async def act(self, state: TaskState) -> Attempt:
        data = state.task.data
        version = self.version or str(data.get("version") or OWN_PACK_VERSION)
        game_version = str(data.get("game_version") or version)
        type_key = str(data["type_key"])
        max_steps = int(data.get("max_steps", 50))
        max_repeats = int(data.get("max_repeats", 3))
        memory = format_memory(state.memory.render())
        base = state.services.generate_config
        cfg: GenerateConfig = base.replace(max_tokens=self.max_tokens, stop=self.stop)
        if self.temperature is not None:
            cfg = cfg.replace(temperature=float(self.temperature))

        pool = get_pool(**data["pool"])
        started = time.perf_counter()
        session = await pool.open(
            data["gamefile"],
            load_timeout_s=float(data.get("load_timeout_s", 300.0)),
            step_timeout_s=float(data.get("step_timeout_s", 60.0)),
        )
        load_s = time.perf_counter() - started
        steps: list[list[Any]] = []
        won = game_done = False
        stop_reason = "step_limit"
        symptoms = 0
        first_prompt: list[Message] = []
        try:
            initial = clean_observation(session.initial.observation)
            admissible = set(session.initial.admissible)
            for _ in range(max_steps):
                msgs = self.messages(type_key, version, memory, initial, steps)
                if not first_prompt:
                    first_prompt = msgs
                out = await state.generate("actor", msgs, cfg)
                action = normalize_action(out.text)
                valid: bool | None
                if not action:
                    observation, valid = NOTHING, False  # nothing to send to the game
                elif is_think(action):
                    observation, valid = THINK_OK, None
                else:
                    valid = action in admissible
                    result = await session.step(action)
                    observation = clean_observation(result.observation)
                    admissible = set(result.admissible)
                    won, game_done = result.won, result.done
                    syntax = put_syntax(action)
                    if syntax is not None and syntax != game_version and observation == NOTHING:
                        symptoms += 1
                steps.append([action, observation, valid])
                if won:
                    stop_reason = "won"
                    break
                if game_done:
                    stop_reason = "game_over"
                    break
                if should_stop(steps, max_repeats):
                    stop_reason = "repeated_action"
                    break
        finally:
            await session.close()

        if symptoms >= 2:
            VERSION_SYMPTOM_EPISODES.append(state.task.id)
            log.warning(
                "ALFWorld %s: %d put commands in the other version's syntax were answered "
                "`Nothing happens.` (games are %s); check env.version against the prompts",
                state.task.id,
                symptoms,
                game_version,
            )
        trajectory = "\n".join([initial, *(f"> {a}\n{o}" for a, o, _ in steps)])
        game_actions = [s for s in steps if s[2] is not None]
        info = {
            "game": state.task.id,
            "task_type": data.get("task_type"),
            "type_key": type_key,
            "object": data.get("object"),
            "receptacle": data.get("receptacle"),
            "goal": data.get("goal"),
            "version": version,
            "game_version": game_version,
            "won": won,
            "done": True,
            "game_done": game_done,
            "stop_reason": stop_reason,
            "n_actions": len(steps),
            "n_think": len(steps) - len(game_actions),
            "invalid_actions": sum(1 for s in game_actions if s[1] == NOTHING),
            "inadmissible_actions": sum(1 for s in game_actions if s[2] is False),
            "repeated_actions": sum(
                1 for i in range(1, len(steps)) if steps[i][0] == steps[i - 1][0]
            ),
            "version_symptoms": symptoms,
            "steps": steps,
            "worker": session.worker_index,
            "load_s": round(load_s, 3),
        }
        return Attempt(
            candidate=_outcome(info, steps),
            trajectory=trajectory,
            prompt=first_prompt,
            extra={"alfworld": info},
        )


def _outcome(info: dict[str, Any], steps: Sequence[Sequence[Any]]) -> str:
    n = info["n_actions"]
    reason = info["stop_reason"]
    if reason == "won":
        return f"won in {n} actions"
    if reason == "repeated_action":
        return f"not won: stopped after repeating `{steps[-1][0]}` ({n} actions)"
    if reason == "step_limit":
        return f"not won: step limit reached ({n} actions)"
    return f"not won: the game ended after {n} actions"


def _report_version_symptoms() -> None:
    # The end-of-run report of a mismatch that slipped past the start-up check (e.g.
    # version_check=warn, or a model that ignores the demonstrations' syntax).
    if VERSION_SYMPTOM_EPISODES:
        log.warning(
            "ALFWorld: %d episode(s) used the put syntax of the other game version again "
            "and again (first: %s); the prompts and env.version probably do not match",
            len(VERSION_SYMPTOM_EPISODES),
            VERSION_SYMPTOM_EPISODES[0],
        )


atexit.register(_report_version_symptoms)
