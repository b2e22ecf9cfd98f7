# ruff: noqa: SIM105
# mypy: disable-error-code="name-defined,no-untyped-def,no-untyped-call,type-arg,operator"
# (a stdlib-only program shipped into the sandbox, typed loosely like sandbox/_driver.py)
"""The candidate runner: the ONLY process in which the candidate's code runs.

Started by the judge as a fresh interpreter (``python3 -I -S -c <this source>``,
execve'd, so it holds nothing of the judge's or the sandbox supervisor's memory), with
the wire on fd 0 (requests) and fd 1 (answers). It moves the wire to other
descriptors, points 0/1/2 at /dev/null (the candidate's prints go nowhere), loads the
program and serves calls of its entry point:

- ``{"op": "call", "id": n}`` + a frame with ``[args, kwargs]``: call the entry point;
  answer ``{"id": n, "ok": true, "mutated": bool}`` + the result frame (+ the
  arguments after the call when the call changed them in place), or
  ``{"id": n, "ok": false, "exc": name, "msg": text}``;
- ``{"op": "fork"}``: serve the following calls in a forked child until
  ``{"op": "end"}`` (a self-test's state cannot leak into the next test); when that
  child is gone, for whatever reason, ``{"op": "child_exit", "status": n}``;
- EOF: exit.

Nothing here is trusted: a candidate can rewrite this process entirely. What it
cannot do is reach the judge's verdict: all it can send back is plain data.
The source of ``_wire.py`` is prepended when shipped.
"""

import builtins
import os
import sys

# threading and traceback are imported only when needed: every import here is paid
# once per candidate process start.

# On the host (tests, type checks) the wire is imported; shipped, its source is prepended.
try:  # shipped: inlined
    from reflexion_bench.judge._wire import (  # shipped: inlined
        WireClosed,
        WireError,
        dumps,
        loads,
        recv_frame,
        recv_msg,
        send_frame,
        send_msg,
    )
except ImportError:  # shipped: inlined
    pass  # shipped: inlined


def _short(text, limit=500):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exc_text(exc):
    try:
        msg = str(exc)
    except BaseException:
        msg = "<unprintable>"
    return _short(msg)


def _load(cfg):
    ns = {"__name__": "solution", "__builtins__": builtins}
    try:
        if cfg.get("prelude"):
            exec(compile(cfg["prelude"], "prelude.py", "exec"), ns)
        exec(compile(cfg["program"], "solution.py", "exec"), ns)
    except SyntaxError as exc:
        return None, _short(f"SyntaxError: {exc.msg} (line {exc.lineno})")
    except BaseException as exc:
        import traceback

        tb = traceback.extract_tb(exc.__traceback__)
        where = [f for f in tb if f.filename == "solution.py"]
        at = f" (solution.py line {where[-1].lineno})" if where else ""
        return None, _short(f"{type(exc).__name__}: {_exc_text(exc)}{at}")
    entry = cfg["entry"]
    fn = ns.get(entry)
    if not callable(fn) and cfg.get("solution_class") and isinstance(ns.get("Solution"), type):
        # LeetCode-style submission: a `class Solution` with the method.
        try:
            fn = getattr(ns["Solution"](), entry, None)
        except BaseException as exc:
            return None, f"Solution() failed: {type(exc).__name__}: {_exc_text(exc)}"
    if not callable(fn):
        if cfg.get("solution_class"):
            return None, f"the solution defines no function `{entry}` (nor a Solution method)"
        return None, f"NameError: name '{entry}' is not defined"
    return fn, None


def _call(fn, wire_in, wire_out, call_id):
    try:
        args, kwargs = loads(recv_frame(wire_in))
        before = dumps(args)
    except WireError as exc:
        send_msg(wire_out, {"id": call_id, "ok": False, "exc": "WireError", "msg": str(exc)})
        return
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:
        send_msg(
            wire_out,
            {"id": call_id, "ok": False, "exc": type(exc).__name__, "msg": _exc_text(exc)},
        )
        return
    try:
        payload = dumps(result).encode("ascii")
        after = dumps(args)
    except BaseException as exc:  # not plain data: the candidate's failure
        send_msg(
            wire_out,
            {
                "id": call_id,
                "ok": False,
                "exc": "UnsupportedValue",
                "msg": _short(f"the function returned {type(result).__name__}: {_exc_text(exc)}"),
            },
        )
        return
    mutated = after != before
    send_msg(wire_out, {"id": call_id, "ok": True, "mutated": mutated})
    send_frame(wire_out, payload)
    if mutated:
        send_frame(wire_out, after.encode("ascii"))


def _serve(fn, wire_in, wire_out):
    while True:
        try:
            msg = recv_msg(wire_in)
        except WireClosed:
            os._exit(0)
        op = msg.get("op")
        if op == "call":
            _call(fn, wire_in, wire_out, msg.get("id"))
        elif op == "fork":
            pid = os.fork()
            if pid:  # parent: wait until the test's child is done, then serve on
                try:
                    _, status = os.waitpid(pid, 0)
                except ChildProcessError:
                    status = -1
                # Tells the judge the test's process is gone, whether it ended on "end"
                # or died mid-call (then no answer will ever come).
                send_msg(wire_out, {"op": "child_exit", "status": status})
                continue
            # child: serve this test's calls until "end"
        elif op == "end":
            os._exit(0)
        else:
            os._exit(3)


def main():
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # big ints cross exactly
    cfg = recv_msg(wire_in)
    if cfg.get("recursion_limit"):
        sys.setrecursionlimit(int(cfg["recursion_limit"]))

    def run():
        fn, error = _load(cfg)
        send_msg(wire_out, {"op": "loaded", "ok": error is None, "error": error or ""})
        if fn is None:
            os._exit(0)
        _serve(fn, wire_in, wire_out)

    stack_mb = int(cfg.get("stack_mb") or 0)
    if stack_mb > 0:
        import threading

        # Deep recursion needs a big C stack; only threads let us choose it.
        threading.stack_size(stack_mb * 1024 * 1024)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join()
        os._exit(0)
    run()


if __name__ == "__main__":
    main()
