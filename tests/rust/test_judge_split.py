"""The Rust judge's pieces: splitting tests into calls and trusted asserts, the types
it decodes, the self-test screen, how verdicts combine (no compiler), and the codec's
exactness through the real compiler."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage, parse_signature
from reflexion_bench.environments.multiple import MultiPLEEnvironment
from reflexion_bench.environments.rust_judge import (
    JUDGE_EXIT_MALFORMED,
    JUDGE_EXIT_MISSING,
    Unsplittable,
    combine,
    decodable_type,
    plan_self_tests,
    plan_test_file,
    split_calls,
    unsafe_tokens,
)
from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Sandbox, SandboxError


def test_split_cuts_calls_and_leaves_literals_alone() -> None:
    text = 'assert_eq!(candidate(vec![1, candidate(2)], "candidate(3)"), 7); // candidate(4)'
    judge, calls = split_calls(text, {"candidate", "f"}, "f", "isize", 5)
    assert calls == ['f(vec![1, f(2)], "candidate(3)")']
    assert judge == "assert_eq!(__rb_r::<isize>(5), 7); // candidate(4)"


def test_split_keeps_methods_and_paths_apart() -> None:
    judge, calls = split_calls(
        "assert!(Solution::f(1) == x.f(2));", {"f", "candidate"}, "f", "bool", 0
    )
    assert calls == ["Solution::f(1)"]
    assert judge == "assert!(__rb_r::<bool>(0) == x.f(2));"
    with pytest.raises(Unsplittable, match="other than as a call"):
        split_calls("assert!(vec![1].iter().map(f).count() == 1);", {"f"}, "f", "bool", 0)


@pytest.mark.parametrize(
    ("ret", "want"),
    [
        ("isize", "isize"),
        ("Vec<(String, isize)>", "Vec<(String, isize)>"),
        ("HashMap<String, Vec<f64>>", "HashMap<String, Vec<f64>>"),
        ("Option<(isize, isize)>", "Option<(isize, isize)>"),
        ("&str", "&'static str"),
        ("[i32; 3]", "[i32; 3]"),
        ("Foo", None),
        ("impl Iterator<Item = i32>", None),
        ("isize { std::process::exit(0) }", None),
        ("Vec<isize>> = loop {}; let x: Vec<isize", None),
        ("", None),
    ],
)
def test_decodable_types(ret: str, want: str | None) -> None:
    assert decodable_type(ret) == want


def test_self_test_screen() -> None:
    assert unsafe_tokens("assert_eq!(__rb_r::<isize>(0), vec![1, 2].len() as isize);") == []
    assert unsafe_tokens('assert!((__rb_r::<f64>(0) - 2.5).abs() < 1e-9, "exit");') == []
    assert unsafe_tokens("assert!({ std::process::exit(0) });") == ["exit", "process"]
    assert unsafe_tokens("assert!(unsafe { *(0 as *const i32) } == 1);") == ["unsafe"]
    assert unsafe_tokens("#[cfg(x)] assert!(true);") == ["#"]
    assert unsafe_tokens("assert!(__RB_RESULTS.with(|r| true));") == ["__RB_RESULTS"]
    plan = plan_self_tests(
        ["assert_eq!(f(1), 2);", "assert!(true);", "let g = f; assert_eq!(g(1), 2);"],
        "f",
        "isize",
    )
    assert plan.groups == [[0], [], []]
    assert set(plan.unjudged) == {1, 2}
    assert "does not call" in plan.unjudged[1] and "other than as a call" in plan.unjudged[2]


@pytest.mark.parametrize("file", ["humaneval-rs.jsonl", "mbpp-rs.jsonl"])
def test_every_multiple_test_file_splits(file: str, shared_data: Path) -> None:
    """Every assert of the real files keeps its shape with each call replaced, and
    no call of the function is left in the trusted half."""
    for task in MultiPLEEnvironment(RustLanguage(), path=str(shared_data / file)).load_tasks():
        entry = task.data["entry_point"]
        ret = decodable_type(parse_signature(task.prompt, entry).ret)
        assert ret is not None, task.id
        test = task.data["test"]
        plan = plan_test_file(test, entry, ret, [])
        assert len(plan.calls) == test.count("candidate(") == test.count("assert")
        body = plan.judge_bodies[0]
        assert not re.search(rf"\b(candidate|{entry})\b", body), task.id
        assert body.count("__rb_r::") == len(plan.calls)
        assert all(c.startswith(f"{entry}(") for c in plan.calls)


def test_test_file_without_calls_is_refused() -> None:
    with pytest.raises(Unsplittable):
        plan_test_file("fn main() {\n    assert_eq!(1, 1);\n}\n", "f", "isize", [])
    with pytest.raises(Unsplittable):
        plan_test_file("fn helper() { f(1); }\nfn main() { assert!(f(1)); }", "f", "bool", [])


def test_only_a_complete_clean_judged_run_passes() -> None:
    """Every combination of what the candidate's process and the judge can report:
    pass exactly when the judge printed its pass line, every call answered, no stray
    line, and the candidate's process ended cleanly."""
    calls = [3, 4]
    statuses = ["exit", "timeout", "memory", "spawn_error"]
    codes = [0, 1, 101, -6, -9, None]
    answer_sets: list[dict[str, str]] = [{}, {"3": "1"}, {"3": "1", "4": "2"}]
    judges: list[dict[str, object] | None] = [
        None,
        {"status": "exit", "code": 0, "passed": True},
        {"status": "exit", "code": 0, "passed": False},
        {"status": "exit", "code": 101, "passed": False, "detail": "left right"},
        {"status": "exit", "code": JUDGE_EXIT_MISSING, "passed": False},
        {"status": "exit", "code": JUDGE_EXIT_MALFORMED, "passed": False},
        {"status": "timeout", "code": -9, "passed": False},
    ]
    for status, code, answers, stray, judged, hidden in itertools.product(
        statuses, codes, answer_sets, [[], [7]], judges, [True, False]
    ):
        group = {"status": status, "code": code, "results": answers, "stray": stray}
        v = combine(group, judged, calls, hidden)
        clean = status == "exit" and code == 0
        expect = bool(judged and judged["passed"]) and len(answers) == 2 and not stray and clean
        assert (v.status == "pass") == expect, (group, judged, v)
        assert v.status in ("pass", "fail", "timeout", "error")
        if v.status != "pass":
            assert v.output, (group, judged)


CODEC_PROMPT = (
    "use std::collections::HashMap;\n"
    "fn f(k: isize) -> (Vec<f64>, Option<Option<String>>, HashMap<String, isize>, char) {\n"
)
CODEC_SOLUTION = r"""
use std::collections::HashMap;
fn f(k: isize) -> (Vec<f64>, Option<Option<String>>, HashMap<String, isize>, char) {
    let mut m = HashMap::new();
    for (i, w) in ["a\"b", "ü\n", "z"].iter().enumerate() { m.insert(w.to_string(), i as isize); }
    let v = vec![-0.0, 0.1 + 0.2, 1e-300, f64::MAX, if k == 1 { f64::NAN } else { 1.0 }];
    (v, if k == 2 { None } else { Some(None) }, m, 'é')
}
"""


def codec_test(expect_nan: bool, expect_none: bool, extra: str = "") -> str:
    last = "f64::NAN" if expect_nan else "1.0"
    opt = "None" if expect_none else "Some(None)"
    k = 1 if expect_nan else (2 if expect_none else 0)
    return (
        "fn main() {\n    let candidate = f;\n"
        f"    assert_eq!(candidate({k}), (vec![0.0, 0.30000000000000004, 1e-300, f64::MAX, {last}], "
        f'{opt}, HashMap::from([(String::from("z"), 2), (String::from("a\\"b"), 0), '
        "(String::from(\"ü\\n\"), 1)]), 'é'));\n" + extra + "}\n"
    )


@pytest.mark.parametrize(
    ("test", "status"),
    [
        # -0.0 == 0.0 and a HashMap in another order: equal for assert_eq!, so a pass.
        (codec_test(False, False), "pass"),
        (codec_test(False, True), "pass"),
        # NaN != NaN, as assert_eq! says: a fail.
        (codec_test(True, False), "fail"),
        # Some(None) is not None (the codec keeps them apart).
        (codec_test(False, False).replace("candidate(0)", "candidate(2)"), "fail"),
        # A stated tolerance is kept: the trusted side computes it on the decoded value.
        (
            "fn main() {\n    let candidate = f;\n"
            "    assert!((candidate(0).0[1] - 0.3).abs() < 1e-9);\n"
            "    assert!((candidate(0).0[1] - 0.3).abs() > 0.0);\n}\n",
            "pass",
        ),
    ],
)
async def test_codec_keeps_assert_eq_semantics(
    test: str, status: str, rust: RustLanguage, sandbox: Sandbox
) -> None:
    task = Task("codec", CODEC_PROMPT, "x", {"language": rust, "entry_point": "f", "test": test})
    program = rust.complete_solution(CODEC_SOLUTION, CODEC_PROMPT, "f")
    out = await rust.run_hidden(sandbox, program, task, 10.0)
    assert out.status == status, out.detail


class BrokenSandbox(Sandbox):
    """A sandbox that never runs anything (as bwrap failing to set up its namespaces)."""

    async def exec(self, request: ExecRequest) -> ExecResult:
        return ExecResult(1, "", "bwrap: setting up uid map: Permission denied", 0.01, "exit")


async def test_a_broken_sandbox_is_a_run_error_not_a_verdict(rust: RustLanguage) -> None:
    """The driver says `ready` first; without it the sandbox, not the program, failed."""
    task = Task(
        "t",
        "fn f(x: isize) -> isize {\n",
        "x",
        {"language": rust, "entry_point": "f", "test": "fn main() { assert_eq!(f(1), 1); }"},
    )
    program = "fn f(x: isize) -> isize { x }\n"
    with pytest.raises(SandboxError, match="uid map"):
        await rust.run_hidden(BrokenSandbox(), program, task, 5.0)
    with pytest.raises(SandboxError, match="did not run the Rust driver"):
        await rust.run_tests(BrokenSandbox(), program, ["assert_eq!(f(1), 1);"], "f", 5.0)
    served = Task("s", task.prompt, "x", {**task.data, "hidden_kind": "python_check"})
    with pytest.raises(SandboxError):
        await rust.run_hidden(BrokenSandbox(), program, served, 5.0)


async def test_self_test_shapes_models_write(rust: RustLanguage, sandbox: Sandbox) -> None:
    """Asserts as models write them keep their meaning once split: a String against
    a &str, a Vec against an array, a tolerance, a method on the result, both sides
    calling the function, a LeetCode-style path; a wrong program fails the same ones."""
    right = (
        "fn rev(s: &str, k: f64) -> (String, Vec<i32>, f64) {\n"
        "    (s.chars().rev().collect(), s.bytes().map(|b| b as i32).collect(), k.sqrt())\n}\n"
    )
    wrong = right.replace("s.chars().rev()", "s.chars()").replace("k.sqrt()", "k / 2.0")
    tests = [
        'assert_eq!(rev("ab", 4.0).0, "ba");',
        'assert_eq!(rev("ab", 4.0).1, [97, 98]);',
        'assert!((rev("", 2.0).2 - 1.41421).abs() < 1e-4);',
        'assert!(rev("abc", 1.0).0.starts_with("cb"));',
        'assert_ne!(rev("ab", 1.0), rev("ba", 1.0));',
        'assert_eq!(Solution::rev("xy", 9.0).2, 3.0);',
    ]
    program = "struct Solution;\nimpl Solution {\n    fn rev(s: &str, k: f64) -> (String, Vec<i32>, f64) { rev(s, k) }\n}\n"
    outs = await rust.run_tests(sandbox, program + right, tests, "rev", 5.0)
    assert [o.status for o in outs] == ["pass"] * 6, [o.output for o in outs]
    outs = await rust.run_tests(sandbox, program + wrong, tests, "rev", 5.0)
    assert [o.status for o in outs] == ["fail", "pass", "fail", "fail", "pass", "fail"], [
        o.output for o in outs
    ]
    assert outs[0].output == '"ab" (expected "ba")'
