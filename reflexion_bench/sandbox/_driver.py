# ruff: noqa: SIM105  (no contextlib: this file runs in a bare interpreter, kept lean)
# mypy: disable-error-code="type-arg,no-untyped-call"
"""The supervisor that runs INSIDE a sandbox (local namespaces or a Docker container).

It is started once per worker (``python3 -I -S -c <this source> <config json>``), reads
one JSON job per line on stdin and answers one JSON result per line on stdout, so a
warm worker costs a fork per program instead of an interpreter start plus a namespace
or ``docker exec`` setup. Standard library only: it runs under whatever Python the
sandbox has (Debian's /usr/bin/python3 locally, the image's python3 in Docker).

Each job runs in a FRESH fork of this pristine supervisor, which never executes user
code itself, in an emptied working directory, with its own rlimits, session and pipes;
after the job every process the sandbox user still has is SIGKILLed (``kill(-1)``: in a
PID namespace that is everything but us, as a dedicated uid everything of that uid) and
the scratch and temporary directories are wiped. That is what keeps consecutive verdicts
independent of each other. ``{python} file.py`` jobs are run in the forked child by
``runpy`` (no second interpreter start); anything else is ``execve``d.

The harness treats this process as untrusted too (it shares the uid of the programs):
it enforces its own deadline per job and restarts the worker when anything looks wrong.
"""

from __future__ import annotations

import atexit
import builtins
import json
import os
import runpy
import selectors
import signal
import sys
import threading
import time
import traceback

# host only: begin (shipped, the source of _box.py stands here instead)
from reflexion_bench.sandbox._box import (
    _libc,
    all_limits,
    become_candidate,
    become_trusted,
    candidate_limits,
    keyring_clear,
    non_dumpable,
    prepare,
    proc_limits,
    proc_uids,
    set_limits,
)

# host only: end

# Warm the "zygote": what runpy needs (pkgutil -> typing) and what generated programs
# import most, so a forked job does not re-read them from disk. Importing is idempotent
# and these modules hold no state the supervisor has used, so jobs see fresh modules.
for _name in (
    "pkgutil",
    "typing",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "ast",  # the judge's self-test policy
    "struct",
):
    try:
        __import__(_name)
    except ImportError:
        pass

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
WORKDIR = CONFIG.get("workdir", "/scratch")
WIPE = list(CONFIG.get("wipe", []))
PYTHON = CONFIG.get("python", sys.executable)
KILL_ALL = bool(CONFIG.get("kill_all", False))
# RLIMIT_NPROC counts every process of the uid on the host. Off where several sandboxes
# share one uid (Docker containers): there the container's pids cgroup bounds a job.
NPROC_RLIMIT = bool(CONFIG.get("nproc_rlimit", True))
ENV = dict(CONFIG.get("env", {}))
# The three uids of a judgment (see _box.py): we are the keeper (uid 0 of the sandbox
# with a few capabilities), trusted programs run as JUDGE_UID, candidates as
# CANDIDATE_UID. Without root (bwrap in a user namespace of one uid) both are None and
# every process shares our uid: weaker, and the README says so.
JUDGE_UID = CONFIG.get("judge_uid")
CANDIDATE_UID = CONFIG.get("candidate_uid")
SPLIT_UIDS = JUDGE_UID is not None and CANDIDATE_UID is not None and os.getuid() == 0
if not SPLIT_UIDS:
    JUDGE_UID = CANDIDATE_UID = None
#: Where the POSIX message queues of our IPC namespace are listed (a mqueue mount).
MQUEUE = str(CONFIG.get("mqueue") or "")
#: Seconds the clean-up of one job may take before the worker is retired instead.
CLEANUP_BUDGET_S = float(CONFIG.get("cleanup_budget_s", 5.0))
#: A writable ``ns_last_pid`` of our PID namespace (the host's /proc file bound in: the
#: kernel applies a write to the writer's own namespace), and the value it is reset to
#: after every job, so that every job's processes get the same pids: a program cannot
#: pass a number to the next one by forking N processes (the pid cursor is a counter
#: every process of a namespace shares). Needs CAP_CHECKPOINT_RESTORE.
NS_LAST_PID = str(CONFIG.get("ns_last_pid") or "")
PID_BASE = int(CONFIG.get("pid_base", 1000))
#: Where we mount a proc of our own (a root-only dir) when no writable ns_last_pid is
#: bound in (Docker: its /proc/sys is read-only). Needs CAP_SYS_ADMIN.
PRIVATE_PROC = str(CONFIG.get("private_proc") or "")
#: The tmpfs mounts replaced by fresh ones after every job (``[{"path", "size",
#: "mode"}]``, parents first): nothing a program made there, not even the inode numbers
#: its files got, reaches the next job. Needs CAP_SYS_ADMIN; without it (bwrap without
#: root) the mounts are emptied instead (``wipe``).
FRESH_MOUNTS = list(CONFIG.get("fresh_mounts") or [])
#: The CPU-accounting cgroup the host made for this worker, as bound in here (root-only);
#: each candidate's box gets a cgroup of its own under it. Empty: no cgroup here (the
#: box's init then collects the CPU of its processes: see _box.tree_cpu_s).
CPU_CGROUP = str(CONFIG.get("cpu_cgroup") or "")
#: Candidates are only ever started in a box (a PID namespace of their own): set where
#: the keeper has CAP_SYS_ADMIN (as root); a box that cannot be made fails the job.
REQUIRE_BOX = bool(CONFIG.get("require_box", False))
OUT = os.dup(1)  # protocol channel; fd 1 becomes /dev/null so stray prints go nowhere
_devnull = os.open(os.devnull, os.O_RDWR)
os.dup2(_devnull, 1)
os.set_inheritable(OUT, False)
MEMORY_MARKERS = (
    "MemoryError",
    "memory allocation of",
    "Cannot allocate memory",
    "out of memory",
    "std::bad_alloc",
    "failed to allocate",
)


def _prctl_setup() -> None:
    """Non-dumpable: no program can ptrace us or open /proc/<us>/fd to forge results.
    Child subreaper: orphans of a job come back to us to be reaped."""
    non_dumpable()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER 1
    except Exception:
        pass


def send(obj: dict) -> None:
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(OUT, data)
        data = data[n:]


def reap_all() -> None:
    """Reap every child that already ended (noting the zygote's death, if it died)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == _ZYGOTE["pid"]:
            _ZYGOTE["pid"] = None


def kill_leftovers(pgid: int | None) -> int:
    """SIGKILL everything the job left behind, reap it, and say how many were alive.

    We are PID 1 of a namespace or a child subreaper, so every orphan of the job is
    reparented to us: counting the reaped processes that died of our SIGKILL counts
    the background processes the program left running (exited ones do not count).
    The candidate zygote (see ``ensure_zygote``) is the one process that survives.
    """
    killed = 0
    if pgid is not None:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    zpid = _ZYGOTE["pid"]
    if KILL_ALL and zpid is not None and not _others_alive():
        return 0  # the usual case: nothing but us and the zygote (no freeze needed)
    zpid = _ZYGOTE["pid"]
    if KILL_ALL and zpid is not None:
        # kill(-1) would take the zygote too. Freeze everything at once instead (the
        # kernel blocks forks while it walks the task list, so nothing escapes a stop),
        # then kill each frozen process but the zygote, and let the zygote go on.
        try:
            os.kill(-1, signal.SIGSTOP)
        except OSError:
            pass
        for _ in range(3):
            for pid in _namespace_pids():
                if pid not in (zpid, os.getpid()):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
        try:
            os.kill(zpid, signal.SIGCONT)
        except OSError:
            pass
    elif KILL_ALL:
        # kill(-1) signals every process we may signal except ourselves (and the init of
        # our PID namespace). The kernel blocks forks while it walks the task list, so a
        # fork bomb cannot outrun it; repeat a few times for processes mid-exec.
        for _ in range(3):
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                break
            except OSError:
                break
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if zpid is not None and not [
                p for p in _namespace_pids() if p not in (zpid, os.getpid())
            ]:
                break  # only the (live) zygote is left
            time.sleep(0.001)
        elif pid == zpid:
            _ZYGOTE["pid"] = None  # it died; the next job that needs one starts another
        elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            killed += 1
    return killed


def _others_alive() -> bool:
    """After reaping what already ended: is any process of our namespace alive but us
    and the zygote? (None can appear meanwhile: only a live process could fork it,
    and the zygote forks on a judge's request only, and the judge is gone.)"""
    reap_all()
    keep = (os.getpid(), _ZYGOTE["pid"])
    return any(p not in keep for p in _namespace_pids())


def _namespace_pids() -> list:
    """The processes of our PID namespace (the zygote runs only where we are its PID 1,
    so /proc lists exactly the sandbox's processes)."""
    out: list = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            out.append(int(name))
    return out


# ---------------------------------------------------------------------- candidate zygote

#: A warm, clean Python process that forks candidates for the judge (the program is
#: given by the host: reflexion_bench/judge/_candidate_main.py). Started by execve
#: before any job, so its memory holds nothing a job sent us; only where we are PID 1
#: of our own PID namespace (bwrap, unshare, Docker), so cleaning up can spare it.
ZYGOTE_SOURCE = str(CONFIG.get("zygote") or "")
#: The zygote's pid and socket, and what it looked like when it started (its limits
#: and uids), which every job's integrity check compares against.
_ZYGOTE: dict = {"pid": None, "sock": None, "limits": None, "uids": None}


def _zygote_alive() -> bool:
    pid = _ZYGOTE["pid"]
    if pid is None:
        return False
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        done = pid
    if done:
        _ZYGOTE["pid"] = None
    return not done


def ensure_zygote() -> None:
    if not ZYGOTE_SOURCE or not KILL_ALL or os.getpid() != 1 or _zygote_alive():
        return
    import socket

    old = _ZYGOTE["sock"]
    if old is not None:
        old.close()
        _ZYGOTE["sock"] = None
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(theirs.fileno(), 3)
            os.set_inheritable(3, True)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)  # never our stdin: the job stream
            os.closerange(4, 65536)
            # Not the scratch dir: its mount is replaced after every job, and the
            # zygote must not keep the old one alive. Each candidate goes there itself.
            os.chdir("/")
            box = {
                "uid": CANDIDATE_UID,
                "gid": CANDIDATE_UID,
                "nproc": NPROC_RLIMIT,
                "workdir": WORKDIR,
                # Every candidate in a box of its own (_box.spawn_box): owed wherever
                # we hold CAP_SYS_ADMIN for the zygote to make one.
                "cgroup": CPU_CGROUP,
                "require_box": REQUIRE_BOX,
            }
            argv = [PYTHON, "-I", "-S", "-c", ZYGOTE_SOURCE, "--zygote", json.dumps(box)]
            os.execve(PYTHON, argv, ENV)
        finally:
            os._exit(127)
    theirs.close()
    _ZYGOTE["pid"] = pid
    _ZYGOTE["sock"] = ours
    # Limits survive execve: what the fork has now is what the zygote keeps.
    _ZYGOTE["limits"] = proc_limits(pid)
    _ZYGOTE["uids"] = proc_uids(pid)


def _empty_dir(path: str, keep: str, deadline: float) -> bool:
    """Remove everything inside ``path`` but ``keep`` (the scratch dir, when it lives
    in a wiped dir such as /tmp), iteratively: a program may leave a tree deeper than
    any recursion or path length allows. Directories are walked by descriptor (one
    open at a time), permissions a program removed are restored first. False when
    the tree could not be removed before ``deadline`` (the worker is then retired)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    depth = 0
    try:
        while True:
            if time.monotonic() > deadline:
                return False
            if depth:  # a program's directory (never the wiped dir itself: /tmp is 1777)
                try:
                    os.fchmod(fd, 0o700)
                except OSError:
                    pass
            child = None
            with os.scandir(fd) as it:
                for entry in it:
                    name = entry.name
                    if depth == 0 and keep and os.path.join(path, name) == keep:
                        continue
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        try:
                            os.unlink(name, dir_fd=fd)
                        except FileNotFoundError:
                            pass
                        continue
                    try:
                        os.rmdir(name, dir_fd=fd)
                    except OSError:
                        child = name  # not empty: go down into it
                        break
            if child is not None:
                try:
                    os.chmod(child, 0o700, dir_fd=fd)  # a program may have made it 000
                except OSError:
                    pass
                sub = os.open(child, flags, dir_fd=fd)
                os.close(fd)
                fd, depth = sub, depth + 1
                continue
            if depth == 0:
                return True
            # This directory is empty now: go up and remove it from there.
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd, depth = parent, depth - 1
    except OSError:
        return False
    finally:
        os.close(fd)


_MS_NOSUID, _MS_NODEV, _MNT_DETACH = 2, 4, 2
_FRESH_OK: list = []  # [True] once fresh mounts worked, [False] when they cannot


def _mount(source: str, target: str, fstype: str, flags: int, data: str) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.mount(source.encode(), target.encode(), fstype.encode(), flags, data.encode())
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype} on {target}: {os.strerror(err)}")


def fresh_mounts() -> list:
    """Replace every FRESH_MOUNTS tmpfs by a new, empty one (the old one is detached
    and freed once nothing holds it: every job process is dead by now). The problems;
    [] when done or not possible here (then ``wipe`` empties them instead)."""
    if not FRESH_MOUNTS or _FRESH_OK == [False]:
        return []
    try:
        return _replace_mounts()
    finally:
        os.makedirs(WORKDIR, exist_ok=True)  # the scratch dir may live in /tmp


def _replace_mounts() -> list:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for m in FRESH_MOUNTS:
        path = str(m["path"])
        data = f"size={int(m['size'])},mode={m.get('mode', '1777')}"
        if libc.umount2(path.encode(), _MNT_DETACH) != 0:
            err = ctypes.get_errno()
            if not _FRESH_OK:  # never worked here (no CAP_SYS_ADMIN): wipe instead
                _FRESH_OK.append(False)
                return []
            return [f"cannot detach {path}: {os.strerror(err)}"]
        try:
            _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, data)
        except OSError as exc:
            return [f"cannot mount a fresh {path}: {exc}"]
        if not _FRESH_OK:
            _FRESH_OK.append(True)
    return []


def wipe(deadline: float) -> list:
    """Empty the scratch dir and the wiped dirs; the problems (empty when clean)."""
    problems = []
    for path in [WORKDIR, *WIPE]:
        keep = WORKDIR if path != WORKDIR else ""
        if not _empty_dir(path, keep, deadline):
            problems.append(f"could not empty {path}")
            continue
        try:
            left = [n for n in os.listdir(path) if not (keep and os.path.join(path, n) == keep)]
        except FileNotFoundError:
            left = []
        except OSError as exc:
            left = [repr(exc)]
        if left:
            problems.append(f"{path} not empty after the clean-up: {left[:3]}")
    return problems


def write_files(files: dict, owner: int | None) -> None:
    """Write the job's files into the scratch dir, owned by the uid that runs the job
    (``owner``; None: ours). A trusted job's scratch dir is 0711 (its candidates may
    run a binary it built there, not list or change it), a candidate's 0700."""
    root = os.path.realpath(WORKDIR)
    for rel, content in files.items():
        if os.path.isabs(rel) or ".." in rel.replace("\\", "/").split("/"):
            raise ValueError(f"file path must be relative and inside the scratch dir: {rel!r}")
        full = os.path.join(root, rel)
        os.makedirs(os.path.dirname(full) or root, exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(content)
        if owner is not None:
            os.chown(full, owner, owner)
    if owner is not None:
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                os.chown(os.path.join(dirpath, d), owner, owner)


#: Exit status of a trusted program asking for this worker to be retired.
RETIRE_EXIT = 86

#: The candidates' working dir inside a trusted job's scratch dir.
BOX_DIR = "box"

#: First line by which trusted harness code (the judge) asks to be compiled once per
#: worker. Only such code is kept: jobs are forked from this process, and no program's
#: own source (which may hold tests) may linger in it for the next job to find.
CACHE_MARK = b"# reflexion-bench: compile once per worker\n"
_CODE_CACHE: dict = {}


def _cached_code(script: str):  # type: ignore[no-untyped-def]
    """In the forked job: the code object of a cacheable script (compiled by the
    supervisor before the fork, see ``warm_code``), or None to run it with runpy."""
    try:
        with open(script, "rb") as fh:
            head = fh.read(len(CACHE_MARK))
            if head != CACHE_MARK:
                return None
            source = head + fh.read()
    except OSError:
        return None
    import hashlib

    key = hashlib.sha256(source).hexdigest()
    return _CODE_CACHE.get(key) or compile(source, script, "exec")


#: The cacheable scripts' sources by sha256 (the same entries as _CODE_CACHE): the host
#: sends such a file once per worker, then only its hash (``file_refs``).
_SOURCES: dict = {}
#: The code object the forked job runs, when its script is a cached one, and that
#: script's module as its body left it (run once, here, see ``warm_code``).
_JOB_CODE: dict = {"code": None, "module": None}
#: The cacheable scripts' modules by sha256, their bodies run once in this process.
_MODULES: dict = {}


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_refs(job: dict) -> str | None:
    """Put the cached sources of the job's ``file_refs`` into its files; the name of
    one not cached (the host then sends it in full), or None."""
    for name, key in (job.get("file_refs") or {}).items():
        src = _SOURCES.get(key)
        if src is None:
            return str(name)
        job.setdefault("files", {})[name] = src
    return None


def warm_code(files: dict, script: str) -> None:
    """In the supervisor, before forking a job: compile the cacheable scripts it brings
    once, so that every later fork inherits the code object instead of compiling (and
    the job's own script, ``script``, runs from it without being read back).

    A cacheable script's module body (definitions and imports only: its work is in
    ``main()``, behind ``if __name__ == "__main__"``) is also run once, here, so that a
    job forks with the module built and calls its ``main()``: ~1.6 ms and a few hundred
    fresh pages less per judgment. Only trusted harness code is cacheable (CACHE_MARK);
    the module holds nothing of any job, and what a job changes in it is its forked
    copy, never the next job's."""
    _JOB_CODE["code"] = _JOB_CODE["module"] = None
    for name, content in files.items():
        if not name.endswith(".py") or not content.startswith(CACHE_MARK.decode()):
            continue
        key = _sha(content)
        if key not in _CODE_CACHE:
            # The host mirrors this eviction rule (PooledSandbox: one set per worker).
            if len(_CODE_CACHE) >= 8:
                _CODE_CACHE.clear()
                _SOURCES.clear()
                _MODULES.clear()
            path = os.path.join(WORKDIR, name)
            try:
                _CODE_CACHE[key] = compile(content, path, "exec")
            except (SyntaxError, ValueError):
                continue
            _SOURCES[key] = content
            _MODULES[key] = _run_body(_CODE_CACHE[key], path)
            _trim_heap()  # what compiling freed goes back: a smaller parent forks faster
        if name == script:
            _JOB_CODE["code"] = _CODE_CACHE[key]
            _JOB_CODE["module"] = _MODULES.get(key)


def _run_body(code, path: str):  # type: ignore[no-untyped-def]
    """The module ``code`` makes when imported (not run as ``__main__``), or None when
    its body fails or it has no ``main()`` (the job then runs it whole, as before)."""
    module = type(sys)("__rb_warm__")
    module.__file__ = path
    module.__builtins__ = builtins  # type: ignore[attr-defined]
    try:
        exec(code, module.__dict__)
    except BaseException:
        return None
    return module if callable(module.__dict__.get("main")) else None


def _trim_heap() -> None:
    try:
        _libc().malloc_trim(0)  # the box's cached libc handle, not a second CDLL
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim


def _run_python_inproc(argv: list) -> int:
    """Behave like ``python3 SCRIPT ARGS`` in this (forked) process."""
    script = argv[1]
    abs_script = os.path.abspath(script)
    sys.argv = list(argv[1:])
    sys.path[0:0] = [os.path.dirname(os.path.abspath(script))]
    os.environ.clear()
    os.environ.update(ENV)
    if not hasattr(builtins, "exit"):  # normally added by `site`, which -S skipped

        class _Quitter:
            def __init__(self, name: str) -> None:
                self.name = name

            def __repr__(self) -> str:
                return f"Use {self.name}() or Ctrl-D (i.e. EOF) to exit"

            def __call__(self, code: object = None) -> None:
                raise SystemExit(code)

        builtins.exit = _Quitter("exit")  # type: ignore[assignment]
        builtins.quit = _Quitter("quit")  # type: ignore[assignment]
    code = 0
    interrupted = False
    try:
        compiled = _JOB_CODE["code"] or _cached_code(script)
        warm = _JOB_CODE["module"]
        if warm is not None:
            # Its body ran in the supervisor (warm_code): what remains of running the
            # script is its `if __name__ == "__main__": main()`.
            warm.__name__ = "__main__"
            warm.__file__ = script
            sys.modules["__main__"] = warm
            warm.main()
        elif compiled is None:
            runpy.run_path(script, run_name="__main__")
        else:
            main_module = type(sys)("__main__")
            main_module.__file__ = script
            main_module.__builtins__ = builtins  # type: ignore[attr-defined]
            sys.modules["__main__"] = main_module
            exec(compiled, main_module.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:
        interrupted = isinstance(exc, KeyboardInterrupt)
        etype, value, tb = sys.exc_info()
        # Drop runpy's and our frames so the traceback looks like the interpreter's.
        while tb is not None and tb.tb_frame.f_code.co_filename not in (script, abs_script):
            tb = tb.tb_next
        traceback.print_exception(etype, value, tb)
        code = 1
    try:
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()  # wait for non-daemon threads, like interpreter exit
        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            if stream is sys.stdout and code == 0:
                code = 120  # what CPython returns when flushing stdout fails at exit
    if interrupted:
        # CPython ends an uncaught KeyboardInterrupt by dying of SIGINT itself.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def _child(job: dict, stdin_fd: int, out_w: int, err_w: int) -> None:
    """In the forked child: become the program. Never returns."""
    try:
        os.setsid()
        os.dup2(stdin_fd, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        trusted = bool(job.get("trusted"))
        zsock = _ZYGOTE["sock"] if trusted and _ZYGOTE["pid"] else None
        if zsock is not None:
            # A trusted job (the judge) gets the zygote's socket as fd 3.
            os.dup2(zsock.fileno(), 3)
            os.set_inheritable(3, True)
            os.closerange(4, 65536)
        else:
            os.closerange(3, 65536)
        os.chdir(WORKDIR)
        os.umask(0o022)
        argv = list(job["argv"])
        inproc = bool(job.get("inproc"))
        rows = candidate_limits(job["limits"], NPROC_RLIMIT)
        if trusted:
            # The judge uid, with the capabilities to start and kill candidates only;
            # it learns the candidate uid from its environment.
            from_box = {}
            if SPLIT_UIDS:
                from_box["RB_BOX_CANDIDATE"] = f"{CANDIDATE_UID}:{CANDIDATE_UID}"
            ENV.update(from_box)
            set_limits(rows)
            become_trusted(JUDGE_UID, JUDGE_UID, execs=not inproc)
        else:
            become_candidate(CANDIDATE_UID, CANDIDATE_UID, rows)
        if argv and argv[0] == "{python}":
            argv[0] = PYTHON
        if inproc:
            # Python itself ignores SIGPIPE and SIGXFSZ at start-up: keep that.
            os._exit(_run_python_inproc(argv))
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.execvpe(argv[0], argv, ENV)
    except BaseException as exc:
        try:
            os.write(2, f"sandbox: cannot start {job.get('argv')!r}: {exc}\n".encode())
        except OSError:
            pass
        os._exit(127)


class Capture:
    """Keeps the head and the tail of a stream within ``keep`` bytes.

    The tail matters: a traceback or a final verdict line comes last. Past ``keep``
    bytes the middle is dropped and replaced by a one-line note.
    """

    NOTE = b"\n[... %d bytes truncated ...]\n"

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.tail_cap = keep // 4 if keep >= 512 else 0
        self.head_cap = keep - self.tail_cap - (48 if self.tail_cap else 0)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_cap:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        data = bytes(self.head)
        if self.truncated and self.tail_cap:
            dropped = self.total - len(self.head) - len(self.tail)
            data += self.NOTE % dropped + bytes(self.tail)
        else:
            data += bytes(self.tail)
        return data.decode("utf-8", "replace")


def run_job(job: dict) -> dict:
    lim = job["limits"]
    keep = int(lim["output_bytes"])
    kill_at = int(lim.get("output_kill_bytes", max(keep, 8_000_000)))
    timeout = float(job["timeout_s"])
    trusted = bool(job.get("trusted"))
    owner = (JUDGE_UID if trusted else CANDIDATE_UID) if SPLIT_UIDS else None
    missing = resolve_refs(job)
    if missing is not None:
        return {"reason": "error", "detail": f"no cached {missing}", "ref_miss": missing}
    try:
        if owner is not None:
            os.chown(WORKDIR, owner, owner)
            os.chmod(WORKDIR, 0o711 if trusted else 0o700)
        write_files(job.get("files", {}), owner)
        if trusted and SPLIT_UIDS:
            # The candidates' own working dir: writable by them, apart from the
            # trusted program's files (which they may run, not list or change).
            box = os.path.join(WORKDIR, BOX_DIR)
            os.mkdir(box, 0o700)
            os.chown(box, int(CANDIDATE_UID or 0), int(CANDIDATE_UID or 0))
    except (OSError, ValueError) as exc:
        return {"reason": "error", "detail": f"cannot write files: {exc}"}
    if job.get("inproc"):
        argv = list(job.get("argv") or [])
        # A trusted job's (the judge's) cacheable script only: a program's file that
        # starts with the mark is compiled in its own job, never kept here (it would be
        # forked into every later job) and never run here.
        warm_code(job.get("files", {}) if trusted else {}, argv[1] if len(argv) > 1 else "")
    if trusted:
        ensure_zygote()
    stdin_data = job.get("stdin", "").encode()
    stdin_path = os.path.join(WORKDIR, f".stdin-{os.getpid()}")
    with open(stdin_path, "wb") as fh:
        fh.write(stdin_data)
    stdin_fd = os.open(stdin_path, os.O_RDONLY)
    os.unlink(stdin_path)  # the program reads it through fd 0 only
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    for attempt in range(50):
        try:
            pid = os.fork()
            break
        except BlockingIOError:  # a previous job's processes are still being reaped
            reap_all()
            time.sleep(0.01 * (attempt + 1))
    else:
        for fd in (stdin_fd, out_r, out_w, err_r, err_w):
            os.close(fd)
        return {"reason": "error", "detail": "cannot fork (process limit)"}
    if pid == 0:
        _child(job, stdin_fd, out_w, err_w)
    os.close(stdin_fd)
    os.close(out_w)
    os.close(err_w)
    pidfd = os.pidfd_open(pid)
    sel = selectors.DefaultSelector()
    caps = {out_r: Capture(keep), err_r: Capture(keep)}
    sel.register(out_r, selectors.EVENT_READ)
    sel.register(err_r, selectors.EVENT_READ)
    sel.register(pidfd, selectors.EVENT_READ)
    # The harness sends nothing while a job runs: stdin becoming readable means it is
    # gone (EOF). Then the job is killed at once and we exit, instead of leaving the
    # program running until its own timeout.
    sel.register(0, selectors.EVENT_READ)
    harness_gone = False
    deadline = started + timeout
    status = None
    reason = None
    drain_until = None
    while sel.get_map():
        now = time.monotonic()
        limit = drain_until if status is not None else deadline
        if limit is not None and now >= limit:
            if status is None:
                reason = "timeout"
            break
        for key, _ in sel.select(timeout=max(0.0, (limit or now + 1) - now)):
            fd = key.fd
            if fd == 0:
                harness_gone = True
                sel.unregister(0)
                continue
            if fd == pidfd:
                _, status = os.waitpid(pid, 0)
                sel.unregister(pidfd)
                # Output still in the pipes is collected; a background process that
                # keeps them open does not keep the job alive for long.
                drain_until = time.monotonic() + 0.05
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                sel.unregister(fd)
                continue
            caps[fd].add(chunk)
            if caps[fd].total > kill_at and reason is None:
                reason = "output_limit"
        if reason == "output_limit" or harness_gone:
            break
        if status is not None and set(sel.get_map()) == {0}:
            break
    duration = time.monotonic() - started
    if status is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = None
    leftovers = kill_leftovers(pid)
    if harness_gone:
        os._exit(0)
    for fd in (out_r, err_r):  # whatever the killed processes wrote last
        try:
            for _ in range(64):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                caps[fd].add(chunk)
        except OSError:
            pass
    sel.close()
    for fd in (out_r, err_r, pidfd):
        os.close(fd)
    stdout = caps[out_r].text()
    stderr = caps[err_r].text()
    exit_code = None
    sig = None
    detail = ""
    if status is not None:
        if os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
    if reason is None:
        if sig is not None:
            if sig == signal.SIGXCPU:
                reason, detail = "timeout", f"CPU time limit ({lim['cpu_s']} s) exceeded"
            elif any(m in stderr for m in MEMORY_MARKERS):
                reason, detail = "memory", f"killed by signal {sig} after a failed allocation"
            else:
                reason = "signal"
                detail = f"killed by signal {sig} ({signal.Signals(sig).name})"
                if sig == signal.SIGXFSZ:
                    detail += f": file size limit ({lim['file_size_mb']} MB)"
        elif exit_code != 0 and any(m in stderr[-4000:] for m in MEMORY_MARKERS):
            reason, detail = "memory", f"allocation failed (memory limit {lim['memory_mb']} MB)"
        else:
            reason = "exit"
    elif reason == "timeout":
        exit_code = None
        detail = f"wall-clock timeout after {timeout:g} s"
    elif reason == "output_limit":
        exit_code = None
        detail = f"output passed {kill_at} bytes; killed"
    return {
        "reason": reason,
        "exit_code": exit_code,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        "truncated": caps[out_r].truncated or caps[err_r].truncated,
        "duration_s": duration,
        "detail": detail,
        "leftovers": leftovers,
    }


# ---------------------------------------------------------------------- integrity

_SYSV = ("shm", "sem", "msg")
_OWN_LIMITS: dict = {}


def _sysv_objects() -> list:
    """``(kind, id)`` of every SysV IPC object of our IPC namespace."""
    out = []
    for kind in _SYSV:
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 1 and cols[1].lstrip("-").isdigit():
                out.append((kind, int(cols[1])))
    return out


def _mqueues() -> list:
    if not MQUEUE:
        return []
    try:
        return os.listdir(MQUEUE)
    except OSError:
        return []


def _key_count(uid: object) -> int:
    """How many keys ``uid`` owns (``/proc/key-users``; 0 when it has none)."""
    try:
        with open("/proc/key-users", encoding="ascii") as fh:
            for line in fh:
                owner, _, rest = line.partition(":")
                if owner.strip() == str(uid):
                    return int(rest.split()[1].split("/")[0])
    except (OSError, ValueError, IndexError):
        return -1
    return 0


#: The candidate uid's key count after the last clean-up (keys it could hold then).
_KEYS: dict = {"after": None}


def _clean_as_candidate() -> list:
    """What only the candidate uid may remove: its SysV IPC objects and message queues
    (where they can exist at all: without the namespaced sysctls at 0) and its
    keyrings, which outlive its processes. Runs after every candidate process is dead.
    A candidate's seccomp filter refuses the keyring calls, so its key count normally
    stays what it was: then there is nothing to clear (the check costs one read)."""
    if SPLIT_UIDS and not _sysv_objects() and not _mqueues():
        if _KEYS["after"] is not None and _key_count(CANDIDATE_UID) == _KEYS["after"]:
            return []
        problems = _clear_keyrings_in_place()
        if not problems:
            _KEYS["after"] = _key_count(CANDIDATE_UID)
        return problems
    return _clean_in_a_fork()


def _clear_keyrings_in_place() -> list:
    """Empty the candidate uid's user and user-session keyrings without a fork (a fork
    is most of this step's cost): take the candidate uid as real and effective uid for
    two keyctl calls, keeping 0 as the saved uid to come back. No candidate process is
    alive to signal us meanwhile (all were killed), and our capabilities come back with
    the effective uid 0 (they stay permitted while the saved uid is 0)."""
    cand = int(CANDIDATE_UID or 0)
    try:
        os.setresuid(cand, cand, 0)
    except OSError as exc:
        return [f"cannot take the candidate uid to clear its keyrings: {exc}"]
    try:
        ok = keyring_clear()
    finally:
        os.setresuid(0, 0, 0)
    return [] if ok else ["the candidate uid's keyrings are not empty"]


def _clean_in_a_fork() -> list:
    """The SysV objects, message queues and keyrings of the candidate uid, removed in a
    fork that becomes that uid (IPC_RMID needs the owner without CAP_IPC_OWNER); its
    exit status says whether the keyrings are empty."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            if SPLIT_UIDS:
                os.setgroups([])
                cand = int(CANDIDATE_UID or 0)
                os.setresgid(cand, cand, cand)
                os.setresuid(cand, cand, cand)
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            for kind, ident in _sysv_objects():
                if kind == "shm":
                    libc.shmctl(ident, 0, None)  # IPC_RMID
                elif kind == "sem":
                    libc.semctl(ident, 0, 0)
                else:
                    libc.msgctl(ident, 0, None)
            for name in _mqueues():
                try:
                    os.unlink(os.path.join(MQUEUE, name))
                except OSError:
                    pass
            if not keyring_clear():
                code = 3
        except BaseException:
            code = 4
        os._exit(code)
    problems = []
    try:
        _, status = os.waitpid(pid, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    except ChildProcessError:
        code = -1
    if code == 3:
        problems.append("the candidate uid's keyrings are not empty")
    elif code != 0:
        problems.append(f"the candidate clean-up failed ({code})")
    return problems


def _reaped_counters(pid: int) -> tuple | None:
    """``(cminflt, cmajflt, cutime, cstime)`` of ``pid``: what it accumulated from the
    children it reaped (None when /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[8]), int(fields[10]), int(fields[13]), int(fields[14]))
    except (OSError, IndexError, ValueError):
        return None


def reset_box() -> list:
    """Clean what a job could have left and CHECK it: the next job must find a box
    identical to a fresh one. The problems found; any makes the host retire us."""
    deadline = time.monotonic() + CLEANUP_BUDGET_S
    # IPC objects, keyrings and the process list are the namespace's own only where we
    # are PID 1 of one (bwrap, unshare, Docker); at the rlimits level they are the
    # host's, which are not ours to clean.
    own_namespace = os.getpid() == 1
    t0 = time.perf_counter()
    problems = _clean_as_candidate() if own_namespace else []
    t1 = time.perf_counter()
    problems += fresh_mounts()
    t2 = time.perf_counter()
    problems += wipe(deadline)  # instant on fresh mounts; the only clean-up without them
    t3 = time.perf_counter()
    if own_namespace:
        left = [p for p in _namespace_pids() if p not in (os.getpid(), _ZYGOTE["pid"])]
        if left:
            problems.append(f"{len(left)} process(es) outlived the clean-up")
    objects = _sysv_objects() if own_namespace else []
    if objects:
        problems.append(f"SysV IPC objects left: {objects[:5]}")
    queues = _mqueues() if own_namespace else []
    if queues:
        problems.append(f"POSIX message queues left: {queues[:5]}")
    if MQUEUE and not os.path.isdir(MQUEUE):
        problems.append(f"the message queue listing {MQUEUE} is gone")
    if all_limits() != _OWN_LIMITS:
        problems.append("the supervisor's resource limits changed")
    zpid = _ZYGOTE["pid"]
    if zpid is not None and _zygote_alive():
        if proc_limits(zpid) != _ZYGOTE["limits"]:
            problems.append("the zygote's resource limits changed")
        if proc_uids(zpid) != _ZYGOTE["uids"]:
            problems.append("the zygote's uids changed")
        if _reaped_counters(zpid) not in (None, (0, 0, 0, 0)):
            # It ignores SIGCHLD, so the kernel reaps its boxes' proxies without
            # charging it: counters of reaped children that grow would be a counter
            # every job moves, readable by whoever can see the zygote.
            problems.append("the zygote accumulated its children's counters")
    if SPLIT_UIDS and os.getresuid() != (0, 0, 0):
        problems.append("the supervisor's uid changed")
    t4 = time.perf_counter()
    problems += reset_pid_cursor()
    t5 = time.perf_counter()
    # What each step of the clean-up cost (scripts/bench_sandbox.py reports them).
    COSTS.update(
        ipc_keyrings=t1 - t0, fresh_mounts=t2 - t1, wipe=t3 - t2, checks=t4 - t3, pid=t5 - t4
    )
    return problems


COSTS: dict = {}


def _private_proc() -> None:
    """Mount a proc of our own where only we can reach it, for ns_last_pid."""
    global NS_LAST_PID
    if not PRIVATE_PROC or NS_LAST_PID or os.getpid() != 1:
        return
    try:
        os.makedirs(PRIVATE_PROC, mode=0o700, exist_ok=True)
        os.chmod(PRIVATE_PROC, 0o700)
        _mount("proc", PRIVATE_PROC, "proc", _MS_NOSUID | _MS_NODEV | 8, "")  # 8: NOEXEC
        NS_LAST_PID = os.path.join(PRIVATE_PROC, "sys/kernel/ns_last_pid")
    except OSError:
        pass  # not possible here: ready says pid_reset false


def reset_pid_cursor() -> list:
    """Put our PID namespace's allocation cursor back where every job starts."""
    if not NS_LAST_PID or os.getpid() != 1:
        return []
    try:
        fd = os.open(NS_LAST_PID, os.O_WRONLY)
        try:
            os.write(fd, str(PID_BASE).encode())
        finally:
            os.close(fd)
    except OSError as exc:
        return [f"cannot reset the pid cursor: {exc}"]
    return []


def main() -> None:
    _prctl_setup()
    os.environ.clear()
    os.environ.update(ENV)
    os.makedirs(WORKDIR, exist_ok=True)
    # Our cwd must not pin the scratch mount that fresh_mounts() replaces.
    os.chdir("/")
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    _OWN_LIMITS.update(all_limits())
    _private_proc()
    prepare()  # the judge's and the candidates' forks inherit what confining needs
    # Fresh mounts, the zygote, then the pid cursor: the first job then starts exactly
    # like every later one (same mounts, same pids), whichever worker it lands on.
    fresh_mounts()
    ensure_zygote()
    startup = reset_pid_cursor()
    send(
        {
            "ready": True,
            "pid": os.getpid(),
            "uid": os.getuid(),
            "split_uids": SPLIT_UIDS,
            "judge_uid": JUDGE_UID,
            "candidate_uid": CANDIDATE_UID,
            "python": sys.version.split()[0],
            "workdir": WORKDIR,
            "pid_reset": bool(NS_LAST_PID) and not startup,
            "fresh_mounts": bool(FRESH_MOUNTS),
            "startup_problems": startup,
        }
    )
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        result: dict = {"reason": "error", "detail": "sandbox supervisor error"}
        problems: list = []
        try:
            job = json.loads(line)
            result["id"] = job.get("id")
            result = run_job(job)
            result["id"] = job.get("id")
            if job.get("trusted") and result.get("exit_code") == RETIRE_EXIT:
                # A trusted program (the judge) failed after its candidate started:
                # whatever the candidate did, no later program runs on this worker.
                problems.append("the trusted program reported a failure of its own")
        except Exception as exc:  # our own failure: say so, and get replaced
            result["detail"] = f"sandbox supervisor error: {exc!r}"
            problems.append("supervisor error")
        # The clean-up runs whatever happened above, and is itself guarded: a failure
        # here retires the worker, it never ends the supervisor without an answer.
        COSTS.clear()
        try:
            if problems:
                kill_leftovers(None)
            problems += reset_box()
        except Exception as exc:
            problems.append(f"clean-up error: {exc!r}")
        result["clean"] = not problems
        result["costs"] = dict(COSTS)
        if problems:
            result["integrity"] = problems
        send(result)


if __name__ == "__main__":
    main()
