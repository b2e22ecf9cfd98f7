"""Docker sandbox: a warm pool of locked-down containers, one per worker.

Each worker is one container whose PID 1 is the sandbox supervisor (``_driver.py``,
the same one the local backend uses), attached through the engine's attach socket:
jobs go in on its stdin, results come back on its stdout. So an execution costs a fork
inside an already running container, not a ``docker run`` (~350 ms here) nor a
``docker exec`` (~86 ms). Inside, each program runs in a fresh fork with rlimits and
its own session, and after it every process of the sandbox user is killed and the
tmpfs scratch dir and /tmp are wiped, so consecutive verdicts stay independent; the
harness's own deadline (timeout + grace) replaces the whole container when the
supervisor does not answer.

Containers: no network (``network_mode=none``), read-only root filesystem, tmpfs
scratch and /tmp, memory (no swap) / CPU / pids limits, ``no-new-privileges``, no
SysV or POSIX IPC object allowed (namespaced sysctls at 0), labelled
``reflexion_bench.sandbox``. The supervisor is the container's uid 0 with only the
capabilities to run two other uids (``KEEPER_CAPS``): the judge as ``judge_user`` and
every candidate as ``user``, never root (ioi/isolate's three uids; see ``_box.py``).
Cleanup: removed on ``aclose``, at interpreter exit (atexit), on SIGTERM/SIGHUP, and,
if the harness is killed outright, by the engine itself (stdin closes when the harness
goes away, the supervisor exits, ``auto_remove`` deletes the container); a startup sweep
removes labelled containers whose owning process is gone.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import signal
import socket
import struct
import threading
import time
import weakref
from collections import deque
from types import FrameType
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.sandbox._pool import (
    DRIVER_SOURCE,
    Channel,
    PooledSandbox,
    candidate_zygote_source,
)

log = logging.getLogger(__name__)

LABEL = "reflexion_bench.sandbox"
_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()
_HOST = socket.gethostname()
#: The supervisor's capabilities (see local.KEEPER_CAPS). Engines up to 20.10 do not
#: know CAP_CHECKPOINT_RESTORE; SYS_ADMIN (which the kernel accepts for it) lets the
#: keeper mount a proc of its own to reset the pid cursor, and replace the tmpfs mounts
#: after every job. Where a security profile (AppArmor) refuses mounts, the keeper
#: falls back to emptying them and says so (``pid_reset``/``fresh_mounts`` in ready).
KEEPER_CAPS = ("SETUID", "SETGID", "KILL", "CHOWN", "FOWNER", "DAC_OVERRIDE", "SYS_ADMIN")
#: Namespaced sysctls of every container: no SysV or POSIX IPC object can be created
#: (see local.NO_IPC_SYSCTLS); docker's seccomp profile alone let them through.
NO_IPC = {
    "kernel.shmmni": "0",
    "kernel.msgmni": "0",
    "kernel.sem": "0 0 0 0",
    "fs.mqueue.queues_max": "0",
}


def _ids(key: str, value: object, example: str) -> tuple[int, int]:
    """``uid:gid`` (numeric, never root) as two ints; ConfigError naming ``key``."""
    uid, _, gid = str(value).partition(":")
    gid = gid or uid
    if not (uid.isdigit() and gid.isdigit()) or int(uid) == 0 or int(gid) == 0:
        raise ConfigError(key, value, f"a numeric non-root uid:gid, e.g. {example}")
    return int(uid), int(gid)


def docker_client(timeout: int = 30) -> Any:
    """A docker SDK client (imported lazily), negotiating the engine's API version."""
    import docker

    return docker.from_env(version="auto", timeout=timeout)


def engine_answers(timeout: float = 3.0) -> bool:
    """True when a Docker engine answers on the configured socket."""
    try:
        client = docker_client(timeout=max(1, int(timeout)))
        client.ping()
        client.close()
        return True
    except Exception:
        return False


class _AttachChannel(Channel):
    """The supervisor reached through a container's attach socket (multiplexed frames)."""

    def __init__(
        self,
        sandbox: DockerSandbox,
        container_id: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.sandbox = sandbox
        self.container_id = container_id
        self.reader = reader
        self.writer = writer
        self._buf = bytearray()
        self._stderr: deque[bytes] = deque(maxlen=32)
        self._killed = False

    async def send_line(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def recv_line(self) -> bytes:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[: nl + 1])
                del self._buf[: nl + 1]
                return line
            try:
                header = await self.reader.readexactly(8)
                stream, length = struct.unpack(">BxxxL", header)
                payload = await self.reader.readexactly(length)
            except (asyncio.IncompleteReadError, ConnectionError):
                return b""
            if stream == 1:
                self._buf += payload
            else:
                self._stderr.append(payload)

    def diagnostics(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")[-2000:]

    def kill_now(self) -> None:
        if self._killed:
            return
        self._killed = True
        with contextlib.suppress(Exception):
            self.writer.close()
        self.sandbox._remove_container(self.container_id)

    async def kill(self) -> None:
        if self._killed:
            return
        with contextlib.suppress(Exception):
            self.writer.close()
        self._killed = True
        await asyncio.to_thread(self.sandbox._remove_container, self.container_id)


class DockerSandbox(PooledSandbox):
    """Run programs in warm, locked-down Docker containers, ``jobs`` at a time.

    Args:
        jobs: concurrent executions (one warm container each).
        image: image to run (build ``envs/python`` or ``envs/rust``; tests use the
            offline ``reflexion-bench/sandbox-test:offline`` from envs/test/build.sh).
        memory_mb: memory limit of each container (all its processes; no swap).
        cpus: CPU limit of each container.
        pids: process limit of each container.
        tmpfs_mb: size of the scratch and /tmp tmpfs.
        user: ``uid:gid`` every candidate runs as (never root).
        judge_user: ``uid:gid`` the judge runs as (never root, never ``user``).
        python: interpreter for ``{python}``; ``auto`` reads the image label
            ``reflexion_bench.python`` and falls back to ``python3``.
        recycle_after: programs a container runs before it is replaced.
        inproc_python: run ``{python} file.py`` in a fork of the warm supervisor.
    """

    def __init__(
        self,
        jobs: int = 2,
        image: str = "reflexion-bench/python:latest",
        memory_mb: int = 2048,
        cpus: float = 1.0,
        pids: int = 256,
        tmpfs_mb: int = 256,
        user: str = "10001:10001",
        python: str = "auto",
        recycle_after: int = 500,
        inproc_python: bool = True,
        judge_user: str = "10002:10002",
    ) -> None:
        super().__init__(jobs=jobs, recycle_after=recycle_after, inproc_python=inproc_python)
        self.candidate_ids = _ids("sandbox.user", user, "10001:10001")
        self.judge_ids = _ids("sandbox.judge_user", judge_user, "10002:10002")
        if self.judge_ids[0] == self.candidate_ids[0]:
            raise ConfigError(
                "sandbox.judge_user", judge_user, f"a uid other than the candidates' ({user})"
            )
        self.image = image
        self.memory_mb = int(memory_mb)
        self.cpus = float(cpus)
        self.pids = int(pids)
        self.tmpfs_mb = int(tmpfs_mb)
        self.user = str(user)
        try:
            self.client = docker_client()
            self.client.ping()
        except Exception as exc:
            raise ConfigError(
                "sandbox",
                "docker",
                f"a running Docker engine (none answers: {exc}); start one "
                "(scripts/ci/docker.sh) or use sandbox=local",
            ) from None
        try:
            img = self.client.images.get(image)
        except Exception:
            raise ConfigError(
                "sandbox.image",
                image,
                "an image present in the engine: build it with "
                "`docker build -t reflexion-bench/python envs/python` (online) or "
                "`envs/test/build.sh` (offline test image)",
            ) from None
        img_config = img.attrs.get("Config") or {}
        labels = img_config.get("Labels") or {}
        # The image's own ENV (PATH to its toolchains, RUSTUP_HOME...) is trusted and
        # kept; nothing of the harness's environment is passed.
        self.image_env = dict(
            item.split("=", 1) for item in (img_config.get("Env") or []) if "=" in item
        )
        self.bind_host_usr = str(labels.get("reflexion_bench.bind_host_usr", "")).lower() == "true"
        self.python = (
            labels.get("reflexion_bench.python", "python3") if python == "auto" else python
        )
        self.owner = f"{_HOST}:{os.getpid()}"
        self.isolation = (
            f"docker ({image}; network none, read-only root, candidates {self.user}, "
            f"judge {judge_user}, keeper caps only, no IPC, no-new-privileges, "
            f"{self.memory_mb} MB, {self.cpus:g} CPU, {self.pids} pids)"
        )
        self._containers: set[str] = set()
        self._lock = threading.Lock()
        sweep_containers(self.client)
        _install_cleanup_handlers()
        _LIVE.add(self)
        log.info("sandbox: %s, jobs=%d", self.isolation, self.jobs)

    # ------------------------------------------------------------------ containers
    def _create(self, slot: int) -> tuple[str, Any]:
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            **self.image_env,
            "HOME": "/scratch",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        cfg = {
            "workdir": "/scratch",
            "wipe": ["/tmp", "/dev/shm"],
            "python": self.python,
            "kill_all": True,  # PID 1 of the container's namespace
            # Every container runs as the same uid: a per-uid process limit would let
            # one container's fork bomb starve the others. The pids cgroup bounds it.
            "nproc_rlimit": False,
            "env": env,
            "zygote": candidate_zygote_source(),
            "judge_uid": self.judge_ids[0],
            "candidate_uid": self.candidate_ids[0],
            "mqueue": "/dev/mqueue",
            "private_proc": "/dev/.rb-proc",
            "fresh_mounts": [
                {"path": "/dev/shm", "size": min(self.tmpfs_mb, 64) << 20, "mode": "1777"},
                {"path": "/tmp", "size": self.tmpfs_mb << 20, "mode": "1777"},
                {"path": "/scratch", "size": self.tmpfs_mb << 20, "mode": "0711"},
            ],
        }
        size = f"size={self.tmpfs_mb}m"
        volumes = {"/usr": {"bind": "/usr", "mode": "ro"}} if self.bind_host_usr else {}
        api = self.client.api
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            tmpfs={
                # Root's: the supervisor hands it to the uid of each job in turn.
                "/scratch": f"{size},mode=0711,exec",
                "/tmp": f"{size},mode=1777",
            },
            shm_size=f"{min(self.tmpfs_mb, 64)}m",
            mem_limit=f"{self.memory_mb}m",
            memswap_limit=f"{self.memory_mb}m",
            nano_cpus=int(self.cpus * 1e9),
            pids_limit=self.pids,
            cap_drop=["ALL"],
            cap_add=list(KEEPER_CAPS),
            security_opt=["no-new-privileges"],
            sysctls=dict(NO_IPC),
            auto_remove=True,
            binds=volumes or None,
            ulimits=None,
        )
        config = api.create_container_config(
            self.image,
            command=[self.python, "-I", "-S", "-c", DRIVER_SOURCE, json.dumps(cfg)],
            user="0:0",
            environment=env,
            working_dir="/scratch",
            stdin_open=True,
            tty=False,
            network_disabled=True,
            labels={
                LABEL: "1",
                "reflexion_bench.owner": self.owner,
                "reflexion_bench.slot": str(slot),
                "reflexion_bench.created": str(int(time.time())),
            },
            host_config=host_config,
        )
        # The harness going away closes stdin: the supervisor exits, the container ends.
        config["StdinOnce"] = True
        created = api.create_container_from_config(
            config, name=f"rb-sbx-{os.getpid()}-{slot}-{int(time.time() * 1000) % 10**9}"
        )
        cid = created["Id"]
        with self._lock:
            self._containers.add(cid)
        try:
            sock = api.attach_socket(
                cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            raw = getattr(sock, "_sock", sock)
            # Own a duplicate of the connection so the SDK's response object being
            # garbage-collected cannot close it under us.
            dup = socket.socket(fileno=os.dup(raw.fileno()))
            api.start(cid)
        except Exception:
            self._remove_container(cid)
            raise
        return cid, dup

    async def _spawn(self, slot: int) -> Channel:
        cid, sock = await asyncio.to_thread(self._create, slot)
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 26)
        return _AttachChannel(self, cid, reader, writer)

    def _remove_container(self, cid: str) -> None:
        with contextlib.suppress(Exception):
            self.client.api.remove_container(cid, force=True)
        with self._lock:
            self._containers.discard(cid)

    def close_now(self) -> None:
        super().close_now()
        with self._lock:
            leftover = list(self._containers)
        for cid in leftover:
            self._remove_container(cid)

    async def aclose(self) -> None:
        await super().aclose()
        with self._lock:
            leftover = list(self._containers)
        for cid in leftover:
            await asyncio.to_thread(self._remove_container, cid)


def sweep_containers(client: Any) -> int:
    """Remove labelled containers whose owning harness process is gone (or exited ones)."""
    removed = 0
    try:
        found = client.api.containers(all=True, filters={"label": LABEL})
    except Exception as exc:
        log.warning("sandbox: cannot list leftover containers: %s", exc)
        return 0
    for c in found:
        owner = (c.get("Labels") or {}).get("reflexion_bench.owner", "")
        host, _, pid = owner.rpartition(":")
        alive = host == _HOST and pid.isdigit() and os.path.exists(f"/proc/{pid}")
        # A live harness's container is never touched unless it has ended: one that is
        # only "created" (between create and start) is another run's worker starting up,
        # and removing it killed that worker (tests running Docker sandboxes in parallel
        # saw their supervisors vanish: "did not start", "went away (eof)").
        if alive and c.get("State") not in ("exited", "dead"):
            continue
        with contextlib.suppress(Exception):
            client.api.remove_container(c["Id"], force=True)
            removed += 1
    if removed:
        log.warning("sandbox: removed %d leftover sandbox container(s) of dead runs", removed)
    return removed


def _close_all() -> None:
    for sb in list(_LIVE):
        with contextlib.suppress(Exception):
            sb.close_now()


_handlers_installed = False


def _install_cleanup_handlers() -> None:
    """atexit, plus SIGTERM/SIGHUP (which skip atexit by default): remove containers."""
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(_close_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.getsignal(signum)
        if previous not in (signal.SIG_DFL, None):
            continue  # someone else handles it (and will exit through atexit)

        def handler(sig: int, frame: FrameType | None, _sig: int = signum) -> None:
            _close_all()
            signal.signal(_sig, signal.SIG_DFL)
            os.kill(os.getpid(), _sig)

        signal.signal(signum, handler)
