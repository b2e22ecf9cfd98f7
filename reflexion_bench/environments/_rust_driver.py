"""Compiles and runs Rust programs *inside the sandbox*; reports one JSON line.

Copied into the sandbox's scratch directory as ``driver.py`` and run with the
sandbox's Python (standard library only), its spec as JSON on stdin. Doing the compile and the
runs in one sandbox execution lets each step have its own timeout (compile vs run)
and its own memory limit (rustc needs far more address space than the program under
test), and keeps a hanging test from costing the others.

Modes (``spec["mode"]``), see ``rust_judge.py`` for why the work is split this way:

- ``calls``: the candidate's program plus one function per call cut out of the tests;
  group ``g`` (the calls of one test) runs in its own process (``./main <g>``) and
  prints one result line per call. The report is those lines, as data: no expected
  value is in this execution. Calls that do not compile drop their test only.
- ``judge_build``: no candidate code. Compiles the trusted tests, each call replaced
  by "decode result k", and returns the binary (base64) and the tests that do not
  compile.
- ``judge``: no candidate code. Runs that binary on the candidate's results (stdin);
  ``./judge <i>`` runs test ``i``.
- ``serve``: the program plus a JSON call loop (``serve_main``); the Python hidden
  ``check(candidate)`` runs here with ``candidate`` forwarding each call to the
  binary and reading its answers as plain JSON data. The check is never written to
  disk, and this process is non-dumpable, so the binary cannot read it.

The report is the last stdout line, prefixed with ``spec["marker"]``; the programs'
own output goes to pipes or files this driver reads, never to its stdout.
"""

from __future__ import annotations

import base64
import contextlib
import json
import linecache
import os
import re
import resource
import secrets
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

# host only: begin (shipped, the source of sandbox/_box.py stands here instead)
from reflexion_bench.sandbox._box import (
    ExecBox,
    become_candidate,
    box_identity,
    candidate_limits,
    exec_in_box,
    non_dumpable,
    tree_cpu_s,
    wall_backstop,
)

# host only: end

# The spec comes on stdin, never as a file: it may hold the hidden check (serve mode),
# and nothing a program could open holds it (fd 0 is an unlinked file; the programs
# get their own stdin, and /proc/<us>/fd is closed to them, see _non_dumpable).
SPEC: dict[str, Any] = json.loads(sys.stdin.read())
MARKER = str(SPEC["marker"])
CALL_MARK = "\x1eRB "
RESULT_MARK = "\x1eRBV "
PASS_MARK = "\x1eRBPASS "
MAX_RESULTS_BYTES = 16 * 1024 * 1024


def _non_dumpable() -> None:
    """Programs started later (same uid) cannot ptrace this process nor open its
    /proc/<pid>/mem or /proc/<pid>/fd (as the sandbox supervisor does for itself)."""
    non_dumpable()


_non_dumpable()
MEMORY_MARKERS = ("memory allocation of", "out of memory", "Cannot allocate memory")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write("\n" + MARKER + json.dumps(obj) + "\n")
    sys.stdout.flush()


def tail(text: str, limit: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def limiter(
    memory_mb: Any, candidate: bool = False, cpu_s: float = 30, kernel_factor: float = 2.0
) -> Callable[[], None]:
    """A preexec hook: own session (so a timeout kills the whole group), and an
    address-space limit (only ever lowered: the sandbox's own limit still holds).
    ``candidate``: the program is the model's binary: every limit, the candidate uid
    and no capability (this driver runs under the judge uid, which it must not share)."""

    def pre() -> None:
        os.setsid()
        if candidate:
            # 32 MB of output files: the results of one group travel there (16 MB).
            # The kernel's CPU limit is a backstop where the driver stops the run at cpu_s
            # itself (``kernel_factor`` 2); a served program is stopped by it (1).
            lim = candidate_rlimits(memory_mb, cpu_s, kernel_factor)
            become_candidate(*box_identity(), candidate_limits(lim))
            if os.path.isdir("box"):
                os.chdir("box")  # its own writable dir, not this driver's files
            return
        if memory_mb:
            m = int(memory_mb) * 1024 * 1024
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                m = min(m, hard)
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, (m, hard))

    return pre


def candidate_rlimits(memory_mb: Any, cpu_s: float, kernel_factor: float) -> dict[str, Any]:
    """The limits a candidate binary runs under (see :func:`limiter`)."""
    kernel_cpu = max(1, round(kernel_factor * cpu_s))
    return {"memory_mb": memory_mb, "cpu_s": kernel_cpu, "file_size_mb": 32}


def boxed(
    argv: list[str], memory_mb: Any, cpu_s: float, kernel_factor: float, stdio: tuple[int, ...]
) -> ExecBox | str | None:
    """The candidate binary in a box of its own, made by the sandbox's zygote (as the
    Python judge's candidates are): its own PID namespace, /proc and CPU cgroup, so
    nothing of an earlier job is visible to it and every CPU second of it is charged.
    None where the sandbox makes no boxes (the weaker levels: :func:`limiter` instead);
    a text where one is owed and could not be made."""
    return exec_in_box(argv, child_env(), candidate_rlimits(memory_mb, cpu_s, kernel_factor), stdio)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["RUST_BACKTRACE"] = "0"  # a backtrace is noise in the feedback
    return env


def _read(path: str, limit: int) -> str:
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    os.unlink(path)
    text = data[:limit].decode("utf-8", "replace")
    return text + ("\n[output cut]" if len(data) > limit else "")


def run(
    argv: list[str],
    timeout: float,
    memory_mb: Any,
    stdin_data: bytes = b"",
    stdout_limit: int = 20000,
    candidate: bool = False,
) -> dict[str, Any]:
    """Run argv in its own session; kill the whole group on timeout: past ``timeout``
    seconds of its CPU time (its processes', as the kernel accounts them), or past the
    wall backstop (``_box.wall_backstop``: a program that sleeps or blocks). So that a
    step's verdict does not depend on how busy the machine is.

    Output goes to files, not pipes: a process that escaped the group and still holds
    a pipe cannot keep this driver waiting, and a flood of output is bounded by the
    sandbox's file-size limit. The first ``stdout_limit`` characters of stdout are kept
    (results come first), the last 20000 of stderr (where panics are).
    """
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out_path, err_path, in_path = ".rb_stdout", ".rb_stderr", ".rb_stdin"
    with open(in_path, "wb") as fh:
        fh.write(stdin_data)
    box: ExecBox | str | None = None
    try:
        with (
            open(in_path, "rb") as fin,
            open(out_path, "wb") as fout,
            open(err_path, "wb") as ferr,
        ):
            os.unlink(in_path)
            if candidate:
                box = boxed(
                    argv, memory_mb, timeout, 2.0, (fin.fileno(), fout.fileno(), ferr.fileno())
                )
            if isinstance(box, str):
                return {
                    "status": "spawn_error",
                    "code": None,
                    "stdout": "",
                    "stderr": box,
                    "t": 0.0,
                }
            if box is not None:
                return _run_boxed(box, timeout, start, out_path, err_path, stdout_limit)
            p = subprocess.Popen(
                argv,
                stdin=fin,
                stdout=fout,
                stderr=ferr,
                preexec_fn=limiter(memory_mb, candidate, timeout),
                env=child_env(),
            )
    except (OSError, subprocess.SubprocessError) as exc:
        return {"status": "spawn_error", "code": None, "stdout": "", "stderr": str(exc), "t": 0.0}
    clock = _wait_cpu(p, timeout, start)
    status = "exit"
    if clock is not None:
        with contextlib.suppress(OSError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        status = "timeout"
    # The run's CPU time: what the reaped child (and the children it reaped) used.
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    stdout = _read(out_path, stdout_limit)
    stderr = _read(err_path, 10_000_000)[-20000:]
    if status == "exit" and p.returncode != 0 and any(m in stderr for m in MEMORY_MARKERS):
        status = "memory"
    return {
        "status": status,
        "code": p.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "t": time.monotonic() - start,
        "cpu": round(cpu, 3),
        "clock": clock,
    }


def _run_boxed(
    box: ExecBox, cpu_s: float, start: float, out_path: str, err_path: str, stdout_limit: int
) -> dict[str, Any]:
    """:func:`run` for a program in a box: its CPU time is the box's (every process of
    it, wherever reparented), checked while it runs and again once it has ended, when
    a program over ``cpu_s`` is a timeout whatever it printed."""
    try:
        clock = _wait_box(box, cpu_s, start)
        if clock is not None:
            box.kill()
        cpu = box.cpu() or 0.0
        if clock is None and cpu > cpu_s:
            clock = "cpu"
        code, error = box.returncode, box.error
    finally:
        box.close()
    stdout = _read(out_path, stdout_limit)
    stderr = _read(err_path, 10_000_000)[-20000:]
    if error is not None:
        return {"status": "spawn_error", "code": None, "stdout": "", "stderr": error, "t": 0.0}
    status = "timeout" if clock is not None else "exit"
    if status == "exit" and code != 0 and any(m in stderr for m in MEMORY_MARKERS):
        status = "memory"
    return {
        "status": status,
        "code": code,
        "stdout": stdout,
        "stderr": stderr,
        "t": time.monotonic() - start,
        "cpu": round(cpu, 3),
        "clock": clock,
    }


def _wait_box(box: ExecBox, cpu_s: float, start: float) -> str | None:
    """Wait for a box to end: None when it did within ``cpu_s`` seconds of its CPU and
    the wall backstop, else ``"cpu"`` or ``"wall"``. Its CPU can grow as fast as every
    core together, so it is read at least every (time left) / cores."""
    deadline = start + wall_backstop(cpu_s)
    cores = max(1, len(os.sched_getaffinity(0)))
    while True:
        used = box.cpu() or 0.0
        if used > cpu_s:
            return "cpu"
        now = time.monotonic()
        if now >= deadline:
            return "wall"
        wait = max(0.005, min(deadline - now, (cpu_s - used) / cores, 1.0))
        if box.wait(wait):
            return None


def _wait_cpu(p: subprocess.Popen[bytes], cpu_s: float, start: float) -> str | None:
    """Wait for ``p``: None when it ended within ``cpu_s`` seconds of CPU and the wall
    backstop, ``"cpu"`` or ``"wall"`` when it ran out of one first. /proc is read only
    when the limit may have been reached (one thread's CPU time grows no faster than
    wall time); where /proc cannot tell, wall time counts as CPU."""
    deadline = start + wall_backstop(cpu_s)
    seen_at, used = start, 0.0
    while True:
        now = time.monotonic()
        wait = max(0.0, min(deadline - now, cpu_s - (used + now - seen_at), 1.0))
        if wait > 0:
            try:
                p.wait(timeout=wait)
                return None
            except subprocess.TimeoutExpired:
                pass
        now = time.monotonic()
        got = tree_cpu_s(p.pid)
        used, seen_at = (now - start if got is None else got), now
        if p.poll() is not None:
            return None
        if now >= deadline:
            return "wall"
        if used > cpu_s:
            return "cpu"


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


def compile_source(
    source: str, name: str = "main", opt_level: Any = None, strip: bool = False
) -> dict[str, Any]:
    with open(name + ".rs", "w", encoding="utf-8") as fh:
        fh.write(source)
    argv = [
        str(SPEC.get("rustc", "rustc")),
        "--edition",
        str(SPEC.get("edition", "2021")),
        "-C",
        f"opt-level={SPEC.get('opt_level', 0) if opt_level is None else opt_level}",
        "-C",
        "debuginfo=0",
        *(["-C", "strip=symbols"] if strip else []),
        "-A",
        "warnings",
        "--error-format=json",
        "-o",
        name,
        name + ".rs",
    ]
    r = run(argv, float(SPEC.get("compile_timeout_s", 60)), SPEC.get("compile_memory_mb"))
    os.unlink(name + ".rs")  # the judge's source holds expected values: not left lying
    if r["status"] == "spawn_error":
        why = f"cannot run the Rust compiler {argv[0]!r}: {r['stderr']}"
        # The harness's failure (no compiler here), not the program's.
        return {
            "ok": False,
            "fatal": why + " (install rustc or set language.rustc)",
            "harness": True,
        }
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
    if r["code"] == 0 and os.path.exists(name):
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


def _compile_error(c: dict[str, Any]) -> str:
    return "compile error:\n" + (c.get("fatal") or render(c["diags"], 4000))


def _localize(
    diags: list[dict[str, Any]], regions: list[tuple[int, int, int]]
) -> tuple[dict[int, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Compiler errors by owner (the id of the region holding their line) and the rest."""
    owned: dict[int, list[dict[str, Any]]] = {}
    rest: list[dict[str, Any]] = []
    for d in diags:
        owner = next(
            (o for a, b, o in regions if d["line"] is not None and a <= d["line"] <= b), None
        )
        if owner is None:
            rest.append(d)
        else:
            owned.setdefault(owner, []).append(d)
    return owned, rest


def _append_fn(lines: list[str], header: str, body: list[str]) -> tuple[int, int]:
    block = ["#[allow(unused)]", header, *("    " + x for x in body), "}"]
    first = len(lines) + 1
    lines.extend(block)
    return first, len(lines)


def build_calls_source(live: list[int]) -> tuple[str, list[tuple[int, int, int]]]:
    """The candidate's program, one function per call (owner: the call's group), and
    a main running the calls of group ``argv[1]`` in order."""
    groups = [list(g) for g in SPEC["groups"]]
    ret = str(SPEC["ret"])
    lines = [*str(SPEC["program"]).rstrip("\n").split("\n"), "", *str(SPEC["codec"]).split("\n")]
    regions: list[tuple[int, int, int]] = []
    for g in live:
        for k in groups[g]:
            call = str(SPEC["calls"][k])
            body = [f"let __rb_v: {ret} = {call};", f"__rbj::emit({k}, &__rb_v);"]
            a, b = _append_fn(lines, f"fn __rb_call_{k}() {{", body)
            regions.append((a, b, g))
    lines.append("fn main() {")
    lines.append(
        "    let g: usize = std::env::args().nth(1)"
        ".and_then(|a| a.parse().ok()).unwrap_or(usize::MAX);"
    )
    lines.append("    match g {")
    for g in live:
        lines.append(
            f"        {g} => {{ " + " ".join(f"__rb_call_{k}();" for k in groups[g]) + " }"
        )
    lines.extend(["        _ => {}", "    }", "}"])
    return "\n".join(lines) + "\n", regions


def build_judge_source(live: list[int]) -> tuple[str, list[tuple[int, int, int]]]:
    """The trusted tests (no candidate code): one function per test, a main that loads
    the results from stdin, runs test ``argv[1]`` and only then prints the pass line."""
    lines = [
        *str(SPEC["prelude"]).split("\n"),
        *str(SPEC["codec"]).split("\n"),
        *str(SPEC["runtime"]).split("\n"),
    ]
    regions: list[tuple[int, int, int]] = []
    bodies = [str(b) for b in SPEC["bodies"]]
    for i in live:
        a, b = _append_fn(lines, f"fn __rb_test_{i}() {{", bodies[i].strip("\n").split("\n"))
        regions.append((a, b, i))
    lines.append("fn main() {")
    lines.append("    let nonce = __rb_load();")
    lines.append(
        "    let i: usize = std::env::args().nth(1)"
        ".and_then(|a| a.parse().ok()).unwrap_or(usize::MAX);"
    )
    lines.append("    match i {")
    lines.extend(f"        {i} => __rb_test_{i}()," for i in live)
    lines.extend(["        _ => std::process::exit(5),", "    }"])
    lines.append('    println!("\\n\\x1eRBPASS {}", nonce);')
    lines.append("}")
    return "\n".join(lines) + "\n", regions


def compile_live(
    build: Callable[[list[int]], tuple[str, list[tuple[int, int, int]]]],
    live: list[int],
    name: str,
    opt_level: Any,
    results: list[dict[str, Any] | None],
    strip: bool = False,
) -> tuple[list[int], dict[str, Any] | None]:
    """Compile, dropping the units whose own code does not compile (at most twice).

    Returns the units left and the compile result; on an error outside every unit
    (the program itself) the result is the failed compile and no unit is left."""
    for _attempt in range(2):
        source, regions = build(live)
        c = compile_source(source, name, opt_level, strip)
        if c["ok"]:
            return live, c
        if "fatal" in c:
            return [], c
        owned, rest = _localize(c["diags"], regions)
        if rest or not owned:
            return [], c
        for u, ds in owned.items():
            results[u] = {
                "status": "compile_error",
                "detail": "the test does not compile:\n" + render(ds, 600),
            }
        live = [u for u in live if u not in owned]
        if not live:
            return [], None
    return [], None


def _results(stdout: str, mine: set[int]) -> tuple[dict[str, str], list[int]]:
    """The result lines of a calls run: {k: encoding}, and the indices that are not
    this group's or came twice (a program printing result lines of its own)."""
    found: dict[str, str] = {}
    stray: list[int] = []
    for line in stdout.split("\n"):
        if not line.startswith(RESULT_MARK):
            continue
        head, _, text = line[len(RESULT_MARK) :].partition(" ")
        try:
            k = int(head)
        except ValueError:
            stray.append(-1)
            continue
        if k not in mine or str(k) in found:
            stray.append(k)
            continue
        found[str(k)] = text
    return found, stray


def mode_calls() -> None:
    groups = [list(g) for g in SPEC["groups"]]
    out: list[dict[str, Any] | None] = [None] * len(groups)
    live = [g for g, calls in enumerate(groups) if calls]
    live, c = compile_live(build_calls_source, live, "main", None, out)
    if c is not None and not c["ok"]:
        emit({"groups": out, "compile_error": _compile_error(c), "harness": bool(c.get("harness"))})
        return
    per_group = float(SPEC.get("run_timeout_s", 10))
    mem = SPEC.get("run_memory_mb")
    for g in live:
        binary = os.path.abspath("main")  # run from the candidate's own dir
        r = run([binary, str(g)], per_group, mem, stdout_limit=MAX_RESULTS_BYTES, candidate=True)
        found, stray = _results(r["stdout"], set(groups[g]))
        out[g] = {
            "status": r["status"],
            "code": r["code"],
            "t": round(r["t"], 3),
            "cpu": r["cpu"],
            "clock": r["clock"],
            "results": found,
            "stray": stray[:10],
            "panic": assert_output(r["stderr"]) if r["code"] == 101 else panic_text(r["stderr"]),
            "stderr": tail(r["stderr"], 300) if r["status"] == "spawn_error" else "",
        }
    emit({"groups": out, "compile_s": c["t"] if c else None})


def mode_judge_build() -> None:
    """Compile the trusted tests (stripped: the binary travels back to the host, which
    reuses it for every program judged on these tests)."""
    bodies = [str(b) for b in SPEC["bodies"]]
    out: list[dict[str, Any] | None] = [None] * len(bodies)
    live, c = compile_live(build_judge_source, list(range(len(bodies))), "judge", 0, out, True)
    if c is not None and not c["ok"]:
        emit({"tests": out, "compile_error": _compile_error(c)})
        return
    binary = None
    if live:
        with open("judge", "rb") as fh:
            binary = base64.b64encode(fh.read()).decode()
        os.unlink("judge")
    emit({"tests": out, "live": live, "binary": binary})


def mode_judge() -> None:
    """Run the trusted tests built by ``judge_build`` on the candidate's results."""
    inputs: list[list[list[Any]] | None] = list(SPEC["inputs"])
    with open("judge", "wb") as fh:
        fh.write(base64.b64decode(str(SPEC["binary"])))
    os.chmod("judge", 0o700)
    out: list[dict[str, Any] | None] = [None] * len(inputs)
    per_test = float(SPEC.get("run_timeout_s", 10))
    mem = SPEC.get("run_memory_mb")
    for i in range(len(inputs)):
        if inputs[i] is None:
            continue
        nonce = secrets.token_hex(16)
        feed = nonce + "\n" + "".join(f"{k} {text}\n" for k, text in inputs[i] or [])
        r = run(["./judge", str(i)], per_test, mem, stdin_data=feed.encode())
        passed = r["status"] == "exit" and r["code"] == 0 and (PASS_MARK + nonce) in r["stdout"]
        detail, short = "", ""
        if r["code"] == 101:
            detail, short = panic_text(r["stderr"]), assert_output(r["stderr"])
        elif r["code"] in (3, 4):
            detail = next((ln for ln in r["stderr"].splitlines() if "\x1eRB" in ln), "")
            detail = detail.replace("\x1eRBMALFORMED ", "call ").replace("\x1eRBMISSING ", "")
        elif r["code"] != 0:
            detail = panic_text(r["stderr"])
        out[i] = {
            "status": r["status"],
            "code": r["code"],
            "passed": passed,
            "t": round(r["t"], 3),
            "cpu": r["cpu"],
            "clock": r["clock"],
            "detail": detail,
            "short": short or detail,
        }
    with contextlib.suppress(OSError):
        os.unlink("judge")
    emit({"tests": out})


class BoxedServe:
    """The served program in a box (:func:`boxed`), with the parts of a Popen that
    ``mode_serve`` uses: its pipes, ``wait``, ``kill`` and ``returncode``."""

    def __init__(self, box: ExecBox, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.box = box
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout

    @property
    def returncode(self) -> int | None:
        return self.box.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if not self.box.wait(timeout):
            raise subprocess.TimeoutExpired("serve", timeout or 0.0)
        return self.box.returncode

    def kill(self) -> None:
        self.box.kill()


def _start_serve(argv: list[str], err_file: IO[bytes]) -> subprocess.Popen[bytes] | BoxedServe:
    """The served program: in a box where the sandbox makes them, else as a child of
    this driver (its own session). Its CPU limit is the kernel's (SIGXCPU): the check
    calls it many times; in a box the box's total is checked again at the end."""
    limit = float(SPEC.get("run_timeout_s", 10))
    mem = SPEC.get("run_memory_mb")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        box = boxed(argv, mem, limit, 1.0, (in_r, out_w, err_file.fileno()))
    finally:
        os.close(in_r)
        os.close(out_w)
    if isinstance(box, ExecBox):
        return BoxedServe(box, os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"))
    os.close(in_w)
    os.close(out_r)
    if isinstance(box, str):
        raise OSError(box)
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err_file,
        preexec_fn=limiter(mem, True, limit, 1.0),
        env=child_env(),
    )


def _end_serve(proc: subprocess.Popen[bytes] | BoxedServe) -> float | None:
    """Stop the served program (and whatever it left running); its box's CPU seconds
    where it had a box."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        if isinstance(proc, BoxedServe):
            proc.kill()
        else:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
    if isinstance(proc, BoxedServe):
        proc.kill()  # its box ends with it: nothing it started outlives the check
        cpu = proc.box.cpu()
        proc.box.close()
        return cpu
    return None


class SolutionCrash(Exception):
    """The served program stopped answering (panic, abort, exit)."""


def _serve_calls(
    proc: subprocess.Popen[bytes] | BoxedServe, calls: list[int]
) -> Callable[..., Any]:
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
                # Plain data only (None, bool, int, float, str, list, dict): nothing in
                # an answer can run code or compare unlike the value it spells.
                return json.loads(text[len(CALL_MARK) :])
            skipped += 1  # the solution's own prints
            if skipped > 100_000:
                raise SolutionCrash("the program prints too much")

    return candidate


def mode_serve() -> None:
    c = compile_source(str(SPEC["program"]).rstrip() + "\n\n" + str(SPEC["serve_main"]))
    if not c["ok"]:
        # The program's own failure (it does not compile), unless no compiler ran.
        emit({"status": "error" if c.get("harness") else "fail", "detail": _compile_error(c)})
        return
    check = str(SPEC["check"])
    # The check never touches the disk (the program could read it there); tracebacks
    # still show its lines through linecache (mtime None: never invalidated).
    linecache.cache["hidden.py"] = (len(check), None, check.splitlines(True), "hidden.py")
    with open("stderr.txt", "wb") as err_file:
        try:
            proc = _start_serve([os.path.abspath("main")], err_file)
        except (OSError, subprocess.SubprocessError) as exc:
            emit({"status": "error", "detail": f"the program could not be started: {exc}"})
            return
    calls = [0]
    ns: dict[str, Any] = {"__name__": "hidden"}
    status, detail = "pass", ""
    try:
        exec(compile(check, "hidden.py", "exec"), ns)
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
        if proc.returncode == -signal.SIGXCPU:
            status = "timeout"
            limit = float(SPEC.get("run_timeout_s", 10))
            detail = f"timed out after {limit:g}s of CPU time on call {calls[0]}"
        elif any(m in err for m in MEMORY_MARKERS):
            detail = f"memory limit exceeded on call {calls[0]}"
        else:
            detail = (
                f"runtime error on call {calls[0]} ({exc}, exit code {proc.returncode})\n"
                + panic_text(err)
            )
    except Exception as exc:
        status = "fail"
        detail = f"error while checking call {calls[0]}: {type(exc).__name__}: {str(exc)[:300]}"
    cpu = _end_serve(proc)
    limit = float(SPEC.get("run_timeout_s", 10))
    if cpu is not None and cpu > limit and status != "timeout":
        # Its processes together (children, orphans) used more than the limit that
        # the kernel holds each of them to: a timeout, whatever the check said.
        status = "timeout"
        detail = f"used {cpu:.2f}s of CPU time over its {limit:g}s limit (all its processes)"
    emit({"status": status, "detail": detail, "calls": calls[0], "compile_s": c["t"]})


MODES: dict[str, Callable[[], None]] = {
    "calls": mode_calls,
    "judge_build": mode_judge_build,
    "judge": mode_judge,
    "serve": mode_serve,
}

# Run unconditionally: sandboxes may start this file through runpy under any __name__.
# "ready" first: the host tells a sandbox that never ran us (a run error) from a
# program that stopped us (the program's failure).
emit({"ready": True})
try:
    MODES[str(SPEC["mode"])]()
except Exception as exc:  # the driver itself failed: say so, do not pass it off as a verdict
    emit({"driver_error": f"{type(exc).__name__}: {exc}"})
