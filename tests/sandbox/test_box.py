"""Issue 27 at the sandbox level: every job starts from the same box (no counter or
object a program changes survives it), candidates run under a uid of their own, and a
worker whose integrity check fails is retired before anything else runs there."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from reflexion_bench.sandbox._box import _children, box_working
from reflexion_bench.sandbox.base import Sandbox
from tests.sandbox.test_adversarial import run

#: What a job can observe of the kernel state it inherits: its pids, the inode numbers
#: its new files get on every writable mount, what is already there, IPC it can make.
PROBE = """
import ctypes, json, os, resource
libc = ctypes.CDLL(None, use_errno=True)
out = {"pid": os.getpid(), "uids": os.getresuid()}
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
out["child"] = pid
for d in ("/tmp", "/dev/shm", "."):
    try:
        path = os.path.join(d, "probe")
        with open(path, "w") as fh:
            fh.write("x")
        out[d] = [os.stat(path).st_ino, sorted(os.listdir(d))]
    except OSError as exc:
        out[d] = type(exc).__name__
out["shm"] = libc.shmget(0, 4096, 0o1600)
out["sem"] = libc.semget(0, 1, 0o1600)
out["msg"] = libc.msgget(0, 0o1600)
out["nofile"] = resource.getrlimit(resource.RLIMIT_NOFILE)
caps = [ln for ln in open("/proc/self/status") if ln.startswith("CapEff")]
out["caps"] = caps[0].split()[1]
print(json.dumps(out))
"""

#: Changes everything it can, for the next job to find.
DISTURB = """
import ctypes, os, resource
libc = ctypes.CDLL(None, use_errno=True)
for d in ("/tmp", "/dev/shm", "."):
    for i in range(300):
        try:
            open(os.path.join(d, f"junk{i}"), "w").close()
        except OSError:
            break
for _ in range(150):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
for _ in range(20):
    libc.shmget(0, 4096, 0o1666)
    libc.semget(0, 1, 0o1666)
for target in (1, os.getppid()):
    try:
        resource.prlimit(target, resource.RLIMIT_NOFILE, (16, 16))
    except OSError:
        pass
resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20))
if os.fork() == 0:
    os.setsid()
    import time
    time.sleep(60)
print("disturbed")
"""


def _split(sb: Sandbox, backend: str) -> bool:
    return backend == "docker" or "split uids" in sb.isolation


async def _probe(sb: Sandbox) -> dict[str, object]:
    r = await run(sb, PROBE)
    assert r.reason == "exit" and r.exit_code == 0, r
    out: dict[str, object] = json.loads(r.stdout)
    return out


async def test_every_job_starts_from_the_same_box(
    make_sandbox: Callable[..., Sandbox], backend: str
) -> None:
    sb = make_sandbox(backend, jobs=1)
    try:
        if not _split(sb, backend):
            pytest.skip(f"{sb.isolation}: this level runs everything under one uid")
        seen = [await _probe(sb)]
        for _ in range(3):
            d = await run(sb, DISTURB)
            assert "disturbed" in d.stdout, d
            seen.append(await _probe(sb))
    finally:
        await sb.aclose()
    first = seen[0]
    # Identical observations: same pids, same inode numbers, nothing left behind.
    assert all(s == first for s in seen), seen
    assert first["uids"] != [0, 0, 0] and first["caps"] == "0000000000000000", first
    assert [first["shm"], first["sem"], first["msg"]] == [-1, -1, -1], first  # no IPC at all
    for d in ("/tmp", "/dev/shm", "."):
        names = first[d][1]  # type: ignore[index]
        assert "probe" in names and not [n for n in names if n.startswith("junk")], first
    assert first["nofile"] == [1024, 1024], first


async def test_a_candidate_reaches_no_trusted_process(
    make_sandbox: Callable[..., Sandbox], backend: str
) -> None:
    sb = make_sandbox(backend, jobs=1)
    try:
        if not _split(sb, backend):
            pytest.skip(f"{sb.isolation}: this level runs everything under one uid")
        r = await run(
            sb,
            """
            import os, resource, signal
            out = []
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
            for p in pids:
                for what, fn in [
                    ("prlimit", lambda: resource.prlimit(p, resource.RLIMIT_NOFILE, (8, 8))),
                    ("kill", lambda: os.kill(p, signal.SIGSTOP)),
                    ("environ", lambda: open(f"/proc/{p}/environ").read()),
                ]:
                    try:
                        fn()
                        out.append(f"{what} {p} allowed")
                    except OSError:
                        pass
            print(len(pids), out)
            """,
        )
        assert r.exit_code == 0, r
        count, allowed = r.stdout.split(" ", 1)
        assert int(count) >= 1  # the supervisor and the zygote at least
        assert allowed.strip() == "[]", r.stdout
        # And the worker is intact: the next job runs with its usual limits.
        assert (await _probe(sb))["nofile"] == [1024, 1024]
    finally:
        await sb.aclose()


async def test_a_worker_a_program_changed_is_retired(
    make_sandbox: Callable[..., Sandbox],
) -> None:
    # At the rlimits level the program shares the supervisor's uid: it can lower the
    # supervisor's limits, which the integrity check must see.
    sb = make_sandbox("rlimits", jobs=1)
    try:
        await run(sb, "print('warm')")
        r = await run(
            sb,
            "import os, resource\n"
            "resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (32, 32))\n"
            "print('lowered')\n",
        )
        assert "lowered" in r.stdout, r
        retired = list(sb.retirements)  # type: ignore[attr-defined]
        assert retired and any("limits changed" in p for p in retired[0][1]), retired
        # The next program runs on a fresh worker, with its usual limits.
        after = await run(sb, "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))")
        assert after.stdout.strip() == "(1024, 1024)", after
        assert len(sb.retirements) == 1  # type: ignore[attr-defined]
    finally:
        await sb.aclose()


@contextlib.contextmanager
def _candidate_with_child(child_body: str) -> Iterator[int]:
    """A plain process (no PID namespace) that forks one child running ``child_body``
    and then sleeps: what a zygote's fork is where no box could be had. Yields its pid
    once the child exists; kills both at the end."""
    code = f"import os, time\nif os.fork() == 0:\n    {child_body}\ntime.sleep(60)\n"
    cand = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 10
        while not _children(cand.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _children(cand.pid), "the candidate's child never started"
        yield cand.pid
    finally:
        for kid in _children(cand.pid):
            with contextlib.suppress(OSError):
                os.kill(int(kid), signal.SIGKILL)
        cand.kill()
        cand.wait()


def test_settle_sees_a_working_child_of_an_unboxed_candidate() -> None:
    """Where no PID namespace could be had, the process handed over as the box's init is
    the candidate itself: a child of it that is still computing is work under way (the
    judge's settle waits for it and charges it), not "the candidate" to be skipped."""
    with _candidate_with_child("while True: pass") as pid:
        # Spinning: R whenever sampled, at most a scheduler tick away on a busy machine.
        assert any(box_working(pid, root_is_init=True) for _ in range(50))
        assert any(box_working(pid, root_is_init=False) for _ in range(50))


def test_settle_does_not_wait_for_a_sleeping_child() -> None:
    """The other side of the same check: a candidate whose child only sleeps has no work
    under way, boxed or not (else every judgment would wait for its backstop)."""
    with _candidate_with_child("time.sleep(60)") as pid:
        time.sleep(0.2)
        assert not box_working(pid, root_is_init=True)
