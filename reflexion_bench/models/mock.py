"""A scripted model for tests: returns canned outputs in order, records every prompt.

Registered like any provider (``model=mock``), so the whole loop runs offline. It
raises when its script is exhausted, so a test that makes more calls than it
expects fails loudly instead of silently reusing an answer.

With no script at all (``reflexion-bench run model=mock``), it answers every call with
:func:`default_reply`: a deterministic reply in the form the prompt asks for (a Python
or Rust function with the prompt's signature, a HotpotQA ``Finish[...]`` step, an
ALFWorld action), so the command is a real dry run of every environment: prompts,
parsing, sandbox, scoring, log and report, with no model (like Inspect's mockllm).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models.base import ModelClient, ModelError

_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(.*?\)[^:\n]*:", re.M | re.S)
_RS_FN = re.compile(r"^([ \t]*)(?:pub[ \t]+)?fn[ \t]+\w+[^{;]*", re.M)

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
            text = default_reply(messages)
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


def _python_reply(text: str) -> str | None:
    defs = list(_PY_DEF.finditer(text))
    if not defs:
        return None
    # The last signature is the one asked for (few-shot examples come first).
    m = defs[-1]
    indent = m.group(1)
    imports = list(
        dict.fromkeys(  # once each, in order (a retry's prompt repeats earlier code)
            line
            for line in text[: m.start()].splitlines()
            if line.startswith(("from ", "import ")) and "`" not in line
        )
    )
    head = ""
    if indent:  # a method (LeetCode's `class Solution:`): keep the class line
        cls = [c for c in re.finditer(r"^class[ \t]+\w+.*:[ \t]*$", text[: m.start()], re.M)]
        head = cls[-1].group(0) + "\n" if cls else ""
        if not head:
            indent = ""
    signature = m.group(0)[len(m.group(1)) :]
    body = f"{head}{indent}{signature}\n{indent}    return None\n"
    return "```python\n" + "".join(f"{i}\n" for i in imports) + body + "```"


def _python_tests(text: str) -> str | None:
    """Self-tests for a Python function: one assert calling it with zeros. They parse and
    run, and fail on the mock's own `return None`, so a dry run also goes through the
    failed-test path (feedback, reflection, memory, the next trial)."""
    if "You write unit tests" not in text or "```python" not in text:
        return None
    name = re.search(r"by its name `(\w+)`", text)
    if name is None:
        return None
    sig = re.search(rf"def[ \t]+{name.group(1)}[ \t]*\((.*?)\)", text, re.S)
    params = [p for p in (sig.group(1).split(",") if sig else []) if p.strip()]
    params = [p for p in params if p.strip().split(":")[0].strip() not in ("self", "cls")]
    args = ", ".join("0" for _ in params)
    return f"```python\nassert {name.group(1)}({args}) == 0\n```"


def _rust_reply(text: str) -> str | None:
    fns = list(_RS_FN.finditer(text))
    if not fns:
        return None
    m = fns[-1]
    signature = m.group(0).strip()
    if m.group(1):  # a method: inside `impl Solution { ... }`
        return f"```rust\nimpl Solution {{\n    {signature} {{\n        todo!()\n    }}\n}}\n```"
    return f"```rust\n{signature} {{\n    todo!()\n}}\n```"


def default_reply(messages: Sequence[Message]) -> str:
    """A deterministic reply of the form the prompt asks for (see the module doc).

    What is asked is read from the prompt's text, most specific first: an ALFWorld
    game (``Your task is to:``), a HotpotQA step (``Finish[``), a Rust function, a
    Python function; anything else (a reflection) gets a fixed sentence.
    """
    text = "\n".join(m.content for m in messages)
    last = messages[-1].content if messages else ""
    tests = _python_tests(text)
    if tests is not None:
        return tests
    if "Your task is to:" in text:
        return "look"
    if "Finish[" in text:
        return "Thought: I answer from what I know.\nAction: Finish[unknown]"
    if "```rust" in text or re.search(r"\bRust\b", text):
        reply = _rust_reply(last) or _rust_reply(text)
        if reply:
            return reply
    reply = _python_reply(last) or _python_reply(text)
    if reply:
        return reply
    return "The mock model has no reflection: it answers every prompt the same way."
