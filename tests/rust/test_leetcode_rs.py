"""LeetcodeHard-rs: Rust programs judged by the Python hidden checks through the
JSON call bridge (``serve`` mode), in the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.environments.leetcode import LeetcodeHardEnvironment
from reflexion_bench.sandbox.base import Sandbox
from tests.rust.known_solutions import LEETCODE_GOOD, LEETCODE_WRONG

LANG = RustLanguage(run_memory_mb=2048, compile_timeout_s=120)


@pytest.fixture(scope="module")
def rs_tasks(shared_data: Path) -> dict[str, Task]:
    env = LeetcodeHardEnvironment(
        shared_data / "leetcode-hard-rs-40.jsonl",
        shared_data / "leetcode-hard-py-40-hidden.jsonl",
        language=LANG,
        rust_typecheck=False,
    )
    return {t.id: t for t in env.load_tasks()}


async def judge(task: Task, source: str, sandbox: Sandbox):  # type: ignore[no-untyped-def]
    program = LANG.complete_solution(source, task.prompt, task.data["entry_point"])
    return await LANG.run_hidden(sandbox, program, task, float(task.data["timeout_s"]))


def test_tasks_carry_the_python_checks(rs_tasks: dict[str, Task]) -> None:
    t = rs_tasks["check-if-point-is-reachable"]
    assert t.data["entry_point"] == "is_reachable"
    assert t.data["hidden_entry_point"] == "isReachable"
    assert t.data["hidden_kind"] == "python_check" and t.data["opt_level"] == 2
    assert t.data["test"].startswith("def check(candidate):")


@pytest.mark.parametrize(
    "slug",
    [
        "check-if-point-is-reachable",
        "cycle-length-queries-in-a-tree",
        "split-message-based-on-limit",
    ],
)
async def test_good_rust_solutions_pass(
    slug: str, rs_tasks: dict[str, Task], sandbox: Sandbox
) -> None:
    out = await judge(rs_tasks[slug], LEETCODE_GOOD[slug], sandbox)
    assert out.status == "pass", out.detail


async def test_wrong_answer_and_panic_fail(rs_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    slug = "check-if-point-is-reachable"
    out = await judge(rs_tasks[slug], LEETCODE_WRONG[slug], sandbox)
    assert out.status == "fail" and "wrong answer on call" in out.detail
    assert "assert candidate(" in out.detail
    slug = "cycle-length-queries-in-a-tree"
    out = await judge(rs_tasks[slug], LEETCODE_WRONG[slug], sandbox)
    assert (
        out.status == "fail"
        and "runtime error" in out.detail
        and "index out of bounds" in out.detail
    )


async def test_bridge_types_and_stray_prints(sandbox: Sandbox) -> None:
    """Strings (quotes, unicode), nested vectors, i64, bool and Vec<String> cross the
    bridge both ways; a solution's own println! does not corrupt the protocol."""
    prompt = "fn f(words: Vec<String>, grid: Vec<Vec<i64>>, flag: bool) -> (Vec<String>, i64) {\n"
    source = """
fn f(words: Vec<String>, grid: Vec<Vec<i64>>, flag: bool) -> (Vec<String>, i64) {
    println!("debug output the judge must skip");
    let total: i64 = grid.iter().flatten().sum();
    let mut w: Vec<String> = words.iter().map(|s| s.chars().rev().collect()).collect();
    if flag { w.push(String::from("\\"q\\" \\\\ \\n")); }
    (w, total)
}
"""
    check = (
        "def check(candidate):\n"
        "    assert candidate(['ab', 'héllo ✓'], [[1, 2], [3, 10**12]], False) == [['ba', '✓ olléh'], 10**12 + 6]\n"
        "    assert candidate([], [], True) == [['\"q\" \\\\ \\n'], 0]\n"
    )
    task = Task(
        "t",
        prompt,
        "x",
        {"language": LANG, "entry_point": "f", "test": check, "hidden_kind": "python_check"},
    )
    out = await LANG.run_hidden(sandbox, LANG.complete_solution(source, prompt, "f"), task, 20)
    assert out.status == "pass", out.detail


async def test_leetcode_scorer_runs_rust_tasks(rs_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    from reflexion_bench.scorers.leetcode import LeetcodeHiddenScorer

    slug = "cycle-length-queries-in-a-tree"
    task = rs_tasks[slug]
    program = LANG.complete_solution(LEETCODE_GOOD[slug], task.prompt, task.data["entry_point"])
    score = await LeetcodeHiddenScorer().score_program(sandbox, task, program)
    assert score.passed, score.detail
    # Its Rust visible tests use arrays where the signature takes Vec<Vec<i32>>
    # (here only the static checks ran: rust_typecheck=False in this fixture).
    assert score.extra["timeout_s"] == task.data["timeout_s"]


async def test_compile_error_in_leetcode_rs(rs_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    slug = "check-if-point-is-reachable"
    out = await judge(
        rs_tasks[slug],
        "fn is_reachable(target_x: i32, target_y: i32) -> bool { target_x }",
        sandbox,
    )
    assert out.status == "fail" and "error[E0308]" in out.detail


@pytest.mark.slow
async def test_deep_recursion_on_the_big_stack(rs_tasks: dict[str, Task], sandbox: Sandbox) -> None:
    slug = "count-number-of-possible-root-nodes"
    out = await judge(rs_tasks[slug], LEETCODE_GOOD[slug], sandbox)
    assert out.status == "pass", out.detail
    # The same program on a 1 MiB call stack overflows on the path-shaped trees.
    small = RustLanguage(run_memory_mb=2048, compile_timeout_s=120, stack_mb=1)
    task = rs_tasks[slug]
    program = small.complete_solution(LEETCODE_GOOD[slug], task.prompt, "root_count")
    out = await small.run_hidden(sandbox, program, task, float(task.data["timeout_s"]))
    assert out.status == "fail" and "overflowed its stack" in out.detail
