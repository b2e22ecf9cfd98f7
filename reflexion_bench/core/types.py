"""Plain data types shared by every role.

These are deliberately small, JSON-serialisable dataclasses: every one of them ends
up in the run log, and the run log is the source of truth for every report.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message in the harness's provider-neutral format."""

    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class GenerateConfig:
    """Sampling parameters of one call.

    ``sample_index`` distinguishes otherwise identical requests when several samples
    are wanted at temperature > 0 (it is part of the cache key, never sent).
    """

    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    sample_index: int = 0
    timeout_s: float = 600.0
    max_reply_chars: int = 200_000
    """Characters kept of a reply (never sent; not a cache key): a runaway reply of
    megabytes would otherwise be copied into every later prompt and log record."""

    def replace(self, **changes: Any) -> GenerateConfig:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class SentParams:
    """The sampling values one request actually carried (None: the field was not sent).

    What a role asks for (``GenerateConfig``) is not always what goes out: a sampled
    strategy's wrapper replaces the temperature and seed, and a provider may drop a
    field it does not take. The run log records these beside the request.
    """

    temperature: float | None
    seed: int | None


@dataclass
class ModelOutput:
    """What a model backend returns for one call."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = "stop"
    model: str = ""
    cost_usd: float = 0.0
    cached: bool = False
    retries: int = 0
    served_model: str | None = None
    """The model id the API says answered (e.g. a dated snapshot of an alias)."""
    system_fingerprint: str | None = None
    """OpenAI's per-call backend fingerprint: logged with the call, never a cache key."""
    reply_chars: int | None = None
    """The reply's full length in characters when it was cut at ``max_reply_chars``."""
    endpoint: str | None = None
    """The URL of the server that answered (a pool of servers records which one)."""
    endpoint_failovers: list[str] | None = None
    """Endpoints of a pool that failed this call before ``endpoint`` answered (``URL:
    kind``); the call moved on without spending a retry."""

    def cap_reply(self, max_chars: int) -> None:
        """Keep the first ``max_chars`` characters of the text (the answer comes first;
        what runs on is repetition) and remember the full length in ``reply_chars``."""
        if len(self.text) > max_chars:
            if self.reply_chars is None:
                self.reply_chars = len(self.text)
            self.text = self.text[:max_chars]


@dataclass
class ModelCall:
    """One model call as recorded in the run log: its request (``messages``) and reply in
    full for every role (each text capped at ``generate.max_reply_chars``), its usage,
    finish reason, retries and the temperature asked for.

    A replayed call (``cached``) carries the tokens, cost and latency of the live call it
    replays, so sums over calls are "as run live"; "paid now" sums the calls not cached.
    """

    role: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    finish_reason: str
    cost_usd: float = 0.0
    cached: bool = False
    retries: int = 0
    error: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    reply_chars: int | None = None
    """Set when the reply was cut: its full length, and the cap it was cut at."""
    max_reply_chars: int | None = None
    temperature: float | None = None
    """The sampling temperature asked for: the report tells seeds that cannot differ
    (every call greedy) from seeds that could."""
    temperature_sent: float | None = None
    """The temperature that went out with the request: after any override by a sampled
    strategy (its trials 2..K send ``retry_temperature``, not ``temperature``), None where
    the client sends none (``model=anthropic`` with ``model.sampling=omit``). Older logs
    hold a boolean here (or nothing): read it with :func:`sent_temperature`."""
    seed_sent: int | None = None
    """The seed that went out with the request (a sampled call's derived sample seed,
    :func:`reflexion_bench.core.sampling.sample_seed`), None where none was sent (no
    seed configured, or a provider without one, e.g. Anthropic). Absent in older logs."""
    endpoint: str | None = None
    """The URL of the server that answered (set by a pool of servers; None in older logs)."""
    endpoint_failovers: list[str] | None = None
    """Pool endpoints that failed this call first (``URL: kind``), if any."""
    messages: list[dict[str, str]] | None = None
    """The request as sent, ``[{role, content}]`` (None in logs written before every call
    was logged in full: there only the actor's prompt is in the trial's ``prompt``)."""
    reply: str | None = None
    """The reply's text as the role received it (capped like it); None for a failed call."""
    messages_chars: int | None = None
    """Set when a message was cut at the cap: the request's full length in characters."""
    messages_base: dict[str, int] | None = None
    """Set when ``messages`` is what this request adds to an earlier call of the same
    role in the trial (``{"call": i, "kept": k}``; :mod:`reflexion_bench.core.calllog`)."""


@dataclass
class Task:
    """One benchmark problem.

    ``prompt`` is what the actor sees; ``data`` holds everything environment
    specific (entry point, hidden tests, gold answer, game file...). Hidden
    material stays in ``data`` and no actor reads it.
    """

    id: str
    prompt: str
    benchmark: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Attempt:
    """One trial's output of the actor."""

    candidate: str
    """The submitted artefact: a program, an answer, or the final game state summary."""
    trajectory: str = ""
    """The full text of the attempt (ReAct steps, raw completion), for raw-log memory."""
    prompt: list[Message] = field(default_factory=list)
    """The messages the actor sent for its (last) generation."""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Feedback:
    """The in-loop evaluator's verdict: what the reflector sees.

    ``passed`` is None when no in-loop evaluation ran (e.g. strategy ``simple``).
    """

    passed: bool | None
    text: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Score:
    """The final scorer's verdict: what the benchmark reports. Never shown to the actor."""

    passed: bool
    status: str = "fail"
    """One of pass / fail / timeout / error (code); pass / fail otherwise."""
    value: float | None = None
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def sent_temperature(call: Mapping[str, Any]) -> float | None:
    """The temperature a logged model call (one ``model_calls`` entry of the run log)
    sent, None where it sent none.

    Three forms are read: a number or null in ``temperature_sent`` (current logs, beside
    ``seed_sent``); a boolean there (older logs: whether the ``temperature`` asked for
    went out, with no wrapper override visible); no such field (older still, and
    imported logs), where the temperature asked for is taken as sent.
    """
    sent = call.get("temperature_sent")
    asked = call.get("temperature")
    if isinstance(sent, bool):  # before bool, an int: the older boolean form
        return float(asked) if sent and asked is not None else None
    if sent is None:
        if "seed_sent" in call:  # the current form: null is "not sent"
            return None
        return None if asked is None else float(asked)
    return float(sent)


def sent_seed(call: Mapping[str, Any]) -> int | None:
    """The seed a logged model call sent (None: none, or a log older than the field)."""
    seed = call.get("seed_sent")
    return None if seed is None or isinstance(seed, bool) else int(seed)


def to_jsonable(obj: Any) -> Any:
    """Turn dataclasses (recursively) into JSON-friendly dicts."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    return obj


def clean_json(value: Any) -> Any:
    """``value`` with NaN/inf replaced by None (JSON has neither; the page shows n/a)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value
