# mypy: disable-error-code="no-untyped-def,no-untyped-call,type-arg,operator,arg-type,var-annotated"
# (a stdlib-only program shipped into the sandbox, typed loosely like _judge_main.py)
"""The reference runner: computes the plus tests' expected outputs, once per task.

Runs inside the sandbox as ``{python} ref.py``. It first re-executes itself with a fixed
``PYTHONHASHSEED`` (set and dict-of-str orders then repeat from run to run, so a
reference that returns ``tuple(set(...))`` gives the same expected value each time),
then reads from stdin the reference program, the entry point's name and the inputs (a
base64 ``marshal`` of a list of argument tuples), calls the reference on a deep copy of
each input under a per-input time cap and prints one line per input, the marker then a
base64 ``marshal`` of its record: ``("ok", output, seconds)``, ``("exc", name,
seconds)``, ``("timeout", None, cap)`` or ``("unsupported", type name, seconds)`` (an
output that cannot cross as plain data). Seconds and the cap are CPU time of this
process (``time.process_time``), so that the candidates' limits derived from them do
not depend on how busy the machine was when the reference ran; wall time is only a
backstop (ten times the cap, plus five seconds). With ``not_none`` the output recorded is
whether the reference returned something other than None (MBPP+'s ``re.Match`` tasks).

Only trusted code runs here (the benchmark's reference solution); the sandbox is there
so that the reference sees the same interpreter and limits as the candidates.
"""

import base64
import copy
import json
import marshal
import os
import signal
import sys
import time

MARKER = "@@rb-plus-ref@@"
MAX_OUTPUT = 1 << 20
MAX_TOTAL = 24 << 20


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _plain(x, depth=0):
    """``x`` as the candidate's wire would carry it (subclasses such as Counter or
    namedtuple as their base type); TypeError for anything that is not plain data."""
    t = type(x)
    if x is None or t in (bool, int, float, str, bytes, complex):
        return x
    if depth > 5000:
        raise TypeError("nested too deeply")
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return int.__index__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, (bytes, bytearray)):
        return bytes(memoryview(x))
    if isinstance(x, dict):
        return {_plain(k, depth + 1): _plain(v, depth + 1) for k, v in dict.items(x)}
    if isinstance(x, tuple):
        return tuple(_plain(i, depth + 1) for i in tuple.__iter__(x))
    if isinstance(x, list):
        return [_plain(i, depth + 1) for i in list.__iter__(x)]
    if isinstance(x, frozenset):
        return frozenset(_plain(i, depth + 1) for i in frozenset.__iter__(x))
    if isinstance(x, set):
        return {_plain(i, depth + 1) for i in set.__iter__(x)}
    raise TypeError(type(x).__name__)


def main():
    seed = os.environ.get("RB_PLUS_HASHSEED", "0")
    if os.environ.get("PYTHONHASHSEED") != seed:
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = seed
        env["RB_PLUS_HASHSEED"] = seed
        script = os.path.abspath(sys.argv[0])
        # stdin is left unread: the new image reads it.
        os.execve(sys.executable, [sys.executable, "-S", script], env)
    spec = json.loads(sys.stdin.buffer.read())
    inputs = marshal.loads(base64.b64decode(spec["inputs"]))
    cap = float(spec.get("limit_s") or 10.0)
    not_none = bool(spec.get("not_none"))
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    ns = {"__name__": "__reference__"}
    exec(compile(spec["program"], "reference.py", "exec"), ns)
    fn = ns[spec["entry_point"]]
    # The cap is CPU time (user + system: ITIMER_PROF), raised as _Timeout. A reference
    # stuck in C code (building a list of millions of tuples) never runs a handler: a
    # user-CPU timer with the default action ends the process at twice the cap, and a
    # wall timer ten times later (a reference that sleeps). Records go out one line at a
    # time, so the host keeps those written and resumes after the input that ended it.
    signal.signal(signal.SIGPROF, _alarm)
    signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    total = 0
    for args in inputs:
        args = copy.deepcopy(args)
        start = time.process_time()
        try:
            signal.setitimer(signal.ITIMER_PROF, cap)
            signal.setitimer(signal.ITIMER_VIRTUAL, 2 * cap + 1)
            signal.setitimer(signal.ITIMER_REAL, 10 * cap + 5)
            try:
                out = fn(*args)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Timeout:
            _emit(("timeout", None, cap))
            continue
        except BaseException as exc:
            _emit(("exc", type(exc).__name__, time.process_time() - start))
            continue
        took = time.process_time() - start
        if not_none:
            out = out is not None
        try:
            out = _plain(out)
            size = len(marshal.dumps(out))
        except (TypeError, ValueError, RecursionError):
            _emit(("unsupported", type(out).__name__, took))
            continue
        # The sandbox carries ~64 MB of output: an expected value of megabytes (MBPP+
        # has inputs whose answer is millions of tuples) is dropped, not sent.
        if size > MAX_OUTPUT or total + size > MAX_TOTAL:
            _emit(("unsupported", f"output of {size} bytes", took))
            continue
        total += size
        _emit(("ok", out, took))


def _emit(record):
    data = base64.b64encode(marshal.dumps(record)).decode("ascii")
    sys.stdout.write(MARKER + data + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
