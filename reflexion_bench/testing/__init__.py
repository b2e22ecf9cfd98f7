"""Test helpers that other areas reuse (a fake LLM HTTP server speaking the OpenAI and
Anthropic wire formats). Nothing here is imported by a normal run."""
