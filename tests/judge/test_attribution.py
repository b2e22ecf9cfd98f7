"""Issue 27: what the judge does with the model's self-tests (vacuous asserts and
computation bombs), and how it attributes a sandbox failure (to the program after a
health check, or to the sandbox), on a real sandbox and at the Sandbox boundary."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence

import pytest

from reflexion_bench.judge import check_self_test, judge_hidden, judge_self_tests
from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Sandbox, SandboxError
from reflexion_bench.sandbox.local import LocalSandbox
from tests.judge.test_judge import _level

PROGRAM = "def f(x):\n    return x + 1\n"


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    sb = LocalSandbox(jobs=1, isolation=_level())
    yield sb
    await sb.aclose()


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize(
    "test",
    [
        "assert f(1) == 2 or True",
        "assert True or f(1) == 2",
        "assert 1 == 1",
        "assert True",
        "assert 'x'",
        "assert (f(1), 2)",  # a non-empty tuple is always true
        "assert [f(1)]",
        "assert {f(1): 1}",
        "assert f(1) == f(1)",
        "assert f(1) if f(2) else True",
        "assert (f(1) == 3) or (2 == 2)",
    ],
)
def test_asserts_that_cannot_fail_are_dropped(test: str) -> None:
    reason = check_self_test(test, "f")
    assert reason is not None and "cannot fail" in reason


@pytest.mark.parametrize(
    ("test", "why"),
    [
        ("assert f(1) == pow(3, 10**8)", "power"),
        ("assert f(1) == 3 ** 10**8", "power"),
        ("assert f(1) == 10**10**8", "power"),
        ("assert f(1) == 1 << 10**6", "shift"),
        ("assert f(bytes(10**10)) == 1", "huge size"),
        ("assert f(1) in range(10**12)", "huge size"),
        ("assert f(1) == 'a' * 10**10", "repeats"),
        ("assert f([0] * 10**9) == 1", "repeats"),
        ("assert f(1) == f'{0:100000000}'", "width"),
        ("assert f(1) == math.factorial(10**7)", "factorial"),
        ("assert f(1) == math.comb(10**8, 5)", "binomial"),
    ],
)
def test_computation_bombs_over_constants_are_dropped(test: str, why: str) -> None:
    reason = check_self_test(test, "f")
    assert reason is not None and why in reason, reason


@pytest.mark.parametrize(
    "test",
    [
        "assert f(1) == 2",
        "assert f(1) == 2 and f(2) == 3",
        "assert f(1) == 2 or f(1) == 3",
        "assert not f(1)",
        "assert f(10**18) == 10**18 + 1",
        "assert f(2**64) == 2 * 2**64",
        "assert f(1) == int(str(10**100)[:1])",
        "assert math.isclose(f(0.5), 1.5)",
        "assert f([1] * 1000) == 3",
        "assert all(f(i) > i for i in range(100))",
        "assert f(1) in (1, 2)",
    ],
)
def test_ordinary_asserts_are_kept(test: str) -> None:
    assert check_self_test(test, "f") is None


async def test_an_assert_too_big_for_the_judge_is_dropped_and_the_next_test_runs(
    sandbox: Sandbox,
) -> None:
    # Both pass the static check; evaluating them is the judge's own work, bounded.
    memory_bomb = "assert f(1) == len([0] * 10**6 * 10**3)"  # 8 GB of list
    time_bomb = "assert f(1) == sum(i * j for i in range(10**7) for j in range(30))"
    assert check_self_test(memory_bomb, "f") is None
    assert check_self_test(time_bomb, "f") is None
    started = time.monotonic()
    out = await judge_self_tests(
        sandbox,
        program=PROGRAM,
        tests=[memory_bomb, time_bomb, "assert f(1) == 2", "assert f(1) == 3"],
        entry_point="f",
        timeout_s=2.0,
    )
    took = time.monotonic() - started
    assert [v.status for v in out] == ["dropped", "dropped", "pass", "fail"], out
    assert "memory" in out[0].output and "time" in out[1].output
    # Each bomb cost at most its own time limit plus the slack, not minutes.
    assert took < 20, took


async def test_a_program_that_does_not_load_fails_it_is_not_an_error(sandbox: Sandbox) -> None:
    for program in ["def f(x) return x", "raise SystemExit(3)", "import os\nos._exit(1)"]:
        v = await judge_hidden(
            sandbox, program=program, test="assert f(1) == 2\n", test_call="",
            entry_point="f", timeout_s=5.0,
        )  # fmt: skip
        assert v.status == "fail", (program, v)
        st = await judge_self_tests(
            sandbox, program=program, tests=["assert f(1) == 2"], entry_point="f", timeout_s=3.0
        )
        assert [s.status for s in st] == ["fail"], (program, st)


# --------------------------------------------------------------------------- attribution


class _Scripted(Sandbox):
    """A sandbox at the boundary: answers each judge request from a script of
    (judge lines, stop reason), recording the requests (to check ``fresh``)."""

    isolation = "bwrap (scripted)"

    def __init__(self, script: Sequence[tuple[list[dict[str, object]], str]]) -> None:
        self.script = list(script)
        self.requests: list[ExecRequest] = []

    async def exec(self, request: ExecRequest) -> ExecResult:
        self.requests.append(request)
        nonce = json.loads(request.stdin)["nonce"]
        lines, reason = self.script.pop(0)
        out = "".join(nonce + json.dumps(line) + "\n" for line in lines)
        return ExecResult(0, out, "", 0.01, reason)  # type: ignore[arg-type]


READY = {"event": "ready"}
BROKEN = {"event": "harness_error", "detail": "OSError: [Errno 24] Too many open files"}


async def _judge(sb: Sandbox) -> str:
    v = await judge_hidden(
        sb, program=PROGRAM, test="assert f(1) == 2\n", test_call="", entry_point="f",
        timeout_s=5.0,
    )  # fmt: skip
    return f"{v.status}: {v.detail}"


async def test_a_judge_failure_after_the_candidate_started_is_the_programs_when_healthy() -> None:
    sb = _Scripted([([READY, BROKEN], "exit"), ([READY, {"status": "pass"}], "exit")])
    verdict = await _judge(sb)
    assert verdict.startswith("fail: the program broke its sandbox"), verdict
    # The health check ran on a freshly started worker, the judgment itself did not.
    assert [r.fresh for r in sb.requests] == [False, True]
    assert all(r.trusted for r in sb.requests)


async def test_a_judge_failure_on_an_unhealthy_sandbox_is_a_sandbox_error() -> None:
    sb = _Scripted([([READY, BROKEN], "exit"), ([READY, BROKEN], "exit")])
    with pytest.raises(SandboxError, match="health check"):
        await _judge(sb)


async def test_a_judge_that_never_started_is_retried_once_on_a_fresh_worker() -> None:
    sb = _Scripted([([], "signal"), ([READY, {"status": "pass"}], "exit")])
    assert (await _judge(sb)).startswith("pass")
    assert [r.fresh for r in sb.requests] == [False, True]
    sb = _Scripted([([], "signal"), ([], "signal")])
    with pytest.raises(SandboxError, match="did not run the judge"):
        await _judge(sb)


async def test_a_program_that_breaks_its_judge_fails_and_the_worker_is_retired() -> None:
    """At the rlimits level the candidate shares the judge's uid: it lowers the judge's
    open-file limit, then crashes, so the judge cannot start the next candidate (a
    failure of the judge's own). The worker is retired, a fresh one passes the health
    check, and the program's verdict is a fail, never an error or a SandboxError."""
    from reflexion_bench.sandbox.local import _probe_level, _resolve_python

    if _probe_level("rlimits", _resolve_python("auto")) is not None:
        pytest.skip("the rlimits level does not run here")
    sb = LocalSandbox(jobs=1, isolation="rlimits", allow_unprotected_scores=True)
    # Each self-test runs in a fork of the candidate: the judge is the grandparent.
    program = (
        "import os, resource\n"
        "def f(x):\n"
        "    ppid = os.getppid()\n"
        "    judge = int(open(f'/proc/{ppid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "    resource.prlimit(judge, resource.RLIMIT_NOFILE, (4, 4))\n"
        "    os._exit(1)\n"
    )
    try:
        out = await judge_self_tests(
            sb,
            program=program,
            tests=["assert f(1) == 2", "assert f(2) == 3"],
            entry_point="f",
            timeout_s=3.0,
        )
        assert [v.status for v in out] == ["fail", "fail"], out
        assert any("broke its sandbox" in v.output for v in out), out
        assert any("failure of its own" in p for _, problems in sb.retirements for p in problems), (
            sb.retirements
        )
        # The sandbox goes on judging correctly.
        ok = await judge_self_tests(
            sb, program=PROGRAM, tests=["assert f(1) == 2"], entry_point="f", timeout_s=3.0
        )
        assert [v.status for v in ok] == ["pass"], ok
    finally:
        await sb.aclose()
