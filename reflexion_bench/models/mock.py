"""A scripted model for tests: returns canned outputs in order, records every prompt.

Registered like any provider (``model=mock``), so the whole loop runs offline. It
raises when its script is exhausted, so a test that makes more calls than it
expects fails loudly instead of silently reusing an answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models.base import ModelClient, ModelError

Responder = Callable[[Sequence[Message], GenerateConfig], str]


class MockModel(ModelClient):
    """Scripted responses.

    Args:
        responses: Replies returned in call order.
        responder: Alternatively, a function of (messages, config) -> reply
            (used when ``responses`` is empty), for tests with concurrent tasks.
        cycle: Start again from the first response when exhausted instead of raising.
        latency_s: Simulated latency per call (async sleep).
        name: Model name reported in the log.
    """

    provider = "mock"

    def __init__(
        self,
        responses: Sequence[str] | None = None,
        responder: Responder | None = None,
        cycle: bool = False,
        latency_s: float = 0.0,
        name: str = "mock",
    ) -> None:
        self.responses = list(responses or [])
        self.responder = responder
        self.cycle = cycle
        self.latency_s = latency_s
        self.name = name
        self.calls: list[tuple[list[Message], GenerateConfig]] = []
        self._next = 0

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        self.calls.append((list(messages), config))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self.responses:
            if self._next >= len(self.responses):
                if not self.cycle:
                    raise ModelError(
                        f"mock model script exhausted after {len(self.responses)} responses"
                    )
                self._next = 0
            text = self.responses[self._next]
            self._next += 1
        elif self.responder is not None:
            text = self.responder(messages, config)
        else:
            raise ModelError("mock model has neither `responses` nor a `responder`")
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        return ModelOutput(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(text.split()),
            latency_s=self.latency_s,
            model=self.name,
        )

    @property
    def prompts(self) -> list[str]:
        """The text of every call's messages joined, in call order (for assertions)."""
        return ["\n".join(m.content for m in msgs) for msgs, _ in self.calls]
