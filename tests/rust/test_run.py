"""Rust programs compiled with rustc and run in the real sandbox."""

from __future__ import annotations

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.sandbox.base import Sandbox
from tests.rust.known_solutions import BROKEN, GOOD


async def hidden(
    lang: RustLanguage, sandbox: Sandbox, task: Task, source: str, timeout: float = 10.0
):  # type: ignore[no-untyped-def]
    program = lang.complete_solution(source, task.prompt, task.data["entry_point"])
    return await lang.run_hidden(sandbox, program, task, timeout)


@pytest.mark.parametrize("name", sorted(GOOD))
async def test_known_good_solutions_pass(
    name: str, humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    out = await hidden(rust, sandbox, humaneval_rs[name], GOOD[name])
    assert out.status == "pass", out.detail


async def test_compile_error_is_reported_with_the_compiler_message(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    name, src = BROKEN["compile_error"]
    out = await hidden(rust, sandbox, humaneval_rs[name], src)
    assert out.status == "fail"  # the program's own failure (issue 27)
    assert "compile error" in out.detail and "error[E0308]: mismatched types" in out.detail
    assert "expected `usize`, found `isize`" in out.detail


async def test_failing_assert_is_reported(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    name, src = BROKEN["wrong_answer"]
    out = await hidden(rust, sandbox, humaneval_rs[name], src)
    assert out.status == "fail"
    assert "panicked" in out.detail and "left" in out.detail and "right" in out.detail


async def test_endless_loop_is_stopped(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    name, src = BROKEN["infinite_loop"]
    out = await hidden(rust, sandbox, humaneval_rs[name], src, timeout=2.0)
    assert out.status == "timeout" and "timed out" in out.detail


async def test_unbounded_allocation_is_stopped(
    humaneval_rs: dict[str, Task], sandbox: Sandbox
) -> None:
    # A small address-space limit for the program (rustc keeps its own, larger one).
    lang = RustLanguage(run_memory_mb=256, compile_timeout_s=120)
    name, src = BROKEN["unbounded_allocation"]
    out = await hidden(lang, sandbox, humaneval_rs[name], src, timeout=20.0)
    assert out.status == "fail" and "memory limit exceeded" in out.detail
    # And with no memory limit low enough, the run timeout still stops it.
    out = await hidden(lang, sandbox, humaneval_rs[name], src, timeout=0.5)
    assert out.status in ("fail", "timeout")


async def test_unit_tests_are_isolated_and_localised(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    task = humaneval_rs["HumanEval_35_max_element"]
    program = rust.complete_solution(BROKEN["wrong_answer"][1], task.prompt, "max_element")
    tests = [
        "assert_eq!(max_element(vec![1, 2, 3]), 3);",  # fails: min instead of max
        "assert_eq!(max_element(vec![3]), 3);",  # passes
        'assert_eq!(max_element(vec!["a"]), 3);',  # does not type-check: dropped, others run
        "assert_eq!(max_element(vec![1, 2]), { loop {} });",  # hangs: killed alone
    ]
    out = await rust.run_tests(sandbox, program, tests, "max_element", 2.0)
    # The ill-typed test is dropped (no verdict on the program), the others judged.
    assert [o.status for o in out] == ["fail", "pass", "dropped", "timeout"]
    assert out[0].output == "1 (expected 3)"
    assert "the test does not compile" in out[2].output and "found `&str`" in out[2].output


async def test_program_compile_error_fails_every_test(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    name, src = BROKEN["compile_error"]
    task = humaneval_rs[name]
    program = rust.complete_solution(src, task.prompt, "largest_divisor")
    out = await rust.run_tests(
        sandbox,
        program,
        ["assert_eq!(largest_divisor(3), 1);", "assert_eq!(largest_divisor(10), 5);"],
        "largest_divisor",
        5.0,
    )
    assert [o.status for o in out] == ["fail", "fail"]
    # The compiler's message once, the other test points at it (no repeated wall of text).
    assert "error[E0308]" in out[0].output
    assert "error[E0308]" not in out[1].output and "does not compile" in out[1].output


async def test_missing_compiler_is_a_clear_error(
    humaneval_rs: dict[str, Task], sandbox: Sandbox
) -> None:
    lang = RustLanguage(rustc="/nonexistent/rustc")
    out = await hidden(
        lang,
        sandbox,
        humaneval_rs["HumanEval_41_car_race_collision"],
        GOOD["HumanEval_41_car_race_collision"],
    )
    assert out.status == "error" and "cannot run the Rust compiler" in out.detail
