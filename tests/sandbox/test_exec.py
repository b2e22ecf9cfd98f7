"""The one sandbox interface, on every backend: files, stdin, exit codes, limits, reasons.

Also: ``{python} file.py`` run in a fork of the warm supervisor behaves like a fresh
``python3 file.py`` (same output, same exit code), and ``jobs`` bounds concurrency.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable

import pytest

from reflexion_bench.sandbox.base import ExecRequest, Limits, Sandbox
from tests.components import missing


def req(source: str, timeout_s: float = 10.0, **limits: int) -> ExecRequest:
    return ExecRequest(
        argv=("{python}", "main.py"),
        files={"main.py": source},
        timeout_s=timeout_s,
        limits=Limits(**limits),
    )


async def test_files_stdin_argv_and_exit_code(sandbox: Sandbox) -> None:
    r = await sandbox.exec(
        ExecRequest(
            argv=("{python}", "pkg/main.py", "a b", "--flag"),
            files={
                "pkg/main.py": (
                    "import sys, helper\n"
                    "data = sys.stdin.read()\n"
                    "print(helper.shout(data), sys.argv[1:])\n"
                    "print('to stderr', file=sys.stderr)\n"
                    "sys.exit(7)\n"
                ),
                "pkg/helper.py": "def shout(s):\n    return s.upper()\n",
            },
            stdin="hello sandbox",
        )
    )
    assert r.reason == "exit" and r.exit_code == 7, r
    assert r.stdout == "HELLO SANDBOX ['a b', '--flag']\n"
    assert r.stderr == "to stderr\n"
    assert not r.ok and not r.truncated


async def test_non_python_command_and_missing_command(sandbox: Sandbox) -> None:
    r = await sandbox.exec(ExecRequest(argv=("sh", "-c", "echo $HOME; pwd; exit 4")))
    assert r.exit_code == 4 and r.reason == "exit"
    home, cwd = r.stdout.split()
    assert home == cwd  # HOME is the scratch dir
    r = await sandbox.exec(ExecRequest(argv=("no-such-command-xyz",)))
    assert r.exit_code == 127 and "no-such-command-xyz" in r.stderr


async def test_bad_file_path_is_an_error_not_a_crash(sandbox: Sandbox) -> None:
    r = await sandbox.exec(ExecRequest(argv=("{python}", "x.py"), files={"../x.py": "print(1)"}))
    assert r.reason == "error" and "relative" in r.detail
    assert (await sandbox.exec(req("print(1)"))).ok


async def test_output_is_truncated_but_program_finishes(sandbox: Sandbox) -> None:
    """Head and tail are kept (the end holds tracebacks and verdicts), middle dropped."""
    r = await sandbox.exec(
        req("print('start', 'y' * 300_000)\nprint('the end')\n1/0", output_bytes=1000)
    )
    assert r.reason == "exit" and r.exit_code == 1
    assert r.truncated and len(r.stdout.encode()) <= 1000
    assert r.stdout.startswith("start yyy") and r.stdout.endswith("y\nthe end\n")
    assert "bytes truncated" in r.stdout
    assert "ZeroDivisionError" in r.stderr  # stderr short: kept whole


async def test_cpu_limit(sandbox: Sandbox) -> None:
    r = await sandbox.exec(req("while True:\n    pass", timeout_s=20, cpu_s=1))
    assert r.reason == "timeout" and "CPU" in r.detail, r
    assert r.duration_s < 10


async def test_file_size_limit(sandbox: Sandbox) -> None:
    r = await sandbox.exec(
        req("open('big', 'wb').write(b'x' * (3 << 20))\nprint('wrote')", file_size_mb=1)
    )
    assert not r.ok and "File too large" in r.stderr, r


async def test_memory_limit_lets_small_programs_run(sandbox: Sandbox) -> None:
    ok = await sandbox.exec(req("x = bytearray(100 << 20)\nprint(len(x))", memory_mb=512))
    assert ok.ok, ok
    bad = await sandbox.exec(req("x = bytearray(600 << 20)", memory_mb=512))
    assert bad.reason == "memory", bad


INPROC_CASES = {
    "exit_builtin": "print('a')\nexit(3)",
    "sys_exit_message": "import sys\nsys.exit('bye')",
    "uncaught": "def f():\n    raise ValueError('boom')\nf()",
    "syntax_error": "def f(:\n    pass",
    "main_guard": "import sys\nif __name__ == '__main__':\n    print(sys.argv[0], __name__)",
    "atexit": "import atexit\natexit.register(lambda: print('bye from atexit'))\nprint('hi')",
    "thread": (
        "import threading, time\n"
        "def w():\n    time.sleep(0.2)\n    print('thread done', flush=True)\n"
        "threading.Thread(target=w).start()\nprint('main done', flush=True)"
    ),
    "recursion": "import sys\ndef f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept RecursionError:\n    print('recursion limit', sys.getrecursionlimit())",
    "stdout_unflushed": "import sys\nsys.stdout.write('no newline')",
    "keyboard_interrupt": "raise KeyboardInterrupt",
}


@pytest.mark.parametrize("case", sorted(INPROC_CASES))
async def test_forked_python_matches_a_fresh_interpreter(
    make_sandbox: Callable[..., Sandbox], case: str
) -> None:
    fork = make_sandbox("bwrap" if shutil.which("bwrap") else "rlimits")
    fresh = make_sandbox("bwrap" if shutil.which("bwrap") else "rlimits", inproc_python=False)
    a = await fork.exec(req(INPROC_CASES[case]))
    b = await fresh.exec(req(INPROC_CASES[case]))
    assert (a.exit_code, a.reason, a.stdout) == (b.exit_code, b.reason, b.stdout)
    # Tracebacks name the same file, line and exception.
    assert a.stderr.strip().splitlines()[-1:] == b.stderr.strip().splitlines()[-1:]
    assert ("main.py" in a.stderr) == ("main.py" in b.stderr)
    await fork.aclose()
    await fresh.aclose()


async def test_jobs_bounds_concurrency(make_sandbox: Callable[..., Sandbox], backend: str) -> None:
    sb = make_sandbox(backend, jobs=2)
    await asyncio.gather(*(sb.exec(req("pass")) for _ in range(2)))  # warm both workers
    started = time.monotonic()
    rs = await asyncio.gather(*(sb.exec(req("import time\ntime.sleep(0.5)")) for _ in range(6)))
    elapsed = time.monotonic() - started
    assert all(r.ok for r in rs)
    assert elapsed >= 1.45, f"6 x 0.5 s on 2 workers took {elapsed:.2f} s: not bounded"
    assert elapsed < 8
    await sb.aclose()


async def test_workers_are_recycled(make_sandbox: Callable[..., Sandbox]) -> None:
    from reflexion_bench.sandbox.local import LocalSandbox

    sb = make_sandbox("rlimits", recycle_after=2)
    assert isinstance(sb, LocalSandbox)
    pids = []
    for _ in range(5):
        r = await sb.exec(req("import os\nprint(os.getppid())"))
        pids.append(int(r.stdout))
    assert len(set(pids)) == 3, pids  # 2 + 2 + 1 programs: three supervisors
    await sb.aclose()


async def test_stopped_supervisor_is_replaced(sandbox: Sandbox) -> None:
    """A program that SIGSTOPs its supervisor: refused where the candidate has a uid of
    its own (split uids, Docker), else it gets a timeout and the worker is replaced.
    Either way the next program runs."""
    r = await sandbox.exec(
        req("import os, signal, time\nos.kill(os.getppid(), signal.SIGSTOP)\ntime.sleep(30)", 1.0)
    )
    split = "split uids" in sandbox.isolation or sandbox.isolation.startswith("docker")
    if split:
        assert r.reason == "exit" and "PermissionError" in r.stderr, r
    else:
        assert r.reason == "timeout", r
    assert (await sandbox.exec(req("print('ok')"))).ok


async def test_rust_compiles_and_runs(sandbox: Sandbox, backend: str) -> None:
    if backend != "docker" and not shutil.which("rustc", path="/usr/bin"):
        missing("rust", "Debian's rustc is not installed (apt-get install rustc)")
    r = await sandbox.exec(
        ExecRequest(
            argv=("sh", "-c", "rustc --edition 2021 -o main main.rs && ./main"),
            files={"main.rs": 'fn main() { println!("{}", (1..=10).sum::<i32>()); }'},
            timeout_s=120,
            limits=Limits(memory_mb=2048),
        )
    )
    assert r.ok and r.stdout.strip() == "55", r


async def test_cancelled_exec_does_not_affect_the_next(sandbox: Sandbox) -> None:
    """A caller that gives up mid-program (wait_for) leaves no busy worker behind."""
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(sandbox.exec(req("import time\ntime.sleep(30)", 60)), 0.5)
    r = await sandbox.exec(req("print('after cancel')"))
    assert r.ok and r.stdout == "after cancel\n", r
