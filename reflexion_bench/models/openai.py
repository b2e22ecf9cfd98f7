"""OpenAI chat completions through the official ``openai`` SDK (imported when chosen).

Any OpenAI-compatible endpoint works through ``base_url`` (vLLM, Ollama, llama.cpp
servers, the embedded model). The SDK's own retries are off: the model layer retries,
so that every retry is counted and logged in one place.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models._http import scrub, status_error
from reflexion_bench.models.base import (
    MissingAPIKeyError,
    ModelClient,
    ModelError,
    TransientModelError,
)
from reflexion_bench.models.formatting import (
    normalize_finish_reason,
    openai_chat_request,
    truncate_at_stop,
)
from reflexion_bench.models.identity import public_settings, public_url

#: Where the SDK sends requests when neither ``base_url`` nor ``OPENAI_BASE_URL`` is set.
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


def read_api_key(env_var: str | None, provider: str) -> str | None:
    """The key held by ``env_var`` (never logged); a clear error naming it when unset."""
    if not env_var:
        return None
    value = os.environ.get(env_var, "").strip()
    if not value:
        raise MissingAPIKeyError(
            f"{provider}: the environment variable {env_var} is not set; export your API key "
            f"in it (or point config key `model.api_key_env` at the variable that holds it)"
        )
    return value


class OpenAIChatClient(ModelClient):
    """Chat completions on OpenAI or any OpenAI-compatible server.

    Args:
        name: Model name sent to the endpoint.
        base_url: Endpoint root (e.g. ``http://127.0.0.1:8000/v1``); None for OpenAI.
        api_key_env: Environment variable holding the key; None for servers that need
            none. The key itself never goes into a config.
        timeout_s: Per-request HTTP timeout (the layer also bounds every call).
        max_tokens_param: ``max_tokens`` or ``max_completion_tokens`` (newer OpenAI models).
        omit_params: Sampling parameters not to send (e.g. ``[temperature, stop]`` for
            reasoning models); stop sequences are still enforced on the text.
        extra_body: Extra JSON fields for the request (server-specific options).
        provider: Provider label (keys the connection limits and the cache).
    """

    provider = "openai"

    def __init__(
        self,
        name: str = "gpt-4o-mini",
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        max_tokens_param: str = "max_tokens",
        omit_params: Sequence[str] = (),
        extra_body: dict[str, Any] | None = None,
        provider: str = "openai",
    ) -> None:
        if max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise ConfigError(
                "model.max_tokens_param", max_tokens_param, ("max_tokens", "max_completion_tokens")
            )
        self.name = name
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.max_tokens_param = max_tokens_param
        self.omit_params = tuple(omit_params)
        self.extra_body = dict(extra_body or {})
        self.provider = provider
        self._client: Any = None
        self._key: str | None = None
        # Validate omit_params now so a typo fails at build time, naming the key.
        try:
            openai_chat_request(name, [], GenerateConfig(), omit_params=self.omit_params)
        except ValueError as exc:
            raise ConfigError("model.omit_params", list(self.omit_params), str(exc)) from None

    def identity(self) -> dict[str, Any]:
        """Endpoint (credentials stripped) + served model id + request settings that change
        answers. The endpoint is resolved as the SDK does (``OPENAI_BASE_URL`` when no
        ``base_url``), so two servers behind one ``model.name`` never share cache entries.
        """
        base = self.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL
        out: dict[str, Any] = {
            "provider": self.provider,
            "model": self.name,
            "base_url": public_url(base),
        }
        settings: dict[str, Any] = {}
        if self.omit_params:  # an omitted temperature means the server's default
            settings["omit_params"] = sorted(self.omit_params)
        if self.extra_body:
            settings["extra_body"] = public_settings(self.extra_body)
        if settings:
            out["request_settings"] = settings
        return out

    def use_api_key(self, key: str) -> None:
        """Set the key in code (the embedded server's per-process token); configs use env vars."""
        self._key = key

    async def start(self) -> None:
        if self._client is not None:
            return
        import openai  # lazily: only when this provider is chosen

        key = self._key or read_api_key(self.api_key_env, self.provider) or "not-needed"
        self._key = key
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s
        )

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        import openai

        if self._client is None:
            await self.start()
        req = openai_chat_request(
            self.name,
            messages,
            config,
            max_tokens_param=self.max_tokens_param,
            omit_params=self.omit_params,
        )
        started = time.perf_counter()
        try:
            resp = await self._client.chat.completions.create(
                **req,
                timeout=min(self.timeout_s, config.timeout_s),
                **({"extra_body": self.extra_body} if self.extra_body else {}),
            )
        except openai.APITimeoutError as exc:
            raise TransientModelError(
                f"{self.provider} request timed out: {exc}", kind="timeout"
            ) from None
        except openai.APIConnectionError as exc:
            raise TransientModelError(
                scrub(f"{self.provider} connection failed: {exc}", self._key), kind="connection"
            ) from None
        except openai.APIStatusError as exc:
            raise status_error(
                self.provider, exc.status_code, exc.message, exc.response.headers, self._key
            ) from None
        except openai.OpenAIError as exc:
            raise ModelError(scrub(f"{self.provider}: {exc}", self._key)) from None
        latency = time.perf_counter() - started
        if not resp.choices:
            raise ModelError(f"{self.provider}: the response has no choices")
        choice = resp.choices[0]
        text, stopped = truncate_at_stop(choice.message.content or "", config.stop)
        usage = resp.usage
        return ModelOutput(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            latency_s=latency,
            finish_reason="stop" if stopped else normalize_finish_reason(choice.finish_reason),
            model=self.name,
            served_model=_str_or_none(getattr(resp, "model", None)),
            # Changes from call to call on OpenAI's side: logged, never part of the key.
            system_fingerprint=_str_or_none(getattr(resp, "system_fingerprint", None)),
            endpoint=public_url(str(self._client.base_url)),
        )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
