"""Pulling Rust programs and unit tests out of model replies (no compiler needed)."""

from __future__ import annotations

from reflexion_bench.environments.code_rust import (
    RustLanguage,
    brace_balance,
    defines_fn,
    parse_signature,
    remove_fn,
    serve_main,
)

PROMPT = "use std::collections::HashMap;\n\n/// Sum.\nfn add(a: i32, b: Vec<String>) -> i32 {\n"
LANG = RustLanguage()


def test_scanner_ignores_braces_in_literals_and_comments() -> None:
    code = 'fn f() { let s = "}}{"; let c = \'}\'; let r = r#"{"#; // }\n /* { */ let l: &\'static str = "x"; }'
    assert brace_balance(code) == 0
    assert brace_balance("fn f() {\n    if x {") == 2


def test_fenced_full_function_with_main_removed() -> None:
    reply = (
        "Here you go:\n```rust\nfn add(a: i32, b: Vec<String>) -> i32 {\n    a + b.len() as i32\n}\n\n"
        'fn main() {\n    println!("{}", add(1, vec![]));\n}\n```\nDone.'
    )
    out = LANG.extract_code(reply, PROMPT, "add")
    assert out.kind == "fenced"
    assert "fn main" not in out.program and "println" not in out.program
    assert defines_fn(out.program, "add")
    assert out.program.startswith("use std::collections::HashMap;")  # the prompt's use line
    assert brace_balance(out.program) == 0


def test_body_only_reply_gets_the_signature() -> None:
    out = LANG.extract_code("```rust\n    a + 1\n}\n```", PROMPT, "add")
    assert out.kind == "body"
    assert "fn add(a: i32, b: Vec<String>) -> i32 {" in out.program
    assert brace_balance(out.program) == 0
    # A completion cut before its closing brace (MultiPL-E's stop token) is closed.
    cut = LANG.complete_solution("    a + 1", PROMPT, "add")
    assert brace_balance(cut) == 0 and cut.rstrip().endswith("}")


def test_unfenced_code_and_prose() -> None:
    reply = "Sure. fn is easy.\nfn add(a: i32, b: Vec<String>) -> i32 {\n    a\n}\nThis returns a."
    out = LANG.extract_code(reply, PROMPT, "add")
    assert out.kind == "raw"
    assert "This returns" not in out.program and defines_fn(out.program, "add")


def test_leetcode_impl_solution_gets_a_free_function() -> None:
    prompt = "fn is_reachable(target_x: i32, target_y: i32) -> bool {\n"
    reply = "```rust\nimpl Solution {\n    pub fn is_reachable(target_x: i32, target_y: i32) -> bool {\n        true\n    }\n}\n```"
    out = LANG.extract_code(reply, prompt, "is_reachable")
    assert "struct Solution;" in out.program
    assert (
        "fn is_reachable(target_x: i32, target_y: i32) -> bool {\n    Solution::is_reachable(target_x, target_y)"
        in out.program
    )


def test_no_code_is_a_stub_that_fails() -> None:
    out = LANG.extract_code("I cannot do this.", PROMPT, "add")
    assert out.kind == "none" and "unimplemented!" in out.program
    assert brace_balance(out.program) == 0


def test_reply_cut_inside_its_demo_main() -> None:
    reply = "```rust\nfn add(a: i32, b: Vec<String>) -> i32 {\n    a\n}\n\nfn main() {\n    let v = vec![1,\n"
    out = LANG.extract_code(reply, PROMPT, "add")
    assert "fn main" not in out.program and brace_balance(out.program) == 0


def test_remove_fn_only_top_level() -> None:
    code = "fn main() { let x = 1; }\nfn g() {}\nimpl A {\n    fn main(&self) {}\n}\n"
    out, n = remove_fn(code, "main")
    assert n == 1 and "fn g()" in out and "fn main(&self)" in out


def test_parse_tests_multiline_dedup_and_candidate() -> None:
    reply = (
        '```rust\nassert_eq!(add(1, vec![]), 1);\nassert_eq!(\n    add(2,\n        vec![String::from("a")]),\n    3\n);\n'
        "assert_eq!(candidate(5, vec![]), 5);\nassert_eq!(add(1, vec![]), 1);\nassert_eq!(other(1), 2);\nlet x = 3;\n```"
    )
    parsed = LANG.parse_tests(reply, "add")
    assert parsed.tests == [
        "assert_eq!(add(1, vec![]), 1);",
        'assert_eq!( add(2, vec![String::from("a")]), 3 );',
        "assert_eq!(add(5, vec![]), 5);",
    ]
    assert parsed.dropped == 1


def test_signature_and_serve_main() -> None:
    fn = parse_signature("// doc\nfn f(xs: &[i64], s: &str, m: &mut Vec<i32>) -> Vec<String> {\n")
    assert fn.name == "f" and fn.ret == "Vec<String>"
    main = serve_main(fn)
    assert (
        "let a0: Vec<i64>" in main and "let a1: String" in main and "let mut a2: Vec<i32>" in main
    )
    assert "f(&a0, &a1, &mut a2)" in main
    assert "stack_size(512 << 20)" in main


def test_prompts_resolve_to_the_rust_pack() -> None:
    assert LANG.prompt_path("code/{language}/").parts[-1] == "rust"
    assert LANG.prompt_path("leetcode/{language}/").parts[-2:] == ("leetcode", "rust")
