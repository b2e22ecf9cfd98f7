"""The unforgeable judge: the candidate never shares a process with the verdict.

One sandbox execution per judgement runs two processes (see ``_judge_main.py``):

- the **judge**, trusted: it reads the hidden tests (or the self-tests) and a per-run
  nonce from stdin, runs the benchmark's test code with ``candidate`` (and the entry
  point's name) bound to a proxy, compares on plain values and prints the verdict;
- the **candidate**, a fresh interpreter (execve'd: none of the judge's memory) that
  loads the program and answers calls through a plain-data wire (``_wire.py``).

Public surface: :func:`judge_hidden` (hidden tests: HumanEval, MBPP, LeetcodeHard),
:func:`judge_plus` (the stronger plus tests: inputs and expected outputs held by the
judge, compared there; :func:`run_reference` computes the expected outputs),
:func:`judge_self_tests` (the actor's own tests, each a whitelisted assert evaluated in
the judge: :func:`check_self_test`) and :func:`require_protected` (the ``rlimits``
isolation level cannot protect a score: see docs/concepts/score.md, "What the score guarantees").
"""

from __future__ import annotations

import base64
import json
import marshal
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.judge._judge_main import check_assert as _check_assert
from reflexion_bench.sandbox._box import wall_backstop
from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox, SandboxError
from reflexion_bench.sandbox.shipping import shipped

__all__ = [
    "JUDGE_SOURCE",
    "JudgeVerdict",
    "PlusVerdict",
    "SelfTestVerdict",
    "check_self_test",
    "judge_hidden",
    "judge_plus",
    "judge_self_tests",
    "require_protected",
    "run_reference",
    "timing_fields",
]

_HERE = Path(__file__).resolve().parent


def _wire_source() -> str:
    # `from __future__` must come first in a module: the wire's is dropped (the shipped
    # programs run on Python 3.11, where the annotations it defers are valid anyway).
    src = (_HERE / "_wire.py").read_text(encoding="utf-8")
    return src.replace("from __future__ import annotations\n", "")


#: The candidate runner as shipped (self-contained: the box's rules inlined).
CANDIDATE_SOURCE = shipped(_HERE / "_candidate_main.py")
#: The judge program as shipped (wire + the candidate's source + judge, the box's rules
#: in place of its host-only imports). Its first line asks the sandbox supervisor to
#: compile it once per worker (~7 ms a program).
JUDGE_SOURCE = (
    "# reflexion-bench: compile once per worker\n"
    + _wire_source()
    + f"\nCANDIDATE_SOURCE = {CANDIDATE_SOURCE!r}\n"
    + shipped(_HERE / "_judge_main.py")
)

#: Seconds on top of a judgement's own time limit for starting the two interpreters.
START_SLACK_S = 10.0
#: A timeout is confirmed before it is a verdict: the program is judged once more, on a
#: fresh worker, with this many times the time limit. Only a second timeout stands.
CONFIRM_FACTOR = 2.0


@dataclass
class JudgeVerdict:
    """A hidden-test verdict: ``pass``, ``fail`` or ``timeout`` (a program that does
    not load, or breaks its sandbox, fails). A sandbox that failed raises
    :class:`SandboxError` instead: no program can make its own verdict an error.

    Time is the candidate's CPU time (``cpu_s``: all of it in this judgment, None where
    the sandbox has no CPU accounting), with a wall-clock backstop. ``timing`` says how
    a timeout came about (``clock``: ``cpu`` or ``wall``; ``cpu_s``, ``wall_s``,
    ``limit_s``) and whether it was confirmed: ``timeout_confirmed`` is True when the
    re-judgment with CONFIRM_FACTOR times the limit timed out too, False when the first
    run timed out and the re-judgment gave this verdict, None when no run timed out."""

    status: str
    detail: str = ""
    duration_s: float = 0.0
    calls: int = 0
    cpu_s: float | None = None
    timing: dict[str, Any] = field(default_factory=dict)
    timeout_confirmed: bool | None = None


def timing_fields(verdict: JudgeVerdict | PlusVerdict) -> dict[str, Any]:
    """A verdict's time fields as logged (only those it has): ``cpu_s``,
    ``timeout_confirmed`` and ``timing``."""
    out: dict[str, Any] = {}
    if verdict.cpu_s is not None:
        out["cpu_s"] = verdict.cpu_s
    if verdict.timeout_confirmed is not None:
        out["timeout_confirmed"] = verdict.timeout_confirmed
    if verdict.timing:
        out["timing"] = verdict.timing
    return out


def _confirmed(first: Any, second: Any) -> Any:
    """The verdict after a timeout's confirmation: the second run's, which records the
    first's timing (a dataclass with ``timing``, ``timeout_confirmed``, ``duration_s``)."""
    second.duration_s = first.duration_s + second.duration_s
    second.timeout_confirmed = second.status == "timeout"
    second.timing = {
        **second.timing,
        "first": {"detail": first.detail, **first.timing},
        "confirm_factor": CONFIRM_FACTOR,
    }
    if not second.timeout_confirmed:
        second.detail = (
            f"{second.detail} (a first run timed out: {first.detail}; re-judged with "
            f"{CONFIRM_FACTOR:g}x the limit on a fresh worker)"
        ).strip()
    return second


@dataclass
class SelfTestVerdict:
    """One self-test's verdict: ``pass``, ``fail``, ``timeout`` or ``dropped`` (the judge
    refused the assert, or evaluating it exceeded the judge's own limits: not a verdict
    on the program); ``output`` is the value the assert saw, the exception, or why."""

    status: str
    output: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def check_self_test(test: str, entry_point: str) -> str | None:
    """Why ``test`` may not run as a self-test, or None (see ``_judge_main.check_assert``)."""
    reason: str | None = _check_assert(test, entry_point)
    return reason


def require_protected(sandbox: Sandbox) -> None:
    """Refuse to score hidden tests where the sandbox cannot keep the benchmark's data
    from the candidate (the ``rlimits`` level sees the host's files), unless the user
    opted in with ``sandbox.allow_unprotected_scores=true``."""
    iso = str(getattr(sandbox, "isolation", "none"))
    if iso.startswith("rlimits") and not getattr(sandbox, "allow_unprotected_scores", False):
        raise ConfigError(
            "sandbox.allow_unprotected_scores",
            False,
            "true to score hidden tests under the rlimits isolation level anyway (its "
            "candidates can read the benchmark's files, so a score is not protected); "
            "better: install bubblewrap (apt-get install bubblewrap) or use sandbox=docker",
        )


def _verdict_lines(result: ExecResult, nonce: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in result.stdout.splitlines():
        if line.startswith(nonce):
            try:
                obj = json.loads(line[len(nonce) :])
            except json.JSONDecodeError:
                continue  # a line cut by the output limit
            if isinstance(obj, dict):
                out.append(obj)
    return out


def _harness_error(lines: list[dict[str, Any]]) -> str | None:
    harness = next((v for v in lines if v.get("event") == "harness_error"), None)
    return None if harness is None else str(harness.get("detail", ""))


def _not_started(result: ExecResult) -> str:
    why = result.detail or result.stderr.strip()[-300:] or f"reason {result.reason}"
    return f"the sandbox did not run the judge ({result.reason}): {why}"


class ProgramBrokeSandbox(Exception):
    """A candidate's run ended the judge abnormally and a fresh worker judged a known
    good program correctly: the program is to blame (its verdict is ``fail``)."""


#: A trivial program and test the health check judges on a fresh worker.
_HEALTH_PROGRAM = "def rb_health(x):\n    return x + 1\n"
_HEALTH_TEST = "assert rb_health(1) == 2\n"


async def _healthy(sandbox: Sandbox, limits: Limits) -> str | None:
    """Judge a known good program on a freshly started worker: None when it passes,
    else why the sandbox is unhealthy."""
    nonce = "@@rb-judge-" + secrets.token_hex(12) + "@@ "
    spec = {
        "mode": "hidden",
        "program": _HEALTH_PROGRAM,
        "test": _HEALTH_TEST,
        "test_call": "",
        "entry_point": "rb_health",
        "candidate_entry": "rb_health",
        "timeout_s": 10.0,
        "nonce": nonce,
        "limits": asdict(limits),
    }
    result = await sandbox.exec(_request(spec, 10.0 + START_SLACK_S, limits, fresh=True))
    lines = _verdict_lines(result, nonce)
    harness = _harness_error(lines)
    if harness is not None:
        return f"the judge failed: {harness}"
    if not any(v.get("event") == "ready" for v in lines):
        return _not_started(result)
    status = next((v.get("status") for v in lines if "status" in v), None)
    return None if status == "pass" else f"a known good program was judged {status!r}"


def _request(spec: dict[str, Any], timeout_s: float, limits: Limits, fresh: bool) -> ExecRequest:
    return ExecRequest(
        argv=("{python}", "judge.py"),
        files={"judge.py": JUDGE_SOURCE},
        stdin=json.dumps(spec),
        timeout_s=timeout_s,
        limits=limits,
        trusted=True,
        fresh=fresh,
    )


async def _run(
    sandbox: Sandbox, spec: dict[str, Any], timeout_s: float, limits: Limits, fresh: bool = False
) -> tuple[ExecResult, list[dict[str, Any]]]:
    """One judgment. A sandbox failure is attributed by re-checking, never assumed:

    - the judge never started: retried once on a fresh worker; a second failure is
      the sandbox's (:class:`SandboxError`), since no candidate ran yet;
    - the judge reported a failure of its own after the candidate started: the
      worker is retired and a known good program is judged on a fresh one. Healthy:
      the program broke its sandbox, which is its ``fail`` (the caller's verdict, via
      :class:`ProgramBrokeSandbox`); unhealthy: :class:`SandboxError`.

    ``fresh``: the first attempt runs on a freshly started worker too (a confirmation).
    """
    nonce = "@@rb-judge-" + secrets.token_hex(12) + "@@ "
    # The candidate gets the job's limits too (a zygote's fork starts with the worker's).
    spec = {**spec, "nonce": nonce, "limits": asdict(limits)}
    for attempt in (1, 2):
        result = await sandbox.exec(_request(spec, timeout_s, limits, fresh=fresh or attempt == 2))
        lines = _verdict_lines(result, nonce)
        if any(v.get("event") == "ready" for v in lines):
            break
        if attempt == 2:
            raise SandboxError(_not_started(result))
    harness = _harness_error(lines)
    if harness is None:
        return result, lines
    problem = await _healthy(sandbox, limits)
    if problem is not None:
        raise SandboxError(f"the judge failed ({harness}); health check: {problem}")
    raise ProgramBrokeSandbox(f"the program broke its sandbox: {harness}")


async def judge_hidden(
    sandbox: Sandbox,
    *,
    program: str,
    test: str,
    test_call: str,
    entry_point: str,
    timeout_s: float,
    helpers: str = "",
    judge_prelude: str = "",
    candidate_prelude: str = "",
    candidate_entry: str | None = None,
    aliases: tuple[str, ...] = (),
    solution_class: bool = False,
    recursion_limit: int | None = None,
    stack_mb: int | None = None,
    limits: Limits | None = None,
    test_filename: str = "hidden_test.py",
) -> JudgeVerdict:
    """Run a benchmark's hidden ``test`` (then ``test_call``) against ``program``.

    ``helpers`` is trusted code from the prompt (functions the test calls, e.g.
    HumanEval/32's ``poly``) and ``judge_prelude`` the benchmark's imports; both run in
    the judge. ``candidate_prelude`` runs before the program in the candidate process
    (LeetCode's imports); ``recursion_limit`` and ``stack_mb`` apply there too.
    ``timeout_s`` is CPU time of the candidate (loading, then the whole test), with a
    wall backstop; a timeout is confirmed (see :class:`JudgeVerdict`).
    Raises :class:`SandboxError` when the sandbox failed, and ConfigError when it cannot
    protect the score (:func:`require_protected`).
    """
    require_protected(sandbox)
    spec: dict[str, Any] = {
        "mode": "hidden",
        "program": program,
        "test": test,
        "test_call": test_call,
        "entry_point": entry_point,
        "candidate_entry": candidate_entry or entry_point,
        "aliases": list(aliases),
        "helpers": helpers,
        "judge_prelude": judge_prelude,
        "candidate_prelude": candidate_prelude,
        "solution_class": solution_class,
        "recursion_limit": recursion_limit,
        "stack_mb": stack_mb,
        "test_filename": test_filename,
    }
    # Both runs get the same kernel backstop (the re-judge's), so that a program cannot
    # tell the first run from the re-judge by reading its own RLIMIT_CPU.
    backstop_s = timeout_s * CONFIRM_FACTOR
    first = await _hidden_once(sandbox, spec, timeout_s, limits, backstop_s, fresh=False)
    if first.status != "timeout":
        return first
    again = await _hidden_once(sandbox, spec, backstop_s, limits, backstop_s, fresh=True)
    verdict: JudgeVerdict = _confirmed(first, again)
    return verdict


async def _hidden_once(
    sandbox: Sandbox,
    spec: dict[str, Any],
    timeout_s: float,
    limits: Limits | None,
    backstop_s: float,
    fresh: bool,
) -> JudgeVerdict:
    spec = {**spec, "timeout_s": timeout_s}
    # The kernel's own CPU limit on the candidate: a backstop of the judge's accounting,
    # from ``backstop_s`` (the same in the first run and the re-judge).
    lim = limits or Limits(cpu_s=int(backstop_s * 2) + 30)
    if limits is not None and limits.cpu_s < backstop_s * 2 + 5:
        lim = Limits(**{**asdict(limits), "cpu_s": int(backstop_s * 2) + 30})
    try:
        # Loading and the test each have a wall backstop of their own.
        wall = 2 * wall_backstop(timeout_s) + START_SLACK_S
        result, lines = await _run(sandbox, spec, wall, lim, fresh=fresh)
    except ProgramBrokeSandbox as exc:
        return JudgeVerdict("fail", str(exc))
    verdicts = [v for v in lines if "status" in v]
    if verdicts:
        v = verdicts[0]  # only the judge writes here, once
        cpu = v.get("cpu_s")
        timing = v.get("timing")
        return JudgeVerdict(
            str(v["status"]),
            str(v.get("detail", "")),
            result.duration_s,
            int(v.get("calls", 0)),
            float(cpu) if isinstance(cpu, (int, float)) else None,
            dict(timing) if isinstance(timing, dict) else {},
        )
    # The judge was ready, then nothing: the candidate killed it, exhausted a limit it
    # shares, or the whole execution hit its wall clock. Never a pass.
    if result.reason == "timeout":
        return JudgeVerdict(
            "timeout",
            f"timed out: the judgment ran out of its {result.duration_s:.1f}s of wall time",
            result.duration_s,
            timing={"clock": "wall", "wall_s": round(result.duration_s, 3), "limit_s": timeout_s},
        )
    why = {
        "memory": "memory limit exceeded",
        "output_limit": "output limit exceeded",
        "signal": f"the judge was killed ({result.detail})",
    }.get(result.reason, f"the judge ended without a verdict ({result.reason})")
    return JudgeVerdict("fail", f"no verdict: {why}", result.duration_s)


async def judge_self_tests(
    sandbox: Sandbox,
    *,
    program: str,
    tests: list[str],
    entry_point: str,
    timeout_s: float,
    candidate_prelude: str = "",
) -> list[SelfTestVerdict]:
    """Run each self-test (a whitelisted assert, evaluated in the judge) against
    ``program``, each in its own fork of the loaded candidate; ``timeout_s`` of the
    candidate's CPU time per test (a wall backstop too). The tests that time out are
    judged once more, on a fresh worker with CONFIRM_FACTOR times the limit; the
    verdict's ``extra`` then holds ``timeout_confirmed`` and both runs' timing."""
    if not tests:
        return []
    # The kernel's backstop, the same in both runs (the re-judge's, over every test): a
    # program cannot tell the runs apart by its own RLIMIT_CPU.
    rlimit_cpu_s = int(timeout_s * CONFIRM_FACTOR * (len(tests) + 1)) + 5
    out = await _self_tests_once(
        sandbox,
        program,
        list(tests),
        entry_point,
        timeout_s,
        candidate_prelude,
        rlimit_cpu_s,
        fresh=False,
    )
    again = [i for i, v in enumerate(out) if v.status == "timeout"]
    if not again:
        return out
    second = await _self_tests_once(
        sandbox,
        program,
        [tests[i] for i in again],
        entry_point,
        timeout_s * CONFIRM_FACTOR,
        candidate_prelude,
        rlimit_cpu_s,
        fresh=True,
    )
    for i, v in zip(again, second, strict=True):
        first = out[i]
        confirmed = v.status == "timeout"
        v.extra = {
            **v.extra,
            "timeout_confirmed": confirmed,
            "timing": {
                **v.extra.get("timing", {}),
                "first": {"detail": first.output, **first.extra.get("timing", {})},
                "confirm_factor": CONFIRM_FACTOR,
            },
        }
        out[i] = v
    return out


async def _self_tests_once(
    sandbox: Sandbox,
    program: str,
    tests: list[str],
    entry_point: str,
    timeout_s: float,
    candidate_prelude: str,
    rlimit_cpu_s: int,
    fresh: bool,
) -> list[SelfTestVerdict]:
    spec: dict[str, Any] = {
        "mode": "tests",
        "program": program,
        "tests": tests,
        "entry_point": entry_point,
        "candidate_prelude": candidate_prelude,
        "timeout_s": timeout_s,
    }
    # A fresh candidate per test at worst (after a hang), each with its wall backstop.
    wall = wall_backstop(timeout_s) * (len(tests) + 1) + START_SLACK_S
    limits = Limits(cpu_s=rlimit_cpu_s)
    try:
        result, lines = await _run(sandbox, spec, wall, limits, fresh=fresh)
    except ProgramBrokeSandbox as exc:
        return [SelfTestVerdict("fail", str(exc)) for _ in tests]
    by_index = {int(v["i"]): v for v in lines if "i" in v}
    out: list[SelfTestVerdict] = []
    for i in range(len(tests)):
        v = by_index.get(i)
        if v is not None:
            timing = v.get("timing")
            extra = {"timing": dict(timing)} if isinstance(timing, dict) else {}
            out.append(SelfTestVerdict(str(v.get("status")), str(v.get("output", "")), extra))
        elif result.reason == "timeout":
            out.append(SelfTestVerdict("timeout", "not run: the tests ran out of time"))
        else:
            # The judge was ready, then ended without this test's verdict: the program
            # killed it or exhausted a limit the two share. The program's failure.
            out.append(SelfTestVerdict("fail", f"not run: the judge ended early ({result.reason})"))
    return out


#: The reference runner as shipped (see ``_plus_ref.py``).
PLUS_REF_SOURCE = (_HERE / "_plus_ref.py").read_text(encoding="utf-8")
_PLUS_REF_MARKER = "@@rb-plus-ref@@"  # each record's line starts with it


@dataclass
class PlusVerdict:
    """The plus tests' verdict (``pass``/``fail``/``timeout``), which input
    failed (0-based, None when none did) and how many there were; the time fields as
    in :class:`JudgeVerdict`."""

    status: str
    detail: str = ""
    duration_s: float = 0.0
    calls: int = 0
    failed_input: int | None = None
    inputs: int = 0
    cpu_s: float | None = None
    timing: dict[str, Any] = field(default_factory=dict)
    timeout_confirmed: bool | None = None


async def judge_plus(
    sandbox: Sandbox,
    *,
    program: str,
    entry_point: str,
    cases: list[tuple[tuple[Any, ...], Any, float]],
    oracle: str = "eq",
    atol: float = 0.0,
    seq_insensitive: bool = False,
    load_timeout_s: float = 10.0,
    candidate_prelude: str = "",
    recursion_limit: int | None = None,
    stack_mb: int | None = None,
) -> PlusVerdict:
    """Run ``program`` on every ``(args, expected, seconds)`` case in the judge (see
    ``_judge_main.run_plus``); stops at the first wrong answer. ``seconds`` is the
    candidate's CPU time for that input (a wall backstop too); a timeout is confirmed
    with CONFIRM_FACTOR times every limit on a fresh worker. Raises SandboxError when
    the sandbox failed and ConfigError when it cannot protect the score."""
    require_protected(sandbox)
    spec: dict[str, Any] = {
        "mode": "plus",
        "program": program,
        "entry_point": entry_point,
        "candidate_entry": entry_point,
        "candidate_prelude": candidate_prelude,
        "oracle": oracle,
        "atol": atol,
        "seq_insensitive": seq_insensitive,
        "recursion_limit": recursion_limit,
        "stack_mb": stack_mb,
    }
    first = await _plus_once(sandbox, spec, list(cases), load_timeout_s, 1.0, fresh=False)
    if first.status != "timeout":
        return first
    again = await _plus_once(sandbox, spec, list(cases), load_timeout_s, CONFIRM_FACTOR, fresh=True)
    verdict: PlusVerdict = _confirmed(first, again)
    return verdict


async def _plus_once(
    sandbox: Sandbox,
    spec: dict[str, Any],
    cases: list[tuple[tuple[Any, ...], Any, float]],
    load_timeout_s: float,
    scale: float,
    fresh: bool,
) -> PlusVerdict:
    scaled = [(a, e, float(t) * scale) for a, e, t in cases]
    blob = base64.b64encode(marshal.dumps(scaled)).decode("ascii")
    load_s = load_timeout_s * scale
    spec = {**spec, "cases": blob, "timeout_s": load_s}
    # The kernel's backstop from the re-judge's limits in both runs (a program cannot
    # tell them apart by its own RLIMIT_CPU).
    cpu = (load_timeout_s + sum(float(c[2]) for c in cases)) * CONFIRM_FACTOR
    # Each input's wall backstop is only reached by a program that sleeps or blocks;
    # the whole judgment's wall limit is the sum of them.
    wall = wall_backstop(load_s) + sum(wall_backstop(c[2]) for c in scaled) + START_SLACK_S
    try:
        result, lines = await _run(sandbox, spec, wall, Limits(cpu_s=int(cpu) + 30), fresh=fresh)
    except ProgramBrokeSandbox as exc:
        return PlusVerdict("fail", str(exc), inputs=len(cases))
    verdicts = [v for v in lines if "status" in v]
    if verdicts:
        v = verdicts[0]
        failed = v.get("input")
        used = v.get("cpu_s")
        timing = v.get("timing")
        return PlusVerdict(
            str(v["status"]),
            str(v.get("detail", "")),
            result.duration_s,
            int(v.get("calls", 0)),
            int(failed) if isinstance(failed, int) else None,
            int(v.get("inputs", len(cases))),
            float(used) if isinstance(used, (int, float)) else None,
            dict(timing) if isinstance(timing, dict) else {},
        )
    if result.reason == "timeout":
        return PlusVerdict(
            "timeout",
            f"timed out: the judgment ran out of its {result.duration_s:.1f}s of wall time",
            result.duration_s,
            inputs=len(cases),
            timing={"clock": "wall", "wall_s": round(result.duration_s, 3)},
        )
    return PlusVerdict(
        "fail",
        f"no verdict: the judge ended ({result.reason})",
        result.duration_s,
        inputs=len(cases),
    )


async def run_reference(
    sandbox: Sandbox,
    *,
    program: str,
    entry_point: str,
    inputs: list[tuple[Any, ...]],
    limit_s: float = 10.0,
    not_none: bool = False,
    hash_seed: int = 0,
) -> list[tuple[str, Any, float]]:
    """Run a trusted reference ``program`` on every input in the sandbox, with
    ``PYTHONHASHSEED=hash_seed``: one ``(kind, output, seconds)`` per input (see
    ``_plus_ref.py``). An input that ends the whole process (memory, a CPU-bound hang
    in C code) is recorded as ``("limit", why, 0)`` and the run resumes after it.
    Raises SandboxError when the runner never started."""
    source = PLUS_REF_SOURCE.replace(
        'os.environ.get("RB_PLUS_HASHSEED", "0")', repr(str(int(hash_seed)))
    )
    big = 512 * 1024 * 1024
    records: list[tuple[str, Any, float]] = []
    while len(records) < len(inputs):
        todo = list(inputs[len(records) :])
        spec = {
            "program": program,
            "entry_point": entry_point,
            "inputs": base64.b64encode(marshal.dumps(todo)).decode("ascii"),
            "limit_s": limit_s,
            "not_none": not_none,
        }
        wall = (2 * limit_s + 1) * len(todo) + START_SLACK_S
        result = await sandbox.exec(
            ExecRequest(
                argv=("{python}", "ref.py"),
                files={"ref.py": source},
                stdin=json.dumps(spec),
                timeout_s=wall,
                limits=Limits(
                    cpu_s=int(wall) + 30, memory_mb=2048, output_bytes=big, output_kill_bytes=big
                ),
            )
        )
        got = []
        for line in result.stdout.splitlines():
            if line.startswith(_PLUS_REF_MARKER):
                try:
                    k, v, t = marshal.loads(base64.b64decode(line[len(_PLUS_REF_MARKER) :]))
                except (ValueError, EOFError, TypeError):
                    break  # a line cut short when the process died
                got.append((str(k), v, float(t)))
        records.extend(got[: len(todo)])
        if len(records) < len(inputs):
            if not got and result.reason == "exit" and result.exit_code not in (0, None):
                why = result.stderr.strip()[-600:] or f"exit code {result.exit_code}"
                raise SandboxError(f"the reference solution did not run: {why}")
            # The next input ended the process: drop it and go on after it.
            records.append(("limit", f"{result.reason}: {result.detail}"[:200], 0.0))
    return records
