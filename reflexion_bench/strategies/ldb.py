"""``ldb``: debugging with runtime values (LDB, Zhong et al. 2024), on the model's own tests.

After a trial fails its self-tests, the first failing self-test is run once more in
the sandbox under a line tracer (:mod:`reflexion_bench.strategies.ldb_tracer`: in the
candidate's own sandboxed process, never in the judge, and never on a hidden test). The
tracer records, for each executed line of the candidate's code, the line number and
its locals (bounded: ``max_events`` events, ``value_chars`` characters per value). The
model (role ``debugger``, prompts ``reflector_system`` + ``trace_user``) explains from
those values where the computation goes wrong; the next trial's actor sees the previous
implementation, its self-test results, and the trace with that explanation (memory
kind ``trace_debug``). LDB proper segments the trace into basic blocks and asks for a
verdict per block; here the unit is the line (the brief allows either), shown as one
block of text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback, Message
from reflexion_bench.environments.code_common import (
    CodePrompts,
    base_values,
    code_language,
    entry_point_of,
    role_config,
)
from reflexion_bench.memory.base import MemoryEntry
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.sandbox.base import ExecRequest, Limits
from reflexion_bench.strategies.base import Strategy, note_trial_extra

TEMPLATES = ("reflector_system", "trace_user")
MARK = "LDB-TRACE "


def tracer_source() -> str:
    return (
        resources.files("reflexion_bench.strategies").joinpath("ldb_tracer.py").read_text("utf-8")
    )


def first_failing_test(feedback: Feedback) -> str | None:
    for row in feedback.details.get("results") or []:
        if row.get("status") != "pass":
            return str(row.get("test"))
    return None


def format_trace(data: dict[str, Any], max_chars: int = 3000) -> str:
    """The tracer's events as lines the model reads (bounded to ``max_chars``)."""
    lines = []
    for ev in data.get("events") or []:
        where = f"{ev.get('fn')} line {ev.get('line')}"
        if "return" in ev:
            lines.append(f"{where}: returns {ev['return']}")
        elif "raised" in ev:
            lines.append(f"{where}: raises {ev['raised']}")
        else:
            local = ", ".join(f"{k}={v}" for k, v in (ev.get("locals") or {}).items())
            lines.append(f"{where}: {local or '(no locals)'}")
    if data.get("dropped"):
        half = len(lines) // 2
        lines.insert(half, f"... ({data['dropped']} steps not shown) ...")
    lines.append(f"test outcome: {data.get('outcome')}")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 20] + "\n... (truncated)"


async def trace_test(
    state: TaskState,
    program: str,
    test: str,
    *,
    max_events: int,
    value_chars: int,
    timeout_s: float,
) -> dict[str, Any]:
    """Run ``test`` against ``program`` under the tracer in the sandbox; its JSON, or
    ``{"error": ...}`` when the run produced none (timeout, crash, forged output)."""
    entry = entry_point_of(state.task)
    request = ExecRequest(
        argv=("{python}", "ldb_trace.py", entry, str(max_events), str(value_chars)),
        files={"ldb_trace.py": tracer_source(), "solution.py": program, "test.py": test},
        timeout_s=timeout_s,
        limits=Limits(memory_mb=512, cpu_s=max(1, int(timeout_s)), output_bytes=64_000),
    )
    result = await state.sandbox.exec(request)
    for line in reversed(result.stdout.splitlines()):
        if line.startswith(MARK):
            try:
                data = json.loads(line[len(MARK) :])
            except json.JSONDecodeError:
                break
            if isinstance(data, dict):
                return data
            break
    return {"error": f"no trace ({result.reason}, exit {result.exit_code})"}


@dataclass
class LdbStrategy(Strategy):
    """Args:
    max_events: Trace events kept (the first and the last halves of a long run).
    value_chars: Characters kept of each value's repr.
    trace_timeout_s: Time limit of the traced test.
    debugger_max_tokens: Token budget of the explanation.
    prompts: An external prompt pack layered over the project's code pack.
    """

    name: str = "ldb"
    memory_content: str = "feedback"
    max_events: int = 40
    value_chars: int = 60
    trace_timeout_s: float = 5.0
    debugger_max_tokens: int = 256
    prompts: str | None = None
    _pack: CodePrompts | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.self_test:
            raise ConfigError(
                "strategy.self_test", self.self_test, "true (ldb traces a failing self-test)"
            )
        if self.max_events < 2:
            raise ConfigError("strategy.max_events", self.max_events, "an integer >= 2")

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        k = state.trial_index
        test = first_failing_test(feedback)
        if test is None:
            # No self-test ran (none generated, or the program does not load): nothing
            # to trace; the test output alone goes on, as in `tests_no_reflection`.
            note_trial_extra(state, ldb_trace=None)
            return None, [MemoryEntry("feedback", feedback.text, k)] if feedback.text else []
        data = await trace_test(
            state,
            attempt.candidate,
            test,
            max_events=self.max_events,
            value_chars=self.value_chars,
            timeout_s=self.trace_timeout_s,
        )
        trace = data["error"] if "error" in data else format_trace(data)
        if self._pack is None:
            self._pack = CodePrompts("code/{language}", self.prompts, TEMPLATES, "strategy.prompts")
        lang = code_language(state.task)
        values = {
            **base_values(state.task),
            "implementation": attempt.candidate.strip("\n"),
            "test": test,
            "trace": trace,
        }
        messages = [
            Message("system", self._pack.render(lang, "reflector_system", **values)),
            Message("user", self._pack.render(lang, "trace_user", **values)),
        ]
        out = await state.generate(
            "debugger", messages, role_config(state, self.debugger_max_tokens)
        )
        explanation = out.text.strip() or "(no explanation)"
        note_trial_extra(
            state, ldb_test=test, ldb_trace=trace, ldb_events=len(data.get("events") or [])
        )
        text = f"Failing test: {test}\nRuntime values:\n{trace}\n\nDiagnosis: {explanation}"
        return explanation, [MemoryEntry("trace_debug", text, k)]
