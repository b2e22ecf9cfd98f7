# ruff: noqa: SIM105
# mypy: disable-error-code="type-arg"
"""Privilege and limit primitives of a judgment's box (standard library only).

Shipped, as source, ahead of every program that starts or becomes a candidate: the
sandbox supervisor (``_driver.py``), the candidate zygote and runner
(``judge/_candidate_main.py``), the judge (``judge/_judge_main.py``) and the Rust
driver. One copy of the rules, so that every path into a candidate process sets the
same limits and drops the same privileges.

The model is ioi/isolate's: three uids that never meet. The supervisor (a keeper, uid 0
of the sandbox with a small capability set and nothing else) starts trusted programs
(the judge, the Rust driver) under the *judge uid*, which keeps only the capabilities
to start and kill candidates, and every candidate under the *candidate uid* with no
capability at all. A candidate can therefore signal, ``prlimit``, ptrace or read none
of the processes that decide or record its verdict.

Every resource limit is set explicitly in every candidate (all ``RLIMIT_*``, not the
five a test program needs): a limit is never inherited from a long-lived process that
a candidate might have changed.
"""

import ctypes
import os
import resource

# Not typing's: this file runs in every candidate, which imports builtin modules only
# (mypy treats any TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: Capabilities (linux/capability.h) a trusted program keeps under the judge uid:
#: start candidates under the candidate uid (SETUID, SETGID) and kill them (KILL).
CAP_KILL, CAP_SETGID, CAP_SETUID = 5, 6, 7
TRUSTED_CAPS = (CAP_KILL, CAP_SETGID, CAP_SETUID)
_CAP_VERSION_3 = 0x20080522
_PR_SET_KEEPCAPS = 8
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_RAISE = 2
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_PR_SET_DUMPABLE = 4

MB = 1024 * 1024
_INF = resource.RLIM_INFINITY


#: Built once per process (the zygote builds them before it forks: see :func:`prepare`),
#: so that a candidate's confinement is a few syscalls, not class creation and page
#: copying in a fresh fork; the judge, which rarely needs them, never pays for them.
_CACHE: dict = {}


def _libc() -> ctypes.CDLL:
    libc = _CACHE.get("libc")
    if libc is None:
        libc = _CACHE["libc"] = ctypes.CDLL(None, use_errno=True)
    return libc


def prepare() -> None:
    """Build what confining a candidate needs (call in a process that forks many)."""
    _libc()
    _cap_structs()
    _keyring_filter()


def candidate_limits(lim: dict, nproc: bool = True) -> list:
    """``[(resource, soft, hard), ...]`` for EVERY ``RLIMIT_*`` of a candidate, from
    a job's limits (``Limits`` as a dict). ``nproc`` False leaves the process count to
    a pids cgroup (Docker: one uid across containers)."""
    mem = int(lim.get("memory_mb") or 1024) * MB
    cpu = max(1, int(lim.get("cpu_s") or 30))
    procs = int(lim.get("max_procs") or 64) if nproc else 1 << 16
    fsize = int(lim.get("file_size_mb") or 16) * MB
    rows = [
        ("RLIMIT_AS", mem, mem),
        ("RLIMIT_DATA", mem, mem),
        # SIGXCPU at the soft limit (reported as a CPU timeout), SIGKILL a second later.
        ("RLIMIT_CPU", cpu, cpu + 1),
        ("RLIMIT_FSIZE", fsize, fsize),
        ("RLIMIT_NPROC", procs, procs),
        ("RLIMIT_CORE", 0, 0),
        ("RLIMIT_NOFILE", 1024, 1024),
        # The usual 8 MB main-thread stack (deep recursion asks for a big thread stack:
        # the ``stack_mb`` of the judge), as the benchmarks' own harnesses had.
        ("RLIMIT_STACK", 8 * MB, 8 * MB),
        ("RLIMIT_MEMLOCK", 8 * MB, 8 * MB),
        ("RLIMIT_MSGQUEUE", 819200, 819200),
        ("RLIMIT_SIGPENDING", 4096, 4096),
        ("RLIMIT_LOCKS", 1024, 1024),
        ("RLIMIT_NICE", 0, 0),
        ("RLIMIT_RTPRIO", 0, 0),
        ("RLIMIT_RTTIME", cpu * 1_000_000, cpu * 1_000_000),
        ("RLIMIT_RSS", _INF, _INF),
    ]
    out = []
    for name, soft, hard in rows:
        # Python's resource module has no RLIMIT_LOCKS: Linux's number stands in.
        res = getattr(resource, name, _LINUX_RLIMITS.get(name))
        if res is not None:
            out.append((res, soft, hard))
    return out


#: Linux's numbers of the limits Python's resource module may lack.
_LINUX_RLIMITS = {"RLIMIT_LOCKS": 10}


def set_limits(rows: list) -> list:
    """Set every row; where the process may not raise a hard limit (no privilege),
    the value is capped at the current hard limit. Returns the rows it could not set."""
    failed = []
    for res, soft, hard in rows:
        try:
            resource.setrlimit(res, (soft, hard))
            continue
        except (ValueError, OSError):
            pass
        try:
            _, cur_hard = resource.getrlimit(res)
            if cur_hard != _INF:
                soft = cur_hard if soft == _INF else min(soft, cur_hard)
                hard = cur_hard if hard == _INF else min(hard, cur_hard)
            resource.setrlimit(res, (soft, hard))
        except (ValueError, OSError):
            failed.append(res)
    return failed


def all_limits() -> dict:
    """This process's limits, every ``RLIMIT_*``: ``{name: (soft, hard)}``."""
    out = {}
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            try:
                out[name] = resource.getrlimit(getattr(resource, name))
            except (ValueError, OSError):
                pass
    return out


def proc_limits(pid: int | str) -> str | None:
    """Another process's limits as ``/proc/<pid>/limits`` shows them (the text, or
    None when it is gone)."""
    try:
        with open(f"/proc/{pid}/limits", encoding="ascii") as fh:
            return fh.read()
    except OSError:
        return None


def proc_uids(pid: int | str) -> tuple | None:
    """The real, effective, saved and fs uids of ``pid`` (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Uid:"):
                    return tuple(int(x) for x in line.split()[1:5])
    except (OSError, ValueError):
        return None
    return None


def _cap_structs() -> tuple:
    """The capget/capset header and data types (linux/capability.h, version 3)."""
    got = _CACHE.get("caps")
    if got is None:

        class _CapHeader(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class _CapData(ctypes.Structure):
            _fields_ = [
                ("effective", ctypes.c_uint32),
                ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32),
            ]

        got = _CACHE["caps"] = (_CapHeader, _CapData * 2)
    return got


def _capset(caps: tuple, inheritable: bool = False) -> None:
    mask = 0
    for c in caps:
        mask |= 1 << c
    header_t, data_t = _cap_structs()
    header = header_t(_CAP_VERSION_3, 0)
    data = data_t()
    data[0].effective = data[0].permitted = mask
    data[0].inheritable = mask if inheritable else 0
    if _libc().capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def limit_caps(caps: tuple) -> None:
    """Keep only ``caps`` (effective and permitted); the rest are gone for good."""
    try:
        _capset(caps)
    except OSError:
        pass


def own_capabilities() -> int:
    """This process's effective and permitted capabilities, by capget (no /proc read:
    this runs in every candidate); -1 when capget fails."""
    header_t, data_t = _cap_structs()
    header = header_t(_CAP_VERSION_3, 0)
    data = data_t()
    if _libc().capget(ctypes.byref(header), data) != 0:
        return -1
    return int(data[0].effective | data[0].permitted | data[1].effective | data[1].permitted)


def drop_all_caps() -> None:
    """No capability left in any set (ambient included), and no way to gain one."""
    libc = _libc()
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    try:
        _capset(())
    except OSError:
        pass
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


_SYS_KEYCTL = 250  # x86_64; keyctl(2) has no libc wrapper
_KEYCTL_JOIN_SESSION_KEYRING = 1
_KEYCTL_CLEAR = 7
_KEYCTL_READ = 11
_KEY_SPEC_USER_KEYRING = -4
_KEY_SPEC_USER_SESSION_KEYRING = -5


def _keyctl(*args: int) -> int:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(_SYS_KEYCTL, *(ctypes.c_long(a) for a in args)))


def join_session_keyring() -> None:
    """A new anonymous session keyring: a forked process otherwise *possesses* its
    parent's session keyring and could leave a key there for the next candidate.
    Where keyctl is refused (Docker's seccomp profile) there is no keyring to share."""
    try:
        _keyctl(_KEYCTL_JOIN_SESSION_KEYRING, 0)
    except Exception:
        pass


def keyring_clear() -> bool:
    """Empty this uid's user and user-session keyrings (they outlive every process of
    the uid); True when both are empty afterwards or keyctl is refused here."""
    ok = True
    for ring in (_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING):
        if _keyctl(_KEYCTL_CLEAR, ring) != 0:
            continue  # refused (seccomp) or no keyring: nothing a candidate could use
        if _keyctl(_KEYCTL_READ, ring, 0, 0) != 0:
            ok = False  # bytes of key ids still listed
    return ok


def become_candidate(uid: int | None, gid: int | None, rows: list) -> None:
    """Turn this (freshly forked) process into a candidate: every limit set, then the
    candidate uid and gid, no supplementary group, no capability. ``uid`` None (a
    sandbox with one uid only) sets the limits and drops capabilities only. Raises
    OSError when the switch did not happen: a candidate never runs privileged."""
    set_limits(rows)
    if uid is not None:
        gid = uid if gid is None else gid
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
            raise OSError("the candidate uid was not taken")
    drop_all_caps()
    if own_capabilities() != 0:
        raise OSError("the candidate kept a capability")
    # No keyring at all (kernel keys outlive processes: the user, session and
    # persistent keyrings of a uid could carry state to the next candidate). Where the
    # filter cannot be installed, a session keyring of its own, and the keeper clears
    # the uid's keyrings after every job.
    if not deny_keyrings():
        join_session_keyring()


def become_trusted(uid: int | None, gid: int | None, execs: bool = False) -> None:
    """Run this (freshly forked) process under the judge uid, keeping only the
    capabilities to start and kill candidates. ``execs``: the program will be
    ``execve``d, so the capabilities are made ambient to survive it."""
    if uid is None:
        return
    gid = uid if gid is None else gid
    libc = _libc()
    libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    libc.prctl(_PR_SET_KEEPCAPS, 0, 0, 0, 0)
    _capset(TRUSTED_CAPS, inheritable=execs)
    if execs:
        for c in TRUSTED_CAPS:
            libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE, c, 0, 0)


#: audit arch and (add_key, request_key, keyctl) numbers per machine.
_KEY_SYSCALLS = {
    "x86_64": (0xC000003E, (248, 249, 250)),
    "aarch64": (0xC00000B7, (217, 218, 219)),
}
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_KILL, _RET_EPERM = 0x7FFF0000, 0x80000000, 0x00050001


def deny_keyrings() -> bool:
    """A seccomp filter: ``add_key``, ``request_key`` and ``keyctl`` fail with EPERM
    (as under Docker's default profile); so does every x32 syscall, and a process of
    another audit arch (i386) is killed: no way around the filter through other
    numbers. Needs no_new_privs (set by :func:`drop_all_caps`). True when installed."""
    fprog = _keyring_filter()
    if fprog is None:
        return False
    return bool(
        _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
    )


def _keyring_filter() -> "ctypes.Structure | None":
    """The BPF program of :func:`deny_keyrings` (None on an unknown machine)."""
    if "filter" in _CACHE:
        cached: ctypes.Structure | None = _CACHE["filter"]
        return cached
    known = _KEY_SYSCALLS.get(os.uname().machine)
    if known is None:
        _CACHE["filter"] = None
        return None

    class _SockFilter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_uint16),
            ("jt", ctypes.c_uint8),
            ("jf", ctypes.c_uint8),
            ("k", ctypes.c_uint32),
        ]

    class _SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]

    arch, (add_key, request_key, keyctl) = known
    ld_w_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    prog = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, _RET_KILL),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (jge, 4, 0, 0x40000000),  # the x32 ABI's numbers
        (jeq, 3, 0, add_key),
        (jeq, 2, 0, request_key),
        (jeq, 1, 0, keyctl),
        (ret, 0, 0, _RET_ALLOW),
        (ret, 0, 0, _RET_EPERM),
    ]
    filters = (_SockFilter * len(prog))(*[_SockFilter(*row) for row in prog])
    fprog = _SockFprog(len(prog), filters)
    _CACHE["filter"] = fprog
    _CACHE["filter_rows"] = filters  # the array must live as long as the program
    return fprog


def non_dumpable() -> None:
    """No ptrace of this process, no /proc/<pid>/{mem,fd,environ} for anyone else."""
    try:
        _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except Exception:
        pass


def box_identity() -> tuple[int | None, int | None]:
    """``(uid, gid)`` of the candidate, from the environment the supervisor gives a
    trusted program (``RB_BOX_CANDIDATE=uid:gid``); ``(None, None)`` without one."""
    value = os.environ.get("RB_BOX_CANDIDATE", "")
    uid, _, gid = value.partition(":")
    if uid.isdigit() and gid.isdigit():
        return int(uid), int(gid)
    return None, None


# --------------------------------------------------------------------------- CPU time
#
# A candidate's time limit is CPU time, read from the kernel's accounting of the
# candidate's processes (``/proc/<pid>/stat``: readable across uids, also for a
# non-dumpable process), never the candidate's own report: on a busy machine wall time
# stretches while the work a program does stays the same, and a verdict must not
# depend on the load. Wall time is kept only as a generous backstop (a program that
# sleeps or blocks uses no CPU).

#: A call's wall-clock backstop: this many times its CPU limit, plus WALL_SLACK_S. Eight
#: busy processes beside a judgment on 2 cores stretch its wall time ~5x.
WALL_FACTOR = 10.0
WALL_SLACK_S = 5.0
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def wall_backstop(cpu_s: float) -> float:
    """The wall-clock seconds a step with ``cpu_s`` seconds of CPU may take at most."""
    return float(cpu_s) * WALL_FACTOR + WALL_SLACK_S


def _stat_ticks(pid: int | str, reaped: bool = True) -> int | None:
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    # Fields after the parenthesised command (which may itself hold spaces or ")").
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (all threads)
        if reaped:
            ticks += int(fields[13]) + int(fields[14])  # reaped children
    except (IndexError, ValueError):
        return None
    return ticks


def _children(pid: int | str) -> list:
    out: list = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:  # a child forked by any thread (the big-stack thread) is listed there
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(fh.read().split())
        except OSError:
            pass
    return out


def tree_cpu_s(pid: int | str) -> float | None:
    """CPU seconds (user + system) used by process ``pid``, its threads, its reaped
    children and every live descendant at any depth; None when ``/proc`` cannot tell
    (no /proc, the process is gone). With ``pid`` the init of a box (every orphan of
    the box is reparented to it and reaped by it) this is all the box used, except
    children that their parent let the kernel reap unseen (SIGCHLD ignored): only a
    box cgroup (:func:`spawn_box`) charges those, so this is the fallback."""
    total = _stat_ticks(pid)
    if total is None:
        return None
    todo = [c.decode() for c in _children(pid)]
    seen = 0
    while todo and seen < 4096:
        child = todo.pop()
        seen += 1
        t = _stat_ticks(child)
        if t is not None:
            total += t
        todo.extend(c.decode() for c in _children(child))
    return total / _TICK


def _stat_fields(path: str) -> list | None:
    """The fields of a ``/proc`` stat file after the parenthesised command (state first)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()


def _any_task_working(pid: str) -> bool:
    """Whether a thread of process ``pid`` is running or waiting for a CPU (R) or in an
    uninterruptible wait (D): work under way, however little CPU the machine gives it."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        fields = _stat_fields(f"/proc/{pid}/task/{tid}/stat")
        if fields and fields[0] in (b"R", b"D"):
            return True
    return False


def _is_pid_ns_init(pid: int | str) -> bool:
    """Whether ``pid`` is PID 1 of its own PID namespace: its innermost pid (the last of
    ``NSpid`` in ``/proc/<pid>/status``, which lists one per nested namespace) is 1."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"NSpid:"):
                    fields = line.split()
                    return len(fields) > 2 and fields[-1] == b"1"
    except OSError:
        pass
    return False


def box_working(root: int | str, root_is_init: bool = True) -> bool:
    """Whether a process of a box other than its init and the candidate (an orphan, a
    child or deeper descendant of the candidate) still has work under way.

    ``root`` is the box's init (every process of the box descends from it); with
    ``root_is_init`` False, or when ``root`` is not PID 1 of a namespace after all, it is
    the candidate itself (no box: only its own descendants can be seen). The candidate is the init's oldest child: orphans are reparented to
    the init later than it was forked. The candidate's own threads are not looked at:
    the one that has just answered may not have gone back to waiting yet."""
    kids = [c.decode() for c in _children(root)]
    # A zygote's fork is handed over as a box's init even where no PID namespace could
    # be had (the weaker levels fork the candidate plainly): then ``root`` is the
    # candidate, and its oldest child is one of its own, to be looked at, not skipped.
    if root_is_init and kids and not _is_pid_ns_init(root):
        root_is_init = False
    if root_is_init and kids:
        born = []
        for kid in kids:
            fields = _stat_fields(f"/proc/{kid}/stat")
            try:
                born.append((int(fields[19]) if fields else 1 << 62, kid))  # starttime
            except (IndexError, ValueError):
                born.append((1 << 62, kid))
        candidate = min(born)[1]
        todo = [k for k in kids if k != candidate]
        todo.extend(c.decode() for c in _children(candidate))
    else:
        todo = kids
    seen = 0
    while todo and seen < 4096:
        pid = todo.pop()
        seen += 1
        if _any_task_working(pid):
            return True
        todo.extend(c.decode() for c in _children(pid))
    return False


# ----------------------------------------------------------------------- a job's box
#
# isolate's model, for every candidate: a PID namespace of its own whose PID 1 is a
# small init of the box (isolate's "proxy"), a /proc that lists the box's processes and
# nothing else, and, where the host gave us a CPU-accounting cgroup, a cgroup of the
# box's own that the kernel charges with every CPU second of every process of the box,
# however it was created, reparented or reaped. No process that lives longer than one
# box (keeper, zygote, judge) can be seen from inside it, so nothing a kernel object
# accumulates on their behalf (a reaper's counters of its reaped children, limits,
# descriptors) can carry state from one judgment to the next.

CAP_SYS_ADMIN = 21
_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18
#: Where the keeper's host-given CPU cgroup is bound (root-only; hidden in every box).
CGROUP_MOUNT = "/dev/.rb-cpu"


def _sys_mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    libc = _libc()

    def enc(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _box_hide(path: str) -> None:
    """Cover ``path`` with an empty read-only tmpfs (in the box's mount namespace)."""
    if os.path.isdir(path) and not os.path.islink(path):
        _sys_mount(
            "tmpfs",
            path,
            "tmpfs",
            _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
            "size=4k,mode=755",
        )


def cgroup_usage_file(box_dir: str) -> str | None:
    """The file of a cgroup that counts its CPU time (v1 cpuacct, v2 cpu.stat)."""
    for name in ("cpuacct.usage", "cpu.stat"):
        path = os.path.join(box_dir, name)
        if os.path.exists(path):
            return path
    return None


def read_cgroup_cpu_s(fd: int) -> float | None:
    """CPU seconds in a cgroup's usage file open as ``fd`` (v1: ns; v2: usage_usec);
    None when it cannot be read."""
    try:
        text = os.pread(fd, 4096, 0).decode("ascii", "replace")
    except OSError:
        return None
    try:
        if text.startswith("usage_usec"):
            return int(text.split()[1]) / 1e6
        return int(text.split()[0]) / 1e9
    except (IndexError, ValueError):
        return None


def _new_box_cgroup(root: str) -> tuple[str | None, int]:
    """A fresh cgroup for one box under ``root``: ``(dir, usage fd)``, or ``(None, -1)``.
    Its name is random: a counter would tell a candidate (``/proc/self/cgroup``) how
    many boxes this worker made before."""
    if not root or not os.path.isdir(root):
        return None, -1
    path = os.path.join(root, "b" + os.urandom(8).hex())
    try:
        os.mkdir(path, 0o700)
    except OSError:
        return None, -1
    usage = cgroup_usage_file(path)
    try:
        fd = os.open(usage, os.O_RDONLY | os.O_CLOEXEC) if usage else -1
    except OSError:
        fd = -1
    if fd < 0:
        remove_cgroup(path, 0.0)
        return None, -1
    return path, fd


def remove_cgroup(path: str, wait_s: float = 1.0) -> bool:
    """rmdir a box's cgroup once its processes are gone (True when it is gone)."""
    import time

    deadline = time.monotonic() + wait_s
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


def _box_init(
    run: "Callable[[str | None], None]", hide: tuple, require: bool, status_fd: int = -1
) -> None:
    """PID 1 of a box: a mount namespace of its own with a /proc of the box, the
    candidate as PID 2; reap every process of the box; end (and with it, by the kernel,
    every process left in the box) when the candidate ends. The box's cgroup is the one
    it was forked in (see :func:`spawn_box`). With ``status_fd`` (a program run by
    :func:`exec_in_box`), the candidate's wait status is written there when it ends:
    ``b"S"`` and 4 bytes, which only this init can write (the program never holds it)."""
    import signal

    try:
        if _libc().unshare(_CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
        # Our mounts (the box's /proc) must not propagate to the keeper's.
        _sys_mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
        _sys_mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
        for path in hide:
            _box_hide(path)
    except OSError as exc:
        if require:
            run(f"the candidate's box could not be set up: {exc}")
            os._exit(0)
        # Where a box is not owed (no root: the weaker levels), a PID namespace that
        # reaps and ends everything is still had; the /proc it sees is the worker's.
    non_dumpable()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    child = os.fork()
    if child == 0:
        run(None)
        os._exit(0)
    # The init keeps no privilege: a candidate cannot use it for anything but signals,
    # which a PID 1 does not take from inside its namespace. Nor any descriptor but the
    # status pipe: not the candidate's wire or stdio (their ends close with the
    # candidate), not the zygote's socket.
    drop_all_caps()
    if status_fd >= 3:
        os.closerange(3, status_fd)
        os.closerange(status_fd + 1, 65536)
    else:
        os.closerange(3, 65536)
    while True:
        try:
            pid, wstatus = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == child:
            if status_fd >= 0:
                try:
                    os.write(status_fd, b"S" + wstatus.to_bytes(4, "big", signed=True))
                except OSError:
                    pass
            break
    os._exit(0)


def _enter_cgroup(cgroup_dir: str | None) -> None:
    if cgroup_dir:
        with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as fh:
            fh.write("0")  # ourselves: every process forked after this is charged there


_CLONE_NEWPID_SETNS = _CLONE_NEWPID  # setns(2)'s nstype for a PID namespace


def _own_pid_ns() -> int:
    """A descriptor of the caller's own PID namespace (opened once), to return
    ``pid_ns_for_children`` to it after a box's init is forked."""
    fd = _CACHE.get("own_pid_ns")
    if fd is None:
        fd = _CACHE["own_pid_ns"] = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    return int(fd)


def enter_next_box_cgroup(root: str) -> None:
    """Move the caller (the zygote) into a fresh cgroup under ``root``: the cgroup of
    the next box it forks, which is born there.

    Why the zygote moves and not the box: a write to ``cgroup.procs`` (cgroup v1) waits
    for an RCU grace period, 8-16 ms on these machines, where every other step of a box
    costs well under a millisecond. The box's init inherits the cgroup with the fork,
    at no cost; the zygote's own move to the next one happens after it has answered
    the judge (``_candidate_main``), while the judgment runs. What the zygote spends in
    a box's cgroup is handling that box's request (its fork included), charged to the
    box: never less than the box used, a fraction of a millisecond more. A cgroup is
    never given to a second box: :func:`spawn_box` takes it from here and forgets it.
    Without a usable cgroup under ``root`` the caller stays where it is (the box then
    counts its CPU from its process tree)."""
    remove_old_boxes()
    old = _CACHE.pop("next_box", None)
    if old is not None:  # never handed out: nothing but the caller ever ran in it
        os.close(old[1])
        _CACHE.setdefault("boxes", []).append(old[0])
    cg_dir, usage_fd = _new_box_cgroup(root)
    if not cg_dir:
        return
    try:
        _enter_cgroup(cg_dir)
    except OSError:
        os.close(usage_fd)
        remove_cgroup(cg_dir, 0.0)
        return
    _CACHE["next_box"] = (cg_dir, usage_fd)


def remove_old_boxes() -> None:
    """rmdir the cgroups of earlier boxes whose processes are gone (no waiting: one
    still emptying is tried again at the next box)."""
    left = []
    for path in _CACHE.get("boxes", []):
        try:
            os.rmdir(path)
        except FileNotFoundError:
            pass
        except OSError:
            left.append(path)
    _CACHE["boxes"] = left


def spawn_box(
    run: "Callable[[str | None], None]",
    cgroup_root: str = "",
    require: bool = False,
    hide: tuple = ("/sys", CGROUP_MOUNT),
    status_fd: int = -1,
) -> tuple[int, int, bool]:
    """Start ``run(setup_error)`` as the candidate of a new box.

    Returns ``(pid, usage_fd, boxed)``: the box's init (a child of the caller; killing
    it ends every process of the box), a descriptor of the box cgroup's CPU usage (-1
    without one; read with :func:`read_cgroup_cpu_s`) and whether a PID namespace could
    be had. Without CAP_SYS_ADMIN there is none: ``require`` False forks ``run`` plainly
    (the weaker levels), True hands it the error instead (fail closed). ``run`` must not
    return; it gets a text when the box could not be set up, which it reports as the
    sandbox's failure (never the program's). The caller ignores SIGCHLD, so the kernel
    reaps the init without charging the caller anything: nothing long-lived accumulates
    the box's counters. Two forks a candidate (the init, the candidate): the PID
    namespace is the caller's ``unshare`` for its next child only, undone at once."""
    remove_old_boxes()
    if cgroup_root and "next_box" not in _CACHE:
        enter_next_box_cgroup(cgroup_root)  # the first box, or the last move failed
    cg_dir, usage_fd = _CACHE.pop("next_box", (None, -1))
    if cg_dir:
        # The box's from here on (the caller moves on with enter_next_box_cgroup); it is
        # removed once empty.
        _CACHE.setdefault("boxes", []).append(cg_dir)
    libc = _libc()
    error = None
    boxed = False
    try:
        own_ns = _own_pid_ns()
        boxed = libc.unshare(_CLONE_NEWPID) == 0
        if not boxed and require:
            error = f"no PID namespace for the candidate's box: {os.strerror(ctypes.get_errno())}"
    except OSError as exc:
        own_ns = -1
        if require:
            error = f"no PID namespace for the candidate's box: {exc}"
    try:
        init = os.fork()
    except OSError:
        init = -1
    if init != 0 and boxed and libc.setns(own_ns, _CLONE_NEWPID_SETNS) != 0:
        # Our later children would land in this box's namespace: never go on so.
        os._exit(70)
    if init < 0:
        if usage_fd >= 0:
            os.close(usage_fd)
        raise OSError("cannot fork the box's init")
    if init == 0:
        # What the caller holds for the box is not the box's: no descriptor of the
        # caller's namespace or of the box's CPU counter reaches the candidate.
        for fd in (usage_fd, _CACHE.pop("own_pid_ns", -1)):
            if fd >= 0:
                os.close(fd)
        if error is None and boxed:
            _box_init(run, hide, require, status_fd)
        run(error)
        os._exit(0)
    return init, usage_fd, boxed and error is None


# ------------------------------------------------------------- programs run in a box
#: What the zygote answers an exec request it cannot box where no box is owed (the
#: caller runs the program itself, as the weaker levels always did) and where one is.
NO_BOX, BOX_FAILED = 0, 0xFFFFFFFF


class ExecBox:
    """A program the sandbox's zygote runs in a box of its own for a trusted driver
    (the Rust driver's candidates): the box's init (not the driver's child), its CPU
    counter, and the pipe on which the init reports the program's wait status."""

    def __init__(self, pid: int, usage_fd: int, status_r: int) -> None:
        self.pid = pid
        self.usage_fd = usage_fd
        self.status_r = status_r
        try:
            self.pidfd = os.pidfd_open(pid)
        except OSError:  # already ended
            self.pidfd = -1
        self.returncode: int | None = None
        self.error: str | None = None
        self.last_cpu: float | None = None

    def cpu(self) -> float | None:
        """CPU seconds of every process of the box (its cgroup), else its tree's; once
        the box has ended and its tree is gone, the last reading."""
        got = read_cgroup_cpu_s(self.usage_fd) if self.usage_fd >= 0 else None
        if got is None:
            got = tree_cpu_s(self.pid)
        if got is not None:
            self.last_cpu = max(self.last_cpu or 0.0, got)
        return self.last_cpu

    def wait(self, timeout: float | None) -> bool:
        """True once the box has ended (every process of it), within ``timeout`` s."""
        import select

        if self.pidfd < 0:
            return True
        ready, _, _ = select.select([self.pidfd], [], [], timeout)
        if ready:
            self._collect()
        return bool(ready)

    def kill(self) -> None:
        """End the box (its init: the kernel ends the rest) and wait until it is gone."""
        if self.pidfd >= 0:
            try:
                import signal

                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass
            self.wait(2.0)

    def _collect(self) -> None:
        if self.returncode is not None or self.error is not None:
            return
        try:
            data = os.read(self.status_r, 4096)
        except OSError:
            data = b""
        if data[:1] == b"S" and len(data) == 5:
            status = int.from_bytes(data[1:], "big", signed=True)
            if os.WIFSIGNALED(status):
                self.returncode = -os.WTERMSIG(status)
            else:
                self.returncode = os.WEXITSTATUS(status)
        elif data[:1] == b"E":
            self.error = data[1:].decode("utf-8", "replace")
        else:
            self.returncode = -9  # the init was killed: no status (a timeout's kill)

    def close(self) -> None:
        for fd in (self.pidfd, self.usage_fd, self.status_r):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.pidfd = self.usage_fd = self.status_r = -1


def exec_in_box(
    argv: list,
    env: dict,
    limits: dict,
    stdio: tuple,
    sock_fd: int = 3,
) -> "ExecBox | str | None":
    """Ask the sandbox's zygote (its socket, fd 3 of a trusted job) to run ``argv`` as a
    candidate in a box of its own: every limit, the candidate uid, its own PID
    namespace, ``/proc`` and cgroup, with ``stdio`` (three descriptors) as its 0, 1, 2.

    Returns the :class:`ExecBox`; None where there is no zygote or the zygote cannot
    make a box and none is owed (the caller runs the program itself); a text where a
    box is owed and could not be made (the sandbox's failure, never the program's)."""
    import marshal
    import socket
    import stat

    try:
        if not stat.S_ISSOCK(os.fstat(sock_fd).st_mode):
            return None
    except OSError:
        return None
    status_r, status_w = os.pipe()
    sock = socket.socket(fileno=os.dup(sock_fd))
    try:
        sock.settimeout(10.0)
        request = marshal.dumps({"__exec__": list(argv), "env": dict(env), "limits": limits})
        socket.send_fds(sock, [request], [*stdio, status_w])
        answer, fds, _flags, _addr = socket.recv_fds(sock, 4, 1)
    except OSError:
        os.close(status_r)
        return None
    finally:
        os.close(status_w)
        sock.close()
    usage_fd = fds[0] if fds else -1
    pid = int.from_bytes(answer, "big") if len(answer) == 4 else NO_BOX
    if pid in (NO_BOX, BOX_FAILED):
        for fd in (status_r, usage_fd):
            if fd >= 0:
                os.close(fd)
        return "the program's box could not be set up" if pid == BOX_FAILED else None
    return ExecBox(pid, usage_fd, status_r)
