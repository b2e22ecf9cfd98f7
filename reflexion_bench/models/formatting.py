"""Chat formatting: the ONE place that turns the harness's messages and sampling config
into each provider's request, and each provider's answer back into harness terms.

Stop sequences and ``max_tokens`` work on every provider: they are sent natively where
the API supports them, and :func:`truncate_at_stop` enforces stop sequences on the text
in every case (some APIs cap their number, Anthropic rejects whitespace-only ones, and
OpenAI-compatible servers vary), so a role sees the same text whichever backend runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.types import GenerateConfig, Message

#: OpenAI's chat completions accept at most this many stop sequences.
OPENAI_MAX_STOP = 4

_OPENAI_PARAMS = ("max_tokens", "temperature", "top_p", "stop", "seed")


def truncate_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop sequence (excluded, like the APIs do).

    Returns the text and whether a stop sequence was found.
    """
    cut = -1
    for s in stop:
        if not s:
            continue
        i = text.find(s)
        if i >= 0 and (cut < 0 or i < cut):
            cut = i
    return (text[:cut], True) if cut >= 0 else (text, False)


def openai_chat_request(
    model: str,
    messages: Sequence[Message],
    config: GenerateConfig,
    *,
    max_tokens_param: str = "max_tokens",
    omit_params: Sequence[str] = (),
) -> dict[str, Any]:
    """Keyword arguments of ``client.chat.completions.create`` for one call.

    Args:
        model: Model name sent to the endpoint.
        messages: Harness messages (system/user/assistant map one to one).
        config: Sampling parameters.
        max_tokens_param: ``max_tokens`` (most OpenAI-compatible servers) or
            ``max_completion_tokens`` (current OpenAI models).
        omit_params: Parameters the endpoint rejects (e.g. ``temperature``/``stop`` for
            reasoning models); stop sequences are still enforced on the text.
    """
    unknown = set(omit_params) - set(_OPENAI_PARAMS)
    if unknown:
        raise ValueError(f"omit_params: unknown {sorted(unknown)} (allowed: {_OPENAI_PARAMS})")
    req: dict[str, Any] = {"model": model, "messages": [m.to_dict() for m in messages]}
    if "max_tokens" not in omit_params:
        req[max_tokens_param] = config.max_tokens
    if "temperature" not in omit_params:
        req["temperature"] = config.temperature
    if "top_p" not in omit_params and config.top_p != 1.0:
        req["top_p"] = config.top_p
    if "stop" not in omit_params and config.stop:
        req["stop"] = list(config.stop[:OPENAI_MAX_STOP])
    if "seed" not in omit_params and config.seed is not None:
        req["seed"] = config.seed
    return req


#: ``model.sampling`` of the Anthropic client: ``omit`` sends no sampling parameter (the
#: provider's defaults apply), ``send`` sends ``temperature``/``top_p`` in the body.
ANTHROPIC_SAMPLING = ("omit", "send")


def anthropic_unsent(sampling: str) -> tuple[str, ...]:
    """The :class:`GenerateConfig` fields an Anthropic request does not carry.

    The messages API has no ``seed``; under ``sampling=omit`` neither ``temperature`` nor
    ``top_p`` is sent. The layer keys the cache on what is sent (these are recorded as
    not sent) and treats a call whose temperature is not sent as sampled.
    """
    if sampling not in ANTHROPIC_SAMPLING:
        raise ValueError(f"sampling={sampling!r}: one of {ANTHROPIC_SAMPLING}")
    return ("temperature", "top_p", "seed") if sampling == "omit" else ("seed",)


def anthropic_messages_request(
    model: str, messages: Sequence[Message], config: GenerateConfig, *, sampling: str = "omit"
) -> dict[str, Any]:
    """Keyword arguments of ``client.messages.create`` for one call.

    System messages go into the top-level ``system`` parameter (the Anthropic way);
    consecutive messages of the same role are merged, because the API requires strictly
    alternating user/assistant turns starting with the user. Whitespace-only stop
    sequences (which the API rejects) are left to :func:`truncate_at_stop`.

    Sampling parameters: the API version the current SDK pins (2026-10-21) answers 400
    to ``temperature``/``top_p``/``top_k`` on every model, and the SDK's
    ``messages.create`` no longer takes them, so by default (``sampling="omit"``) none
    is sent and :func:`anthropic_unsent` says so to the cache key and provenance.
    ``sampling="send"`` (an endpoint that still accepts them) puts ``temperature``, and
    ``top_p`` when not 1, in the body through ``extra_body``.
    """
    unsent = anthropic_unsent(sampling)
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict[str, str]] = []
    for m in messages:
        if m.role == "system":
            continue
        if turns and turns[-1]["role"] == m.role:
            turns[-1]["content"] += "\n\n" + m.content
        else:
            turns.append({"role": m.role, "content": m.content})
    if not turns or turns[0]["role"] != "user":
        raise ValueError(
            "the Anthropic messages API needs the first non-system message to be from the user"
        )
    req: dict[str, Any] = {
        "model": model,
        "messages": turns,
        "max_tokens": config.max_tokens,
    }
    if system:
        req["system"] = system
    stops = [s for s in config.stop if s.strip()]
    if stops:
        req["stop_sequences"] = stops
    body: dict[str, Any] = {}
    if "temperature" not in unsent:
        body["temperature"] = config.temperature
    if "top_p" not in unsent and config.top_p != 1.0:
        body["top_p"] = config.top_p
    if body:
        req["extra_body"] = body
    return req


_FINISH = {
    # Anthropic stop reasons -> the OpenAI vocabulary the harness uses.
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def normalize_finish_reason(reason: str | None) -> str:
    """One vocabulary for finish reasons: ``stop``, ``length``, ``content_filter``..."""
    if not reason:
        return "stop"
    return _FINISH.get(reason, reason)
