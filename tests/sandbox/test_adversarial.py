"""Adversarial candidates against every sandbox backend available here.

Each program attacks and exits 0 only if its attack worked, so a blocked attack shows as
a failed verdict. After each one we check that a verdict with a reason came back, that
no process (or container) is left beyond the warm supervisors, and that the NEXT
candidate on the same worker still gets a correct verdict.

The ``rlimits`` level (no namespaces) cannot stop network access or writes to
world-writable host directories; those two tests still check everything else on it and
then report the known gap as an expected failure.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox

FAKE_KEY = "sk-fake-adversarial-" + uuid.uuid4().hex


def _program(body: str) -> dict[str, str]:
    return {"main.py": textwrap.dedent(body)}


async def run(sb: Sandbox, body: str, timeout_s: float = 5.0, **limits: int) -> ExecResult:
    return await sb.exec(
        ExecRequest(
            argv=("{python}", "main.py"),
            files=_program(body),
            timeout_s=timeout_s,
            limits=Limits(**limits),
        )
    )


def sandbox_processes(sb: Sandbox) -> int:
    """Processes that belong to ``sb``'s workers right now (supervisors included)."""
    from reflexion_bench.sandbox import _host
    from reflexion_bench.sandbox.docker import DockerSandbox
    from reflexion_bench.sandbox.local import LocalSandbox

    if isinstance(sb, LocalSandbox):
        return sum(len(_host.uid_processes(lease.uid)) for lease in sb._leases.values())
    if isinstance(sb, DockerSandbox):
        total = 0
        for cid in list(sb._containers):
            total += len(sb.client.api.top(cid)["Processes"] or [])
        return total
    raise TypeError(sb)


async def baseline(sb: Sandbox) -> int:
    """Warm the worker with a benign program; count its processes."""
    r = await run(sb, "print('warm')")
    assert r.ok, r
    return sandbox_processes(sb)


async def assert_unaffected(sb: Sandbox, base: int) -> None:
    """Nothing left behind, and the next candidate is judged correctly (both ways)."""
    deadline = time.monotonic() + 5
    while sandbox_processes(sb) > base and time.monotonic() < deadline:
        time.sleep(0.05)
    good = await run(sb, "import sys\nassert sum(range(10)) == 45\nprint('next ok')")
    assert good.ok and good.stdout.strip() == "next ok", good
    bad = await run(sb, "assert 1 + 1 == 3")
    assert bad.reason == "exit" and bad.exit_code == 1 and "AssertionError" in bad.stderr, bad
    assert sandbox_processes(sb) == base, "processes left behind"


def assert_fail_verdict(r: ExecResult) -> None:
    assert not r.ok, r
    assert r.reason in ("exit", "timeout", "memory", "signal", "output_limit"), r
    assert r.reason != "exit" or r.exit_code != 0


# --------------------------------------------------------------------------- tests


async def test_write_outside_scratch(sandbox: Sandbox, backend: str) -> None:
    base = await baseline(sandbox)
    open_dir = Path("/tmp") / f"rb-adv-{uuid.uuid4().hex}"
    open_dir.mkdir(mode=0o777)
    open_dir.chmod(0o1777)  # world-writable, like /tmp itself
    root_dir = Path(__file__).resolve().parent  # root-owned project dir
    rel_name = f"rb-rel-{uuid.uuid4().hex}"
    targets = [
        open_dir / "sentinel",
        Path("/tmp") / f"rb-adv-sentinel-{uuid.uuid4().hex}",
        root_dir / f"sentinel-{uuid.uuid4().hex}",
        Path("/etc") / f"rb-sentinel-{uuid.uuid4().hex}",
        Path("/usr") / f"rb-sentinel-{uuid.uuid4().hex}",
    ]
    try:
        r = await run(
            sandbox,
            f"""
            import os
            escaped = 0
            # Also a private /tmp write and a relative climb: harmless inside a private
            # tmpfs, checked on the host side only.
            for p in {[str(t) for t in targets]!r} + ["../../../../tmp/{rel_name}"]:
                try:
                    with open(p, "w") as fh:
                        fh.write("pwned")
                    print("wrote", p)
                    escaped += not p.startswith(("/tmp/rb-adv-sentinel", "../"))
                except OSError as exc:
                    print("blocked", p, exc)
            raise SystemExit(0 if escaped else 1)
            """,
        )
        assert r.reason == "exit"
        appeared = [t for t in [*targets, Path("/tmp") / rel_name] if t.exists()]
        await assert_unaffected(sandbox, base)
        if backend == "rlimits":
            # Root-owned locations are protected by the dedicated uid on every level.
            assert not [t for t in appeared if not str(t).startswith("/tmp/")]
            if appeared:
                pytest.xfail("rlimits level: no mount namespace, world-writable /tmp is shared")
        assert not appeared, appeared
        assert_fail_verdict(r)
    finally:
        shutil.rmtree(open_dir, ignore_errors=True)
        for t in [*targets, Path("/tmp") / rel_name]:
            if t.exists() and t.is_file():
                t.unlink()


async def test_environment_is_scrubbed(
    monkeypatch: pytest.MonkeyPatch, make_sandbox: object, backend: str
) -> None:
    # The key is in the harness's environment BEFORE the sandbox and its workers start.
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("RB_PARENT_SECRET", "parent-only-value-42")
    sb = make_sandbox(backend)  # type: ignore[operator]
    base = await baseline(sb)
    r = await run(
        sb,
        """
        import os, glob
        found = []
        dump = dict(os.environ)
        print(dump)
        for path in glob.glob("/proc/*/environ"):
            try:
                data = open(path, "rb").read().decode("utf-8", "replace")
            except OSError:
                continue
            print(path, data.replace("\\0", " ")[:300])
            if "OPENAI_API_KEY" in data or "RB_PARENT_SECRET" in data:
                found.append(path)
        raise SystemExit(0 if found or "OPENAI_API_KEY" in dump else 1)
        """,
    )
    assert FAKE_KEY not in r.stdout + r.stderr + r.detail
    assert "parent-only-value-42" not in r.stdout + r.stderr
    assert "OPENAI_API_KEY" not in r.stdout
    assert_fail_verdict(r)
    await assert_unaffected(sb, base)
    await sb.aclose()


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on 127.0.0.1 that records every connection it gets."""
    received: list[bytes] = []
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    received.append(b"CONNECT:" + conn.recv(1024))
                except OSError:
                    received.append(b"CONNECT")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], received
    stop.set()
    t.join(timeout=2)
    srv.close()


async def test_network_is_unreachable(
    sandbox: Sandbox, backend: str, listener: tuple[int, list[bytes]]
) -> None:
    port, received = listener
    base = await baseline(sandbox)
    r = await run(
        sandbox,
        f"""
        import socket
        ok = False
        for host in ("127.0.0.1", "localhost"):
            try:
                s = socket.create_connection((host, {port}), timeout=2)
                s.sendall(b"exfiltrated")
                s.close()
                ok = True
            except OSError as exc:
                print("blocked", host, exc)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.sendto(b"x", ("127.0.0.1", {port}))
        except OSError as exc:
            print("udp blocked", exc)
        raise SystemExit(0 if ok else 1)
        """,
    )
    time.sleep(0.3)
    await assert_unaffected(sandbox, base)
    if backend == "rlimits" and received:
        pytest.xfail("rlimits level: no network namespace (documented gap)")
    assert received == [], received
    assert_fail_verdict(r)


async def test_fork_bomb(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    started = time.monotonic()
    r = await run(
        sandbox,
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        timeout_s=3,
        max_procs=32,
    )
    assert_fail_verdict(r)
    assert r.reason in ("timeout", "signal", "memory"), r
    assert time.monotonic() - started < 20
    await assert_unaffected(sandbox, base)


async def test_unbounded_allocation(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    r = await run(
        sandbox,
        """
        chunks = []
        while True:
            chunks.append(bytearray(50 * 1024 * 1024))
        """,
        timeout_s=20,
        memory_mb=512,
    )
    assert r.reason == "memory", r
    assert "MemoryError" in r.stderr
    await assert_unaffected(sandbox, base)


async def test_infinite_loop(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    r = await run(sandbox, "while True:\n    pass\n", timeout_s=1)
    assert r.reason == "timeout" and r.exit_code is None, r
    assert 0.9 <= r.duration_s < 5, r
    await assert_unaffected(sandbox, base)


async def test_child_ignoring_sigterm_outlives_timeout(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    r = await run(
        sandbox,
        """
        import os, signal, time, subprocess, sys
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time, os\\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
            "os.setsid()\\n"
            "time.sleep(120)"])
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(120)
        """,
        timeout_s=2,
    )
    assert r.reason == "timeout", r
    assert r.duration_s < 10
    await assert_unaffected(sandbox, base)


async def test_fill_the_disk(sandbox: Sandbox, backend: str) -> None:
    base = await baseline(sandbox)
    free_before = shutil.disk_usage("/").free
    r = await run(
        sandbox,
        """
        import os, tempfile
        block = b"x" * (1 << 20)
        n = 0
        for d in (".", tempfile.gettempdir(), "/dev/shm"):
            try:
                for i in range(100000):
                    with open(os.path.join(d, f"fill{i}"), "wb") as fh:
                        for _ in range(8):
                            fh.write(block)
                            n += 1
            except OSError as exc:
                print("stopped in", d, "after", n, "MB:", exc)
        raise SystemExit(0 if n > 100000 else 1)
        """,
        timeout_s=4,
        file_size_mb=8,
    )
    assert_fail_verdict(r)
    await assert_unaffected(sandbox, base)
    # Whatever it wrote is gone: the next program starts in an empty directory.
    r2 = await run(sandbox, "import os\nprint(sorted(os.listdir('.')))")
    assert r2.stdout.strip() == "['main.py']", r2
    if backend != "rlimits":  # the host disk is never touched by namespaced levels
        assert shutil.disk_usage("/").free > free_before - 200 * 1024 * 1024


async def test_kill_the_parent(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    r = await run(
        sandbox,
        """
        import os, signal, time
        for pid in (os.getppid(), 1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError as exc:
                print("cannot kill", pid, exc)
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError as exc:
            print("cannot kill -1", exc)
        time.sleep(0.5)
        raise SystemExit(1)
        """,
        timeout_s=5,
    )
    assert_fail_verdict(r)
    assert r.reason in ("signal", "exit"), r
    # The harness is fine, and the next candidate gets a real verdict (on a respawned
    # worker where the supervisor could be killed: only without a PID namespace).
    assert os.getpid() > 0
    deadline = time.monotonic() + 5
    while sandbox_processes(sandbox) > base and time.monotonic() < deadline:
        time.sleep(0.05)
    good = await run(sandbox, "print('next ok')")
    assert good.ok, good
    assert sandbox_processes(sandbox) == base


async def test_background_processes_are_killed(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    r = await run(
        sandbox,
        """
        import os, subprocess, sys
        # daemonise a sleeper twice over, then exit "successfully"
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "300"])
            os._exit(0)
        subprocess.Popen(["sleep", "301"], start_new_session=True)
        print("bye")
        """,
    )
    assert r.exit_code == 0 and r.reason == "exit"
    assert r.leftover_processes >= 2, r
    assert not r.ok, "a program that leaves processes running must not count as passed"
    await assert_unaffected(sandbox, base)


async def test_print_gigabytes(sandbox: Sandbox) -> None:
    base = await baseline(sandbox)
    started = time.monotonic()
    r = await run(
        sandbox,
        """
        import sys
        chunk = "x" * 65536
        for _ in range(1 << 16):  # 4 GiB
            sys.stdout.write(chunk)
        """,
        timeout_s=30,
    )
    assert r.reason == "output_limit", r
    assert r.truncated and len(r.stdout) <= Limits().output_bytes
    assert time.monotonic() - started < 20
    await assert_unaffected(sandbox, base)


async def test_fork_bomb_does_not_starve_a_concurrent_candidate(
    make_sandbox: Callable[..., Sandbox], backend: str
) -> None:
    """Two workers: a fork bomb in one, a program that needs processes in the other."""
    sb = make_sandbox(backend, jobs=2)
    await asyncio.gather(*(run(sb, "pass") for _ in range(2)))  # both workers warm
    bomb = run(
        sb,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        timeout_s=4,  # same process limit as its neighbour: the realistic case
    )
    needs_procs = run(
        sb,
        """
        import subprocess, sys, time
        time.sleep(1.0)  # the bomb is at its limit by now
        outs = [subprocess.run([sys.executable, "-c", f"print({i})"], capture_output=True,
                               text=True, check=True).stdout for i in range(5)]
        assert outs == [f"{i}\\n" for i in range(5)], outs
        print("spawned fine")
        """,
        timeout_s=20,
    )
    r_bomb, r_ok = await asyncio.gather(bomb, needs_procs)
    assert_fail_verdict(r_bomb)
    assert r_ok.ok and "spawned fine" in r_ok.stdout, r_ok
    await sb.aclose()
