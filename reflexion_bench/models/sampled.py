"""A model client that forces a temperature and a sample index on every call.

Strategies that change the actor's sampling for one task (``best_of_n``; the others
through :func:`reflexion_bench.strategies.base.use_actor`) wrap the run's shared
client in it. It lives with the clients, below the strategies,
so that every strategy module can use it without importing another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reflexion_bench.core.sampling import sample_seed
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput, SentParams
from reflexion_bench.models.base import ModelClient


class SampledClient(ModelClient):
    """Wraps a started client: forces a temperature and a sample index on every call.

    It owns nothing: ``start``/``aclose`` are no-ops because the wrapped client is the
    run's shared one, started and closed by the runner.
    """

    def __init__(self, inner: ModelClient, temperature: float, sample_index: int) -> None:
        self.inner = inner
        self.temperature = temperature
        self.sample_index = sample_index
        self.provider = inner.provider
        self.name = inner.name

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def sampled(self, config: GenerateConfig) -> GenerateConfig:
        """``config`` as this client sends it: its temperature, its sample index and the
        sample's own seed (:func:`~reflexion_bench.core.sampling.sample_seed`)."""
        seed = None if config.seed is None else sample_seed(int(config.seed), self.sample_index)
        return config.replace(
            temperature=self.temperature, sample_index=self.sample_index, seed=seed
        )

    def sent_params(self, config: GenerateConfig) -> SentParams:
        return self.inner.sent_params(self.sampled(config))

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        return await self.inner.generate(messages, self.sampled(config))
