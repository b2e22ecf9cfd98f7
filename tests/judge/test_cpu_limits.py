"""Time limits in CPU time, confirmed timeouts: a verdict does not depend on how busy
the machine is (issue 28). On a real sandbox, with real busy processes beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

from reflexion_bench.judge import judge_hidden, judge_plus, judge_self_tests, timing_fields
from reflexion_bench.sandbox._box import tree_cpu_s, wall_backstop
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.sandbox.local import LocalSandbox, _probe_level, _resolve_python
from tests.components import missing


def _level() -> str:
    for level in ("bwrap", "unshare"):
        if _probe_level(level, _resolve_python("auto")) is None:
            return level
    missing("bwrap", "neither bwrap nor unshare works here (install bubblewrap, or run as root)")


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    sb = LocalSandbox(jobs=1, isolation=_level())
    yield sb
    await sb.aclose()


@pytest.fixture
def load() -> Iterator[None]:
    """Eight CPU-bound processes at the judgment's own priority, each in a session of its
    own (the kernel's autogroup scheduling would otherwise share one session's CPU among
    them): on this 2-core machine they stretch a judgment's wall time about fivefold."""
    cmd = [sys.executable, "-c", "while True: pass"]
    procs = [subprocess.Popen(cmd, start_new_session=True) for _ in range(8)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


#: Burns about ``n`` loop steps of CPU (0.35 s on this machine for the 3e6 used below),
#: calibrated per run so the tests hold on a faster or slower machine.
BURN = "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n"


def _steps_for(cpu_s: float) -> int:
    """Loop steps that take ``cpu_s`` seconds of CPU here (measured in this process)."""
    import time

    n = 1_000_000
    t = time.process_time()
    s = 0
    for i in range(n):
        s += i
    took = max(1e-3, time.process_time() - t)
    return int(n * cpu_s / took)


def test_tree_cpu_counts_children_and_backstop_is_generous() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import os,time\nt=time.process_time()\n"
         "while time.process_time()-t<0.3: pass\ntime.sleep(5)"]
    )  # fmt: skip
    try:
        import time

        # The child's 0.3 s of CPU, however long a busy machine takes to give it (the
        # wall clock is not what is measured; 20 s is only a bound on the wait).
        deadline = time.monotonic() + 20.0
        used = tree_cpu_s(child.pid)
        while (used is None or used < 0.25) and time.monotonic() < deadline:
            time.sleep(0.2)
            used = tree_cpu_s(child.pid)
        assert used is not None and 0.25 <= used <= 0.8, used
        # Our own tree includes the child's CPU (a self-test runs in such a child).
        mine = tree_cpu_s(os.getpid())
        assert mine is not None and mine >= used
    finally:
        child.kill()
        child.wait()
    assert tree_cpu_s(child.pid) is None  # gone: no accounting, never an exception
    assert wall_backstop(1.0) >= 5 * 1.0  # 8 busy processes on 2 cores: ~5x


async def test_busy_machine_does_not_turn_a_pass_into_a_timeout(
    sandbox: Sandbox, load: None
) -> None:
    n = _steps_for(0.5)
    # 0.5 s of CPU per call, twice, against a 1.6 s limit: ~5 s of wall time under the
    # load, which a wall-clock limit would have called a timeout.
    v = await judge_hidden(
        sandbox,
        program=BURN,
        test=f"assert f({n}) == {n * (n - 1) // 2}\nassert f({n}) > 0\n",
        test_call="",
        entry_point="f",
        timeout_s=1.6,
    )
    assert v.status == "pass", v.detail
    assert v.timeout_confirmed is None
    # CPU was counted (not zero, not the wall time) and stayed under the limit. Not "about
    # 1.0 s": the calibration runs in this process, the judgment in the sandbox's
    # interpreter, and under the load the two once differed by more than 2x (CI,
    # 2026-12-03: 0.46 s for a nominal 1.0 s).
    assert v.cpu_s is not None and 0.2 <= v.cpu_s <= 1.6, v.cpu_s
    assert v.duration_s > 1.6  # the machine really was busy: the wall time was longer


async def test_a_real_loop_is_a_confirmed_cpu_timeout(sandbox: Sandbox) -> None:
    v = await judge_hidden(
        sandbox,
        program="def f():\n    while True:\n        pass\n",
        test="assert f() == 1\n",
        test_call="",
        entry_point="f",
        timeout_s=0.5,
    )
    assert v.status == "timeout"
    assert v.timeout_confirmed is True
    assert v.timing["clock"] == "cpu" and v.timing["limit_s"] == 1.0  # confirmed at 2x
    assert v.timing["first"]["clock"] == "cpu" and v.timing["first"]["limit_s"] == 0.5
    assert v.timing["cpu_s"] >= 1.0 and v.timing["first"]["cpu_s"] >= 0.5
    logged = timing_fields(v)
    assert logged["timeout_confirmed"] is True and "first" in logged["timing"]


async def test_a_sleeper_is_stopped_by_the_wall_backstop(sandbox: Sandbox) -> None:
    v = await judge_hidden(
        sandbox,
        program="import time\ndef f():\n    time.sleep(600)\n",
        test="assert f() is None\n",
        test_call="",
        entry_point="f",
        timeout_s=0.1,
    )
    assert v.status == "timeout" and v.timeout_confirmed is True
    assert v.timing["clock"] == "wall" and v.timing["cpu_s"] < 0.1
    assert "backstop" in v.detail


async def test_a_program_just_over_the_limit_is_rejudged_not_timed_out(
    sandbox: Sandbox,
) -> None:
    n = _steps_for(0.5)
    test = f"assert f({n}) == {n * (n - 1) // 2}\n"
    # The program's CPU time as the judge measures it, in this sandbox, now (a
    # calibration in this process can be off by more than the margin on a busy machine).
    # The least of three judgments: the first one in a fresh worker once measured 1.4x
    # a later one (CI, 2026-12-03), so a single probe can put the limit above the run.
    # The re-judge runs on a fresh worker, whose first program can cost that much more
    # again (CI, 2026-12-06: 0.466 s probed, over 0.659 s re-judged), so the whole
    # calibrate-then-judge cycle is tried up to three times: a noisy measurement may
    # spoil one cycle, a confirmation that does not work spoils all three.
    for _cycle in range(3):
        probes = [
            await judge_hidden(
                sandbox, program=BURN, test=test, test_call="", entry_point="f", timeout_s=30.0
            )
            for _ in range(3)
        ]
        assert all(p.status == "pass" and p.cpu_s is not None for p in probes), probes
        least = min(float(p.cpu_s or 0) for p in probes)
        # A limit 1/sqrt(2) of that: the first run times out (by ~40%); the confirmation,
        # with twice the limit, has ~40% to spare and gives the verdict, and says so.
        v = await judge_hidden(
            sandbox,
            program=BURN,
            test=test,
            test_call="",
            entry_point="f",
            timeout_s=least / 2**0.5,
        )
        if v.status == "pass" and v.timeout_confirmed is False:
            break
    assert v.status == "pass", v.detail
    assert v.timeout_confirmed is False
    assert v.timing["first"]["clock"] == "cpu"
    assert "a first run timed out" in v.detail


async def test_plus_limits_are_cpu_time_and_confirmed(sandbox: Sandbox, load: None) -> None:
    n = _steps_for(0.3)
    total = n * (n - 1) // 2
    heavy, light = ((n,), total, 1.2), ((10,), 45, 1.2)
    # One heavy input's CPU as the judge measures it, in this sandbox, under this load:
    # the least of two (the calibration in this process once measured half of what the
    # sandbox's interpreter then took; CI, 2026-12-05: 0.39 s for a nominal 0.8 s).
    probes = [
        await judge_plus(sandbox, program=BURN, entry_point="f", cases=[heavy]) for _ in range(2)
    ]
    assert all(p.status == "pass" and p.cpu_s is not None for p in probes), probes
    one = min(float(p.cpu_s or 0) for p in probes)
    cases = [heavy, light, heavy, heavy]
    v = await judge_plus(sandbox, program=BURN, entry_point="f", cases=cases)
    assert v.status == "pass", v.detail
    # All three heavy inputs are counted (~3x one), not only the last (~1x): the margin
    # either side of 1.8x is wider than the run-to-run spread of the least probe.
    assert v.cpu_s is not None and v.cpu_s >= 1.8 * one, (v.cpu_s, one)
    assert v.cpu_s < v.duration_s  # CPU, not the (stretched) wall time
    looping = "def f(n):\n    while n > 100:\n        pass\n    return 45\n"
    t = await judge_plus(sandbox, program=looping, entry_point="f", cases=[light, heavy])
    assert t.status == "timeout" and t.timeout_confirmed is True
    assert t.failed_input == 1 and t.timing["clock"] == "cpu"


async def test_self_test_timeouts_are_confirmed(sandbox: Sandbox) -> None:
    program = "def f(x):\n    while x:\n        pass\n    return 0\n"
    out = await judge_self_tests(
        sandbox,
        program=program,
        tests=["assert f(0) == 0", "assert f(1) == 0"],
        entry_point="f",
        timeout_s=0.3,
    )
    assert [o.status for o in out] == ["pass", "timeout"]
    assert "timeout_confirmed" not in out[0].extra
    assert out[1].extra["timeout_confirmed"] is True
    assert out[1].extra["timing"]["clock"] == "cpu"
    assert out[1].extra["timing"]["first"]["limit_s"] == 0.3
