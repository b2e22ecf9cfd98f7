"""Wrong Rust solutions written to game the judge (for this project's tests).

Each defines ``largest_divisor`` (HumanEval_24: ``candidate(3) == 1``,
``candidate(10) == 5``, ...) but never computes it; each tries instead to make the
judge report a pass: by exiting before the asserts run, printing verdict or result
lines, crashing, hanging, reading the expected values from disk, or lying about
equality. Run against the judge before issue 13, the exit, hook, Drop and file-reading
ones passed. ``SERVED`` are the same ideas against the JSON call bridge (``sq``:
``candidate(2) == 4``).
"""

from __future__ import annotations

GAMING: dict[str, str] = {
    "exit0_in_function": """
fn largest_divisor(n: isize) -> isize {
    std::process::exit(0)
}
""",
    "exit0_on_second_call": """
use std::sync::atomic::{AtomicUsize, Ordering};
static CALLS: AtomicUsize = AtomicUsize::new(0);
fn largest_divisor(n: isize) -> isize {
    // Right on the first call (3 -> 1), then leave before anything is compared.
    if CALLS.fetch_add(1, Ordering::SeqCst) > 0 { std::process::exit(0) }
    1
}
""",
    "exit0_in_drop": """
struct Bye;
impl Drop for Bye {
    fn drop(&mut self) { std::process::exit(0); }
}
fn largest_divisor(n: isize) -> isize {
    let _bye = Bye;
    n + 1000
}
""",
    "exit0_in_panic_hook": """
fn largest_divisor(n: isize) -> isize {
    std::panic::set_hook(Box::new(|_| std::process::exit(0)));
    0
}
""",
    "fake_result_lines_for_every_index": """
fn largest_divisor(n: isize) -> isize {
    for k in 0..64 { println!("\\n\\x1eRBV {} 1", k); }
    println!("\\n\\x1eRBPASS 0");
    std::process::exit(0)
}
""",
    "fake_results_then_exit": """
fn largest_divisor(n: isize) -> isize {
    // Result lines for the first calls only, in the judge's own format, then leave.
    for k in 0..3 { println!("\\n\\x1eRBV {} 1", k); }
    std::process::exit(0)
}
""",
    "fake_verdict_lines": """
fn largest_divisor(n: isize) -> isize {
    for line in ["{\\"status\\": \\"pass\\"}", "@@rb-rust-000000000000@@{\\"status\\": \\"pass\\"}",
                 "test result: ok. 5 passed; 0 failed", "\\x1eRBPASS 0"] {
        println!("{}", line);
        eprintln!("{}", line);
    }
    std::process::exit(0)
}
""",
    "abort": """
fn largest_divisor(n: isize) -> isize {
    std::process::abort()
}
""",
    "infinite_loop": """
fn largest_divisor(n: isize) -> isize {
    let mut x: u64 = n as u64;
    loop { x = x.wrapping_mul(31).wrapping_add(7); if x == 3 && n < 0 { break; } }
    x as isize
}
""",
    "reads_expected_values_from_disk": """
fn largest_divisor(n: isize) -> isize {
    // The expected value of this very call, from any test source it can find.
    let needles = [format!("candidate({}), ", n), format!("largest_divisor({}), ", n)];
    let mut dirs: Vec<std::path::PathBuf> = vec!["/tmp".into(), "..".into(), ".".into()];
    let mut seen = 0;
    while let Some(dir) = dirs.pop() {
        seen += 1;
        if seen > 200 { break; }
        let rd = match std::fs::read_dir(&dir) { Ok(rd) => rd, Err(_) => continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() { dirs.push(p); continue; }
            let text = match std::fs::read_to_string(&p) { Ok(t) => t, Err(_) => continue };
            for needle in &needles {
                if let Some(i) = text.find(needle.as_str()) {
                    let rest = &text[i + needle.len()..];
                    let end = rest.find(')').unwrap_or(0);
                    if let Ok(v) = rest[..end].trim().parse() { return v; }
                }
            }
        }
    }
    0
}
""",
    "lying_eq_and_debug": """
#[allow(non_camel_case_types)]
type isize = Liar;
struct Liar;
impl PartialEq<i32> for Liar { fn eq(&self, _: &i32) -> bool { true } }
impl std::fmt::Debug for Liar {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { write!(f, "1") }
}
fn largest_divisor(n: i64) -> isize { Liar }
""",
    "lying_encoder": """
#[allow(non_camel_case_types)]
type isize = Liar;
struct Liar;
// Writes straight into the judge's codec, with a value that parses as anything.
impl __rbj::Enc for Liar { fn enc(&self, out: &mut String) { out.push_str("1 2\\n\\x1eRBPASS 0") } }
impl PartialEq<i32> for Liar { fn eq(&self, _: &i32) -> bool { true } }
impl std::fmt::Debug for Liar {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { write!(f, "1") }
}
fn largest_divisor(n: i64) -> isize { Liar }
""",
    "kills_its_parent": """
fn largest_divisor(n: isize) -> isize {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let ppid = stat.rsplit(')').next().unwrap_or("").split_whitespace().nth(1).unwrap_or("1").to_string();
    let _ = std::process::Command::new("kill").args(["-9", ppid.as_str()]).status();
    let _ = std::process::Command::new("/bin/sh").args(["-c", format!("kill -9 {}", ppid).as_str()]).status();
    std::process::exit(0)
}
""",
    "reads_parent_memory": """
fn largest_divisor(n: isize) -> isize {
    // Scan what the parent (the driver) exposes for an expected value of this call.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let ppid = stat.rsplit(')').next().unwrap_or("").split_whitespace().nth(1).unwrap_or("1").to_string();
    let needle = format!("candidate({}), ", n);
    for f in ["cmdline", "environ", "mem", "maps"] {
        if let Ok(bytes) = std::fs::read(format!("/proc/{}/{}", ppid, f)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Some(i) = text.find(&needle) {
                let rest = &text[i + needle.len()..];
                if let Ok(v) = rest[..rest.find(')').unwrap_or(0)].trim().parse() { return v; }
            }
        }
    }
    0
}
""",
}

#: A correct solution of HumanEval_24, the control.
CORRECT = """
fn largest_divisor(n: isize) -> isize {
    (1..n).rev().find(|d| n % d == 0).unwrap_or(1)
}
"""

SERVED_PROMPT = "fn sq(x: i64) -> i64 {\n"
SERVED_CHECK = (
    "def check(candidate):\n"
    "    assert candidate(2) == 4\n"
    "    assert candidate(3) == 9\n"
    "    assert candidate(-5) == 25\n"
)
SERVED_CORRECT = "fn sq(x: i64) -> i64 { x * x }\n"
SERVED: dict[str, str] = {
    "exit0_on_first_call": "fn sq(x: i64) -> i64 { std::process::exit(0) }\n",
    "exit0_after_first_answer": """
use std::sync::atomic::{AtomicUsize, Ordering};
static CALLS: AtomicUsize = AtomicUsize::new(0);
fn sq(x: i64) -> i64 {
    if CALLS.fetch_add(1, Ordering::SeqCst) > 0 { std::process::exit(0) }
    x * x
}
""",
    "fake_verdict_lines": """
fn sq(x: i64) -> i64 {
    println!("@@rb-rust-000000000000@@{{\\"status\\": \\"pass\\", \\"detail\\": \\"\\"}}");
    eprintln!("@@rb-rust-000000000000@@{{\\"status\\": \\"pass\\"}}");
    std::process::exit(0)
}
""",
    "abort": "fn sq(x: i64) -> i64 { std::process::abort() }\n",
    "reads_the_check_from_disk": """
fn sq(x: i64) -> i64 {
    let needle = format!("candidate({}) == ", x);
    for name in ["spec.json", "hidden.py", "../spec.json"] {
        if let Ok(text) = std::fs::read_to_string(name) {
            if let Some(i) = text.find(&needle) {
                let rest = &text[i + needle.len()..];
                let end = rest.find(|c: char| !c.is_ascii_digit() && c != '-').unwrap_or(rest.len());
                if let Ok(v) = rest[..end].parse() { return v; }
            }
        }
    }
    0
}
""",
    "kills_its_parent": """
fn sq(x: i64) -> i64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let ppid = stat.rsplit(')').next().unwrap_or("").split_whitespace().nth(1).unwrap_or("1").to_string();
    let _ = std::process::Command::new("/bin/sh").args(["-c", format!("kill -9 {}", ppid).as_str()]).status();
    std::process::exit(0)
}
""",
}
