"""The judge end to end on a real sandbox: the semantics tests rely on survive the
process split, and the judge refuses where it cannot protect a score."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.judge import check_self_test, judge_hidden, judge_self_tests
from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Sandbox, SandboxError
from reflexion_bench.sandbox.local import LocalSandbox, _probe_level, _resolve_python
from tests.components import missing


def _level() -> str:
    for level in ("bwrap", "unshare"):
        if _probe_level(level, _resolve_python("auto")) is None:
            return level
    missing("bwrap", "neither bwrap nor unshare works here (install bubblewrap, or run as root)")


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    sb = LocalSandbox(jobs=2, isolation=_level())
    yield sb
    await sb.aclose()


async def _hidden(sb: Sandbox, program: str, test: str, **kw: object) -> tuple[str, str]:
    v = await judge_hidden(
        sb, program=program, test=test, test_call="", entry_point="f", timeout_s=5.0, **kw
    )  # type: ignore[arg-type]
    return v.status, v.detail


@pytest.mark.parametrize(
    ("program", "status"),
    [
        ("def f(a):\n    a.sort()\n", "pass"),  # sorts in place: the test sees it
        ("def f(a):\n    return sorted(a)\n", "fail"),  # leaves the argument as it was
    ],
)
async def test_in_place_mutation_comes_back(sandbox: Sandbox, program: str, status: str) -> None:
    test = "a = [3, 1, 2]\nf(a)\nassert a == [1, 2, 3]\n"
    assert (await _hidden(sandbox, program, test))[0] == status


@pytest.mark.parametrize(
    ("program", "test", "status"),
    [
        # Exact floats: the judge compares the candidate's bits, not a rounding of them.
        ("def f():\n    return 0.1 + 0.2\n", "assert f() == 0.30000000000000004", "pass"),
        ("def f():\n    return 0.1 + 0.2\n", "assert f() == 0.3", "fail"),
        ("def f():\n    return -0.0\n", "import math\nassert math.copysign(1, f()) == -1", "pass"),
        # A tuple is not a list, as in one process.
        ("def f():\n    return [1, 2]\n", "assert f() == (1, 2)", "fail"),
        ("def f():\n    return {(1, 2): {3}}\n", "assert f() == {(1, 2): {3}}", "pass"),
        ("def f():\n    return 7 ** 3000\n", "assert f() == 7 ** 3000", "pass"),
        # A test that expects the candidate to raise ValueError still can.
        (
            "def f(x):\n    raise ValueError('negative')\n",
            "try:\n    f(-1)\n    raise AssertionError('no error')\nexcept ValueError:\n    pass\n",
            "pass",
        ),
        # ...but an AssertionError from the candidate is never the test's own.
        (
            "def f(x):\n    raise AssertionError\n",
            "try:\n    f(1)\nexcept AssertionError:\n    pass\n",
            "fail",
        ),
        # Objects that are not plain data are the candidate's failure.
        ("def f():\n    return object()\n", "assert f() is not None", "fail"),
    ],
)
async def test_semantics_across_the_wire(
    sandbox: Sandbox, program: str, test: str, status: str
) -> None:
    got, detail = await _hidden(sandbox, program, test)
    assert got == status, detail


async def test_failing_assert_is_quoted_with_its_place(sandbox: Sandbox) -> None:
    status, detail = await _hidden(
        sandbox, "def f(x):\n    return x\n", "assert f(1) == 1\nassert f(2) == 3\n"
    )
    assert status == "fail"
    assert "assert f(2) == 3" in detail and "hidden_test.py:2" in detail


async def test_helpers_come_from_the_prompt_not_the_candidate(sandbox: Sandbox) -> None:
    helpers = "def double(x):\n    return 2 * x\n"
    cheat = "def double(x):\n    return 0\n\ndef f(x):\n    return 0\n"
    test = "assert double(f(3)) == 6\n"
    status, _ = await _hidden(sandbox, cheat, test, helpers=helpers)
    assert status == "fail"
    honest = "def double(x):\n    return 0\n\ndef f(x):\n    return 3\n"
    assert (await _hidden(sandbox, honest, test, helpers=helpers))[0] == "pass"


@pytest.mark.parametrize(
    ("test", "allowed"),
    [
        ("assert f(1) == 2", True),
        ("assert candidate([1, 2]) == [2, 1]", True),
        ("assert math.isclose(f(0.5), 0.25)", True),
        ("assert sorted(f('ab')) == ['a', 'b'] and len(f('')) == 0", True),
        ("assert all(f(x) >= 0 for x in range(5))", True),
        ("assert f(1) == 2, 'message'", True),
        ("assert f(1).real == 2", False),  # attribute access
        ("assert f(1) == __import__('os').getpid()", False),
        ("assert (lambda: f(1))() == 2", False),
        ("assert f(*[1]) == 2", False),
        ("assert f(1) == open('/etc/passwd').read()", False),
        ("assert f(1) == 2; import os", False),
        ("print(f(1))", False),
        ("assert f(1) == x", False),  # a free name
        ("assert ().__class__ == f(1)", False),
    ],
)
def test_self_test_policy(test: str, allowed: bool) -> None:
    assert (check_self_test(test, "f") is None) == allowed


async def test_self_tests_outside_the_policy_are_rejected_not_run(sandbox: Sandbox) -> None:
    out = await judge_self_tests(
        sandbox,
        program="def f(x):\n    return x\n",
        tests=["assert f(1) == 1", "assert f(1) == __import__('os').getpid()"],
        entry_point="f",
        timeout_s=5.0,
    )
    # Refused by the judge: no verdict on the program (dropped), never run.
    assert [v.status for v in out] == ["pass", "dropped"]
    assert out[1].output.startswith("test rejected")


async def test_rlimits_refuses_to_score_unless_told_the_score_is_unprotected() -> None:
    if _probe_level("rlimits", _resolve_python("auto")) is not None:
        pytest.skip("the rlimits level does not run here")
    sb = LocalSandbox(jobs=1, isolation="rlimits")
    try:
        with pytest.raises(ConfigError, match=r"sandbox\.allow_unprotected_scores"):
            await _hidden(sb, "def f():\n    return 1\n", "assert f() == 1")
        # Self-tests are the actor's own business: they still run.
        out = await judge_self_tests(
            sb, program="def f():\n    return 1\n", tests=["assert f() == 1"],
            entry_point="f", timeout_s=5.0,
        )  # fmt: skip
        assert out[0].status == "pass"
    finally:
        await sb.aclose()
    opted = LocalSandbox(jobs=1, isolation="rlimits", allow_unprotected_scores=True)
    try:
        assert (await _hidden(opted, "def f():\n    return 1\n", "assert f() == 1"))[0] == "pass"
    finally:
        await opted.aclose()


class _BrokenSandbox(Sandbox):
    """A sandbox whose workers died (the boundary the judge sees): every execution
    comes back as the sandbox's own error, with no output."""

    isolation = "bwrap"

    async def exec(self, request: ExecRequest) -> ExecResult:
        return ExecResult(None, "", "", 0.0, "error", detail="worker died: supervisor gone")


async def test_a_sandbox_that_cannot_run_the_judge_is_a_run_error() -> None:
    # Never a verdict on the program: the trial is recorded as errored instead.
    with pytest.raises(SandboxError, match="supervisor gone"):
        await _hidden(_BrokenSandbox(), "def f():\n    return 1\n", "assert f() == 1")
    with pytest.raises(SandboxError):
        await judge_self_tests(
            _BrokenSandbox(), program="def f():\n    return 1\n",
            tests=["assert f() == 1"], entry_point="f", timeout_s=5.0,
        )  # fmt: skip


def test_an_interpreter_that_cannot_start_is_refused_at_start() -> None:
    with pytest.raises(ConfigError, match=r"sandbox\.isolation"):
        LocalSandbox(jobs=1, isolation=_level(), python=shutil.which("true") or "/bin/true")


@pytest.mark.skipif(
    _probe_level("unshare", _resolve_python("auto")) is not None,
    reason="the unshare level does not run here (needs root and util-linux)",
)
async def test_unshare_keeps_nothing_in_tmp_between_programs() -> None:
    sb = LocalSandbox(jobs=1, isolation="unshare")
    try:
        write = "open('/tmp/left-behind', 'w').write('x')\n"
        check = "import os, sys\nsys.exit(3 if os.path.exists('/tmp/left-behind') else 0)\n"
        first = await sb.exec(ExecRequest(argv=("{python}", "w.py"), files={"w.py": write}))
        second = await sb.exec(ExecRequest(argv=("{python}", "c.py"), files={"c.py": check}))
        assert first.ok and second.ok, (first, second)
    finally:
        await sb.aclose()
