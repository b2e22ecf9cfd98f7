"""LeetcodeHard (Shinn et al., 2023): 40 hard LeetCode problems, in Python or Rust.

The problems come from a local JSON Lines file (the LeetcodeHardGym export:
``task_id`` = LeetCode slug, ``prompt``, ``visible_tests``); the verdict comes from
an offline hidden-test file (``leetcode-hard-py-40-hidden.jsonl``: ``hidden_test``
is the Python source of ``def check(candidate)``, with the real ``entry_point`` and
a per-problem ``recommended_timeout_s``). The actor sees the problem and the
*valid* visible tests only; hidden material stays in ``Task.data`` and only the
scorer reads it.

Some visible tests in the published data are broken (string arguments dropped,
``true``/``false`` mangled into ``rue``/``alse``, Rust arrays where the signature
takes ``Vec``). Feeding them to the model as truth would punish correct code, so
they are detected here, left out of the visible tests, and reported: per task in
``Task.data["broken_visible_tests"]`` (each with the reason) and for the whole
dataset in :attr:`LeetcodeHardEnvironment.broken_report`.
"""

from __future__ import annotations

import ast
import builtins
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments._rust_syntax import split_top_level
from reflexion_bench.environments.base import DatasetError, select_tasks
from reflexion_bench.environments.code_common import CodeLanguage

log = logging.getLogger(__name__)

#: The imports LeetCode's Python 3 judge makes available without an import line
#: (the set LeetCodeDataset uses to reproduce it), then the builtin ``pow`` restored,
#: because ``from math import *`` (and ``operator``) shadow it with a float-only,
#: two-argument version and accepted solutions call ``pow(a, b, mod)``.
PYTHON_PRELUDE = """\
import random
import functools
import collections
import string
import math
import datetime
import heapq
import bisect
import itertools
import operator
import re
import sys
import copy

from typing import *
from functools import *
from collections import *
from itertools import *
from heapq import *
from bisect import *
from string import *
from operator import *
from math import *

from builtins import pow

inf = float("inf")
"""

LANGUAGES = ("python", "rust")


@dataclass(frozen=True)
class BrokenTest:
    """A visible test left out of the feedback, and why."""

    test: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"test": self.test, "reason": self.reason}


# --------------------------------------------------------------------------- Python


@cache
def prelude_names() -> frozenset[str]:
    """Every name a LeetCode Python solution (or test) may use without importing it."""
    ns: dict[str, Any] = {}
    exec(compile(PYTHON_PRELUDE, "<leetcode-prelude>", "exec"), ns)
    return frozenset(ns) | frozenset(dir(builtins))


@dataclass(frozen=True)
class PySignature:
    name: str
    required: int
    total: int


def python_signature(prompt: str) -> PySignature:
    """The first top-level function of ``prompt`` (the problem's stub)."""
    try:
        tree = ast.parse(prompt + ("\n    pass\n" if not prompt.rstrip().endswith("pass") else ""))
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                a = node.args
                total = len(a.posonlyargs) + len(a.args)
                return PySignature(node.name, total - len(a.defaults), total)
    m = re.search(r"^def\s+([A-Za-z_]\w*)\s*\(([^)]*)\)", prompt, re.M)
    if not m:
        raise DatasetError(f"no `def name(...)` signature in the prompt: {prompt[:80]!r}")
    params = [p for p in m.group(2).split(",") if p.strip() and p.strip() != "self"]
    return PySignature(m.group(1), len(params), len(params))


def check_python_visible_test(test: str, sig: PySignature) -> str | None:
    """Return why ``test`` is broken, or None when it is a usable assert.

    A usable test parses, is an ``assert`` that calls the problem's function with
    as many arguments as its signature takes, and names nothing that LeetCode's
    environment does not define (``rue``, ``alse``, ``false`` are undefined).
    """
    try:
        tree = ast.parse(test)
    except SyntaxError as exc:
        return f"does not parse ({exc.msg})"
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return "is not a single assert statement"
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == sig.name
    ]
    if not calls:
        return f"does not call {sig.name}"
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            continue  # *args / **kwargs: arity cannot be checked statically
        n = len(call.args) + len(call.keywords)
        if not sig.required <= n <= sig.total:
            want = str(sig.total) if sig.required == sig.total else f"{sig.required}-{sig.total}"
            return f"calls {sig.name} with {n} argument(s); its signature takes {want}"
    known = prelude_names() | {sig.name}
    bound = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in known
            and node.id not in bound
        ):
            return f"uses the undefined name `{node.id}`"
    return None


# --------------------------------------------------------------------------- Rust


@dataclass(frozen=True)
class RustSignature:
    name: str
    params: tuple[tuple[str, str], ...]
    """(name, type) pairs."""
    ret: str
    text: str
    """The signature line as written, without the opening brace."""


def rust_signature(prompt: str) -> RustSignature:
    """The last ``fn`` signature of ``prompt`` (MultiPL-E prompts end with it)."""
    matches = list(
        re.finditer(
            r"^\s*(?:pub\s+)?fn\s+([A-Za-z_]\w*)\s*\((.*?)\)\s*(?:->\s*(.+?))?\s*\{?\s*$",
            prompt,
            re.M,
        )
    )
    if not matches:
        raise DatasetError(f"no `fn name(...)` signature in the prompt: {prompt[-120:]!r}")
    m = matches[-1]
    params: list[tuple[str, str]] = []
    for p in split_top_level(m.group(2)):
        if ":" not in p:
            continue
        name, typ = p.split(":", 1)
        params.append((name.strip().removeprefix("mut ").strip(), typ.strip()))
    text = m.group(0).strip().removesuffix("{").strip()
    return RustSignature(m.group(1), tuple(params), (m.group(3) or "()").strip(), text)


_RUST_ASSERT = re.compile(r"^\s*assert(?:_eq|_ne)?!\s*\((.*)\)\s*;?\s*$", re.S)


def _rust_call_args(test: str, fn: str) -> list[str] | None:
    """The argument texts of the first call to ``fn`` in ``test``, or None."""
    m = re.search(rf"\b{re.escape(fn)}\s*\(", test)
    if not m:
        return None
    depth = 0
    start = m.end()
    for i in range(m.end() - 1, len(test)):
        ch = test[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return split_top_level(test[start:i])
    return None


def check_rust_visible_test_static(test: str, sig: RustSignature) -> str | None:
    """Cheap checks that need no compiler: an assert that calls the function with
    the right number of arguments. Type errors are found by
    :func:`reflexion_bench.environments.code_rust.typecheck_tests` (rustc against a stub)."""
    if not _RUST_ASSERT.match(test):
        return "is not a single assert!/assert_eq! statement"
    args = _rust_call_args(test, sig.name)
    if args is None:
        return f"does not call {sig.name}"
    if len(args) != len(sig.params):
        return (
            f"calls {sig.name} with {len(args)} argument(s); its signature takes {len(sig.params)}"
        )
    return None


# --------------------------------------------------------------------------- environment


def _read_jsonl(path: Path, key: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(
            f"{key}: no such file {path} (point `env.{key}` or `paths.data_dir` at the "
            "LeetcodeHard JSONL files)"
        )
    rows: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DatasetError(
            f"{path}: not UTF-8 text (a binary file?); set `env.{key}` to a JSONL file"
        ) from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
    return rows


class LeetcodeHardEnvironment:
    """The 40 LeetcodeHard problems with offline hidden tests.

    Args:
        path: The problems (``leetcode-hard-py-40.jsonl`` or ``leetcode-hard-rs-40.jsonl``).
        hidden_path: The offline hidden tests (``leetcode-hard-py-40-hidden.jsonl``); the
            Rust variant is judged by the same Python checks. ``None`` leaves the tasks
            without hidden tests (for the online judge).
        language: The :class:`~reflexion_bench.environments.code_common.CodeLanguage`
            of the problems (its ``name`` picks the Python or Rust reading of the file);
            default: Python with LeetCode's prelude.
        limit: First N problems.
        task_ids: Problem slugs to keep.
        rust_typecheck: Rust only: type-check every visible test against a stub of the
            signature with the host's ``rustc`` (nothing runs) to find tests that
            cannot compile.
        rustc: The compiler used for that check.
        name: Benchmark name in reports (default ``leetcode_hard`` / ``leetcode_hard_rs``).
        show_visible_tests: Add the valid visible tests to the prompt as examples (in
            the docstring for Python, as comments above the signature for Rust), so the
            actor and the test writer see them; broken ones are never shown.
    """

    memory_window = 1

    def __init__(
        self,
        path: str | Path,
        hidden_path: str | Path | None = None,
        language: CodeLanguage | None = None,
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        rust_typecheck: bool = True,
        rustc: str = "rustc",
        name: str | None = None,
        show_visible_tests: bool = True,
    ) -> None:
        self.language = language or leetcode_python_language()
        self.show_visible_tests = show_visible_tests
        if self.language.name not in LANGUAGES:
            raise ConfigError("env.language", self.language.name, LANGUAGES)
        self.path = Path(path)
        self.hidden_path = Path(hidden_path) if hidden_path else None
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.rust_typecheck = rust_typecheck
        self.rustc = rustc
        rust = self.language.name == "rust"
        self.name = name or ("leetcode_hard_rs" if rust else "leetcode_hard")
        self.broken_report: dict[str, list[dict[str, str]]] = {}

    def load_tasks(self) -> list[Task]:
        rows = _read_jsonl(self.path, "path")
        hidden: dict[str, dict[str, Any]] = {}
        if self.hidden_path is not None:
            hidden = {str(r["task_id"]): r for r in _read_jsonl(self.hidden_path, "hidden_path")}
        tasks = [self._task(row, hidden.get(str(row.get("task_id")))) for row in rows]
        tasks = select_tasks(tasks, self.limit, self.task_ids)
        if self.language.name == "rust" and self.rust_typecheck and tasks:
            self._typecheck_rust(tasks)
        if self.show_visible_tests:
            for t in tasks:
                t.prompt = with_examples(t.prompt, t.data["visible_tests"], self.language.name)
        self.broken_report = {
            t.id: t.data["broken_visible_tests"] for t in tasks if t.data["broken_visible_tests"]
        }
        n_broken = sum(len(v) for v in self.broken_report.values())
        if n_broken:
            log.info(
                "%s: left out %d broken visible test(s) in %d of %d problem(s): %s",
                self.name,
                n_broken,
                len(self.broken_report),
                len(tasks),
                ", ".join(self.broken_report),
            )
        return tasks

    def _task(self, row: dict[str, Any], hidden: dict[str, Any] | None) -> Task:
        for key in ("task_id", "prompt", "visible_tests"):
            if key not in row:
                raise DatasetError(f"{self.path}: a row lacks the field `{key}`; check `env.path`")
        slug = str(row["task_id"])
        prompt = str(row["prompt"])
        visible: list[str] = []
        broken: list[BrokenTest] = []
        data: dict[str, Any] = {"language": self.language, "slug": slug}
        if self.language.name == "python":
            sig = python_signature(prompt)
            data["entry_point"] = sig.name
            for t in row["visible_tests"]:
                why = check_python_visible_test(t, sig)
                (broken.append(BrokenTest(t, why)) if why else visible.append(t))
        else:
            rsig = rust_signature(prompt)
            data["entry_point"] = rsig.name
            data["signature"] = rsig.text
            for t in row["visible_tests"]:
                why = check_rust_visible_test_static(t, rsig)
                (broken.append(BrokenTest(t, why)) if why else visible.append(t))
        if hidden is not None:
            py_entry = str(hidden.get("entry_point", ""))
            if self.language.name == "python" and py_entry != data["entry_point"]:
                raise DatasetError(
                    f"{self.hidden_path}: {slug}: hidden entry_point {py_entry!r} differs "
                    f"from the prompt's function {data['entry_point']!r}"
                )
            data["test"] = str(hidden["hidden_test"])
            data["hidden_entry_point"] = py_entry
            data["timeout_s"] = float(hidden.get("recommended_timeout_s", 10.0))
            data["n_hidden_cases"] = int(hidden.get("n_hidden_cases", 0))
            data["question_id"] = hidden.get("question_id")
            if self.language.name == "python":
                data["test_call"] = f"check({data['entry_point']})"
            else:
                # The Python check judges the Rust function through a JSON call bridge;
                # release builds, as LeetCode compiles Rust.
                data["test_call"] = ""
                data["hidden_kind"] = "python_check"
                data["opt_level"] = 2
        data["visible_tests"] = visible
        data["broken_visible_tests"] = [b.to_dict() for b in broken]
        data["n_broken_visible_tests"] = len(broken)
        return Task(id=slug, prompt=prompt, benchmark=self.name, data=data)

    def _typecheck_rust(self, tasks: list[Task]) -> None:
        from reflexion_bench.environments.code_rust import RustToolchainError, typecheck_tests

        try:
            errors = typecheck_tests(
                [(t.data["signature"], t.data["visible_tests"]) for t in tasks], rustc=self.rustc
            )
        except RustToolchainError as exc:
            log.warning(
                "%s: cannot type-check the Rust visible tests (%s); only the static checks "
                "ran (set env.rust_typecheck=false to silence this)",
                self.name,
                exc,
            )
            return
        for task, errs in zip(tasks, errors, strict=True):
            keep: list[str] = []
            for test, err in zip(task.data["visible_tests"], errs, strict=True):
                if err is None:
                    keep.append(test)
                else:
                    task.data["broken_visible_tests"].append(
                        BrokenTest(test, f"does not compile against the signature: {err}").to_dict()
                    )
            task.data["visible_tests"] = keep
            task.data["n_broken_visible_tests"] = len(task.data["broken_visible_tests"])


def with_examples(prompt: str, tests: Sequence[str], language: str) -> str:
    """``prompt`` with ``tests`` shown as examples, the stub still a valid stub."""
    if not tests:
        return prompt
    if language == "python":
        end = prompt.rfind('"""')
        if end < 0 or prompt.count('"""') < 2:
            return prompt
        indent = re.search(r"\n([ \t]*)$", prompt[:end])
        pad = indent.group(1) if indent else "    "
        lines = "".join(f"{pad}    {t.strip()}\n" for t in tests)
        block = f"{pad}Examples (from the problem statement):\n{lines}{pad}"
        head = prompt[:end].rstrip(" \t")
        if not head.endswith("\n"):
            head += "\n"
        return head + block + prompt[end:]
    m = list(re.finditer(r"^[ \t]*(?:pub\s+)?fn\s", prompt, re.M))
    if not m:
        return prompt
    at = m[-1].start()
    lines = "".join(f"//     {t.strip()}\n" for t in tests)
    return prompt[:at] + "// Examples (from the problem statement):\n" + lines + prompt[at:]


def leetcode_python_language() -> CodeLanguage:
    """Python as LeetCode runs it: the prelude, a high recursion limit, a big stack."""
    from reflexion_bench.environments.code_python import PythonLanguage

    return PythonLanguage(prelude=PYTHON_PRELUDE, recursion_limit=10**6, thread_stack_mb=512)
