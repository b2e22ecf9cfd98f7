"""The model interface: one abstract method.

Retries, rate limits, caching and accounting are layered around a client by the
model layer (see :mod:`reflexion_bench.models.layer`), never inside roles.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput


class ModelError(RuntimeError):
    """A model call failed for good (after any retries). The task is recorded as errored."""


class ModelClient(abc.ABC):
    """A chat model backend."""

    #: Provider name (``openai``, ``anthropic``, ``embedded``, ``mock``...).
    provider: str = "unknown"
    #: Model identifier as the provider knows it.
    name: str = "unknown"

    @abc.abstractmethod
    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        """Return one completion for ``messages``."""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (start a server, open a connection pool)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Must be safe to call twice."""
