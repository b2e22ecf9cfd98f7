"""Code extraction from messy model replies: the result must *run*, not just parse.

Each case execs the extracted program (trusted test strings, in-process) and calls the
entry point, so a wrong pick of block, a lost import or a broken indent fails here.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_python import PythonLanguage

LANG = PythonLanguage()

BODY = """    for i, a in enumerate(numbers):
        for b in numbers[i + 1 :]:
            if abs(a - b) < threshold:
                return True
    return False
"""
FULL = "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n" + BODY


def run(program: str, name: str) -> Any:
    ns: dict[str, Any] = {"__name__": "solution"}
    exec(compile(program, "solution.py", "exec"), ns)
    return ns[name]


def extract(task: Task, reply: str) -> Any:
    ep = task.data["entry_point"]
    return LANG.extract_code(reply, task.prompt, ep)


def assert_works(task: Task, reply: str, kind: str | None = None) -> Any:
    got = extract(task, reply)
    if kind is not None:
        assert got.kind == kind, got.notes
    fn = run(got.program, "has_close_elements")
    assert fn([1.0, 2.0, 3.0], 0.5) is False
    assert fn([1.0, 2.8, 3.0], 0.3) is True
    return got


@pytest.mark.parametrize(
    "reply",
    [
        # fenced, with prose around it
        f"Sure! Here is the solution:\n\n```python\n{FULL}```\n\nIt compares every pair.",
        # fence without a language tag
        f"```\n{FULL}```",
        # CRLF line endings and a python3 tag
        f"```python3\r\n{FULL}```".replace("\n", "\r\n"),
        # a reasoning block before the answer
        f"<think>maybe sort first? ```python\ndef nope(): pass\n```</think>\n```python\n{FULL}```",
        # the answer cut off by the token limit: no closing fence
        f"Here you go:\n```python\n{FULL}",
    ],
)
def test_fenced_replies(humaneval: dict[str, Task], reply: str) -> None:
    got = assert_works(humaneval["HumanEval/0"], reply, "fenced")
    # The model dropped `from typing import List`; the prompt's import was added back.
    assert "from typing import List" in got.program


def test_unfenced_code_with_prose_before_and_after(humaneval: dict[str, Task]) -> None:
    reply = f"Let me write it.\n{FULL}\nThis runs in O(n^2) time, which is fine here."
    got = assert_works(humaneval["HumanEval/0"], reply, "raw")
    assert "O(n^2)" not in got.program and "Let me" not in got.program


@pytest.mark.parametrize(
    "reply",
    [
        BODY,  # an indented body, as completion models give
        "```python\n" + "\n".join(line[4:] for line in BODY.splitlines()) + "\n```",  # unindented
        # first line lost its indent, the rest kept it (a chat-formatting accident)
        BODY.lstrip(),
    ],
)
def test_body_only_replies_get_the_signature(humaneval: dict[str, Task], reply: str) -> None:
    got = assert_works(humaneval["HumanEval/0"], reply, "body")
    assert got.program.startswith(humaneval["HumanEval/0"].prompt.rstrip())


def test_echoed_stub_block_is_skipped_for_the_real_one(humaneval: dict[str, Task]) -> None:
    task = humaneval["HumanEval/0"]
    reply = (
        f"You asked for:\n```python\n{task.prompt}```\nMy implementation:\n```python\n"
        f"from typing import List\n\n{FULL}```"
    )
    assert_works(task, reply, "fenced")


def test_demo_code_after_the_function_is_dropped(humaneval: dict[str, Task]) -> None:
    # A wrong demo assert would otherwise fail a correct function at import time.
    reply = (
        f"```python\nfrom typing import List\n\n{FULL}\n"
        "print(has_close_elements([1.0], 0.1))\n"
        "assert has_close_elements([1.0, 1.05], 0.1) is False\n"
        "for x in range(3):\n    print(x)\n"
        "if __name__ == '__main__':\n    import doctest\n    doctest.testmod()\n```"
    )
    got = assert_works(humaneval["HumanEval/0"], reply)
    tree = ast.parse(got.program)
    assert not any(isinstance(n, ast.Assert | ast.For | ast.If | ast.Expr) for n in tree.body)
    assert any("demo" in n for n in got.notes)


def test_helpers_of_the_prompt_are_added_when_the_reply_uses_them(
    humaneval: dict[str, Task],
) -> None:
    task = humaneval["HumanEval/38"]  # decode_cyclic; the prompt defines encode_cyclic
    reply = "```python\ndef decode_cyclic(s: str):\n    return encode_cyclic(encode_cyclic(s))\n```"
    got = LANG.extract_code(reply, task.prompt, "decode_cyclic")
    ns: dict[str, Any] = {}
    exec(got.program, ns)
    assert ns["decode_cyclic"](ns["encode_cyclic"]("abcdefg")) == "abcdefg"


@pytest.mark.parametrize("reply", ["", "   \n", "I am not able to solve this, sorry."])
def test_replies_without_code_become_a_failing_stub(humaneval: dict[str, Task], reply: str) -> None:
    got = extract(humaneval["HumanEval/0"], reply)
    assert got.kind == "none"
    fn = run(got.program, "has_close_elements")
    with pytest.raises(NotImplementedError, match="no code"):
        fn([1.0], 0.5)


def test_code_that_does_not_parse_is_kept_not_crashed(humaneval: dict[str, Task]) -> None:
    got = extract(
        humaneval["HumanEval/0"],
        "```python\ndef has_close_elements(numbers, t):\n    return (\n```",
    )
    assert "does not parse" in " ".join(got.notes)
    with pytest.raises(SyntaxError):
        compile(got.program, "x", "exec")


def test_a_renamed_function_is_reported(humaneval: dict[str, Task]) -> None:
    got = extract(
        humaneval["HumanEval/0"], "```python\ndef solve(numbers, threshold):\n    return False\n```"
    )
    assert any("does not define `has_close_elements`" in n for n in got.notes)


def test_complete_solution_reads_bodies_and_keeps_programs(humaneval: dict[str, Task]) -> None:
    task = humaneval["HumanEval/0"]
    full = "from typing import List\n" + FULL
    assert LANG.complete_solution(full, task.prompt, "has_close_elements") == full
    program = LANG.complete_solution(BODY.rstrip(), task.prompt, "has_close_elements")
    assert run(program, "has_close_elements")([1.0, 1.1], 0.5) is True
    # not a body and not a program: kept under the prompt, fails honestly
    broken = LANG.complete_solution("return (", task.prompt, "has_close_elements")
    with pytest.raises(SyntaxError):
        compile(broken, "x", "exec")


def test_imports_the_reply_already_has_are_not_repeated(humaneval: dict[str, Task]) -> None:
    task = humaneval["HumanEval/0"]
    got = extract(task, f"```python\nfrom typing import List\n\n{FULL}```")
    assert got.program.count("from typing import List") == 1
    run(got.program, "has_close_elements")


@pytest.mark.parametrize("failures", [1, 10])
def test_a_spurious_parser_system_error_never_ends_a_trial(
    monkeypatch: pytest.MonkeyPatch, failures: int
) -> None:
    """CPython 3.11.7's ast.parse can raise SystemError ("AST constructor recursion
    depth mismatch"): once, the parse is retried and the code comes out as usual;
    always, the reply is handled as unparsable text, without an exception."""
    import ast

    from reflexion_bench.environments import code_python

    real = ast.parse
    left = [failures]

    def flaky(src: str, *a: object, **k: object) -> ast.Module:
        if left[0] > 0:
            left[0] -= 1
            raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")
        return real(src, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(code_python, "_ast_parse", flaky)
    reply = "```python\ndef f(x):\n    return x + 1\n\nprint(f(1))\n```"
    out = code_python.PythonLanguage().extract_code(reply, "def f(x):\n", "f")
    assert "return x + 1" in out.program
    if failures == 1:
        assert "print(f(1))" not in out.program  # the demo line dropped: the parse worked
