"""The model interface: one abstract method.

Retries, rate limits, caching and accounting are layered around a client by the
model layer (see :mod:`reflexion_bench.models.layer`), never inside roles.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput


class ModelError(RuntimeError):
    """A model call failed for good (after any retries). The task is recorded as errored.

    ``retries`` is how many retries were spent before giving up (the run log records it).
    """

    def __init__(self, message: str, *, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries


class TransientModelError(ModelError):
    """A failure worth retrying: rate limit (429), overload, 5xx, timeout, dropped connection.

    Providers raise it; the model layer retries it with backoff, honouring ``retry_after``
    (seconds, from the server's ``Retry-After``) when the server sent one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None, kind: str = "") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.kind = kind or "transient"


class BudgetExceeded(ModelError):
    """The run's ``max_cost_usd`` or ``max_tokens_budget`` is spent; no further live calls.

    The runner stops the run cleanly on it (what was done is kept in the log).
    """


class CacheMissError(ModelError):
    """``cache=read_only`` and the request is not in the cache (never a silent live call)."""


class MissingAPIKeyError(ModelError):
    """The environment variable that should hold a provider's API key is not set."""


class ModelClient(abc.ABC):
    """A chat model backend."""

    #: Provider name (``openai``, ``anthropic``, ``embedded``, ``mock``...).
    provider: str = "unknown"
    #: Model identifier as the provider knows it.
    name: str = "unknown"

    @abc.abstractmethod
    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        """Return one completion for ``messages``."""

    def identity(self) -> dict[str, Any]:
        """What decides this model's answers besides the request: the response cache is
        keyed on it and provenance records it. Never holds credentials.

        The default is provider + name (+ the base URL, credentials stripped, for clients
        that have one); providers override it with what identifies them (the weights'
        SHA-256 for local files, request settings that change outputs...).
        """
        from reflexion_bench.models.identity import public_url

        out: dict[str, Any] = {"provider": self.provider, "model": self.name}
        base_url = getattr(self, "base_url", None)
        if base_url:
            out["base_url"] = public_url(str(base_url))
        return out

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (start a server, open a connection pool)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Must be safe to call twice."""
