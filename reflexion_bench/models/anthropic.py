"""Anthropic messages API through the official ``anthropic`` SDK (imported when chosen).

System prompts go into the ``system`` parameter (see
:func:`reflexion_bench.models.formatting.anthropic_messages_request`). The SDK's own
retries are off: the model layer retries and counts them.

Sampling parameters are sent or not as ``model.sampling`` says (the current API takes
none): what is not sent is named by :attr:`AnthropicClient.unsent_params`, recorded in
the identity (so in the cache key and provenance), and warned about by the layer.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models._http import scrub, status_error
from reflexion_bench.models.base import ModelClient, ModelError, TransientModelError
from reflexion_bench.models.formatting import (
    ANTHROPIC_SAMPLING,
    anthropic_messages_request,
    anthropic_unsent,
    normalize_finish_reason,
    truncate_at_stop,
)
from reflexion_bench.models.identity import public_settings, public_url
from reflexion_bench.models.openai import read_api_key

#: Where the SDK sends requests when neither ``base_url`` nor ``ANTHROPIC_BASE_URL`` is set.
ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"


class AnthropicClient(ModelClient):
    """Claude models through the messages API.

    Args:
        name: Model name (e.g. ``claude-3-5-haiku-latest``).
        base_url: API root; None for Anthropic's.
        api_key_env: Environment variable holding the key.
        timeout_s: Per-request HTTP timeout (the layer also bounds every call).
        extra_body: Extra JSON fields for the request.
        sampling: ``omit`` (default: the current API rejects sampling parameters, so
            ``temperature``/``top_p`` are not sent and the provider's defaults apply) or
            ``send`` (an endpoint that accepts them gets the run's values); see
            :func:`~reflexion_bench.models.formatting.anthropic_messages_request`.
    """

    provider = "anthropic"

    def __init__(
        self,
        name: str = "claude-3-5-haiku-latest",
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        timeout_s: float = 120.0,
        extra_body: dict[str, Any] | None = None,
        sampling: str = "omit",
    ) -> None:
        if sampling not in ANTHROPIC_SAMPLING:
            raise ValueError(f"model.sampling={sampling!r}: one of {ANTHROPIC_SAMPLING}")
        self.sampling = sampling
        self.name = name
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.extra_body = dict(extra_body or {})
        self._client: Any = None
        self._key: str | None = None

    def identity(self) -> dict[str, Any]:
        """Endpoint (credentials stripped, resolved as the SDK does) + model + extra body."""
        base = self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_URL
        out: dict[str, Any] = {
            "provider": self.provider,
            "model": self.name,
            "base_url": public_url(base),
        }
        settings: dict[str, Any] = {"not_sent": list(self.unsent_params)}
        if self.extra_body:
            settings["extra_body"] = public_settings(self.extra_body)
        out["request_settings"] = settings
        return out

    @property
    def unsent_params(self) -> tuple[str, ...]:
        """Sampling fields of a call this client does not send (the layer keys the cache
        on what is sent and warns once)."""
        return anthropic_unsent(self.sampling)

    async def start(self) -> None:
        if self._client is not None:
            return
        import anthropic  # lazily: only when this provider is chosen

        key = read_api_key(self.api_key_env, self.provider)
        self._key = key
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s
        )

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        import anthropic

        if self._client is None:
            await self.start()
        try:
            req = anthropic_messages_request(self.name, messages, config, sampling=self.sampling)
        except ValueError as exc:
            raise ModelError(f"anthropic: {exc}") from None
        # The user's extra_body is sent too (and is in the identity); it wins on a clash.
        body = {**req.pop("extra_body", {}), **self.extra_body}
        started = time.perf_counter()
        try:
            resp = await self._client.messages.create(
                **req,
                timeout=min(self.timeout_s, config.timeout_s),
                **({"extra_body": body} if body else {}),
            )
        except anthropic.APITimeoutError as exc:
            raise TransientModelError(
                f"anthropic request timed out: {exc}", kind="timeout"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise TransientModelError(
                scrub(f"anthropic connection failed: {exc}", self._key), kind="connection"
            ) from None
        except anthropic.APIStatusError as exc:
            raise status_error(
                "anthropic", exc.status_code, exc.message, exc.response.headers, self._key
            ) from None
        except anthropic.AnthropicError as exc:
            raise ModelError(scrub(f"anthropic: {exc}", self._key)) from None
        latency = time.perf_counter() - started
        raw = "".join(
            getattr(b, "text", "") for b in resp.content if getattr(b, "type", "") == "text"
        )
        text, stopped = truncate_at_stop(raw, config.stop)
        usage = resp.usage
        prompt_tokens = int(getattr(usage, "input_tokens", 0) or 0)
        # Cached prompt tokens are billed (differently) but are still prompt tokens.
        for extra in ("cache_creation_input_tokens", "cache_read_input_tokens"):
            prompt_tokens += int(getattr(usage, extra, 0) or 0)
        return ModelOutput(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            latency_s=latency,
            finish_reason="stop" if stopped else normalize_finish_reason(resp.stop_reason),
            model=self.name,
            served_model=getattr(resp, "model", None) or None,
        )
