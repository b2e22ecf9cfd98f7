"""Python as a :class:`~reflexion_bench.environments.code_common.CodeLanguage`.

Extraction is forgiving (fenced or bare code, repeated signature, body only, prose
around it, demo code after it); execution goes through the unforgeable judge
(:mod:`reflexion_bench.judge`): hidden tests and self-tests run in a trusted judge
process, the candidate in a separate process that can only answer calls with plain
data, so no candidate can write its own verdict.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap

from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_common import (
    CodeLanguage,
    ExtractedCode,
    HiddenOutcome,
    ParsedTests,
    TestOutcome,
)
from reflexion_bench.judge import check_self_test, judge_hidden, judge_self_tests, timing_fields
from reflexion_bench.sandbox.base import Sandbox

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_PY_TAGS = {"", "python", "py", "python3", "py3"}
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_CODE_START = re.compile(r"^(?:async\s+def |def |class |import |from \S+ import |@\w)")
_LIST_PREFIX = re.compile(r"^\s*(?:[-*>]|\d+[.)]|#+)?\s*`*\s*(?=assert\b|self\.assert\w+\s*\()")

_COMPARE_METHODS: dict[str, type[ast.cmpop]] = {
    "assertEqual": ast.Eq,
    "assertEquals": ast.Eq,
    "assertListEqual": ast.Eq,
    "assertTupleEqual": ast.Eq,
    "assertDictEqual": ast.Eq,
    "assertSetEqual": ast.Eq,
    "assertSequenceEqual": ast.Eq,
    "assertCountEqual": ast.Eq,  # order-free; approximated below with sorted()
    "assertNotEqual": ast.NotEq,
    "assertIs": ast.Is,
    "assertIsNot": ast.IsNot,
    "assertIn": ast.In,
    "assertNotIn": ast.NotIn,
    "assertGreater": ast.Gt,
    "assertGreaterEqual": ast.GtE,
    "assertLess": ast.Lt,
    "assertLessEqual": ast.LtE,
}


_ast_parse = ast.parse  # the one parser call below (tests replace it)


def _parse(src: str) -> ast.Module:
    """``ast.parse`` of model-written text. CPython 3.11 before 3.11.8 can raise a
    spurious ``SystemError: AST constructor recursion depth mismatch`` (gh-106905):
    parsed again once, then reported as a SyntaxError, so a reply never ends a trial."""
    for attempt in (1, 2):
        try:
            return _ast_parse(src)
        except SystemError as exc:
            if attempt == 2:
                raise SyntaxError(f"the parser failed: {exc}") from None
    raise AssertionError("unreachable")


def _parses(src: str) -> bool:
    try:
        _parse(src)
    except (SyntaxError, ValueError):
        return False
    return True


def _defines(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    return None


def _defines_text(src: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", src, re.M) is not None


def _is_stub(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A definition with nothing but a docstring / pass / ...: an echo of the prompt."""
    for stmt in fn.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring or `...`
        return False
    return True


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


_KEEP = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
    ast.Try,
    ast.If,
    ast.With,
)


def _drop_demo_code(src: str) -> tuple[str, int]:
    """Remove top-level demo statements (prints, asserts, loops, ``__main__`` blocks)
    that models append after the solution: they are not part of the function and a
    wrong demo assert would fail an otherwise correct program at import."""
    try:
        tree = _parse(src)
    except SyntaxError:
        return src, 0
    lines = src.splitlines(keepends=True)
    drop: list[tuple[int, int]] = []
    for i, node in enumerate(tree.body):
        is_docstring = (
            i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        )
        if is_docstring:
            continue
        if isinstance(node, _KEEP) and not _is_main_guard(node):
            continue
        end = node.end_lineno or node.lineno
        drop.append((node.lineno, end))
    if not drop:
        return src, 0
    keep = [
        line for n, line in enumerate(lines, 1) if not any(start <= n <= end for start, end in drop)
    ]
    out = "".join(keep).rstrip() + "\n"
    return (out, len(drop)) if _parses(out) else (src, 0)


def _prompt_preamble(prompt: str, program: str, entry_point: str) -> str:
    """What the prompt defines besides the entry point (imports, helper functions,
    constants) and the program lacks: a model that rewrites only the asked function
    must still get ``List`` or a helper like HumanEval/38's ``encode_cyclic``."""
    try:
        ptree = _parse(prompt)
        ctree = _parse(program)
    except SyntaxError:
        return ""
    defined = _bound_names(ctree)
    prompt_lines = prompt.splitlines(keepends=True)
    parts: list[str] = []
    for node in ptree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue  # must stay first; the program has its own if it needs them
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == entry_point or node.name in defined:
                continue
        elif isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.AnnAssign):
            if _bound_names(ast.Module(body=[node], type_ignores=[])) <= defined:
                continue  # the program already has it
        else:
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        parts.append("".join(prompt_lines[start - 1 : node.end_lineno]))
    return "\n".join(p.rstrip() for p in parts) + "\n\n" if parts else ""


@functools.lru_cache(maxsize=1024)
def _prompt_helpers(prompt: str, entry_point: str) -> str:
    """The prompt's own definitions besides the entry point (computed once per task)."""
    return _prompt_preamble(prompt, "", entry_point)


def _bound_names(tree: ast.Module) -> set[str]:
    """Names a module binds at top level (imports, definitions, simple assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _with_preamble(program: str, preamble: str) -> str:
    if not preamble:
        return program
    lines = program.splitlines(keepends=True)
    # Keep `from __future__` imports (and a module docstring before them) first.
    head = 0
    for i, line in enumerate(lines):
        if line.startswith("from __future__"):
            head = i + 1
    return "".join(lines[:head]) + preamble + "".join(lines[head:])


def _as_body(body: str, prompt: str) -> str | None:
    """``prompt`` + ``body`` as a program, fixing the body's indentation; None if no
    indentation makes it parse."""
    body = body.strip("\n")
    if not body.strip():
        return None
    prompt = prompt.rstrip() + "\n"
    tries = [body, textwrap.indent(body, "    "), textwrap.indent(textwrap.dedent(body), "    ")]
    # A first line that lost its indent while the rest kept it (common in chat replies).
    first, _, rest = body.partition("\n")
    if first and not first.startswith((" ", "\t")) and rest.startswith((" ", "\t")):
        tries.append("    " + first + "\n" + rest)
    for candidate in tries:
        if not candidate.startswith((" ", "\t")):
            continue
        program = prompt + candidate.rstrip() + "\n"
        if _parses(program):
            return program
    return None


class PythonLanguage(CodeLanguage):
    """Python 3.

    Args:
        prelude: Code exec()ed before the candidate in hidden runs and self-tests
            (e.g. LeetCode's usual imports).
        recursion_limit: ``sys.setrecursionlimit`` for hidden runs (None: Python's).
        thread_stack_mb: Run hidden tests in a thread with this stack size (deep
            recursion needs it); None runs them in the main thread.
    """

    name = "python"
    display_name = "Python"
    fence = "python"

    def __init__(
        self,
        prelude: str = "",
        recursion_limit: int | None = None,
        thread_stack_mb: int | None = None,
    ) -> None:
        self.prelude = prelude
        self.recursion_limit = recursion_limit
        self.thread_stack_mb = thread_stack_mb

    # ------------------------------------------------------------------ extraction

    def extract_code(self, text: str, prompt: str, entry_point: str) -> ExtractedCode:
        notes: list[str] = []
        text = _THINK.sub("", text or "").replace("\r\n", "\n")
        blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
        py_blocks = [b for tag, b in blocks if tag in _PY_TAGS] or [b for _, b in blocks]
        kind = "fenced"
        looks_like_code = True
        if py_blocks:
            code: str | None = self._pick_block(py_blocks, entry_point, notes)
        else:
            kind = "raw"
            code, looks_like_code = self._raw_code(text, notes)
        if code is None or not code.strip():
            return self._stub(prompt, "no code found in the model's reply", notes)

        if not _defines_text(code, entry_point):
            top_level_def = re.search(r"^(?:async\s+def|def|class)\s", code, re.M)
            if top_level_def is None:
                body_program = _as_body(code, prompt)
                if body_program is not None:
                    notes.append("reply holds only the function body; prepended the signature")
                    return ExtractedCode(body_program, "body", notes)
                if not looks_like_code:
                    return self._stub(prompt, "no code found in the model's reply", notes)
                notes.append("reply is neither a function definition nor a valid body")
            else:
                notes.append(f"reply does not define `{entry_point}`")
        code, dropped = _drop_demo_code(code)
        if dropped:
            notes.append(f"dropped {dropped} top-level demo statement(s)")
        if not _parses(code):
            notes.append("the extracted code does not parse")
            return ExtractedCode(code.rstrip() + "\n", kind, notes)
        preamble = _prompt_preamble(prompt, code, entry_point)
        if preamble:
            notes.append("added the prompt's imports/helpers the code lacked")
        return ExtractedCode(_with_preamble(code.rstrip() + "\n", preamble), kind, notes)

    @staticmethod
    def _pick_block(blocks: list[str], entry_point: str, notes: list[str]) -> str:
        defining: list[str] = []
        for b in blocks:
            if _defines_text(b, entry_point):
                defining.append(b)
        if not defining:
            # A body-only answer, or a renamed function: the longest block is the answer.
            return max(blocks, key=len)
        for b in defining:
            try:
                fn = _defines(_parse(b), entry_point)
            except SyntaxError:
                continue
            if fn is not None and not _is_stub(fn):
                if len(defining) > 1:
                    notes.append(
                        f"{len(defining)} code blocks define `{entry_point}`; took the first full one"
                    )
                return b
        return defining[0]

    @staticmethod
    def _raw_code(text: str, notes: list[str]) -> tuple[str | None, bool]:
        """Unfenced code: from the first line that starts like code to the last line
        that keeps it parsing. Returns (code, whether a code-like start was found)."""
        lines = text.split("\n")
        start = next((i for i, ln in enumerate(lines) if _CODE_START.match(ln)), None)
        if start is None:
            # Possibly a bare body; the caller tries it under the signature.
            stripped = text.strip("\n")
            return (stripped if stripped.strip() else None), False
        if start:
            notes.append("dropped prose before the code")
        chunk = lines[start:]
        # Trim trailing prose until it parses (bounded: long replies keep their tail).
        for end in range(len(chunk), 0, -1):
            src = "\n".join(chunk[:end])
            if _parses(src):
                if end < len(chunk) and any(ln.strip() for ln in chunk[end:]):
                    notes.append("dropped prose after the code")
                return src, True
            if len(chunk) - end > 200:
                break
        return "\n".join(chunk), True

    @staticmethod
    def _stub(prompt: str, why: str, notes: list[str]) -> ExtractedCode:
        notes.append(why)
        program = prompt.rstrip() + "\n" + f"    raise NotImplementedError({why!r})\n"
        if not _parses(program):
            program = f"raise NotImplementedError({why!r})\n"
        return ExtractedCode(program, "none", notes)

    def complete_solution(self, source: str, prompt: str, entry_point: str) -> str:
        if _defines_text(source, entry_point):
            return source
        program = _as_body(source, prompt)
        if program is not None:
            return program
        # Not a valid body either: keep the submitter's text under the prompt so that
        # the verdict is an honest failure (syntax error), not a crash.
        return prompt.rstrip() + "\n" + source

    # ------------------------------------------------------------------ tests

    def parse_tests(self, text: str, entry_point: str) -> ParsedTests:
        text = _THINK.sub("", text or "").replace("\r\n", "\n")
        blocks = [b for tag, b in _FENCE.findall(text) if tag.lower() in _PY_TAGS]
        source = "\n".join(blocks) if blocks else text
        lines = source.split("\n")
        tests: list[str] = []
        dropped: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            m = _LIST_PREFIX.match(line)
            if m is None:
                i += 1
                continue
            first = line[m.end() :].rstrip().rstrip("`").rstrip()
            stmt: ast.stmt | None = None
            used = 1
            # An assert may span lines (a long literal); join until it parses.
            for extra in range(0, 15):
                chunk = "\n".join([first, *lines[i + 1 : i + 1 + extra]])
                try:
                    tree = _parse(chunk)
                except SyntaxError:
                    continue
                if len(tree.body) == 1:
                    stmt, used = tree.body[0], 1 + extra
                break
            if stmt is not None and not isinstance(stmt, ast.Assert):
                stmt = _unittest_to_assert(stmt)
            if stmt is None:
                dropped.append(first)
                i += 1
                continue
            i += used
            stmt = _rename_candidate(stmt, entry_point)
            if not _calls(stmt, entry_point):
                dropped.append(first)
                continue
            test = ast.unparse(stmt)
            if check_self_test(test, entry_point) is not None:
                # Self-tests run as expressions in the judge: only pure asserts over the
                # entry point's results qualify (the actor must not forge its verdicts).
                dropped.append(first)
                continue
            if test not in tests:
                tests.append(test)
        return ParsedTests(tests=tests, dropped=len(dropped), dropped_examples=dropped[:5])

    # ------------------------------------------------------------------ execution

    async def run_tests(
        self,
        sandbox: Sandbox,
        program: str,
        tests: list[str],
        entry_point: str,
        timeout_s: float,
    ) -> list[TestOutcome]:
        verdicts = await judge_self_tests(
            sandbox,
            program=program,
            tests=tests,
            entry_point=entry_point,
            timeout_s=timeout_s,
            candidate_prelude=self.prelude,
        )
        return [
            TestOutcome(t, v.status, v.output, dict(v.extra))
            for t, v in zip(tests, verdicts, strict=True)
        ]

    async def run_hidden(
        self, sandbox: Sandbox, program: str, task: Task, timeout_s: float
    ) -> HiddenOutcome:
        entry = str(task.data.get("entry_point", ""))
        prelude = str(task.data.get("prelude", self.prelude) or "")
        verdict = await judge_hidden(
            sandbox,
            program=program,
            test=str(task.data.get("test", "")),
            test_call=str(task.data.get("test_call", "") or ""),
            entry_point=entry,
            timeout_s=timeout_s,
            # The prompt's own helpers (HumanEval/32's `poly`...) judge the answer, not
            # the candidate's copies of them.
            helpers=_prompt_helpers(task.prompt, entry),
            judge_prelude=prelude,
            candidate_prelude=prelude,
            recursion_limit=task.data.get("recursion_limit", self.recursion_limit),
            stack_mb=task.data.get("thread_stack_mb", self.thread_stack_mb),
        )
        return HiddenOutcome(
            verdict.status, verdict.detail, verdict.duration_s, timing_fields(verdict)
        )


def _unittest_to_assert(stmt: ast.stmt) -> ast.Assert | None:
    """``self.assertEqual(f(1), 2)`` (unittest style, which small models often write)
    as the plain ``assert f(1) == 2``; None for what has no assert form."""
    if not (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id == "self"
    ):
        return None
    call = stmt.value
    method, args = call.func.attr, call.args  # type: ignore[attr-defined]
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    test: ast.expr | None = None
    if method in _COMPARE_METHODS and len(args) >= 2:
        left, right = args[0], args[1]
        if method == "assertCountEqual":
            left = ast.Call(ast.Name("sorted", ast.Load()), [left], [])
            right = ast.Call(ast.Name("sorted", ast.Load()), [right], [])
        test = ast.Compare(left=left, ops=[_COMPARE_METHODS[method]()], comparators=[right])
    elif method in ("assertTrue", "assert_") and args:
        test = args[0]
    elif method == "assertFalse" and args:
        test = ast.UnaryOp(ast.Not(), args[0])
    elif method in ("assertIsNone", "assertIsNotNone") and args:
        op: ast.cmpop = ast.Is() if method == "assertIsNone" else ast.IsNot()
        test = ast.Compare(left=args[0], ops=[op], comparators=[ast.Constant(None)])
    elif method in ("assertAlmostEqual", "assertNotAlmostEqual") and len(args) >= 2:
        diff = ast.BinOp(args[0], ast.Sub(), args[1])
        if "delta" in kw:
            test = ast.Compare(
                ast.Call(ast.Name("abs", ast.Load()), [diff], []), [ast.LtE()], [kw["delta"]]
            )
        else:
            places = kw.get("places", args[2] if len(args) > 2 else ast.Constant(7))
            rounded = ast.Call(ast.Name("round", ast.Load()), [diff, places], [])
            test = ast.Compare(rounded, [ast.Eq()], [ast.Constant(0)])
        if method == "assertNotAlmostEqual":
            test = ast.UnaryOp(ast.Not(), test)
    if test is None:
        return None
    return ast.fix_missing_locations(ast.copy_location(ast.Assert(test=test, msg=None), stmt))


def _rename_candidate(stmt: ast.stmt, entry_point: str) -> ast.stmt:
    """Tests written against ``candidate(...)`` (HumanEval's check style) call the
    entry point instead."""

    class _Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            if node.id == "candidate":
                return ast.copy_location(ast.Name(id=entry_point, ctx=node.ctx), node)
            return node

    renamed = _Rename().visit(stmt)
    assert isinstance(renamed, ast.stmt)
    return renamed


def _calls(stmt: ast.stmt, entry_point: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == entry_point
        for n in ast.walk(stmt)
    )
