"""The model interface: one abstract method.

Retries, rate limits, caching and accounting are layered around a client by the
model layer (see :mod:`reflexion_bench.models.layer`), never inside roles.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput, SentParams


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

    def sent_params(self, config: GenerateConfig) -> SentParams:
        """The temperature and seed this client puts into the request for ``config``
        (None: not sent). The run log records them beside what was asked for, so a
        report never mistakes a setting that a wrapper overrode, or a provider dropped,
        for the one that went out.

        The default: ``config``'s values, minus the fields named by the client's
        ``unsent_params`` (Anthropic) or ``omit_params`` (OpenAI-compatible servers).
        A client that changes the config before sending overrides this.
        """
        # Read by name: these are per-provider attributes, not part of this interface
        # (``unsent_params`` also keys the response cache, so it is not widened here).
        unsent = set(getattr(self, "unsent_params", ()) or ()) | set(
            getattr(self, "omit_params", ()) or ()
        )
        return SentParams(
            temperature=None if "temperature" in unsent else float(config.temperature),
            seed=None if "seed" in unsent or config.seed is None else int(config.seed),
        )

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (start a server, open a connection pool)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Must be safe to call twice."""
