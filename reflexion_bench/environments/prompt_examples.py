"""The tests a Python prompt already shows: docstring examples and example asserts.

HumanEval's docstrings show examples as doctests, a ``>>> call`` line followed by the
expected output::

    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
    False

LeetcodeHard's prompts (``env.show_visible_tests``) show asserts from the problem
statement. :func:`prompt_tests` turns both into the asserts the self-test judge runs
(``assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False``), so the in-loop
evaluator ``visible_tests`` can run exactly what the actor was shown, through the same
whitelist as model-written tests (:func:`reflexion_bench.judge.check_self_test`): the
prompt is benchmark data, but a docstring example is still evaluated in the judge, and
one rule for every assert the judge evaluates is simpler to trust than two.

Only examples that name the entry point become tests (a helper's doctest, as in
HumanEval/38's ``encode_cyclic``, says nothing about the function asked for); the
others are counted as dropped with the reason, as :class:`ParsedTests` does for
model-written tests. MBPP's prompts (MultiPL-E's and the Hugging Face rows as the
environment builds them) show no examples at all: there every task has none.
"""

from __future__ import annotations

import ast
import re

from reflexion_bench.environments.code_common import ParsedTests
from reflexion_bench.judge import check_self_test

_PROMPT = ">>>"
_CONTINUATION = "..."


def _parse_expr(src: str) -> ast.expr | None:
    try:
        return ast.parse(src.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None


def _doctest_assert(call: str, expected: str) -> tuple[str | None, str]:
    """(the assert, '') for one doctest example, or (None, why it is no test)."""
    left = _parse_expr(call)
    if left is None:
        return None, "the example's call does not parse"
    right = _parse_expr(expected)
    if right is None:
        return None, "the expected output is not a Python value"
    test = ast.Assert(test=ast.Compare(left=left, ops=[ast.Eq()], comparators=[right]))
    return ast.unparse(ast.fix_missing_locations(test)), ""


#: What separates a call from its result in HumanEval's prose examples
#: (``digitSum("abAB") => 131``, ``will_it_fly([3, 2, 3], 9) ➞ True``, ``f(x) == y``,
#: ``... should return True.``).
_ARROW = re.compile(
    r"^\s*(?:#\s*)?(?:==>|=>|->|➞|==|=|should\s+return|returns|is)\s*(?P<rest>.+)$", re.I
)
_LEAD = re.compile(r"^(?:for\s+|example:\s*|e\.g\.,?\s*)?", re.I)


def _prose_example(line: str, entry_point: str) -> tuple[str, str] | None:
    """(call, expected) of a prose example line that starts with a call of the entry
    point and gives its result after an arrow; None for any other line."""
    body = line[_LEAD.match(line).end() :]  # type: ignore[union-attr]  # always matches
    if not body.startswith(entry_point + "("):
        return None
    # The call ends at the first ')' where the text so far is a whole call expression.
    for k, ch in enumerate(body):
        if ch != ")":
            continue
        call = _parse_expr(body[: k + 1])
        if isinstance(call, ast.Call):
            m = _ARROW.match(body[k + 1 :])
            if m is None:
                return None
            rest = m.group("rest").strip()
            # The result may trail a full stop or a remark in parentheses.
            for cut in (rest, rest.rstrip("."), rest.split(" (")[0].rstrip(".")):
                if _parse_expr(cut) is not None:
                    return body[: k + 1], cut
            return body[: k + 1], rest
    return None


def _examples(prompt: str, entry_point: str) -> list[tuple[str, str]]:
    """(call, expected output) of every ``>>>`` example and prose example, and
    ('assert ...', '') for every example assert line, in prompt order."""
    lines = prompt.replace("\r\n", "\n").split("\n")
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line.startswith("assert "):
            out.append((line, ""))
            continue
        if not line.startswith(_PROMPT):
            prose = _prose_example(line, entry_point)
            if prose is not None:
                out.append(prose)
            continue
        call = [line[len(_PROMPT) :]]
        while i < len(lines) and lines[i].strip().startswith(_CONTINUATION):
            call.append(lines[i].strip()[len(_CONTINUATION) :])
            i += 1
        # The expected output runs to a blank line, the next example or the docstring's end.
        expected: list[str] = []
        while i < len(lines):
            nxt = lines[i].strip()
            if not nxt or nxt.startswith(_PROMPT) or nxt.startswith(('"""', "'''")):
                break
            expected.append(nxt)
            i += 1
            if nxt.endswith(('"""', "'''")):  # output and closing quotes on one line
                expected[-1] = nxt[:-3].rstrip()
                break
        out.append(("\n".join(call), "\n".join(expected)))
    return out


def prompt_tests(prompt: str, entry_point: str) -> ParsedTests:
    """The asserts a Python prompt shows for ``entry_point`` (see the module docstring).

    Returns:
        :class:`ParsedTests`: the tests (each once, in prompt order), how many examples
        were dropped, and up to five of them with the reason.
    """
    tests: list[str] = []
    dropped: list[str] = []
    for call, expected in _examples(prompt, entry_point):
        if call.startswith("assert "):
            stmt = _parse_expr_stmt(call)
            test, why = (stmt, "") if stmt else (None, "the assert does not parse")
        elif not expected and isinstance(_parse_expr(call), ast.Compare):
            # `>>> f(x) == y` (HumanEval/108): the example states its own check.
            test, why = _as_assert(call), ""
        elif not expected:
            test, why = None, "the example shows no expected output"
        else:
            test, why = _doctest_assert(call, expected)
        if test is not None:
            refused = check_self_test(test, entry_point)
            if refused is not None:
                test, why = None, refused
        if test is None:
            dropped.append(f"{call.splitlines()[0].strip()}  ({why})")
        elif test not in tests:
            tests.append(test)
    return ParsedTests(tests=tests, dropped=len(dropped), dropped_examples=dropped[:5])


def _parse_expr_stmt(line: str) -> str | None:
    try:
        tree = ast.parse(line)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    return ast.unparse(tree.body[0])


def _as_assert(expr: str) -> str:
    return ast.unparse(ast.Assert(test=ast.parse(expr.strip(), mode="eval").body))
