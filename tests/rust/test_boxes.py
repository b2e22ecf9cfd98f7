"""Issue 47 for the Rust judge: its candidate binaries run in a box of their own too.

The Rust driver (``environments/_rust_driver.py``) asks the sandbox's zygote for a box
per candidate run (``_box.exec_in_box``), as the Python judge does: its own PID
namespace and ``/proc``, its own CPU cgroup. Judged for real (rustc in the sandbox),
through ``RustLanguage.run_hidden`` on HumanEval-rs and on the LeetcodeHard-rs call
bridge (``serve`` mode):

1. A binary sees only its box: its ``/proc`` lists the box's init and itself.
2. CPU spent in orphans (grandchildren whose parents exited, so no process of the old
   accounting's tree), each under the kernel's per-process limit, is charged: a
   confirmed ``timeout``, where the program's own process sleeps until the orphans'
   work is done.
"""

from __future__ import annotations

import os

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.sandbox.base import Sandbox

TASK = "HumanEval_24_largest_divisor"

# Right only where the binary sees nothing but its box: pids 1 (the box's init) and 2.
ONLY_ITS_BOX = """
fn largest_divisor(n: isize) -> isize {
    let mut pids: Vec<u32> = std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok())).collect();
    pids.sort();
    if pids != vec![1, 2] || std::process::id() != 2 { return -1; }
    (1..n).rev().find(|d| n % d == 0).unwrap_or(1)
}
"""

# The answer is right; the work behind it runs in orphans. The program forks three
# times; each child forks a "burner" and exits at once, so each burner is an orphan (no
# process of the program's own tree). A burner spins for 1.5 s of its CPU, under the
# kernel's per-process limit, and then creates a file, which the program waits for,
# asleep. 4.5 s of CPU in all under a 2 s limit: a timeout, which only an account of
# the whole box sees. (libc's fork through FFI: no allocation after a fork.)
ORPHAN_BURNS = """
extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn _exit(code: i32) -> !;
    fn clock() -> i64;
    fn creat(path: *const u8, mode: u32) -> i32;
}

fn burn_in_an_orphan(path: &'static [u8]) {
    unsafe {
        let pid = fork();
        if pid == 0 {
            if fork() == 0 {
                let mut x: u64 = 1;
                while clock() < 1_500_000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                if x != 7 { creat(path.as_ptr(), 0o600); }
                _exit(0);
            }
            _exit(0);
        }
        if pid > 0 {
            let mut status = 0;
            waitpid(pid, &mut status, 0);
        }
    }
}

fn largest_divisor(n: isize) -> isize {
    let names = ["burned0", "burned1", "burned2"];
    for name in names { let _ = std::fs::remove_file(name); }
    burn_in_an_orphan(b"burned0\\0");
    burn_in_an_orphan(b"burned1\\0");
    burn_in_an_orphan(b"burned2\\0");
    let t = std::time::Instant::now();
    while !names.iter().all(|p| std::path::Path::new(p).exists()) && t.elapsed().as_secs_f64() < 30.0 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (1..n).rev().find(|d| n % d == 0).unwrap_or(1)
}
"""

SERVED_PROMPT = "fn sq(x: i64) -> i64 {\n"
SERVED_CHECK = "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 9\n"


def _boxes_owed() -> bool:
    return os.geteuid() == 0


def _served(body: str) -> str:
    out = body.replace("fn largest_divisor(n: isize) -> isize", "fn sq(x: i64) -> i64")
    return out.replace("(1..n).rev().find(|d| n % d == 0).unwrap_or(1)", "x * x")


async def _hidden(rust: RustLanguage, sandbox: Sandbox, task: Task, body: str, limit: float):  # type: ignore[no-untyped-def]
    program = rust.complete_solution(body, task.prompt, task.data["entry_point"])
    return await rust.run_hidden(sandbox, program, task, limit)


async def _bridge(rust: RustLanguage, sandbox: Sandbox, body: str, limit: float):  # type: ignore[no-untyped-def]
    task = Task(
        "sq",
        SERVED_PROMPT,
        "x",
        {
            "language": rust,
            "entry_point": "sq",
            "test": SERVED_CHECK,
            "hidden_kind": "python_check",
        },
    )
    program = rust.complete_solution(_served(body), SERVED_PROMPT, "sq")
    return await rust.run_hidden(sandbox, program, task, limit)


async def test_a_rust_candidate_sees_only_its_box(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    if not _boxes_owed():
        pytest.skip("boxes are owed as root only (no CAP_SYS_ADMIN for the zygote otherwise)")
    out = await _hidden(rust, sandbox, humaneval_rs[TASK], ONLY_ITS_BOX, 3.0)
    assert out.status == "pass", out.detail
    served = await _bridge(rust, sandbox, ONLY_ITS_BOX, 5.0)
    assert served.status == "pass", served.detail


async def test_cpu_of_a_rust_orphan_is_charged(
    humaneval_rs: dict[str, Task], rust: RustLanguage, sandbox: Sandbox
) -> None:
    if not _boxes_owed():
        pytest.skip("the box's cgroup is made as root only")
    out = await _hidden(rust, sandbox, humaneval_rs[TASK], ORPHAN_BURNS, 2.0)
    assert out.status == "timeout", (out.status, out.detail)


async def test_cpu_of_a_served_rust_orphan_is_charged(rust: RustLanguage, sandbox: Sandbox) -> None:
    if not _boxes_owed():
        pytest.skip("the box's cgroup is made as root only")
    out = await _bridge(rust, sandbox, ORPHAN_BURNS, 2.0)
    assert out.status == "timeout", (out.status, out.detail)
