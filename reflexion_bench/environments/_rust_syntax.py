"""Lexing of Rust source text: enough to find literals, comments and matching brackets.

No parser: the benchmarks' programs and tests are plain enough that skipping comments,
string and char literals and counting brackets places every item and call we need.
Shared by extraction (``code_rust``), the judge (``rust_judge``) and the LeetCode
loader (``leetcode``: signatures and test calls).
"""

from __future__ import annotations

import re


def skip_literal(code: str, i: int) -> int:
    """If ``code[i]`` starts a comment, string or char literal, the index after it;
    else ``i``. Lifetimes (``'a``) are not literals."""
    n = len(code)
    c = code[i]
    if code.startswith("//", i):
        j = code.find("\n", i)
        return n if j < 0 else j
    if code.startswith("/*", i):
        depth, j = 1, i + 2
        while j < n and depth:
            if code.startswith("/*", j):
                depth, j = depth + 1, j + 2
            elif code.startswith("*/", j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return j
    m = re.match(r'b?r(#*)"', code[i : i + 260])
    if m and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
        end = code.find('"' + m.group(1), i + m.end())
        return n if end < 0 else end + 1 + len(m.group(1))
    if c == '"' or (c == "b" and code.startswith('b"', i)):
        j = i + (2 if c == "b" else 1)
        while j < n:
            if code[j] == "\\":
                j += 2
                continue
            if code[j] == '"':
                return j + 1
            j += 1
        return n
    if c == "'":
        m = re.match(
            r"'(?:\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'", code[i : i + 14]
        )
        if m:
            return i + m.end()
    return i


def match_close(code: str, open_idx: int) -> int:
    """Index of the bracket closing the one at ``open_idx`` (-1 if unbalanced)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[code[open_idx]]]
    i = open_idx + 1
    while i < len(code):
        j = skip_literal(code, i)
        if j != i:
            i = j
            continue
        c = code[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack[-1] != c:
                return -1
            stack.pop()
            if not stack:
                return i
        i += 1
    return -1


def brace_balance(code: str) -> int:
    """Open ``{`` minus closed ``}``, outside comments and literals."""
    depth = 0
    i = 0
    while i < len(code):
        j = skip_literal(code, i)
        if j != i:
            i = j
            continue
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
        i += 1
    return depth


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets, strings and generic angle brackets."""
    parts: list[str] = []
    depth = 0
    buf: list[str] = []
    in_str = False
    prev = ""
    for ch in text:
        if in_str:
            buf.append(ch)
            if ch == '"' and prev != "\\":
                in_str = False
            prev = ch if not (prev == "\\" and ch == "\\") else ""
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        prev = ch
    tail = "".join(buf)
    if tail.strip():
        parts.append(tail)
    return [p.strip() for p in parts]
