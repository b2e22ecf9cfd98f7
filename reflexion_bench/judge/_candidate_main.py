# mypy: disable-error-code="no-untyped-def,no-untyped-call,type-arg,operator,var-annotated"
# (a stdlib-only program shipped into the sandbox, typed loosely like sandbox/_driver.py)
"""The candidate runner: the ONLY process in which the candidate's code runs.

Started by the judge as a fresh interpreter (``python3 -I -S -c <this source>``,
execve'd, so it holds nothing of the judge's or the sandbox supervisor's memory), with
the wire on fd 0 (requests) and fd 1 (answers). It moves the wire to other
descriptors, points 0/1/2 at /dev/null (the candidate's prints go nowhere), loads the
program and serves calls of its entry point.

Requests come from the trusted judge as ``marshal`` frames (``("call", id, args,
kwargs)``, ``("fork",)``, ``("end",)``); answers go back as JSON frames built by
:func:`encode` (plain data only, every non-JSON type tagged; see ``_wire.loads``, the
judge's decoder): ``["ok", id, result, mutated, args]``, ``["exc", id, name, msg]``,
``["loaded", ok, error]``, ``["child_exit", status]``. ``fork`` serves the following
calls in a forked child until ``end`` (a self-test's state cannot leak into the next
test).

Nothing here is trusted: a candidate can rewrite this process entirely. What it cannot
do is reach the judge's verdict: all it can send back is data the judge decodes as
plain values. Only builtin modules are imported (os, sys, marshal): this start-up is
paid once per program.
"""

import builtins
import marshal
import os
import sys

# host only: begin (shipped, the source of sandbox/_box.py stands here instead)
from reflexion_bench.sandbox._box import (
    BOX_FAILED,
    CAP_SETGID,
    CAP_SETUID,
    CAP_SYS_ADMIN,
    NO_BOX,
    become_candidate,
    candidate_limits,
    enter_next_box_cgroup,
    limit_caps,
    non_dumpable,
    prepare,
    spawn_box,
)

# host only: end

#: Imported by the zygote before any job (see zygote_main).
WARM_MODULES = (
    "typing",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
)

_EXACT = (int, float, str, bool, type(None))


def _float(x):
    r = float.__repr__(x)
    if r == "nan":
        return "NaN"
    if r == "inf":
        return "Infinity"
    if r == "-inf":
        return "-Infinity"
    return r


def _str(x):
    # Strings travel as hex of their UTF-8 (lone surrogates kept): no escaping to get
    # wrong, and the judge's JSON decoder turns them back into exact str values.
    return '{"u":"' + x.encode("utf-8", "surrogatepass").hex() + '"}'


def _enc(x, out, depth):
    t = type(x)
    if t is int:
        out.append(int.__repr__(x))
    elif t is str:
        out.append(_str(x))
    elif t is float:
        out.append(_float(x))
    elif t is bool:
        out.append("true" if x else "false")
    elif x is None:
        out.append("null")
    elif depth > 5000:
        raise TypeError("value nested too deeply")
    elif t is list:
        _seq(x, out, depth, "[", "]")
    elif t is tuple:
        _seq(x, out, depth, '{"t":[', "]}")
    elif t is dict:
        out.append('{"d":[')
        first = True
        for k, v in dict.items(x):
            if not first:
                out.append(",")
            first = False
            out.append("[")
            _enc(k, out, depth + 1)
            out.append(",")
            _enc(v, out, depth + 1)
            out.append("]")
        out.append("]}")
    elif t is set:
        _seq(x, out, depth, '{"s":[', "]}")
    elif t is frozenset:
        _seq(x, out, depth, '{"f":[', "]}")
    elif t is bytes:
        out.append('{"b":"' + x.hex() + '"}')
    elif t is complex:
        out.append('{"c":[' + _float(x.real) + "," + _float(x.imag) + "]}")
    # Subclasses (Counter, IntEnum, namedtuple, str subclasses...) cross as their base
    # type, read through the base type's own methods so no override changes the value.
    elif isinstance(x, bool):
        _enc(bool(x), out, depth)
    elif isinstance(x, int):
        _enc(int.__index__(x), out, depth)
    elif isinstance(x, float):
        _enc(float.__float__(x), out, depth)
    elif isinstance(x, str):
        _enc(str.__str__(x), out, depth)
    elif isinstance(x, (bytes, bytearray)):
        _enc(bytes(memoryview(x)), out, depth)
    elif isinstance(x, dict):
        _enc(dict(dict.items(x)), out, depth)
    elif isinstance(x, tuple):
        _enc(tuple(tuple.__iter__(x)), out, depth)
    elif isinstance(x, list):
        _enc(list(list.__iter__(x)), out, depth)
    elif isinstance(x, frozenset):
        _enc(frozenset(frozenset.__iter__(x)), out, depth)
    elif isinstance(x, set):
        _enc(set(set.__iter__(x)), out, depth)
    else:
        raise TypeError(f"cannot send a value of type {type(x).__name__!r} (plain data only)")


def _seq(x, out, depth, head, tail):
    out.append(head)
    items = x if type(x) is list else list(x)
    # Fast path: a flat list of ints (LeetcodeHard answers of 1e5 numbers).
    if all(type(e) is int for e in items):
        out.append(",".join(map(int.__repr__, items)))
    else:
        for i, e in enumerate(items):
            if i:
                out.append(",")
            _enc(e, out, depth + 1)
    out.append(tail)


def encode(x):
    """``x`` as the JSON text the judge decodes; TypeError for anything not plain."""
    out = []
    _enc(x, out, 0)
    return "".join(out)


# --------------------------------------------------------------------------- frames


def _read(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            os._exit(0)  # the judge is gone
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(fd):
    n = int.from_bytes(_read(fd, 4), "big")
    return marshal.loads(_read(fd, n))


def _send(fd, obj):
    data = encode(obj).encode("ascii")
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


# --------------------------------------------------------------------------- serving


def _short(text, limit=500):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exc_text(exc):
    try:
        return _short(str(exc))
    except BaseException:
        return "<unprintable>"


def _load(cfg):
    ns = {"__name__": "solution", "__builtins__": builtins}
    try:
        if cfg.get("prelude"):
            exec(compile(cfg["prelude"], "prelude.py", "exec"), ns)
        exec(compile(cfg["program"], "solution.py", "exec"), ns)
    except SyntaxError as exc:
        return None, _short(f"SyntaxError: {exc.msg} (line {exc.lineno})")
    except BaseException as exc:
        line = ""
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "solution.py":
                line = f" (solution.py line {tb.tb_lineno})"
            tb = tb.tb_next
        return None, _short(f"{type(exc).__name__}: {_exc_text(exc)}{line}")
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


def _call(fn, out, call_id, args, kwargs):
    try:
        before = marshal.dumps(args)
    except ValueError:
        before = None
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:
        _send(out, ["exc", call_id, type(exc).__name__, _exc_text(exc)])
        return
    try:
        try:
            mutated = marshal.dumps(args) != before
        except ValueError:
            mutated = True
        _send(out, ["ok", call_id, result, mutated, args if mutated else None])
    except BaseException as exc:  # not plain data: the candidate's failure
        what = _short(f"the function returned {type(result).__name__}: {_exc_text(exc)}")
        _send(out, ["exc", call_id, "UnsupportedValue", what])


def _serve(fn, wire_in, wire_out):
    while True:
        msg = _recv(wire_in)
        op = msg[0]
        if op == "call":
            _call(fn, wire_out, msg[1], list(msg[2]), dict(msg[3]))
        elif op == "fork":
            pid = os.fork()
            if pid:  # parent: wait until the test's child is done, then serve on
                try:
                    _, status = os.waitpid(pid, 0)
                except ChildProcessError:
                    status = -1
                # Tells the judge the test's process is gone, whether it ended on "end"
                # or died mid-call (then no answer will ever come).
                _send(wire_out, ["child_exit", status])
            # child: serves this test's calls until "end"
        elif op == "end":
            os._exit(0)
        else:
            os._exit(3)


def serve_fds(wire_in, wire_out):
    """Be the candidate: fd 0/1/2 to /dev/null, then load and serve on the wire."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd not in (wire_in, wire_out):
            os.dup2(null, fd)
    os.close(null)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # big ints cross exactly
    cfg = _recv(wire_in)[1]
    if cfg.get("recursion_limit"):
        sys.setrecursionlimit(int(cfg["recursion_limit"]))

    def run():
        fn, error = _load(cfg)
        _send(wire_out, ["loaded", error is None, error or ""])
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
    os._exit(0)


def _exec_request(sock, request, fds, uid, nproc, workdir, cgroup_root, require_box):
    """A trusted driver's program (the Rust driver's candidates) in a box: ``fds`` are
    its stdin, stdout, stderr and the pipe the box's init reports its status on. The
    answer: the init's pid and the box cgroup's CPU counter; NO_BOX where no box can be
    made and none is owed (the driver runs it itself), BOX_FAILED where one is owed."""
    import signal
    import socket

    argv = request.get("__exec__")
    env = request.get("env")
    limits = request.get("limits")
    ok = (
        type(argv) is list
        and argv
        and all(type(a) is str for a in argv)
        and type(env) is dict
        and all(type(k) is str and type(v) is str for k, v in env.items())
        and type(limits) is dict
    )

    def program(setup_error):
        try:
            sock.close()
            os.setsid()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            if setup_error:
                os.write(fds[3], b"E" + setup_error.encode("utf-8", "replace")[:800])
                os._exit(0)
            for i in range(3):
                os.dup2(fds[i], i)
            # Nothing but its stdio: not the status pipe (only the init writes there),
            # not the zygote's socket.
            os.closerange(3, 65536)
            try:
                become_candidate(uid, uid, candidate_limits(limits, nproc))
            except BaseException as exc:
                os.write(2, f"the program could not be confined: {exc}\n".encode())
                os._exit(126)
            for cwd in (os.path.join(workdir, "box"), workdir, "/"):
                try:
                    os.chdir(cwd)
                    break
                except OSError:
                    continue
            os.execve(argv[0], argv, env)
        except BaseException:
            pass
        finally:
            os._exit(127)

    pid, usage_fd, boxed = 0, -1, False
    if ok:
        try:
            pid, usage_fd, boxed = spawn_box(program, cgroup_root, True, status_fd=fds[3])
        except OSError:
            pid, usage_fd = 0, -1
    for fd in fds:
        os.close(fd)
    if pid and not boxed:
        # No PID namespace: the program got the error and ended without running.
        pid = BOX_FAILED if require_box else NO_BOX
        if usage_fd >= 0:
            os.close(usage_fd)
            usage_fd = -1
    elif not pid:
        pid = BOX_FAILED if require_box else NO_BOX
    try:
        socket.send_fds(sock, [pid.to_bytes(4, "big")], [usage_fd] if usage_fd >= 0 else [])
    except OSError:
        os._exit(0)
    finally:
        if usage_fd >= 0:
            os.close(usage_fd)
    if cgroup_root:
        enter_next_box_cgroup(cgroup_root)


def zygote_main(sock_fd, box):
    """A warm, clean parent of candidates, started once per sandbox worker.

    It was execve'd by the sandbox supervisor before any job: its memory holds no
    test, verdict or other candidate's data, and it never reads a wire. It keeps the
    supervisor's uid (0 of the sandbox, where uids are split), which no candidate
    shares: a candidate cannot signal it, ``prlimit`` it or read its memory. On each
    request (the judge sends two pipe ends and the job's limits over a unix socket) it
    forks a candidate that sets EVERY resource limit, becomes the candidate uid with
    no capability, and serves on those pipes; it answers with the candidate's pid. A
    fork of this process costs ~1 ms where a fresh interpreter costs ~10.
    """
    import contextlib
    import resource  # noqa: F401 - imported once here, not in every candidate
    import signal
    import socket

    # The standard modules programs import most (every HumanEval prompt starts with
    # ``from typing import ...``, ~4 ms of a candidate's load when it imports it
    # itself): loaded once here, so a fork finds them in sys.modules. They hold nothing
    # of any job; a candidate that changes one changes its own copy.
    for name in WARM_MODULES:
        with contextlib.suppress(ImportError):
            __import__(name)

    non_dumpable()
    uid = box.get("uid")
    nproc = bool(box.get("nproc", True))
    workdir = str(box.get("workdir") or "/")
    # The keeper's CPU cgroup (bound in root-only; each box gets a cgroup under it) and
    # whether a box is owed: with the keeper's CAP_SYS_ADMIN a candidate never runs
    # outside a PID namespace of its own (a failure to make one is the sandbox's error).
    cgroup_root = str(box.get("cgroup") or "")
    require_box = bool(box.get("require_box"))
    if uid is not None:
        # All the zygote ever does with privilege: make a box (namespaces, mounts, a
        # cgroup) and make a fork of it the candidate uid.
        limit_caps((CAP_SETGID, CAP_SETUID, CAP_SYS_ADMIN))
    prepare()  # every fork inherits the confinement's structures, built once here
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # box inits are reaped by the kernel
    sock = socket.socket(fileno=sock_fd)
    import gc

    # Everything alive now is shared with every candidate: keep the collector off it, so
    # a fork's pages stay shared instead of being copied when the GC walks them.
    gc.freeze()
    if cgroup_root:
        enter_next_box_cgroup(cgroup_root)  # the first box's, before any request
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 4)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)  # the supervisor is gone
        try:
            limits = marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            limits = {}
        if type(limits) is not dict:
            limits = {}
        if "__exec__" in limits and len(fds) == 4:
            _exec_request(sock, limits, fds, uid, nproc, workdir, cgroup_root, require_box)
            continue
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue

        def candidate(setup_error, fds=fds, limits=limits):
            try:
                sock.close()
                os.setsid()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                wire_in = os.dup(fds[0])
                wire_out = os.dup(fds[1])
                for fd in fds:
                    os.close(fd)
                if setup_error:
                    _send(wire_out, ["box_error", setup_error])
                    os._exit(0)
                try:
                    become_candidate(uid, uid, candidate_limits(limits, nproc))
                except BaseException as exc:
                    # Before any of the program's code: the judge reports the sandbox's
                    # failure (never the program's) and the worker is replaced.
                    _send(wire_out, ["box_error", f"the candidate could not be confined: {exc}"])
                    os._exit(0)
                # As the candidate: its own dir in the job's fresh scratch mount.
                for cwd in (os.path.join(workdir, "box"), workdir, "/"):
                    try:
                        os.chdir(cwd)
                        break
                    except OSError:
                        continue
                serve_fds(wire_in, wire_out)
            finally:
                os._exit(0)

        try:
            pid, usage_fd, _boxed = spawn_box(candidate, cgroup_root, require_box)
        except OSError:
            pid, usage_fd = 0, -1
        for fd in fds:
            os.close(fd)
        try:
            # The box's init (killing it ends the box) and, where there is one, the box
            # cgroup's CPU counter: the judge reads the box's CPU time from it.
            socket.send_fds(sock, [pid.to_bytes(4, "big")], [usage_fd] if usage_fd >= 0 else [])
        except OSError:
            os._exit(0)
        finally:
            if usage_fd >= 0:
                os.close(usage_fd)
        if cgroup_root:
            # Into the next box's cgroup now, while this judgment runs: the move waits
            # for the kernel (see enter_next_box_cgroup), the next box is born there.
            enter_next_box_cgroup(cgroup_root)


def main():
    if sys.argv[1:2] == ["--zygote"]:
        import json

        box = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
        zygote_main(3, box if type(box) is dict else {})
    serve_fds(os.dup(0), os.dup(1))


if __name__ == "__main__":
    main()
