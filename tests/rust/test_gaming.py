"""Verdicts a Rust candidate cannot forge (issue 13): wrong solutions that try to game
the judge, run for real (rustc in the sandbox), never pass: not on the hidden tests,
not on the self-tests, not through the LeetcodeHard-rs call bridge. The correct
solutions, run the same way, pass."""

from __future__ import annotations

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.sandbox.base import Sandbox
from tests.rust.gaming_solutions import (
    CORRECT,
    GAMING,
    SERVED,
    SERVED_CHECK,
    SERVED_CORRECT,
    SERVED_PROMPT,
)

TASK = "HumanEval_24_largest_divisor"
SELF_TESTS = [
    "assert_eq!(largest_divisor(15), 5);",
    "assert!(largest_divisor(49) == 7);",
    "assert_ne!(largest_divisor(10), largest_divisor(9));",
]


async def hidden(rust: RustLanguage, sandbox: Sandbox, task: Task, source: str):  # type: ignore[no-untyped-def]
    program = rust.complete_solution(source, task.prompt, task.data["entry_point"])
    return await rust.run_hidden(sandbox, program, task, 3.0)


@pytest.mark.parametrize("name", sorted(GAMING))
async def test_gaming_solution_fails_the_hidden_tests(
    name: str, humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    out = await hidden(rust, sandbox, humaneval_rs[TASK], GAMING[name])
    assert out.status != "pass", out.detail
    # The program's doing: never the harness's `error` (issue 27).
    assert out.status in ("fail", "timeout"), out.detail


@pytest.mark.parametrize("name", sorted(GAMING))
async def test_gaming_solution_fails_every_self_test(
    name: str, humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    task = humaneval_rs[TASK]
    program = rust.complete_solution(GAMING[name], task.prompt, "largest_divisor")
    outs = await rust.run_tests(sandbox, program, SELF_TESTS, "largest_divisor", 3.0)
    assert len(outs) == len(SELF_TESTS)
    assert not any(o.passed for o in outs), [(o.status, o.output[:200]) for o in outs]


async def test_correct_solution_passes_hidden_and_self_tests(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    task = humaneval_rs[TASK]
    out = await hidden(rust, sandbox, task, CORRECT)
    assert out.status == "pass", out.detail
    program = rust.complete_solution(CORRECT, task.prompt, "largest_divisor")
    outs = await rust.run_tests(sandbox, program, SELF_TESTS, "largest_divisor", 3.0)
    assert [o.status for o in outs] == ["pass"] * 3, [o.output for o in outs]


async def test_specific_failure_reasons(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    """The verdicts say what the program did, not only that it did not pass."""
    task = humaneval_rs[TASK]
    out = await hidden(rust, sandbox, task, GAMING["exit0_in_function"])
    assert out.status == "fail" and "exited (code 0) before returning from call 1" in out.detail
    out = await hidden(rust, sandbox, task, GAMING["exit0_on_second_call"])
    assert out.status == "fail" and "call 2" in out.detail
    out = await hidden(rust, sandbox, task, GAMING["fake_result_lines_for_every_index"])
    assert out.status == "fail" and "result lines for calls it was not making" in out.detail
    out = await hidden(rust, sandbox, task, GAMING["infinite_loop"])
    assert out.status == "timeout"
    # Confirmed on a fresh worker with twice the limit; stopped by its CPU time.
    assert out.timing["timeout_confirmed"] is True, out.timing
    assert "of CPU time" in out.detail and "of CPU time" in out.timing["timing"]["first"]["detail"]
    out = await hidden(rust, sandbox, task, GAMING["exit0_in_panic_hook"])
    # The hook lives in the candidate's process; the asserts run in the judge's.
    assert out.status == "fail" and "left" in out.detail and "right" in out.detail


async def test_self_tests_whose_expected_side_games_are_not_run(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    """Self-tests are model-written: a test whose trusted half exits, prints or
    reads files is reported as not judged, never as a pass, and the others still run."""
    task = humaneval_rs[TASK]
    program = rust.complete_solution(CORRECT, task.prompt, "largest_divisor")
    tests = [
        "assert_eq!(largest_divisor(15), { std::process::exit(0) });",
        'assert!({ println!("\\x1eRBPASS 0"); true } || largest_divisor(3) == 9);',
        'assert_eq!(largest_divisor(4), std::fs::read_to_string("x").unwrap().len() as isize);',
        "assert_eq!(largest_divisor(9), 3);",
        "assert_eq!(largest_divisor(8), 3);",
    ]
    outs = await rust.run_tests(sandbox, program, tests, "largest_divisor", 3.0)
    # Not judged: dropped (no verdict on the program), never a pass.
    assert [o.status for o in outs] == ["dropped", "dropped", "dropped", "pass", "fail"]
    assert all("not judged" in o.output for o in outs[:3])
    assert "`exit`" in outs[0].output and "`println`" in outs[1].output
    assert outs[4].output == "4 (expected 3)"


@pytest.mark.parametrize("name", sorted(SERVED))
async def test_gaming_fails_the_call_bridge(name: str, sandbox: Sandbox) -> None:
    lang = RustLanguage(compile_timeout_s=120)
    task = Task(
        "sq",
        SERVED_PROMPT,
        "x",
        {
            "language": lang,
            "entry_point": "sq",
            "test": SERVED_CHECK,
            "hidden_kind": "python_check",
        },
    )
    out = await lang.run_hidden(
        sandbox, lang.complete_solution(SERVED[name], SERVED_PROMPT, "sq"), task, 5
    )
    assert out.status != "pass", out.detail
    correct = lang.complete_solution(SERVED_CORRECT, SERVED_PROMPT, "sq")
    if name == "reads_the_check_from_disk":  # the control: the same task passes when right
        out = await lang.run_hidden(sandbox, correct, task, 5)
        assert out.status == "pass", out.detail


async def test_the_bridge_judge_is_out_of_the_programs_reach(sandbox: Sandbox) -> None:
    """In ``serve`` mode the Python judge is the program's parent: made non-dumpable,
    its memory, descriptors and environment cannot be opened by the program, and no
    file in its working directory holds the check. The program reports what it could
    reach in its answer; only an empty reach gives the right answers."""
    lang = RustLanguage(compile_timeout_s=120)
    probe = """
fn sq(x: i64) -> i64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let ppid = stat.rsplit(')').next().unwrap_or("").split_whitespace().nth(1).unwrap_or("1").to_string();
    let mut reach = 0;
    for f in ["mem", "fd/1", "environ"] {
        if std::fs::File::open(format!("/proc/{}/{}", ppid, f)).is_ok() { reach += 1; }
    }
    for name in ["spec.json", "hidden.py"] {
        if std::path::Path::new(name).exists() { reach += 10; }
    }
    for e in std::fs::read_dir(".").unwrap().flatten() {
        if std::fs::read_to_string(e.path()).map(|t| t.contains("def check")).unwrap_or(false) { reach += 100; }
    }
    x * x + reach * 1000
}
"""
    task = Task(
        "sq",
        SERVED_PROMPT,
        "x",
        {
            "language": lang,
            "entry_point": "sq",
            "test": SERVED_CHECK,
            "hidden_kind": "python_check",
        },
    )
    out = await lang.run_hidden(
        sandbox, lang.complete_solution(probe, SERVED_PROMPT, "sq"), task, 5
    )
    assert out.status == "pass", out.detail
