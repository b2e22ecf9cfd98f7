"""Host-side helpers of the local backend: dedicated uids, cgroups, process sweeps.

Why dedicated uids: measured here, bubblewrap run as root did not limit a fork bomb
(RLIMIT_NPROC never applies to root), and with one shared unprivileged uid two
concurrent sandboxes would share that limit and could signal each other. So each worker
slot runs as its own uid from a reserved range, claimed with a lock file so that several
harness processes on one machine never share one; ``kill(-1)`` as that uid then reaches
exactly what that slot started, even processes that ``setsid`` away.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import subprocess
from pathlib import Path

from reflexion_bench.sandbox._box import remove_cgroup

log = logging.getLogger(__name__)

#: Start of the uid range of sandbox workers (no passwd entry needed). Chosen far above
#: distribution and login ranges so that no real account owns these uids.
DEFAULT_UID_BASE = 1_990_000
UID_RANGE = 4096
LOCK_DIR = Path("/run/lock/reflexion-bench-sandbox")


class UidLease:
    """An exclusively held uid (released when the lock file's fd closes or we die)."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def claim_uid(base: int = DEFAULT_UID_BASE) -> UidLease:
    """Claim the first free uid of the range and sweep what a dead run left under it."""
    lock_dir = LOCK_DIR if LOCK_DIR.parent.is_dir() else Path("/tmp/reflexion-bench-sandbox-locks")
    lock_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for uid in range(base, base + UID_RANGE):
        fd = os.open(lock_dir / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        # Nobody holds this uid: anything still running as it is a leftover of a run
        # that died (the startup sweep).
        if uid_processes(uid):
            log.warning("sandbox: killing leftover processes of uid %d from a dead run", uid)
            kill_uid(uid)
        return UidLease(uid, fd)
    raise RuntimeError(f"no free sandbox uid in {base}..{base + UID_RANGE}")


def uid_processes(uid: int) -> list[int]:
    """Live (non-zombie) pids whose real uid is ``uid`` (a scan of /proc)."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry.name}")
        except OSError:
            continue
        # /proc/<pid> is owned by the effective uid, or by root for non-dumpable ones.
        if st.st_uid not in (uid, 0):
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii") as fh:
                status = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        state = real_uid = ""
        for line in status.splitlines():
            if line.startswith("State:"):
                state = line.split()[1]
            elif line.startswith("Uid:"):
                real_uid = line.split()[1]
                break
        if real_uid == str(uid) and state != "Z":
            out.append(int(entry.name))
    return out


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid``: ``kill -9 -1`` run AS that uid.

    kill(-1) walks the task list with forks blocked, so even a fork bomb cannot
    escape; it spares only the caller. Needs root (to become ``uid``).
    """
    kill = shutil.which("kill") or "/bin/kill"
    for _ in range(3):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [kill, "-9", "-1"],
                user=uid,
                group=uid,
                extra_groups=[],
                env={"PATH": "/usr/bin:/bin"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        if not uid_processes(uid):
            return


class Cgroup:
    """A per-worker memory+pids cgroup (v1 or v2), when this host lets us make one."""

    def __init__(self, name: str, memory_mb: int, pids: int, uid: int | None) -> None:
        self.dirs: list[Path] = []
        self.procs_file: Path | None = None
        self._oom_file: Path | None = None
        #: The worker's CPU-accounting cgroup: each candidate's box makes a cgroup of its
        #: own under it (``_box.spawn_box``), which the kernel charges with every CPU
        #: second of every process of the box. None where there is none.
        self.cpu_dir: Path | None = None
        if os.geteuid() != 0:
            return
        v1_mem = Path("/sys/fs/cgroup/memory")
        v1_pids = Path("/sys/fs/cgroup/pids")
        v1_cpu = Path("/sys/fs/cgroup/cpuacct")
        try:
            if (v1_mem / "memory.limit_in_bytes").exists():
                mem = v1_mem / "reflexion-bench" / name
                mem.mkdir(parents=True, exist_ok=True)
                (mem / "memory.limit_in_bytes").write_text(str(memory_mb * 1024 * 1024))
                with contextlib.suppress(OSError):  # no swap accounting on some kernels
                    (mem / "memory.memsw.limit_in_bytes").write_text(str(memory_mb * 1024 * 1024))
                self.dirs.append(mem)
                self._oom_file = mem / "memory.oom_control"
                if (v1_pids / "cgroup.procs").exists():
                    pid_dir = v1_pids / "reflexion-bench" / name
                    pid_dir.mkdir(parents=True, exist_ok=True)
                    (pid_dir / "pids.max").write_text(str(pids))
                    self.dirs.append(pid_dir)
                if (v1_cpu / "cpuacct.usage").exists():
                    cpu = v1_cpu / "reflexion-bench" / name
                    cpu.mkdir(parents=True, exist_ok=True)
                    cpu.chmod(0o700)  # the keeper's alone: boxes are made under it
                    self.cpu_dir = cpu
            else:
                root = Path("/sys/fs/cgroup")
                controllers = (root / "cgroup.controllers").read_text().split()
                if "memory" not in controllers:
                    return
                parent = root / "reflexion-bench"
                parent.mkdir(exist_ok=True)
                with contextlib.suppress(OSError):
                    (root / "cgroup.subtree_control").write_text("+memory +pids")
                    (parent / "cgroup.subtree_control").write_text("+memory +pids")
                cg = parent / name
                cg.mkdir(exist_ok=True)
                (cg / "memory.max").write_text(str(memory_mb * 1024 * 1024))
                with contextlib.suppress(OSError):
                    (cg / "memory.swap.max").write_text("0")
                with contextlib.suppress(OSError):
                    (cg / "pids.max").write_text(str(pids))
                self.dirs.append(cg)
                self._oom_file = cg / "memory.events"
                # v2: cpu.stat counts CPU in every cgroup, no controller needed, so the
                # boxes go under the worker's own cgroup (no controller is enabled for
                # its children: the no-internal-process rule does not apply).
                cg.chmod(0o700)
                self.cpu_dir = cg
        except OSError as exc:
            log.debug("no cgroup for the sandbox (%s)", exc)
            self.remove()
            return
        if uid is not None:
            # Delegation: the worker (running as `uid`) enters the cgroup itself, before
            # it forks anything, by writing its pid into cgroup.procs.
            for d in self.dirs:
                with contextlib.suppress(OSError):
                    os.chown(d / "cgroup.procs", uid, uid)

    @property
    def active(self) -> bool:
        return bool(self.dirs)

    def enter_command(self) -> list[str]:
        """A shell prefix that moves the process into every cgroup, then execs."""
        if not self.dirs:
            return []
        writes = "; ".join(f'echo $$ > "{d}/cgroup.procs"' for d in self.dirs)
        return ["/bin/sh", "-c", f'{writes} && exec "$@"', "sh"]

    def oom_kills(self) -> int | None:
        if self._oom_file is None:
            return None
        try:
            for line in self._oom_file.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            return None
        return 0

    def remove(self) -> None:
        if self.cpu_dir is not None:
            # Boxes a killed worker left (their processes die with it, which takes a
            # moment: a box whose rmdir is refused while they exit is tried again),
            # then the dir. A box left here would keep its parent too, for good.
            with contextlib.suppress(OSError):
                for box in self.cpu_dir.iterdir():
                    if box.is_dir():
                        _kill_cgroup(box)
                        remove_cgroup(str(box))
            if self.cpu_dir not in self.dirs:
                remove_cgroup(str(self.cpu_dir))
        self.cpu_dir = None
        for d in self.dirs:
            _kill_cgroup(d)
            with contextlib.suppress(OSError):
                d.rmdir()
        self.dirs = []


def _remove_cgroup_tree(d: Path) -> bool:
    """rmdir cgroup ``d`` and the cgroups under it (a worker's boxes), deepest first;
    one that still holds a process stays (and with it its parents). True when gone."""
    with contextlib.suppress(OSError):
        for child in d.iterdir():
            if child.is_dir() and not child.is_symlink():
                _remove_cgroup_tree(child)
    try:
        d.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _kill_cgroup(d: Path) -> None:
    """SIGKILL every process in cgroup ``d``."""
    with contextlib.suppress(OSError):
        for pid in (d / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)


def sweep_stale_cgroups() -> None:
    """Remove empty per-worker cgroups that dead runs left behind."""
    for parent in (
        Path("/sys/fs/cgroup/memory/reflexion-bench"),
        Path("/sys/fs/cgroup/pids/reflexion-bench"),
        Path("/sys/fs/cgroup/cpuacct/reflexion-bench"),
        Path("/sys/fs/cgroup/reflexion-bench"),
    ):
        if not parent.is_dir():
            continue
        for child in parent.iterdir():
            if not child.is_dir():
                continue
            pid = child.name.split("-")[0]
            if pid.isdigit() and Path(f"/proc/{pid}").exists():
                continue  # its harness is alive
            with contextlib.suppress(OSError):
                if not (child / "cgroup.procs").read_text().strip():
                    # Its boxes first: a worker that died (killed with its run) leaves
                    # the cgroup its zygote had made for the next box, and an rmdir of
                    # the worker's cgroup alone fails while any box is under it. They
                    # piled up (thousands here), and every sandbox start walked them.
                    _remove_cgroup_tree(child)
