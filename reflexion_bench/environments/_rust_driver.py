"""Compiles and runs a Rust program *inside the sandbox*; reports one JSON verdict.

Copied into the sandbox's scratch directory as ``driver.py`` next to ``spec.json``
and run with the sandbox's Python (standard library only). Doing the compile and the
runs in one sandbox execution lets each step have its own timeout (compile vs run)
and its own memory limit (rustc needs far more address space than the program under
test), and keeps a hanging test from costing the others.

Modes (``spec["mode"]``):

- ``tests``: the program plus one function per unit test; every test runs in its
  own process (``./main <i>``). If the build fails only inside some tests (a
  generated test of the wrong type), those tests are reported as errors and the
  rest are rebuilt and run; a build error in the program fails every test with the
  compiler's message.
- ``main``: the program plus a test file with its own ``fn main`` (MultiPL-E); run once.
- ``serve``: the program plus a JSON call loop (``serve_main``); the Python hidden
  ``check(candidate)`` runs here with ``candidate`` forwarding each call to the
  binary, so hidden tests written for Python judge the Rust function unchanged.

The verdict is the last stdout line, prefixed with ``spec["marker"]``; the programs'
own output goes to pipes this driver reads, never to its stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

with open("spec.json", encoding="utf-8") as _fh:
    SPEC: dict[str, Any] = json.load(_fh)
MARKER = str(SPEC["marker"])
CALL_MARK = "\x1eRB "
MEMORY_MARKERS = ("memory allocation of", "out of memory", "Cannot allocate memory")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write("\n" + MARKER + json.dumps(obj) + "\n")
    sys.stdout.flush()


def tail(text: str, limit: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def limiter(memory_mb: Any) -> Callable[[], None]:
    """A preexec hook: own session (so a timeout kills the whole group), and an
    address-space limit (only ever lowered: the sandbox's own limit still holds)."""

    def pre() -> None:
        os.setsid()
        if memory_mb:
            m = int(memory_mb) * 1024 * 1024
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                m = min(m, hard)
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, (m, hard))

    return pre


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["RUST_BACKTRACE"] = "0"  # a backtrace is noise in the feedback
    return env


def run(argv: list[str], timeout: float, memory_mb: Any) -> dict[str, Any]:
    """Run argv in its own session; kill the whole group on timeout."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=limiter(memory_mb),
            env=child_env(),
        )
    except OSError as exc:
        return {"status": "spawn_error", "code": None, "stdout": "", "stderr": str(exc), "t": 0.0}
    try:
        out, err = p.communicate(timeout=timeout)
        status = "exit"
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        status = "timeout"
    stdout = out.decode("utf-8", "replace")[-20000:]
    stderr = err.decode("utf-8", "replace")[-20000:]
    if status == "exit" and p.returncode != 0 and any(m in stderr for m in MEMORY_MARKERS):
        status = "memory"
    return {
        "status": status,
        "code": p.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "t": time.monotonic() - start,
    }


def panic_text(stderr: str) -> str:
    """The panic message (assert left/right values included), without the runtime's notes."""
    lines = [
        ln
        for ln in stderr.strip().splitlines()
        if not ln.startswith("note: run with `RUST_BACKTRACE")
    ]
    return tail("\n".join(lines), 800)


_LEFT = re.compile(r"^\s*left: `?(.*?)`?,?$", re.M)
_RIGHT = re.compile(r"^\s*right: `?(.*?)`?(?:', .*)?$", re.M)


def assert_output(stderr: str) -> str:
    """What a failed test shows: for ``assert_eq!`` the two values (the call is on the
    left by convention), else the panic message. Handles the panic formats of old
    (1.63: ``left: `3`,``) and new rustc (``left: 3``)."""
    left, right = _LEFT.search(stderr), _RIGHT.search(stderr)
    if left and right:
        return f"{left.group(1)} (expected {right.group(1)})"
    return panic_text(stderr)


def compile_source(source: str) -> dict[str, Any]:
    with open("main.rs", "w", encoding="utf-8") as fh:
        fh.write(source)
    argv = [
        str(SPEC.get("rustc", "rustc")),
        "--edition",
        str(SPEC.get("edition", "2021")),
        "-C",
        f"opt-level={SPEC.get('opt_level', 0)}",
        "-C",
        "debuginfo=0",
        "-A",
        "warnings",
        "--error-format=json",
        "-o",
        "main",
        "main.rs",
    ]
    r = run(argv, float(SPEC.get("compile_timeout_s", 60)), SPEC.get("compile_memory_mb"))
    if r["status"] == "spawn_error":
        why = f"cannot run the Rust compiler {argv[0]!r}: {r['stderr']}"
        return {"ok": False, "fatal": why + " (install rustc or set language.rustc)"}
    if r["status"] == "timeout":
        return {"ok": False, "fatal": f"compilation timed out after {r['t']:.0f}s"}
    diags: list[dict[str, Any]] = []
    other: list[str] = []
    for line in r["stderr"].splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            if line.strip():
                other.append(line)
            continue
        if not isinstance(d, dict) or not str(d.get("level", "")).startswith("error"):
            continue
        msg = str(d.get("message", ""))
        if msg.startswith(("aborting due to", "could not compile")):
            continue
        lines = [s["line_start"] for s in d.get("spans", []) if s.get("is_primary")]
        diags.append({"line": lines[0] if lines else None, "rendered": d.get("rendered") or msg})
    if r["code"] == 0 and os.path.exists("main"):
        return {"ok": True, "t": r["t"]}
    if not diags:
        why = f"rustc failed (exit code {r['code']})"
        if r["status"] == "memory" or r["code"] in (-6, 134):
            why = "rustc ran out of memory (raise language.compile_memory_mb)"
        return {"ok": False, "fatal": why + ("\n" + tail("\n".join(other), 800) if other else "")}
    return {"ok": False, "diags": diags, "t": r["t"]}


def render(diags: list[dict[str, Any]], limit: int = 1800) -> str:
    text = "\n".join(str(d["rendered"]).rstrip() for d in diags)
    return text if len(text) <= limit else text[:limit] + "\n... (more errors)"


def build_tests_source(program: str, tests: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """The program, one function per test, and a main that runs test ``argv[1]``;
    with the (first, last) line of each test function, to place compiler errors."""
    lines = [*program.rstrip("\n").split("\n"), ""]
    regions: list[tuple[int, int]] = []
    for i, t in enumerate(tests):
        body = [
            "#[allow(unused)]",
            f"fn __rb_test_{i}() {{",
            *("    " + x for x in t.strip().split("\n")),
            "}",
        ]
        regions.append((len(lines) + 1, len(lines) + len(body)))
        lines.extend(body)
    lines.append("fn main() {")
    lines.append(
        "    let i: usize = std::env::args().nth(1)"
        ".and_then(|a| a.parse().ok()).unwrap_or(usize::MAX);"
    )
    lines.append("    match i {")
    lines.extend(f"        {i} => __rb_test_{i}()," for i in range(len(tests)))
    lines.extend(["        _ => {}", "    }", "}"])
    return "\n".join(lines) + "\n", regions


def mode_tests() -> None:
    program = str(SPEC["program"])
    tests = [str(t) for t in SPEC["tests"]]
    results: list[dict[str, Any] | None] = [None] * len(tests)
    live = list(range(len(tests)))
    compiled: dict[str, Any] | None = None
    for _attempt in range(2):
        source, regions = build_tests_source(program, [tests[i] for i in live])
        c = compile_source(source)
        if c["ok"]:
            compiled = c
            break
        if "fatal" in c:
            for i in live:
                results[i] = {"status": "error", "output": c["fatal"]}
            emit({"results": results})
            return
        bad: dict[int, list[dict[str, Any]]] = {}
        in_program: list[dict[str, Any]] = []
        for d in c["diags"]:
            owner = next(
                (
                    live[k]
                    for k, (a, b) in enumerate(regions)
                    if d["line"] is not None and a <= d["line"] <= b
                ),
                None,
            )
            if owner is None:
                in_program.append(d)
            else:
                bad.setdefault(owner, []).append(d)
        if in_program or not bad:
            text = "compile error:\n" + render(in_program or c["diags"])
            for k, i in enumerate(live):
                # The message once (the feedback lists every test): the others point at it.
                out = text if k == 0 else "compile error (the program does not compile, see above)"
                results[i] = {"status": "error", "output": out}
            emit({"results": results, "compile_error": True})
            return
        for i, ds in bad.items():
            results[i] = {
                "status": "error",
                "output": "the test does not compile:\n" + render(ds, 600),
            }
        live = [i for i in live if i not in bad]
        if not live:
            emit({"results": results})
            return
    if compiled is None:
        for i in live:
            results[i] = {"status": "error", "output": "the tests do not compile"}
        emit({"results": results})
        return
    per_test = float(SPEC.get("run_timeout_s", 10))
    mem = SPEC.get("run_memory_mb")
    for k, i in enumerate(live):
        r = run(["./main", str(k)], per_test, mem)
        if r["status"] == "timeout":
            results[i] = {"status": "timeout", "output": f"timed out after {per_test:.1f}s"}
        elif r["status"] == "memory":
            results[i] = {"status": "error", "output": "memory limit exceeded"}
        elif r["code"] == 0:
            results[i] = {"status": "pass", "output": ""}
        elif r["code"] == 101:
            results[i] = {"status": "fail", "output": assert_output(r["stderr"])}
        else:
            why = f"exit code {r['code']} {panic_text(r['stderr'])}".strip()
            results[i] = {"status": "error", "output": why}
    emit({"results": results, "compile_s": compiled.get("t")})


def _compile_error(c: dict[str, Any]) -> str:
    return "compile error:\n" + (c.get("fatal") or render(c["diags"], 4000))


def mode_main() -> None:
    c = compile_source(str(SPEC["program"]).rstrip() + "\n\n" + str(SPEC["test"]))
    if not c["ok"]:
        emit({"status": "error", "detail": _compile_error(c)})
        return
    r = run(["./main"], float(SPEC.get("run_timeout_s", 10)), SPEC.get("run_memory_mb"))
    if r["status"] == "timeout":
        emit({"status": "timeout", "detail": f"timed out after {r['t']:.1f}s"})
    elif r["status"] == "memory":
        emit({"status": "fail", "detail": "memory limit exceeded"})
    elif r["code"] == 0:
        emit({"status": "pass", "detail": "", "compile_s": c["t"], "run_s": r["t"]})
    else:
        emit({"status": "fail", "detail": f"exit code {r['code']}\n{panic_text(r['stderr'])}"})


class SolutionCrash(Exception):
    """The served program stopped answering (panic, abort, exit)."""


def _serve_calls(proc: subprocess.Popen[bytes], calls: list[int]) -> Callable[..., Any]:
    stdin: IO[bytes] | None = proc.stdin
    stdout: IO[bytes] | None = proc.stdout
    assert stdin is not None and stdout is not None

    def candidate(*args: Any) -> Any:
        calls[0] += 1
        try:
            stdin.write((json.dumps(list(args)) + "\n").encode())
            stdin.flush()
        except OSError:
            raise SolutionCrash("the program exited") from None
        skipped = 0
        while True:
            line = stdout.readline()
            if not line:
                raise SolutionCrash("the program stopped")
            text = line.decode("utf-8", "replace")
            if text.startswith(CALL_MARK):
                return json.loads(text[len(CALL_MARK) :])
            skipped += 1  # the solution's own prints
            if skipped > 100_000:
                raise SolutionCrash("the program prints too much")

    return candidate


def mode_serve() -> None:
    c = compile_source(str(SPEC["program"]).rstrip() + "\n\n" + str(SPEC["serve_main"]))
    if not c["ok"]:
        emit({"status": "error", "detail": _compile_error(c)})
        return
    with open("hidden.py", "w", encoding="utf-8") as fh:  # a real file: tracebacks show lines
        fh.write(str(SPEC["check"]))
    with open("stderr.txt", "wb") as err_file:
        proc = subprocess.Popen(
            ["./main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            preexec_fn=limiter(SPEC.get("run_memory_mb")),
            env=child_env(),
        )
    calls = [0]
    ns: dict[str, Any] = {"__name__": "hidden"}
    status, detail = "pass", ""
    try:
        exec(compile(str(SPEC["check"]), os.path.abspath("hidden.py"), "exec"), ns)
        ns["check"](_serve_calls(proc, calls))
    except AssertionError:
        frames = [
            f for f in traceback.extract_tb(sys.exc_info()[2]) if f.filename.endswith("hidden.py")
        ]
        where = (
            f" at hidden.py:{frames[-1].lineno}: {(frames[-1].line or '')[:300]}" if frames else ""
        )
        status, detail = "fail", f"wrong answer on call {calls[0]}{where}"
    except SolutionCrash as exc:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
        with open("stderr.txt", encoding="utf-8", errors="replace") as fh:
            err = fh.read()
        status = "fail"
        if any(m in err for m in MEMORY_MARKERS):
            detail = f"memory limit exceeded on call {calls[0]}"
        else:
            detail = (
                f"runtime error on call {calls[0]} ({exc}, exit code {proc.returncode})\n"
                + panic_text(err)
            )
    except Exception as exc:
        status = "fail"
        detail = f"error while checking call {calls[0]}: {type(exc).__name__}: {str(exc)[:300]}"
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    emit({"status": status, "detail": detail, "calls": calls[0], "compile_s": c["t"]})


MODES: dict[str, Callable[[], None]] = {"tests": mode_tests, "main": mode_main, "serve": mode_serve}

# Run unconditionally: sandboxes may start this file through runpy under any __name__.
try:
    MODES[str(SPEC["mode"])]()
except Exception as exc:  # the driver itself failed: say so, do not pass it off as a verdict
    emit({"driver_error": f"{type(exc).__name__}: {exc}"})
