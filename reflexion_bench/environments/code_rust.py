"""Rust as a :class:`~reflexion_bench.environments.code_common.CodeLanguage`.

Programs are compiled with ``rustc`` (no Cargo, no crates: the benchmarks use the
standard library only) *inside the sandbox*, by a small driver
(``_rust_driver.py``) that gives compilation and execution their own timeouts and
memory limits. Compiler errors are feedback like failing asserts: the in-loop
evaluator shows them to the reflector, and the hidden verdict of a program that does
not compile is ``error``.

Three ways to run a program:

- unit tests (self-generated or visible ``assert_eq!`` lines): one function per
  test, each run in its own process; a test that does not type-check is reported
  and dropped, the others still run;
- MultiPL-E hidden tests (HumanEval-rs, MBPP-rs): the test file brings its own
  ``fn main``;
- Python-judged hidden tests (LeetcodeHard-rs): the binary serves calls as JSON
  lines and the Python ``check(candidate)`` of the Python variant judges it, so the
  Rust and Python variants share one set of hidden tests.

The project's Rust prompts live in ``reflexion_bench/prompts/rust/``; prompt paths
written for the generic code prompts (``code/{language}/...``) resolve there.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.core.types import Task
from reflexion_bench.environments._rust_syntax import brace_balance, match_close, split_top_level
from reflexion_bench.environments.code_common import (
    CodeLanguage,
    ExtractedCode,
    HiddenOutcome,
    ParsedTests,
    TestOutcome,
    describe_exec_failure,
    resolve_prompt_path,
    tail,
)
from reflexion_bench.environments.rust_judge import (
    JUDGE_RUNTIME,
    RUST_DECODER,
    RUST_ENCODER,
    CallPlan,
    Unsplittable,
    Verdict,
    combine,
    decodable_type,
    plan_self_tests,
    plan_test_file,
)
from reflexion_bench.environments.rust_serve import RustFn, serve_main
from reflexion_bench.judge import CONFIRM_FACTOR
from reflexion_bench.sandbox._box import wall_backstop
from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox, SandboxError
from reflexion_bench.sandbox.shipping import shipped

#: The driver as shipped: the box's rules inlined (it starts the model's binaries as
#: candidates, see sandbox/_box.py).
_DRIVER_SOURCE = shipped(Path(__file__).resolve().parent / "_rust_driver.py")

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_RS_TAGS = {"rust", "rs", ""}
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_CODE_START = re.compile(
    r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:fn |use |impl\b|struct |enum |const |static |mod |trait |type |#\[)"
)
_ASSERT_START = re.compile(r"\b(assert(?:_eq|_ne)?!)\s*\(")


class RustToolchainError(RuntimeError):
    """``rustc`` is missing or unusable on this machine."""


def _fn_pattern(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"^[ \t]*(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?fn\s+{re.escape(name)}\s*[<(]", re.M
    )


def defines_fn(code: str, name: str, top_level: bool = True) -> bool:
    """Whether ``code`` defines ``fn name`` (at column 0 when ``top_level``)."""
    for m in _fn_pattern(name).finditer(code):
        if not top_level or not code[m.start() : m.end()].startswith((" ", "\t")):
            return True
    return False


def remove_fn(code: str, name: str) -> tuple[str, int]:
    """Remove every top-level ``fn name`` item (e.g. a model's own ``fn main``)."""
    removed = 0
    while True:
        m = next(
            (
                m
                for m in _fn_pattern(name).finditer(code)
                if not code[m.start() : m.end()].startswith((" ", "\t"))
            ),
            None,
        )
        if m is None:
            return code, removed
        brace = code.find("{", m.end())
        close = match_close(code, brace) if brace >= 0 else -1
        if close < 0:
            # Never closed: a reply cut off by the token budget inside its demo `main`.
            return code[: m.start()].rstrip() + "\n", removed + 1
        code = code[: m.start()] + code[close + 1 :].lstrip("\n")
        removed += 1


# --------------------------------------------------------------------------- signatures


def parse_signature(prompt: str, name: str | None = None) -> RustFn:
    """The signature of ``fn name`` in ``prompt`` (the last ``fn`` when name is None)."""
    pat = re.compile(
        r"^[ \t]*(?:pub\s+)?fn\s+(%s)\s*(<[^>]*>)?\s*\(" % (re.escape(name) if name else r"\w+"),
        re.M,
    )
    found = list(pat.finditer(prompt))
    if not found:
        raise ValueError(f"no `fn {name or '...'}(` signature in the prompt")
    m = found[-1]
    close = match_close(prompt, m.end() - 1)
    if close < 0:
        raise ValueError("unbalanced parentheses in the signature")
    params_text = prompt[m.end() : close]
    rest = prompt[close + 1 :]
    brace = rest.find("{")
    ret_text = rest[: brace if brace >= 0 else len(rest)].strip()
    ret = ret_text[2:].strip() if ret_text.startswith("->") else "()"
    params: list[tuple[str, str]] = []
    for p in split_top_level(params_text):
        if ":" in p:
            pname, ptype = p.split(":", 1)
            params.append((pname.strip().removeprefix("mut ").strip(), ptype.strip()))
    text = prompt[m.start() : close + 1].strip() + (f" -> {ret}" if ret != "()" else "")
    return RustFn(m.group(1), tuple(params), ret, text)


# --------------------------------------------------------------------------- language


def _prompt_uses(prompt: str) -> list[str]:
    return [ln.strip() for ln in prompt.splitlines() if re.match(r"^\s*use\s+[\w:{}, *]+;\s*$", ln)]


def _leading_code(text: str) -> str | None:
    """Unfenced code: from the first code-looking line through the last line that
    closes an item (braces balanced and the line ends with ``}`` or ``;``)."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _CODE_START.match(ln)), None)
    if start is None:
        return None
    end = None
    acc = ""
    for k, ln in enumerate(lines[start:], start):
        acc += ln + "\n"
        if ln.rstrip().endswith(("}", ";")) and brace_balance(acc) == 0:
            end = k
    chosen = lines[start : (end + 1 if end is not None else len(lines))]
    return "\n".join(chosen).rstrip() + "\n"


class RustLanguage(CodeLanguage):
    """Rust, compiled with ``rustc`` in the sandbox.

    Args:
        rustc: The compiler inside the sandbox (a name on its PATH or an absolute path).
        edition: Rust edition passed to rustc.
        opt_level: ``-C opt-level``; 0 keeps debug assertions and overflow checks, as
            MultiPL-E's evaluation does; a task may override it (``data["opt_level"]``).
        compile_timeout_s: Time limit of one compilation.
        compile_memory_mb: Address-space limit of rustc (it needs ~0.5-1 GiB).
        run_memory_mb: Address-space limit of the compiled program.
        stack_mb: Stack of the thread that serves calls in Python-judged hidden tests.
        close_braces: Append the closing braces a whole-function solution lacks (a
            repair, on for live runs). Importing the paper's logs turns it off: its
            harness compiled the text as logged, so an unclosed function failed there.
    """

    name = "rust"
    display_name = "Rust"
    fence = "rust"

    def __init__(
        self,
        rustc: str = "rustc",
        edition: str = "2021",
        opt_level: int = 0,
        compile_timeout_s: float = 60.0,
        compile_memory_mb: int = 2048,
        run_memory_mb: int = 1024,
        stack_mb: int = 512,
        close_braces: bool = True,
    ) -> None:
        self.rustc = rustc
        self.close_braces = close_braces
        self.edition = str(edition)
        self.opt_level = opt_level
        self.compile_timeout_s = compile_timeout_s
        self.compile_memory_mb = compile_memory_mb
        self.run_memory_mb = run_memory_mb
        self.stack_mb = stack_mb
        self._judge_cache: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def prompt_path(self, template: str) -> Path:
        # The Rust prompts are the project's own set in prompts/rust/; the generic
        # code roles name theirs code/{language}/<file>, which maps there.
        if template.startswith("code/{language}"):
            template = "rust" + template[len("code/{language}") :]
        return resolve_prompt_path(template.replace("{language}", self.name))

    # ------------------------------------------------------------------ extraction

    def extract_code(self, text: str, prompt: str, entry_point: str) -> ExtractedCode:
        notes: list[str] = []
        text = _THINK.sub("", text or "").replace("\r\n", "\n")
        blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
        rs_blocks = [b for tag, b in blocks if tag in _RS_TAGS] or [b for _, b in blocks]
        kind = "fenced"
        code: str | None
        if rs_blocks:
            defining = [b for b in rs_blocks if defines_fn(b, entry_point, top_level=False)]
            full = [b for b in defining if not re.search(r"\b(todo|unimplemented)!\s*\(", b)]
            code = (full or defining or [max(rs_blocks, key=len)])[0]
            if len(defining) > 1:
                notes.append(
                    f"{len(defining)} code blocks define `{entry_point}`; took the first full one"
                )
        else:
            kind = "raw"
            code = _leading_code(text)
            if code is None and text.strip() and brace_balance(text) < 0:
                code = text.strip("\n") + "\n"  # a bare body ending with the closing brace
        if code is None or not code.strip():
            return self._stub(prompt, "no code found in the model's reply", notes)
        return self._complete(code, prompt, entry_point, notes, kind)

    def _complete(
        self, code: str, prompt: str, entry_point: str, notes: list[str], kind: str
    ) -> ExtractedCode:
        code, n_main = remove_fn(code, "main")
        if n_main:
            notes.append("dropped the reply's own `fn main`")
        if not defines_fn(code, entry_point, top_level=True):
            if defines_fn(code, entry_point, top_level=False) and re.search(
                r"\bimpl\s+Solution\b", code
            ):
                code = self._wrap_solution_impl(code, prompt, entry_point)
                notes.append("LeetCode-style `impl Solution`: added a free function calling it")
            elif not re.search(r"^\s*(?:pub\s+)?fn\s", code, re.M):
                body = code.strip("\n")
                program = prompt.rstrip() + "\n" + body + "\n"
                missing = brace_balance(program)
                program += "}\n" * max(0, missing)
                notes.append("reply holds only the function body; prepended the signature")
                return ExtractedCode(self._with_uses(program, prompt), "body", notes)
            else:
                notes.append(f"reply does not define `{entry_point}`")
        missing = brace_balance(code)
        if missing > 0 and self.close_braces:
            code = code.rstrip() + "\n" + "}\n" * missing
            notes.append(f"closed {missing} unbalanced brace(s)")
        uses = self._with_uses(code.rstrip() + "\n", prompt)
        if uses != code.rstrip() + "\n":
            notes.append("added the prompt's `use` lines the code lacked")
        return ExtractedCode(uses, kind, notes)

    @staticmethod
    def _with_uses(program: str, prompt: str) -> str:
        missing = [u for u in _prompt_uses(prompt) if u not in program]
        return ("\n".join(missing) + "\n" + program) if missing else program

    @staticmethod
    def _wrap_solution_impl(code: str, prompt: str, entry_point: str) -> str:
        try:
            fn = parse_signature(prompt, entry_point)
        except ValueError:
            return code
        params = ", ".join(f"{n}: {t}" for n, t in fn.params)
        args = ", ".join(n for n, _ in fn.params)
        ret = f" -> {fn.ret}" if fn.ret != "()" else ""
        struct = "" if re.search(r"\bstruct\s+Solution\b", code) else "struct Solution;\n"
        return f"{struct}{code.rstrip()}\n\nfn {entry_point}({params}){ret} {{\n    Solution::{entry_point}({args})\n}}\n"

    @staticmethod
    def _stub(prompt: str, why: str, notes: list[str]) -> ExtractedCode:
        notes.append(why)
        return ExtractedCode(
            prompt.rstrip() + f"\n    unimplemented!({json.dumps(why)})\n}}\n", "none", notes
        )

    def complete_solution(self, source: str, prompt: str, entry_point: str) -> str:
        return self._complete(source, prompt, entry_point, [], "raw").program

    # ------------------------------------------------------------------ tests

    def parse_tests(self, text: str, entry_point: str) -> ParsedTests:
        text = _THINK.sub("", text or "").replace("\r\n", "\n")
        blocks = [b for tag, b in _FENCE.findall(text) if tag.lower() in _RS_TAGS]
        source = "\n".join(blocks) if blocks else text
        tests: list[str] = []
        dropped: list[str] = []
        pos = 0
        while True:
            m = _ASSERT_START.search(source, pos)
            if m is None:
                break
            close = match_close(source, m.end() - 1)
            if close < 0:
                dropped.append(source[m.start() : m.start() + 120].split("\n")[0])
                break
            stmt = source[m.start() : close + 1]
            pos = close + 1
            stmt = re.sub(r"\bcandidate\s*\(", f"{entry_point}(", stmt)
            stmt = re.sub(r"\s*\n\s*", " ", stmt).strip() + ";"
            if not re.search(rf"\b{re.escape(entry_point)}\s*\(", stmt):
                dropped.append(stmt)
                continue
            if stmt not in tests:
                tests.append(stmt)
        return ParsedTests(tests=tests, dropped=len(dropped), dropped_examples=dropped[:5])

    # ------------------------------------------------------------------ execution

    def _spec(
        self, mode: str, program: str, task: Task | None = None, **extra: Any
    ) -> dict[str, Any]:
        opt = self.opt_level
        if task is not None and "opt_level" in task.data:
            opt = int(task.data["opt_level"])
        # A MultiPL-E completion stops before the body's closing brace ("\n}" is its
        # stop token); close what is open so prompt + completion compiles.
        missing = brace_balance(program)
        if missing > 0 and self.close_braces:
            program = program.rstrip() + "\n" + "}\n" * missing
        return {
            "mode": mode,
            "marker": "@@rb-rust-" + secrets.token_hex(6) + "@@",
            "rustc": self.rustc,
            "edition": self.edition,
            "opt_level": opt,
            "compile_timeout_s": self.compile_timeout_s,
            "compile_memory_mb": self.compile_memory_mb,
            "run_memory_mb": self.run_memory_mb,
            "program": program,
            **extra,
        }

    async def _exec(
        self, sandbox: Sandbox, spec: dict[str, Any], wall_s: float, fresh: bool = False
    ) -> tuple[dict[str, Any] | None, ExecResult]:
        """Run the driver on ``spec``; its report (None if it never reported), and the
        result. Raises :class:`SandboxError` if the driver never started (never said
        ``ready``): a broken sandbox is a run error, not the program's failure."""
        request = ExecRequest(
            argv=("{python}", "driver.py"),
            files={"driver.py": _DRIVER_SOURCE},
            stdin=json.dumps(spec),
            timeout_s=wall_s,
            limits=Limits(
                memory_mb=max(self.compile_memory_mb, self.run_memory_mb) + 512,
                cpu_s=int(wall_s) + 5,
                # The calls' results travel in the report (up to 16 MB of them).
                output_bytes=20_000_000,
                output_kill_bytes=24_000_000,
                file_size_mb=32,
            ),
            # Harness code: the judge uid; the model's binaries run as candidates.
            trusted=True,
            fresh=fresh,
        )
        result = await sandbox.exec(request)
        verdict = None
        ready = False
        marker = spec["marker"]
        for line in result.stdout.splitlines():
            if line.startswith(marker):
                try:
                    obj = json.loads(line[len(marker) :])
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and obj.get("ready") is True and not ready:
                    ready = True
                elif isinstance(obj, dict):
                    verdict = obj
        if not ready:
            why = result.detail or tail(result.stderr, 300) or f"reason {result.reason}"
            raise SandboxError(f"the sandbox did not run the Rust driver ({result.reason}): {why}")
        return verdict, result

    async def _judge_build(self, sandbox: Sandbox, plan: CallPlan) -> dict[str, Any]:
        """The trusted tests compiled on their own (a sandbox execution without any
        candidate code), cached by their source: every program judged on the same
        tests (each trial, each sample) reuses the binary."""
        key = hashlib.sha256(
            json.dumps(
                [plan.prelude, plan.judge_bodies, RUST_DECODER, JUDGE_RUNTIME, self.rustc]
            ).encode()
        ).hexdigest()
        cached = self._judge_cache.get(key)
        if cached is not None:
            self._judge_cache.move_to_end(key)
            return cached
        spec = self._spec(
            "judge_build",
            "",
            None,
            prelude=plan.prelude,
            bodies=plan.judge_bodies,
            codec=RUST_DECODER,
            runtime=JUDGE_RUNTIME,
        )
        report, result = await self._exec(
            sandbox, spec, 2 * wall_backstop(self.compile_timeout_s) + 10.0
        )
        if report is None or "tests" not in report:
            raise SandboxError(f"the Rust judge was not built: {_exec_failure(report, result)}")
        self._judge_cache[key] = report
        while len(self._judge_cache) > 64:  # ~0.5 MB a binary
            self._judge_cache.popitem(last=False)
        return report

    async def _judged(
        self,
        sandbox: Sandbox,
        program: str,
        plan: CallPlan,
        task: Task | None,
        timeout_s: float,
        hidden: bool,
        fresh: bool = False,
    ) -> tuple[list[Verdict | None], str | None]:
        """Run the plan's calls on ``program``, then the trusted judge on their results
        (see :mod:`rust_judge`): the candidate's execution and the judge's build run
        side by side, then the judge runs. Returns one verdict per group (None for
        groups the plan left unjudged) or, when the program does not compile or its
        execution gave no report, the reason."""
        n = len(plan.groups)
        live = [g for g in range(n) if plan.groups[g]]
        spec = self._spec("calls", program, task, **plan.spec(), codec=RUST_ENCODER)
        spec["run_timeout_s"] = timeout_s
        # Up to two builds and every group's run, each with its own wall backstop (the
        # driver limits each by CPU time: see _rust_driver.run).
        wall = 2 * wall_backstop(self.compile_timeout_s) + len(live) * wall_backstop(timeout_s) + 10
        (report, result), build = await asyncio.gather(
            self._exec(sandbox, spec, wall, fresh), self._judge_build(sandbox, plan)
        )
        if report is None or "groups" not in report:
            return [], _exec_failure(report, result)
        if report.get("compile_error"):
            if report.get("harness"):  # no compiler ran: the harness's failure
                raise _NoCompiler(str(report["compile_error"]))
            return [], str(report["compile_error"])
        groups: list[dict[str, Any] | None] = list(report["groups"])
        verdicts: list[Verdict | None] = [None] * n
        inputs: list[list[list[Any]] | None] = [None] * n
        built: list[dict[str, Any] | None] = list(build["tests"])
        for g in live:
            got = groups[g] if g < len(groups) else None
            if got is None:
                verdicts[g] = Verdict("error", "not run")
            elif got.get("status") == "compile_error":
                # This test's calls do not compile against the program: for a hidden
                # test the program's failure (its signature is not the task's), for a
                # model-written self-test the test's (dropped: no verdict).
                verdicts[g] = Verdict("fail" if hidden else "dropped", str(got.get("detail", "")))
            elif build.get("compile_error"):
                # The trusted side does not compile on its own: for a hidden test a
                # harness problem, for a self-test a test of the wrong type (dropped:
                # no verdict on the program).
                verdicts[g] = Verdict(
                    "error" if hidden else "dropped",
                    "the test does not compile: " + str(build["compile_error"]),
                )
            elif (alone := built[g] if g < len(built) else None) is not None:
                # This test alone does not compile on the trusted side.
                verdicts[g] = Verdict(
                    "error" if hidden else "dropped", str(alone.get("detail", ""))
                )
            elif got.get("results") and not got.get("stray"):
                results = got["results"]
                inputs[g] = [[k, results[str(k)]] for k in plan.groups[g] if str(k) in results]
            else:  # nothing to judge: no result at all, or forged lines
                verdicts[g] = combine(got, None, plan.groups[g], hidden)
        to_judge = [g for g in range(n) if inputs[g] is not None]
        if to_judge:
            jspec = self._spec(
                "judge", "", None, binary=build["binary"], inputs=inputs, run_timeout_s=timeout_s
            )
            jwall = len(to_judge) * wall_backstop(timeout_s) + 10.0
            jreport, jresult = await self._exec(sandbox, jspec, jwall, fresh)
            if jreport is None or "tests" not in jreport:
                raise SandboxError(
                    f"the Rust judge did not report: {_exec_failure(jreport, jresult)}"
                )
            judged: list[dict[str, Any] | None] = list(jreport["tests"])
            for g in to_judge:
                j = judged[g] if g < len(judged) else None
                got = groups[g] or {}
                if j is None:
                    verdicts[g] = Verdict("error", "the judge did not run this test")
                elif j.get("status") == "compile_error":
                    verdicts[g] = Verdict("error", str(j.get("detail", "")))
                else:
                    v = combine(got, j, plan.groups[g], hidden)
                    verdicts[g] = Verdict(v.status, plan.readable(v.output))
        return verdicts, None

    async def run_tests(
        self,
        sandbox: Sandbox,
        program: str,
        tests: list[str],
        entry_point: str,
        timeout_s: float,
    ) -> list[TestOutcome]:
        """The self-tests' verdicts; those that time out are run once more on a fresh
        worker with CONFIRM_FACTOR times the limit (see judge.JudgeVerdict)."""
        out = await self._run_tests_once(sandbox, program, tests, entry_point, timeout_s, False)
        again = [i for i, o in enumerate(out) if o.status == "timeout"]
        if not again:
            return out
        second = await self._run_tests_once(
            sandbox, program, [tests[i] for i in again], entry_point,
            timeout_s * CONFIRM_FACTOR, True,
        )  # fmt: skip
        for i, o in zip(again, second, strict=True):
            o.timing = {
                "timeout_confirmed": o.status == "timeout",
                "timing": {"first": {"detail": out[i].output}, "confirm_factor": CONFIRM_FACTOR},
            }
            out[i] = o
        return out

    async def _run_tests_once(
        self,
        sandbox: Sandbox,
        program: str,
        tests: list[str],
        entry_point: str,
        timeout_s: float,
        fresh: bool,
    ) -> list[TestOutcome]:
        if not tests:
            return []
        # The return type comes from the program's own signature (run_tests gets no
        # prompt); only std types pass :func:`decodable_type`, so it cannot carry code
        # into the judge, and a wrong type just makes the tests not compile there.
        try:
            declared = parse_signature(program, entry_point).ret
        except ValueError:
            declared = ""
        ret = decodable_type(declared)
        if ret is None:
            why = (
                f"not run: the program defines no `fn {entry_point}` returning a standard type"
                if not declared
                else f"not run: `{entry_point}` returns `{declared}`, which the Rust judge "
                "cannot decode (standard types only)"
            )
            # No such function is the program's failure; a type the judge cannot
            # decode leaves the tests unjudged (dropped, as the Python judge's refusals).
            return [TestOutcome(t, "fail" if not declared else "dropped", why) for t in tests]
        plan = plan_self_tests(tests, entry_point, ret)
        try:
            verdicts, failure = await self._judged(
                sandbox, program, plan, None, timeout_s, False, fresh
            )
        except _NoCompiler as exc:
            return [TestOutcome(t, "error", f"not run: {exc}") for t in tests]
        if failure is not None:
            # The program does not compile, or its run gave no report: its failure.
            return [
                TestOutcome(
                    t,
                    "fail",
                    failure
                    if k == 0
                    else "compile error (the program does not compile, see above)",
                )
                if failure.startswith("compile error")
                else TestOutcome(t, "fail", f"not run: {failure}")
                for k, t in enumerate(tests)
            ]
        outcomes: list[TestOutcome] = []
        for i, test in enumerate(tests):
            if i in plan.unjudged:  # a test the judge cannot take apart: no verdict
                outcomes.append(TestOutcome(test, "dropped", plan.unjudged[i]))
                continue
            v = verdicts[i] or Verdict("error", "not run")
            outcomes.append(TestOutcome(test, v.status, v.output))
        return outcomes

    async def run_hidden(
        self, sandbox: Sandbox, program: str, task: Task, timeout_s: float
    ) -> HiddenOutcome:
        """The hidden tests' verdict; a timeout is confirmed by a second run on a fresh
        worker with CONFIRM_FACTOR times the limit (see judge.JudgeVerdict)."""
        first = await self._run_hidden_once(sandbox, program, task, timeout_s, False)
        if first.status != "timeout":
            return first
        again = await self._run_hidden_once(
            sandbox, program, task, timeout_s * CONFIRM_FACTOR, True
        )
        again.duration_s += first.duration_s
        again.timing = {
            **again.timing,
            "timeout_confirmed": again.status == "timeout",
            "timing": {"first": {"detail": first.detail}, "confirm_factor": CONFIRM_FACTOR},
        }
        if again.status != "timeout":
            again.detail = (
                f"{again.detail} (a first run timed out: {first.detail}; re-judged with "
                f"{CONFIRM_FACTOR:g}x the limit on a fresh worker)"
            ).strip()
        return again

    async def _run_hidden_once(
        self, sandbox: Sandbox, program: str, task: Task, timeout_s: float, fresh: bool
    ) -> HiddenOutcome:
        start = time.monotonic()
        if task.data.get("hidden_kind") == "python_check":
            return await self._run_served(sandbox, program, task, timeout_s, fresh)
        entry = str(task.data["entry_point"])
        try:
            declared = parse_signature(task.prompt, entry).ret
            ret = decodable_type(declared)
            if ret is None:
                raise Unsplittable(f"`{entry}` returns `{declared}`, not a standard type")
            plan = plan_test_file(
                str(task.data.get("test", "")), entry, ret, _prompt_uses(task.prompt)
            )
        except (ValueError, Unsplittable) as exc:
            # Never a pass: a test the judge cannot take apart is not run at all.
            return HiddenOutcome("error", f"the Rust judge cannot split this task's test: {exc}")
        try:
            verdicts, failure = await self._judged(
                sandbox, program, plan, task, timeout_s, True, fresh
            )
        except _NoCompiler as exc:
            return HiddenOutcome("error", str(exc), time.monotonic() - start)
        took = time.monotonic() - start
        if failure is not None:
            # A program that does not compile, or whose run gave no report, failed;
            # a sandbox that never ran the driver raised SandboxError above.
            return HiddenOutcome("fail", failure, took)
        v = verdicts[0] or Verdict("error", "not run")
        return HiddenOutcome(v.status, v.output, took)

    async def _run_served(
        self, sandbox: Sandbox, program: str, task: Task, timeout_s: float, fresh: bool = False
    ) -> HiddenOutcome:
        try:
            fn = parse_signature(task.prompt, str(task.data["entry_point"]))
        except ValueError as exc:
            return HiddenOutcome("error", f"cannot read the task's signature: {exc}")
        spec = self._spec(
            "serve",
            program,
            task,
            serve_main=serve_main(fn, self.stack_mb),
            check=str(task.data.get("test", "")),
            run_timeout_s=timeout_s,
        )
        wall = wall_backstop(self.compile_timeout_s) + wall_backstop(timeout_s) + 10.0
        verdict, result = await self._exec(sandbox, spec, wall, fresh)
        if verdict is not None and "status" in verdict:
            return HiddenOutcome(
                str(verdict["status"]), str(verdict.get("detail", "")), result.duration_s
            )
        # No report: the program stopped the judge (killed it, or ran out the wall
        # time). The candidate's failure, never a pass.
        if result.reason == "timeout":
            return HiddenOutcome("timeout", describe_exec_failure(result), result.duration_s)
        detail = (verdict or {}).get("driver_error") or describe_exec_failure(result)
        if result.stderr.strip():
            detail += "\n" + tail(result.stderr, 800)
        # The driver said ready, then no report: the program's doing, whatever the reason.
        return HiddenOutcome("fail", str(detail), result.duration_s)


class _NoCompiler(Exception):
    """The driver could not start the compiler: the harness's failure (``error``)."""


def _exec_failure(report: dict[str, Any] | None, result: ExecResult) -> str:
    detail = (report or {}).get("driver_error") or describe_exec_failure(result)
    if result.stderr.strip():
        detail += "\n" + tail(result.stderr, 800)
    return str(detail)


# --------------------------------------------------------------------------- host checks


def find_rustc(rustc: str = "rustc") -> str:
    """The host's rustc, or :class:`RustToolchainError` naming the fix."""
    path = shutil.which(rustc)
    if path is None:
        raise RustToolchainError(
            f"`{rustc}` not found on PATH (install Debian's `rustc` package: apt-get install rustc)"
        )
    return path


def typecheck_tests(
    items: Sequence[tuple[str, Sequence[str]]], rustc: str = "rustc", timeout_s: float = 120.0
) -> list[list[str | None]]:
    """Type-check unit tests against stubs of their function, with the host's rustc.

    ``items`` are (signature, tests) pairs; the result gives, per test, None when it
    compiles against ``<signature> { unimplemented!() }`` and the first compiler
    error otherwise. Nothing is executed (``--emit=metadata``), so this finds tests
    written with the wrong argument types or count without any solution. Tests are
    checked in one crate; since a syntax error can stop rustc before type checking,
    the check repeats without the tests found broken until a round finds nothing new.
    """
    exe = find_rustc(rustc)
    results: list[list[str | None]] = [[None] * len(tests) for _, tests in items]
    broken: set[tuple[int, int]] = set()
    for _round in range(5):
        new = _typecheck_round(exe, items, broken, timeout_s)
        for (k, j), msg in new.items():
            results[k][j] = msg
        if not new:
            break
        broken |= set(new)
    return results


def _typecheck_round(
    exe: str,
    items: Sequence[tuple[str, Sequence[str]]],
    skip: set[tuple[int, int]],
    timeout_s: float,
) -> dict[tuple[int, int], str]:
    parts: list[str] = []
    owners: list[tuple[int, int, int, int]] = []  # (first line, last line, item, test)
    line = 1
    for k, (sig, tests) in enumerate(items):
        stub = sig.strip().rstrip("{").strip()
        head = f"#[allow(unused)]\nmod p{k} {{\n#[allow(unused)]\n{stub} {{ unimplemented!() }}\n"
        parts.append(head)
        line += head.count("\n")
        for j, t in enumerate(tests):
            if (k, j) in skip:
                continue
            body = f"#[allow(unused)]\nfn t{j}() {{\n{t.strip()}\n}}\n"
            owners.append((line, line + body.count("\n") - 1, k, j))
            parts.append(body)
            line += body.count("\n")
        parts.append("}\n")
        line += 1
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "check.rs"
        src.write_text("".join(parts), encoding="utf-8")
        argv = [
            exe,
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--emit=metadata",
            "--error-format=json",
            "-A",
            "warnings",
            "-o",
            str(Path(tmp) / "check.rmeta"),
            str(src),
        ]
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RustToolchainError(f"running {exe} failed: {exc}") from exc
    found: dict[tuple[int, int], str] = {}
    unplaced: list[str] = []
    for raw in proc.stderr.splitlines():
        try:
            d = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if d.get("level") != "error" or str(d.get("message", "")).startswith("aborting"):
            continue
        primary = [s for s in d.get("spans", []) if s.get("is_primary")]
        lines = [s["line_start"] for s in primary]
        owner = next((o for o in owners if lines and o[0] <= lines[0] <= o[1]), None)
        message = str(d.get("message", "error"))
        if primary and primary[0].get("label"):
            message += f" ({primary[0]['label']})"
        if owner is None:
            unplaced.append(message)
        else:
            found.setdefault((owner[2], owner[3]), message)
    if unplaced and not found:
        raise RustToolchainError("the stubs themselves do not compile: " + "; ".join(unplaced[:3]))
    return found
