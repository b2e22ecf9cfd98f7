"""Failure signatures: a short, normalised name for *why* an attempt failed.

Two failures have the same signature when they fail the same way, e.g. the same
exception type with the same message shape, the same failing-assert pattern, a
timeout, or the same compiler error code, regardless of the concrete values. The
circuit breaker compares consecutive signatures of one task, and the repeat-failure
metric compares signatures across similar tasks.
"""

from __future__ import annotations

import re

_PY_EXC = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception|Exit|Interrupt))\b(?::\s*([^\n]*))?")
_RUST_ERR = re.compile(r"\berror\[(E\d{4})\]")
_ASSERT = re.compile(r"^\s*assert\s+(.+?)\s*$", re.M)
_TIMEOUT = re.compile(r"\btime(?:d)?\s*-?\s*out\b|\btimeout\b", re.I)
_STR = re.compile(r"(\"[^\"\n]*\"|'[^'\n]*')")
_NUM = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e-?\d+)?")
_CALL = re.compile(r"\b[A-Za-z_][A-Za-z0-9_.]*\s*\(")
_SPACES = re.compile(r"\s+")
_OPS = ("==", "!=", "<=", ">=", " is not ", " is ", " in ", " not in ", "<", ">")

UNKNOWN = "unknown"
_FAILED_HEAD = "Tests failed:"
_ASSERT_MSG = re.compile(r",\s*f?(\"[^\"]*\"|'[^']*')\s*$")
_OUTPUT_MARK = "# output:"


def _shape(text: str, limit: int = 60) -> str:
    """Values replaced by placeholders, whitespace collapsed, cut to ``limit`` chars."""
    text = _STR.sub("S", text)
    text = _NUM.sub("N", text)
    text = _SPACES.sub(" ", text).strip()
    return text[:limit]


def _assert_pattern(expr: str) -> str:
    """``candidate([1, 2]) == [2, 1]`` -> ``call == value``: the kind of check that failed."""
    expr = _ASSERT_MSG.sub("", expr)
    for op in _OPS:
        if op in expr:
            left, right = expr.split(op, 1)
            return f"{_side(left)} {op.strip()} {_side(right)}"
    return _side(expr)


def _kind(value: str) -> str:
    """The kind of value a failing test got (``None`` is the classic missing return)."""
    value = value.strip()
    if value in ("None", "True", "False"):
        return value
    if _NUM.fullmatch(value):
        return "number"
    if _STR.fullmatch(value):
        return "string"
    if value.startswith(("[", "(", "{")):
        return "collection"
    return "other"


def _side(expr: str) -> str:
    expr = expr.strip()
    if _CALL.match(expr):
        return "call"
    if expr.startswith(("[", "(", "{")):
        return "collection"
    if _NUM.fullmatch(expr) or _STR.fullmatch(expr) or expr in ("True", "False", "None"):
        return "value"
    return "expr"


def failure_signature(feedback: str | None, error: str | None = None) -> str:
    """The signature of a failed attempt from its feedback (and error) text.

    Order of precedence: a timeout; a Rust error code; the last Python exception
    named (with its message shape, and the failing assert's pattern for an
    AssertionError); otherwise the shape of the feedback's first line.

    Args:
        feedback: The evaluator's feedback text (or a scorer's detail).
        error: An error text of the trial, if any.

    Returns:
        A short string such as ``TypeError: unsupported operand type(s) for +: S and S``,
        ``AssertionError [call == value]``, ``timeout``, ``rust E0308``, or ``unknown``.
    """
    text = "\n".join(t for t in (feedback, error) if t)
    if not text.strip():
        return UNKNOWN
    # Self-test feedback lists passed tests first: only the failed part says why.
    if _FAILED_HEAD in text:
        text = text.split(_FAILED_HEAD, 1)[1]
    if _TIMEOUT.search(text):
        return "timeout"
    rust = _RUST_ERR.findall(text)
    if rust:
        return f"rust {rust[0]}"
    excs = list(_PY_EXC.finditer(text))
    # AssertionError is what failing tests raise; a different exception named in the
    # same output is the more specific cause (the code crashed inside the test).
    non_assert = [m for m in excs if m.group(1) != "AssertionError"]
    if non_assert:
        m = non_assert[-1]
        msg = _shape(m.group(2) or "")
        return f"{m.group(1)}: {msg}".rstrip(": ").strip() if msg else m.group(1)
    asserts = _ASSERT.findall(text)
    if excs or asserts or "assert" in text.lower():
        if not asserts:
            return "AssertionError"
        expr, _, output = asserts[-1].partition(_OUTPUT_MARK)
        got = f" got {_kind(output)}" if output.strip() else ""
        return f"AssertionError [{_assert_pattern(expr)}]{got}"
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return _shape(first.lower(), 48) or UNKNOWN
