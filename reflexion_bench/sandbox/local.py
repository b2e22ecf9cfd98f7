"""Local sandbox: the strongest isolation this machine offers without a daemon.

Isolation levels, strongest first (``isolation: auto`` probes them once and keeps the
first that works):

``bwrap``
    bubblewrap: new PID, network, mount, IPC, UTS and cgroup namespaces; a read-only
    view of /usr and /etc only (no /root, /home, /work, ...), size-limited tmpfs for the
    scratch dir, /tmp and /dev/shm, a private mqueue mount, no network at all (only a
    down loopback). The supervisor is PID 1 of the namespace: everything dies with it.
    As root, bwrap runs without a user namespace and the supervisor keeps uid 0 with
    six capabilities (``KEEPER_CAPS``) to run the judge and the candidates under two
    dedicated uids of their own (ioi/isolate's model, see ``_box.py``); without root,
    one user namespace of one uid holds every process (weaker: the README says how).
``unshare``
    util-linux ``unshare`` (as root) for network, PID, mount, IPC and UTS namespaces,
    tmpfs over /tmp, /var/tmp and /dev/shm, every other top-level directory but the
    system ones hidden, an mqueue mount on /run/mqueue, then ``setpriv`` limits the
    supervisor's capabilities to ``KEEPER_CAPS`` (the same three uids as bwrap).
``rlimits``
    no namespaces: a dedicated uid (when we are root), rlimits, its own session, a
    private scratch dir. No network isolation and no private /tmp: a last resort, and
    logged as such.

Every level adds: rlimits per program (address space, CPU, processes, file size, no
core), a wall-clock timeout that kills the whole tree, an environment rebuilt from
scratch (PATH, HOME, LANG, TMPDIR only: nothing of the harness's leaks), output kept up
to ``Limits.output_bytes`` and the program killed past ``Limits.output_kill_bytes``, and
where the host allows (root, cgroup v1 or v2) a memory+pids cgroup per worker.

``{python}`` is the SYSTEM interpreter (``/usr/bin/python3``; Debian 12's 3.11 here):
the project's own Python lives under /root (mode 700) which the unprivileged sandbox uid
cannot read, and generated programs only need the standard library. ``rustc``/``cargo``
are Debian's (``/usr/bin``; apt-get install rustc cargo), for the same reason.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import weakref
from collections import deque
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.sandbox import _host
from reflexion_bench.sandbox._box import CGROUP_MOUNT
from reflexion_bench.sandbox._pool import (
    DRIVER_SOURCE,
    Channel,
    PooledSandbox,
    candidate_zygote_source,
    start_worker,
)

log = logging.getLogger(__name__)

LEVELS = ("bwrap", "unshare", "rlimits")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
_PROBED: dict[tuple[str, str], str | None] = {}
_LIVE: weakref.WeakSet[LocalSandbox] = weakref.WeakSet()
#: What the supervisor (the keeper, uid 0 of the sandbox) may still do: start programs
#: under the judge and candidate uids (SETUID, SETGID), kill them (KILL), hand them their
#: scratch dir (CHOWN), clean what they leave (FOWNER, DAC_OVERRIDE), reset the pid
#: cursor (CHECKPOINT_RESTORE) and replace the tmpfs mounts by fresh ones after every
#: job (SYS_ADMIN, inside its own mount namespace). No ptrace, raw I/O, module loading
#: or network administration. The zygote keeps SETUID and SETGID only, the judge
#: SETUID, SETGID and KILL, a candidate nothing.
KEEPER_CAPS = (
    "setuid", "setgid", "kill", "chown", "fowner", "dac_override", "checkpoint_restore",
    "sys_admin",
)  # fmt: skip
#: Run in the worker's new IPC namespace, as root, before anything else: no SysV
#: shared memory, semaphore or message queue and no POSIX message queue can be created
#: there at all (generated programs do not need them; multiprocessing's locks are
#: futexes in /dev/shm), so none can carry state from one judgment to the next, and
#: neither can their id counters. The keeper's clean-up still checks they are none.
NO_IPC_SYSCTLS = (
    "echo 0 > /proc/sys/kernel/shmmni && echo 0 > /proc/sys/kernel/msgmni && "
    'echo "0 0 0 0" > /proc/sys/kernel/sem && echo 0 > /proc/sys/fs/mqueue/queues_max'
)
#: Where a worker finds a writable ns_last_pid (see _driver.NS_LAST_PID).
NS_LAST_PID = "/proc/sys/kernel/ns_last_pid"


class _ProcChannel(Channel):
    """A supervisor reached through a local subprocess's pipes."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        uid: int | None,
        cleanup: list[Path],
        cgroup: _host.Cgroup | None,
        judge_uid: int | None = None,
    ) -> None:
        self.proc = proc
        self.uid = uid
        self.judge_uid = judge_uid
        self.cleanup = cleanup
        self.cgroup = cgroup
        self._stderr: deque[bytes] = deque(maxlen=32)
        self._stderr_task = asyncio.ensure_future(self._read_stderr())
        self._killed = False

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while True:
            chunk = await self.proc.stderr.read(4096)
            if not chunk:
                return
            self._stderr.append(chunk)

    async def send_line(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def recv_line(self) -> bytes:
        assert self.proc.stdout is not None
        return await self.proc.stdout.readline()

    def diagnostics(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")[-2000:]

    def oom_kills(self) -> int | None:
        return self.cgroup.oom_kills() if self.cgroup is not None else None

    def kill_now(self) -> None:
        if self._killed:
            return
        self._killed = True
        # The supervisor runs in its own session: its group is bwrap/unshare + driver.
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        # Whatever escaped the group (setsid): every process of the slot's uids.
        for uid in (self.uid, self.judge_uid):
            if uid is not None:
                _host.kill_uid(uid)
        if self.cgroup is not None:
            self.cgroup.remove()
        for path in self.cleanup:
            shutil.rmtree(path, ignore_errors=True)

    async def kill(self) -> None:
        await asyncio.to_thread(self.kill_now)
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self.proc.wait(), timeout=5)
        # Close the transport now, inside its loop (not at garbage collection).
        transport = getattr(self.proc, "_transport", None)
        if transport is not None:
            transport.close()
        self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._stderr_task
        if self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()


class LocalSandbox(PooledSandbox):
    """Run programs in local namespaces as an unprivileged uid, ``jobs`` at a time.

    Args:
        jobs: concurrent executions (one warm worker each).
        isolation: ``auto`` (best that works here), ``bwrap``, ``unshare`` or ``rlimits``.
        python: interpreter substituted for ``{python}``; ``auto`` is /usr/bin/python3.
        disk_mb: size of each tmpfs (scratch dir, /tmp, /dev/shm) per worker.
        cgroup_memory_mb: memory ceiling of one worker's cgroup (all its processes),
            when cgroups are writable; per-process limits come from ``Limits``.
        uid_base: first uid of the range of dedicated sandbox uids (when root).
        recycle_after: programs a worker runs before it is replaced by a fresh one.
        inproc_python: run ``{python} file.py`` in a fork of the warm supervisor (no
            interpreter start per program); ``false`` execs a fresh interpreter.
        allow_unprotected_scores: score hidden tests even at the ``rlimits`` level,
            where a candidate can read the benchmark's files (refused otherwise).
    """

    def __init__(
        self,
        jobs: int = 2,
        isolation: str = "auto",
        python: str = "auto",
        disk_mb: int = 256,
        cgroup_memory_mb: int = 4096,
        uid_base: int = _host.DEFAULT_UID_BASE,
        recycle_after: int = 500,
        inproc_python: bool = True,
        allow_unprotected_scores: bool = False,
    ) -> None:
        super().__init__(jobs=jobs, recycle_after=recycle_after, inproc_python=inproc_python)
        if not isinstance(allow_unprotected_scores, bool):
            raise ConfigError(
                "sandbox.allow_unprotected_scores", allow_unprotected_scores, "true or false"
            )
        self.allow_unprotected_scores = allow_unprotected_scores
        if isolation not in ("auto", *LEVELS):
            raise ConfigError("sandbox.isolation", isolation, ("auto", *LEVELS))
        self.python = _resolve_python(python)
        # Checked here, at start: a tmpfs of -5 MB does not fail until the first worker
        # starts, mid-run, where it would otherwise look like a verdict on the code.
        self.disk_mb = _positive_int("sandbox.disk_mb", disk_mb)
        self.cgroup_memory_mb = _positive_int("sandbox.cgroup_memory_mb", cgroup_memory_mb)
        self.uid_base = int(uid_base)
        self._root = os.geteuid() == 0
        #: Per slot: the candidate uid (``_leases``) and the judge uid, never shared
        #: with another slot, another sandbox or another run on this host.
        self._leases: dict[int, _host.UidLease] = {}
        self._judge_leases: dict[int, _host.UidLease] = {}
        self._cgroups_ok: bool | None = None
        if isolation == "auto":
            level = probe_isolation(self.python)
        else:
            problem = _probe_level(isolation, self.python)
            if problem:
                raise ConfigError(
                    "sandbox.isolation", isolation, f"a level that works here ({problem})"
                )
            level = isolation
        self.level = level
        extras = []
        if self._root and level in ("bwrap", "unshare"):
            extras.append("split uids")
        elif self._root:
            extras.append("dedicated uid")
        if self._root:
            probe = _host.Cgroup(f"{os.getpid()}-probe", 64, 64, None)
            self._cgroups_ok = probe.active
            probe.remove()
            if self._cgroups_ok:
                extras.append("cgroup")
        self.isolation = "+".join([level, *extras])
        log.info(
            "sandbox: local, isolation=%s, jobs=%d, python=%s", self.isolation, jobs, self.python
        )
        if level == "rlimits":
            log.warning(
                "sandbox: no namespaces available: programs can reach the network and "
                "write to world-writable host dirs (install bubblewrap for isolation)"
            )
        if self._root:
            _host.sweep_stale_cgroups()
        _LIVE.add(self)

    # ------------------------------------------------------------------ workers
    def _uid(self, slot: int) -> int | None:
        """The slot's candidate uid (None without root)."""
        return self._claim(self._leases, slot)

    def _judge_uid(self, slot: int) -> int | None:
        """The slot's judge uid, where the level splits uids (bwrap, unshare as root)."""
        if self.level == "rlimits":
            return None
        return self._claim(self._judge_leases, slot)

    def _claim(self, leases: dict[int, _host.UidLease], slot: int) -> int | None:
        if not self._root:
            return None
        lease = leases.get(slot)
        if lease is None:
            lease = _host.claim_uid(self.uid_base)
            leases[slot] = lease
        return lease.uid

    async def _spawn(self, slot: int) -> Channel:
        uid = self._uid(slot)
        judge_uid = self._judge_uid(slot)
        cgroup = None
        if self._cgroups_ok:
            # Only the rlimits level's supervisor runs as the slot's uid (and enters the
            # cgroup itself); the other levels start it as root.
            owner = uid if self.level == "rlimits" else None
            cgroup = _host.Cgroup(f"{os.getpid()}-{slot}-{uid}", self.cgroup_memory_mb, 1024, owner)
            if not cgroup.active:
                cgroup = None
        argv, cleanup = build_argv(
            self.level,
            self.python,
            uid,
            self.disk_mb,
            judge_uid,
            cgroup.cpu_dir if cgroup is not None else None,
        )
        if cgroup is not None:
            argv = cgroup.enter_command() + argv
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_host_env(),
                start_new_session=True,
                limit=1 << 26,
                cwd="/",
                **_as_user(_starter_uid(self.level, uid)),
            )
        except Exception:
            for path in cleanup:
                shutil.rmtree(path, ignore_errors=True)
            if cgroup is not None:
                cgroup.remove()
            raise
        return _ProcChannel(proc, uid, cleanup, cgroup, judge_uid)

    async def _after_worker_killed(self, slot: int) -> None:
        return None

    async def aclose(self) -> None:
        await super().aclose()
        self._release_leases()

    def _release_leases(self) -> None:
        for leases in (self._leases, self._judge_leases):
            for lease in leases.values():
                lease.release()
            leases.clear()

    def close_now(self) -> None:
        super().close_now()
        self._release_leases()


# ---------------------------------------------------------------------- helpers


def _resolve_python(python: str) -> str:
    if python != "auto":
        if not os.access(python, os.X_OK):
            raise ConfigError("sandbox.python", python, "an executable interpreter path")
        return python
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(cand, os.X_OK) and _world_readable_path(cand):
            return cand
    raise ConfigError(
        "sandbox.python",
        python,
        "a Python 3 the unprivileged sandbox user can run: install Debian's python3 "
        "(apt-get install python3) or set sandbox.python=/path/to/python3",
    )


def _world_readable_path(path: str) -> bool:
    p = Path(os.path.realpath(path))
    for parent in [*reversed(p.parents), p]:
        try:
            if not parent.stat().st_mode & 0o005:
                return False
        except OSError:
            return False
    return True


def _host_env() -> dict[str, str]:
    """The environment of the sandbox tools themselves: nothing of ours."""
    return {"PATH": SANDBOX_PATH + ":/usr/sbin:/sbin", "LANG": "C.UTF-8"}


def _starter_uid(level: str, uid: int | None) -> int | None:
    """Who starts the worker: root itself at the bwrap and unshare levels (the keeper
    needs uid 0 of the sandbox to run two other uids), the slot's uid at rlimits."""
    return uid if level == "rlimits" else None


def _as_user(uid: int | None) -> dict[str, Any]:
    if uid is None:
        return {}
    return {"user": uid, "group": uid, "extra_groups": []}


def _sandbox_env(workdir: str, tmpdir: str) -> dict[str, str]:
    return {
        "PATH": SANDBOX_PATH,
        "HOME": workdir,
        "LANG": "C.UTF-8",
        "TMPDIR": tmpdir,
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _driver_argv(python: str, config: dict[str, Any]) -> list[str]:
    return [python, "-I", "-S", "-c", DRIVER_SOURCE, json.dumps(config)]


def _positive_int(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1:
        raise ConfigError(key, value, "a whole number of MB >= 1")
    if not float(value).is_integer():
        raise ConfigError(key, value, "a whole number of MB >= 1")
    return int(value)


def build_argv(
    level: str,
    python: str,
    uid: int | None,
    disk_mb: int,
    judge_uid: int | None = None,
    cpu_cgroup: Path | None = None,
) -> tuple[list[str], list[Path]]:
    """The command that starts one worker at ``level``, and host paths to remove after.

    ``uid`` is the candidate uid and ``judge_uid`` the judge's (both None without root:
    one uid then runs everything, in bwrap's user namespace). ``cpu_cgroup``: the
    worker's CPU-accounting cgroup on the host, under which every candidate's box gets
    a cgroup of its own (with split uids only: the keeper needs root to make them)."""
    size = disk_mb * 1024 * 1024
    split = uid is not None and judge_uid is not None
    uids: dict[str, Any] = {"judge_uid": judge_uid, "candidate_uid": uid} if split else {}
    if split:
        # As root the keeper holds CAP_SYS_ADMIN: every candidate runs in a box of its
        # own (a PID namespace, its own /proc), and one that cannot be made fails.
        uids["require_box"] = True
    if not split:
        cpu_cgroup = None
    if level == "bwrap":
        workdir, tmpdir = "/scratch", "/tmp"
        cfg: dict[str, Any] = {
            "workdir": workdir,
            "wipe": [tmpdir, "/dev/shm"],
            "python": python,
            "kill_all": True,  # we are PID 1 of our own namespace
            "env": _sandbox_env(workdir, tmpdir),
            "zygote": candidate_zygote_source(),
            "mqueue": "/dev/mqueue",
            **uids,
        }
        if split:
            cfg["fresh_mounts"] = [
                {"path": "/dev/shm", "size": size, "mode": "1777"},
                {"path": tmpdir, "size": size, "mode": "1777"},
                {"path": workdir, "size": size, "mode": "0711"},
            ]
        prefix: list[str] = []
        if cpu_cgroup is not None:
            cfg["cpu_cgroup"] = CGROUP_MOUNT
        if split:
            # The IPC namespace is made first, by util-linux, so that its sysctls can be
            # written (bwrap covers /proc/sys read-only inside); bwrap joins it.
            prefix = [
                shutil.which("unshare") or "unshare", "--ipc", "--",
                "/bin/sh", "-c", f'{NO_IPC_SYSCTLS} && exec "$@"', "sh",
            ]  # fmt: skip
            cfg["ns_last_pid"] = "/dev/.rb-ns-last-pid"
            # As root: no user namespace (uids are real, so each slot's two are its own
            # on this host), the keeper's capabilities only.
            namespaces = [
                "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--cap-drop", "ALL",
            ]  # fmt: skip
            for cap in KEEPER_CAPS:
                namespaces += ["--cap-add", f"CAP_{cap.upper()}"]
        else:
            namespaces = ["--unshare-all", "--unshare-user", "--disable-userns"]
        argv = [
            *prefix,
            shutil.which("bwrap") or "bwrap",
            *namespaces,
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            "--hostname",
            "sandbox",
            "--ro-bind",
            "/usr",
            "/usr",
            "--ro-bind",
            "/etc",
            "/etc",
        ]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            host = Path("/") / name
            if host.is_symlink():
                argv += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                argv += ["--ro-bind", str(host), str(host)]
        argv += [
            "--proc", "/proc",
            "--dev", "/dev",
            "--mqueue", "/dev/mqueue",
            *(["--bind", NS_LAST_PID, cfg["ns_last_pid"]] if split else []),
            *(["--bind", str(cpu_cgroup), CGROUP_MOUNT] if cpu_cgroup is not None else []),
            "--size", str(size), "--perms", "1777", "--tmpfs", "/dev/shm",
            "--size", str(size), "--perms", "1777", "--tmpfs", tmpdir,
            "--size", str(size), "--perms", "0711" if split else "0700", "--tmpfs", workdir,
            "--remount-ro", "/",
            "--chdir", workdir,
            "--clearenv",
        ]  # fmt: skip
        for key, value in cfg["env"].items():
            argv += ["--setenv", key, value]
        return argv + _driver_argv(python, cfg), []
    if level == "unshare":
        workdir, tmpdir = "/tmp/scratch", "/tmp"
        cfg = {
            "workdir": workdir,
            # /tmp holds the scratch dir: the supervisor empties it around the scratch
            # dir, so nothing a program leaves in /tmp reaches the next one.
            "wipe": ["/tmp", "/var/tmp", "/dev/shm"],
            "python": python,
            "zygote": candidate_zygote_source(),
            "kill_all": True,
            "env": _sandbox_env(workdir, tmpdir),
            "mqueue": "/run/mqueue",
            # unshare's own /proc mount is writable (bwrap's is covered read-only).
            "ns_last_pid": NS_LAST_PID if split else "",
            # The host's path is seen as it is (/sys stays); every box hides /sys.
            "cpu_cgroup": str(cpu_cgroup) if cpu_cgroup is not None else "",
            **uids,
        }
        if split:
            cfg["fresh_mounts"] = [
                # /var/tmp is not there: the script hides /var like the rest.
                {"path": d, "size": size, "mode": "1777"}
                for d in ("/tmp", "/dev/shm")
            ]
        keep = "/usr|/bin|/sbin|/lib|/lib32|/lib64|/libx32|/etc|/proc|/dev|/sys|/tmp|/run"
        owner = "0:0" if split or uid is None else f"{uid}:{uid}"
        no_ipc = f"{NO_IPC_SYSCTLS}\n" if split else ""
        script = f"""set -e
{no_ipc}for d in /tmp /var/tmp /dev/shm; do
  [ -d "$d" ] && mount -t tmpfs -o size={size},mode=1777,nosuid,nodev tmpfs "$d"
done
mkdir -m 700 {workdir} && chown {owner} {workdir}
for d in /*; do
  case "$d" in {keep}) ;; *)
    if [ -d "$d" ] && [ ! -L "$d" ]; then mount -t tmpfs -o ro,size=4k,mode=755 tmpfs "$d" || true; fi ;;
  esac
done
# /run: hidden like the rest, but holding our IPC namespace's message queue listing
# (the host has no /dev/mqueue to mount it on).
mount -t tmpfs -o size=64k,mode=755 tmpfs /run
mkdir -m 755 /run/mqueue && mount -t mqueue mqueue /run/mqueue
mount -o remount,bind,ro / 2>/dev/null || true
cd {workdir}
exec "$@"
"""
        drop: list[str] = []
        if split:
            # The keeper stays uid 0 of the sandbox with its few capabilities only.
            bounding = ",".join(["-all", *(f"+{c}" for c in KEEPER_CAPS)])
            drop = [
                shutil.which("setpriv") or "setpriv",
                "--inh-caps=-all",
                f"--bounding-set={bounding}",
                "--",
            ]
        elif uid is not None:
            drop = [
                shutil.which("setpriv") or "setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        argv = [
            shutil.which("unshare") or "unshare",
            "--net", "--pid", "--mount", "--ipc", "--uts",
            "--fork", "--kill-child", "--mount-proc",
            "--", "/bin/sh", "-c", script, "sh",
            *drop,
        ]  # fmt: skip
        return argv + _driver_argv(python, cfg), []
    if level == "rlimits":
        base = Path(tempfile.mkdtemp(prefix="reflexion-bench-sbx-"))
        os.chmod(base, 0o711)
        work_path = base / "scratch"
        tmp = base / "tmp"
        for d in (work_path, tmp):
            d.mkdir(mode=0o700)
            if uid is not None:
                os.chown(d, uid, uid)
        cfg = {
            "workdir": str(work_path),
            "wipe": [str(tmp)],
            "python": python,
            # kill(-1) reaches exactly this slot's processes only as a dedicated uid.
            "kill_all": uid is not None,
            "env": _sandbox_env(str(work_path), str(tmp)),
        }
        return _driver_argv(python, cfg), [base]
    raise ConfigError("sandbox.isolation", level, LEVELS)


def _probe_level(level: str, python: str) -> str | None:
    """None when ``level`` works here, else why not. Cached per process."""
    key = (level, python)
    if key in _PROBED:
        return _PROBED[key]
    problem = (
        asyncio.run(_probe_async(level, python)) if not _in_loop() else _probe_thread(level, python)
    )
    _PROBED[key] = problem
    if problem:
        log.info("sandbox: isolation level %s unavailable: %s", level, problem)
    return problem


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _probe_thread(level: str, python: str) -> str | None:
    """Probe from inside a running loop (the sandbox is built in async code)."""
    out: list[str | None] = []

    def target() -> None:
        out.append(asyncio.run(_probe_async(level, python)))

    import threading

    t = threading.Thread(target=target)
    t.start()
    t.join()
    return out[0]


async def _probe_async(level: str, python: str) -> str | None:
    if level == "bwrap" and not shutil.which("bwrap"):
        return "bwrap not installed (apt-get install bubblewrap)"
    if level == "unshare":
        if not shutil.which("unshare"):
            return "unshare not installed (util-linux)"
        if os.geteuid() != 0:
            return "needs root (it mounts tmpfs and drops to a dedicated uid)"
    root = os.geteuid() == 0
    leases = [
        _host.claim_uid() for _ in range(2 if root and level != "rlimits" else 1 if root else 0)
    ]
    uid = leases[0].uid if leases else None
    judge_uid = leases[1].uid if len(leases) > 1 else None
    try:
        argv, cleanup = build_argv(level, python, uid, 16, judge_uid)
    except Exception as exc:
        for lease in leases:
            lease.release()
        return str(exc)
    channel: _ProcChannel | None = None
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_host_env(),
            start_new_session=True,
            cwd="/",
            **_as_user(_starter_uid(level, uid)),
        )
        channel = _ProcChannel(proc, uid, cleanup, None, judge_uid)
        worker = await start_worker(channel, timeout_s=30)
        from dataclasses import asdict

        from reflexion_bench.sandbox.base import Limits

        out = await worker.run(
            {
                "argv": ["{python}", "-c", "print(6 * 7)"],
                "files": {},
                "stdin": "",
                "timeout_s": 20.0,
                "limits": asdict(Limits()),
                "inproc": False,
            },
            wait_s=30,
        )
        if out.get("stdout", "").strip() != "42":
            return f"probe program failed: {out}"
        if level in ("bwrap", "unshare") and worker.info.get("pid") != 1:
            return f"supervisor is not PID 1 of a new namespace: {worker.info}"
        if judge_uid is not None and not worker.info.get("split_uids"):
            return f"the judge and candidate uids were not taken: {worker.info}"
        return None
    except Exception as exc:
        diag = channel.diagnostics() if channel else ""
        return f"{type(exc).__name__}: {exc} {diag}".strip()
    finally:
        if channel is not None:
            await channel.kill()
        else:
            for path in cleanup:
                shutil.rmtree(path, ignore_errors=True)
        for lease in leases:
            lease.release()


def probe_isolation(python: str = "/usr/bin/python3") -> str:
    """The strongest level that actually runs a program here."""
    for level in LEVELS:
        if _probe_level(level, python) is None:
            return level
    raise RuntimeError("no sandbox isolation level works on this machine (not even rlimits)")


def _close_all() -> None:
    for sb in list(_LIVE):
        with contextlib.suppress(Exception):
            sb.close_now()


atexit.register(_close_all)
