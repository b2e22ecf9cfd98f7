"""Sandbox lifecycle: hardening as configured, cleanup after crashes, sweeps, config.

Crash tests run a real harness process that is then killed (SIGKILL, SIGTERM, Ctrl-C)
and check that no container / no sandbox process survives it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.sandbox.base import ExecRequest, Sandbox

ROOT = Path(__file__).resolve().parents[2]


def _harness(script: str) -> subprocess.Popen[str]:
    """A separate harness process running ``script``; it prints READY <info> when set.
    Its stderr goes to a file (kept as ``proc.stderr``), not a pipe nobody reads while
    it runs: a full pipe would block it, and a test waiting for it to exit would blame
    the harness. :func:`_stderr` reads the file for a failure's message."""
    err = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115 - read after exit
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        cwd=ROOT,
    )
    proc.stderr = err  # closed with the Popen, like the pipe it replaces
    return proc


def _stderr(proc: subprocess.Popen[str]) -> str:
    """The last 4,000 characters the harness wrote to stderr."""
    if proc.stderr is None:
        return ""
    proc.stderr.seek(0)
    return proc.stderr.read()[-4000:]


def _wait_ready(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        proc.kill()
        proc.wait(timeout=30)
        raise AssertionError(f"harness did not start: {line!r} {_stderr(proc)}")
    return line.split(maxsplit=1)[1].strip()


def _until(cond: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


# --------------------------------------------------------------------------- docker


def _labelled(client: Any) -> list[dict[str, Any]]:
    return list(client.api.containers(all=True, filters={"label": "reflexion_bench.sandbox"}))


@pytest.mark.docker
async def test_container_is_locked_down(make_sandbox: Callable[..., Sandbox]) -> None:
    from reflexion_bench.sandbox.docker import KEEPER_CAPS, NO_IPC, DockerSandbox

    sb = make_sandbox("docker")
    assert isinstance(sb, DockerSandbox)
    r = await sb.exec(
        ExecRequest(
            argv=(
                "sh",
                "-c",
                "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; "
                "touch /rootfs-write 2>&1; cat /proc/net/dev | tail -n +3 | cut -d: -f1",
            )
        )
    )
    lines = r.stdout.split("\n")
    assert lines[0] == str(sb.candidate_ids[0])  # the candidate uid, never root
    assert "CapEff:\t0000000000000000" in r.stdout
    assert "NoNewPrivs:\t1" in r.stdout
    assert "Read-only file system" in r.stdout
    assert [x.strip() for x in lines[4:] if x.strip()] == ["lo"]  # no interface but loopback
    (cid,) = sb._containers
    info = sb.client.api.inspect_container(cid)
    hc = info["HostConfig"]
    assert hc["NetworkMode"] == "none"
    assert hc["ReadonlyRootfs"] is True
    assert hc["CapDrop"] == ["ALL"]
    # The keeper's few capabilities only (the candidate above has none).
    assert sorted(hc["CapAdd"]) == sorted(f"CAP_{c}" for c in KEEPER_CAPS) or sorted(
        hc["CapAdd"]
    ) == sorted(KEEPER_CAPS)
    assert hc["Sysctls"] == NO_IPC
    assert "no-new-privileges" in hc["SecurityOpt"]
    assert hc["Memory"] == sb.memory_mb * 1024 * 1024 and hc["MemorySwap"] == hc["Memory"]
    assert hc["PidsLimit"] == sb.pids and hc["NanoCpus"] == int(sb.cpus * 1e9)
    assert "/scratch" in hc["Tmpfs"] and "/tmp" in hc["Tmpfs"]
    # The supervisor is the container's root (the keeper); candidates run as sb.user.
    assert info["Config"]["User"] == "0:0"
    assert info["Config"]["Labels"]["reflexion_bench.sandbox"] == "1"
    await sb.aclose()
    assert cid not in {c["Id"] for c in _labelled(sb.client)}


DOCKER_HARNESS = """
    import asyncio, faulthandler, os, signal, sys, time
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    from reflexion_bench.sandbox.docker import DockerSandbox
    from reflexion_bench.sandbox.base import ExecRequest
    sb = DockerSandbox(jobs=2, image={image!r})
    async def main():
        await asyncio.gather(*(sb.exec(ExecRequest(argv=("true",))) for _ in range(2)))
        print("READY", " ".join(sorted(sb._containers)), flush=True)
        await sb.exec(ExecRequest(argv=("sleep", "600"), timeout_s=600))
    asyncio.run(main())
"""


@pytest.mark.docker
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_containers_removed_when_harness_dies(docker_image: str, how: str) -> None:
    """Ctrl-C and SIGTERM: removed by our handlers; SIGKILL: the engine removes them
    (stdin closes, the supervisor exits, auto_remove)."""
    from reflexion_bench.sandbox.docker import docker_client

    client = docker_client()
    proc = _harness(DOCKER_HARNESS.format(image=docker_image))
    cids = _wait_ready(proc).split()
    assert len(cids) == 2
    time.sleep(0.5)  # the long job is running now
    proc.send_signal(getattr(signal, how))
    try:
        # Generous: under the full suite's load (4 workers, other tests' containers) the
        # harness has twice missed 60 s; a hang, not a slow exit, shows in the stacks.
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # the harness's faulthandler: every thread's stack
        time.sleep(2)
        proc.kill()
        proc.wait(timeout=30)
        pytest.fail(f"the harness did not exit 120 s after {how}; its stderr:\n{_stderr(proc)}")
    ours = lambda: [c for c in _labelled(client) if c["Id"] in cids]  # noqa: E731
    assert _until(lambda: not ours(), 30), ours()


@pytest.mark.docker
def test_startup_sweep_removes_leftovers_of_dead_runs(docker_image: str) -> None:
    from reflexion_bench.sandbox.docker import LABEL, DockerSandbox, docker_client

    client = docker_client()
    stale = client.api.create_container(
        docker_image,
        command=["sleep", "600"],
        labels={LABEL: "1", "reflexion_bench.owner": "some-host-that-died:999999"},
        host_config=client.api.create_host_config(
            network_mode="none", binds={"/usr": {"bind": "/usr", "mode": "ro"}}
        ),
    )
    client.api.start(stale["Id"])
    assert stale["Id"] in {c["Id"] for c in _labelled(client) if c["State"] == "running"}
    sb = DockerSandbox(jobs=1, image=docker_image)
    assert stale["Id"] not in {c["Id"] for c in _labelled(client)}
    sb.close_now()


@pytest.mark.docker
def test_startup_sweep_spares_a_live_runs_container_not_yet_started(docker_image: str) -> None:
    """Between create and start a live run's worker is "created", not "running": another
    run's startup sweep must leave it alone (it removed it, killing that worker)."""
    from reflexion_bench.sandbox.docker import _HOST, LABEL, docker_client, sweep_containers

    client = docker_client()
    starting = client.api.create_container(
        docker_image,
        command=["sleep", "600"],
        labels={LABEL: "1", "reflexion_bench.owner": f"{_HOST}:{os.getpid()}"},
        host_config=client.api.create_host_config(network_mode="none"),
    )
    try:
        sweep_containers(client)
        left = {c["Id"]: c["State"] for c in _labelled(client)}
        assert left.get(starting["Id"]) == "created", left
    finally:
        client.api.remove_container(starting["Id"], force=True)


@pytest.mark.docker
def test_missing_image_is_a_config_error(docker_image: str) -> None:
    from reflexion_bench.sandbox.docker import DockerSandbox

    with pytest.raises(ConfigError, match=r"sandbox\.image.*envs/"):
        DockerSandbox(image="reflexion-bench/does-not-exist:never")
    with pytest.raises(ConfigError, match=r"sandbox\.user"):
        DockerSandbox(image=docker_image, user="0:0")


@pytest.mark.docker
def test_auto_prefers_docker_and_falls_back_to_local(docker_image: str) -> None:
    from reflexion_bench.sandbox.auto import auto_sandbox
    from reflexion_bench.sandbox.docker import DockerSandbox
    from reflexion_bench.sandbox.local import LocalSandbox

    sb = auto_sandbox(image=docker_image)
    assert isinstance(sb, DockerSandbox) and sb.isolation.startswith("docker")
    sb.close_now()
    sb2 = auto_sandbox(image="reflexion-bench/does-not-exist:never")
    assert isinstance(sb2, LocalSandbox)
    sb2.close_now()


# --------------------------------------------------------------------------- local

LOCAL_HARNESS = """
    import asyncio, os
    from reflexion_bench.sandbox.local import LocalSandbox
    from reflexion_bench.sandbox.base import ExecRequest
    sb = LocalSandbox(jobs=1, isolation={level!r})
    async def main():
        await sb.exec(ExecRequest(argv=("true",)))
        print("READY", sb._leases[0].uid, flush=True)
        await sb.exec(ExecRequest(argv=("sh", "-c", "setsid sleep 600 & sleep 600"), timeout_s=600))
    asyncio.run(main())
"""


@pytest.mark.parametrize("level", ["bwrap", "unshare", "rlimits"])
def test_local_processes_die_with_the_harness(level: str) -> None:
    from reflexion_bench.sandbox import _host
    from reflexion_bench.sandbox.local import _probe_level, _resolve_python

    if os.geteuid() != 0:
        pytest.skip("needs root (dedicated uids) to find the sandbox's processes")
    problem = _probe_level(level, _resolve_python("auto"))
    if problem:
        pytest.skip(f"level {level} unavailable: {problem}")
    proc = _harness(LOCAL_HARNESS.format(level=level))
    uid = int(_wait_ready(proc))
    assert _until(lambda: len(_host.uid_processes(uid)) >= 3, 10)  # sleeps are running
    proc.kill()
    proc.wait(timeout=30)
    # The supervisor notices its harness is gone (stdin EOF), kills the job and exits;
    # bwrap also dies with its parent. A later run claiming this uid sweeps anyway.
    assert _until(lambda: not _host.uid_processes(uid), 20), _host.uid_processes(uid)


def test_concurrent_sandboxes_get_distinct_uids() -> None:
    from reflexion_bench.sandbox.local import LocalSandbox

    if os.geteuid() != 0:
        pytest.skip("dedicated uids need root")
    a, b = LocalSandbox(jobs=2, isolation="rlimits"), LocalSandbox(jobs=2, isolation="rlimits")
    uids = [a._uid(0), a._uid(1), b._uid(0), b._uid(1)]
    assert len(set(uids)) == 4 and all(u is not None and u >= 1_000_000 for u in uids)
    a.close_now()
    b.close_now()


def test_isolation_auto_picks_the_strongest_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import shutil

    from reflexion_bench.sandbox.local import LocalSandbox

    caplog.set_level(logging.INFO, logger="reflexion_bench.sandbox.local")
    sb = LocalSandbox(jobs=1)
    expected = "bwrap" if shutil.which("bwrap") else ("unshare" if os.geteuid() == 0 else "rlimits")
    assert sb.isolation.split("+")[0] == expected
    assert f"isolation={sb.isolation}" in caplog.text
    sb.close_now()


async def test_probe_explains_a_missing_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    from reflexion_bench.sandbox import local

    monkeypatch.setattr(local.shutil, "which", lambda name, *a, **k: None)
    problem = await local._probe_async("bwrap", "/usr/bin/python3")
    assert problem is not None and "apt-get install bubblewrap" in problem


def test_bad_config_values_name_the_key() -> None:
    from reflexion_bench.sandbox.local import LocalSandbox

    with pytest.raises(ConfigError, match=r"sandbox\.isolation.*auto, bwrap, unshare, rlimits"):
        LocalSandbox(isolation="chroot")
    with pytest.raises(ConfigError, match=r"sandbox\.jobs"):
        LocalSandbox(jobs=0)
    with pytest.raises(ConfigError, match=r"sandbox\.python"):
        LocalSandbox(python="/nonexistent/python3")


@pytest.mark.parametrize("option", ["local", "auto", "docker", "docker_rust"])
def test_every_sandbox_config_composes(option: str) -> None:
    """The config group composes; local/auto build a working sandbox."""
    from hydra import compose, initialize_config_dir

    from reflexion_bench.config import CONFIG_DIR, build

    with initialize_config_dir(str(CONFIG_DIR), version_base=None):
        cfg = compose("config", overrides=[f"sandbox={option}"])
    assert cfg.sandbox.jobs == 2
    if option == "docker_rust":
        assert cfg.sandbox.image == "reflexion-bench/rust:latest"
        assert cfg.sandbox._target_.endswith("DockerSandbox")
    if option in ("local", "auto"):
        sb = build(cfg.sandbox, "sandbox")
        assert isinstance(sb, Sandbox) and sb.isolation
        close_now = getattr(sb, "close_now", None)
        if close_now:
            close_now()
