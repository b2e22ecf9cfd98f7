"""Issue 27: every judgment independent of every other.

Nothing a program does may survive its judgment, reach the judge, or change another
program's verdict. Programs in ``independence_programs.py``; every one is judged
through the public entry points (``PythonLanguage().run_hidden`` / ``run_tests``, the
``evaluate`` command) on every backend of ``conftest.BACKENDS``.

1. State-carrying learners (SysV shm/sem/msg, POSIX mqueues, /dev/shm, /tmp, keyrings,
   an abstract-socket daemon, a leftover daemon, $HOME, the scratch dir, prlimit on the
   zygote / ancestors / pid 1 / every pid, the host name): judged repeatedly on one
   worker, none may pass and every verdict must be the same. The learning logic is
   proven on the host: with a channel that persists it passes within a few judgments.
   Each learner's channel is checked to work inside one judgment (skipped, with the
   reason, where a backend closes it altogether), and a probe judged three times on one
   worker must see the same world (limits, processes, IPC objects, keys, /tmp) each time.
2. Sabotage then correct: after each saboteur (on a fresh ``jobs=1`` sandbox), the
   correct program passes its hidden tests and self-tests, a wrong one still gets its
   usual ``fail``, and what a candidate can see of its world (limits, processes, IPC
   objects, keys, files) is what it was before the saboteur ran.
3. "Errored instead of fail": a candidate's own failure is ``fail`` or ``timeout``,
   never ``error``, and never a ``SandboxError``.
4. Self-test bombs (bounded, quick, non-pass; the next test still runs) and vacuous
   asserts (rejected).
5. Property: one learning program judged 20 times interleaved with others, on
   ``jobs=1`` and ``jobs=2``: 20 equal verdicts.
6. End to end: ``reflexion-bench evaluate`` on 12 copies of one learner: 0 of 12 pass.

Run it::

    .venv/bin/python -m pytest tests/security/test_independence.py -q -p no:cacheprovider
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.core.types import GenerateConfig, Message, Task
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.environments.humaneval import HumanEvalEnvironment
from reflexion_bench.judge import check_self_test
from reflexion_bench.sandbox._box import wall_backstop
from reflexion_bench.sandbox.base import Sandbox
from tests.conftest import SHARED_DATA
from tests.security import gaming_solutions
from tests.security.conftest import make_sandbox, sandbox_overrides
from tests.security.gaming_solutions import ST_TESTS, WRONG_HE0
from tests.security.independence_programs import (
    ALL,
    BOMBS,
    CONTROL_TEST,
    ENTRY,
    ERRORED,
    EVERY_CHANNEL,
    LEARN_WITHIN,
    LEARNERS,
    PROBE,
    PROBE_TEST,
    SABOTEURS,
    TASK,
    VACUOUS,
    Judged,
    simulated_learner,
)
from tests.security.test_gaming import (
    HIDDEN_TIMEOUT_S,
    SELF_TEST_TIMEOUT_S,
    Verdict,
    canonical,
    full_program,
)

#: Judgments of each learner (it passes within LEARN_WITHIN if any state persisted).
LEARN_ROUNDS = LEARN_WITHIN + 2
PROPERTY_ROUNDS = 20
#: A bounded self-test bomb comes back within this: the wall deadline the judge puts
#: on the fork that evaluates an assert (its test's backstop and 3 s to end it) and
#: start-up. Not a few times the CPU limit: the fork is bounded in CPU time, and on a
#: loaded machine (CI's four test workers on two cores) CPU seconds take several wall
#: seconds. Unbounded, a bomb such as the 10**10-step comprehension computes for minutes.
BOMB_WALL_S = wall_backstop(SELF_TEST_TIMEOUT_S) + 3.0 + 4.0
CANDIDATE_FAILURE = {"fail", "timeout"}

#: The learners judged one after another on one worker (the every-channel learner
#: shares untagged channels, resource limits, with them: it has its own tests).
SINGLE_LEARNERS = [j for j in LEARNERS if j is not EVERY_CHANNEL]
#: The learners' positive controls: the channel works inside one judgment (and which).
CONTROL_TESTS = (
    "assert has_close_elements([], -1.0) == True",
    "assert has_close_elements([], -2.0) == ''",
)
#: The channel the learner's state was read from in this judgment ("none": no state).
SOURCE_TEST = "assert has_close_elements([], -3.0) == ''"


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="session")
def he0() -> Task:
    return {t.id: t for t in HumanEvalEnvironment().load_tasks()}[TASK]


def program_of(j: Judged, task: Task) -> str:
    return full_program("humaneval", task, j.program) if j.with_prompt else j.program


def probe_program(task: Task) -> str:
    return canonical(task) + textwrap.dedent(PROBE)


def norm(detail: str) -> str:
    """A verdict's detail without durations (the same verdict may take longer)."""
    return re.sub(r"\b\d+(\.\d+)?\s?(s|ms)\b", "#s", detail)


async def hidden(sb: Sandbox, task: Task, program: str) -> Verdict:
    """The hidden-test verdict; a raised error (a SandboxError...) is kept as status
    ``exception`` (never a pass, never a candidate's verdict)."""
    try:
        out = await PythonLanguage().run_hidden(sb, program, task, HIDDEN_TIMEOUT_S)
    except Exception as exc:
        return Verdict(False, "exception", f"{type(exc).__name__}: {exc}"[-300:])
    return Verdict(out.passed, out.status, out.detail[-300:])


async def self_tests(
    sb: Sandbox, program: str, tests: Sequence[str], timeout_s: float = SELF_TEST_TIMEOUT_S
) -> list[Verdict]:
    """One verdict per self-test (or one ``exception`` verdict when the call raised)."""
    try:
        outs = await PythonLanguage().run_tests(sb, program, list(tests), ENTRY, timeout_s)
    except Exception as exc:
        return [Verdict(False, "exception", f"{type(exc).__name__}: {exc}"[-300:])]
    return [Verdict(o.passed, o.status, o.output[:300]) for o in outs]


def fingerprint(vs: list[Verdict]) -> dict[str, str]:
    """The probe's ``k=v`` fields (from the value its failing self-test saw)."""
    if len(vs) != 1 or vs[0].status != "fail":
        return {}
    text = vs[0].detail.strip("'\"")
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


# --------------------------------------------------------------------------- catalogue


def test_the_catalogue_is_broad_and_distinct(he0: Task) -> None:
    import ast

    names = [j.name for j in ALL]
    assert len(names) == len(set(names)) >= 25
    gaming = {g.name for g in gaming_solutions.ALL}
    assert not gaming & set(names)
    assert len({j.program for j in ALL}) == len(ALL)
    assert len(SINGLE_LEARNERS) >= 15 and len(SABOTEURS) >= 12 and len(ERRORED) >= 10
    assert len(BOMBS) >= 6 and len(VACUOUS) >= 7
    # Every program is valid Python (but the one that must not be).
    for j in ALL:
        if j.name != "err_syntax_error":
            ast.parse(program_of(j, he0))
    ast.parse(probe_program(he0))
    with pytest.raises(SyntaxError):
        ast.parse(program_of(next(j for j in ERRORED if j.name == "err_syntax_error"), he0))
    channels = {c for j in SINGLE_LEARNERS for c in j.channels}
    for word in ("shm", "sem", "msg", "mq", "keyring", "socket", "daemon", "prlimit", "tmp"):
        assert any(word in c for c in channels), word


def _simulate(task: Task, persist: bool, rounds: int) -> list[str]:
    """Judge the learner ``rounds`` times on the host with the real hidden test and an
    in-memory channel (kept across judgments if ``persist``): the outcome of each."""
    memory: dict[str, int] = {}
    outcomes = []
    for _ in range(rounds):
        ns: dict[str, Any] = {"__rb_memory__": memory if persist else {}, "__name__": "sim"}
        exec(full_program("humaneval", task, simulated_learner()), ns)
        exec(str(task.data["test"]).replace("check(has_close_elements)", ""), ns)
        try:
            ns["check"](ns["has_close_elements"])
            outcomes.append("pass")
        except AssertionError as exc:
            outcomes.append(f"fail at line {exc.__traceback__.tb_next.tb_lineno}")  # type: ignore[union-attr]
    return outcomes


def test_learners_would_pass_if_state_persisted(he0: Task) -> None:
    """Not vacuous: the learning logic every learner shares passes HumanEval/0 within
    LEARN_WITHIN judgments when its channel persists, and fails every time at the same
    assert when it does not."""
    learned = _simulate(he0, persist=True, rounds=LEARN_ROUNDS)
    assert "pass" in learned[:LEARN_WITHIN], learned
    fresh = _simulate(he0, persist=False, rounds=LEARN_ROUNDS)
    assert "pass" not in fresh and len(set(fresh)) == 1, fresh


# --------------------------------------------------------------------------- 1. learners


async def _learner_batch(backend: str, task: Task) -> dict[str, Any]:
    """Each learner LEARN_ROUNDS times on ONE worker (the learners interleave), then
    each one's positive control (the channel inside one judgment)."""
    sb = make_sandbox(backend, jobs=1)
    started = time.monotonic()

    async def rounds(j: Judged) -> list[Verdict]:
        prog = program_of(j, task)
        return [await hidden(sb, task, prog) for _ in range(LEARN_ROUNDS)]

    try:
        verdicts = await asyncio.gather(*(rounds(j) for j in SINGLE_LEARNERS))
    finally:
        await sb.aclose()
    gate = asyncio.Semaphore(3)

    async def control(j: Judged) -> list[Verdict]:
        # On a fresh sandbox of its own: the channel's first and only judgment there.
        async with gate:
            csb = make_sandbox(backend, jobs=1)
            try:
                return await self_tests(csb, program_of(j, task), list(CONTROL_TESTS))
            finally:
                await csb.aclose()

    controls = await asyncio.gather(*(control(j) for j in SINGLE_LEARNERS))
    out: dict[str, Any] = {"_seconds": time.monotonic() - started}
    for j, v, c in zip(SINGLE_LEARNERS, verdicts, controls, strict=True):
        out[j.name] = {"rounds": v, "control": c}
    return out


_LEARNED: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def learned(backend: str, he0: Task) -> dict[str, Any]:
    if backend not in _LEARNED:
        _LEARNED[backend] = _run(_learner_batch(backend, he0))
    return _LEARNED[backend]


@pytest.mark.parametrize("name", [j.name for j in SINGLE_LEARNERS])
def test_learner_never_passes(name: str, learned: dict[str, Any]) -> None:
    rounds: list[Verdict] = learned[name]["rounds"]
    passed = [i for i, v in enumerate(rounds) if v.passed]
    assert not passed, f"{name} passed at judgments {passed}: {rounds}"
    bad = [v for v in rounds if v.status not in CANDIDATE_FAILURE]
    assert not bad, f"{name}: a wrong program's verdict is not fail/timeout: {bad[:2]}"


@pytest.mark.parametrize("name", [j.name for j in SINGLE_LEARNERS])
def test_learner_verdicts_are_identical(name: str, learned: dict[str, Any]) -> None:
    """Without state the learner answers the same way every time: it fails at the same
    assert. A verdict that moves is state that crossed a judgment."""
    rounds: list[Verdict] = learned[name]["rounds"]
    seen = [(v.status, v.passed, norm(v.detail)) for v in rounds]
    assert len(set(seen)) == 1, f"{name}: verdicts changed across judgments: {seen}"


@pytest.mark.parametrize("name", [j.name for j in SINGLE_LEARNERS])
def test_learner_channel_works_within_one_judgment(name: str, learned: dict[str, Any]) -> None:
    """The positive control: the channel does carry state inside one judgment, so the
    learner's failure across judgments is the sandbox's doing. Skipped (reported) where
    the backend closes the channel altogether: the learner is vacuous there."""
    control: list[Verdict] = learned[name]["control"]
    if not control or not control[0].passed:
        why = "; ".join(f"{v.status}: {v.detail[:120]}" for v in control)
        pytest.skip(f"{name}: channel closed inside the judgment on this backend ({why})")
    assert control[0].passed


def test_every_judgment_sees_the_same_world(backend: str, he0: Task) -> None:
    """The probe (the correct program plus a fingerprint of what a candidate can see:
    its limits, processes, IPC objects, keys, /tmp and /dev/shm and whether they are
    writable) judged three times on one worker: three equal fingerprints."""

    async def go() -> list[dict[str, str]]:
        sb = make_sandbox(backend, jobs=1)
        try:
            return [
                fingerprint(await self_tests(sb, probe_program(he0), [PROBE_TEST]))
                for _ in range(3)
            ]
        finally:
            await sb.aclose()

    seen = _run(go())
    assert seen[0], seen
    diffs = [
        {k: (seen[0][k], s.get(k)) for k in seen[0] if s.get(k) != seen[0][k]} for s in seen[1:]
    ]
    assert not any(diffs), f"judgments 2 and 3 differ from the first: {diffs}"


# --------------------------------------------------------------------------- 2. sabotage


async def _sabotage_one(backend: str, task: Task, sab: Judged) -> dict[str, Any]:
    """On a fresh one-worker sandbox: probe twice, the saboteur (hidden, then one
    self-test), probe, then the correct program (hidden, self-tests), a wrong one."""
    sb = make_sandbox(backend, jobs=1)
    probe = probe_program(task)
    right = canonical(task)
    prog = program_of(sab, task)
    r: dict[str, Any] = {}
    try:
        r["probe_before"] = fingerprint(await self_tests(sb, probe, [PROBE_TEST]))
        r["probe_baseline"] = fingerprint(await self_tests(sb, probe, [PROBE_TEST]))
        r["sab_hidden"] = await hidden(sb, task, prog)
        r["sab_self"] = await self_tests(sb, prog, [ST_TESTS[0]])
        r["probe_after"] = fingerprint(await self_tests(sb, probe, [PROBE_TEST]))
        r["right_hidden"] = await hidden(sb, task, right)
        r["right_self"] = await self_tests(sb, right, list(ST_TESTS))
        r["wrong_hidden"] = await hidden(sb, task, full_program("humaneval", task, WRONG_HE0))
        r["right_hidden_again"] = await hidden(sb, task, right)
    finally:
        await sb.aclose()
    return r


async def _sabotage_batch(backend: str, task: Task) -> dict[str, Any]:
    started = time.monotonic()
    out: dict[str, Any] = {}
    for sab in SABOTEURS:  # one at a time: a saboteur's load must not blame another's
        t0 = time.monotonic()
        out[sab.name] = await _sabotage_one(backend, task, sab)
        out[sab.name]["seconds"] = round(time.monotonic() - t0, 1)
    out["_seconds"] = time.monotonic() - started
    return out


_SABOTAGED: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def sabotaged(backend: str, he0: Task) -> dict[str, Any]:
    if backend not in _SABOTAGED:
        _SABOTAGED[backend] = _run(_sabotage_batch(backend, he0))
    return _SABOTAGED[backend]


@pytest.mark.parametrize("name", [j.name for j in SABOTEURS])
def test_saboteur_is_a_candidate_failure(name: str, sabotaged: dict[str, Any]) -> None:
    r = sabotaged[name]
    v: Verdict = r["sab_hidden"]
    assert not v.passed and v.status in CANDIDATE_FAILURE, f"{name} hidden: {v}"
    st: list[Verdict] = r["sab_self"]
    assert not any(s.passed for s in st), f"{name} self-test passed: {st}"
    assert all(s.status in CANDIDATE_FAILURE for s in st), f"{name} self-test: {st}"


@pytest.mark.parametrize("name", [j.name for j in SABOTEURS])
def test_correct_program_after_saboteur_passes(name: str, sabotaged: dict[str, Any]) -> None:
    r = sabotaged[name]
    for key in ("right_hidden", "right_hidden_again"):
        assert r[key].passed, f"after {name}, the correct program ({key}): {r[key]}"
    st: list[Verdict] = r["right_self"]
    assert len(st) == len(ST_TESTS) and all(s.passed for s in st), (
        f"after {name}, the correct program's self-tests: {st}"
    )
    w: Verdict = r["wrong_hidden"]
    assert w.status == "fail" and "AssertionError" in w.detail, f"after {name}, wrong: {w}"


@pytest.mark.parametrize("name", [j.name for j in SABOTEURS])
def test_saboteur_leaves_nothing_behind(name: str, sabotaged: dict[str, Any]) -> None:
    """What the next candidate sees (its limits, processes, SysV and POSIX IPC objects,
    keys, /tmp, /dev/shm, the scratch dir, $HOME) is what the one before saw; fields that
    differ between the two probes before the saboteur are not compared."""
    r = sabotaged[name]
    before, baseline, after = r["probe_before"], r["probe_baseline"], r["probe_after"]
    assert before, f"the probe did not report (before {name}): {r}"
    stable = {k for k in before if baseline.get(k) == before[k]}
    assert after, f"after {name} the probe did not report"
    changed = {k: (before[k], after.get(k)) for k in stable if after.get(k) != before[k]}
    assert not changed, f"{name} left changes for the next candidate: {changed}"


# --------------------------------------------------------------------------- 3. errored


async def _errored_batch(backend: str, task: Task) -> dict[str, Any]:
    sb = make_sandbox(backend, jobs=1)
    started = time.monotonic()
    out: dict[str, Any] = {}
    try:
        for j in ERRORED:
            prog = program_of(j, task)
            out[j.name] = {
                "hidden": await hidden(sb, task, prog),
                "self": await self_tests(sb, prog, list(ST_TESTS[:2])),
            }
        # The worker still judges: the correct program passes after all of them.
        out["_right"] = await hidden(sb, task, canonical(task))
    finally:
        await sb.aclose()
    out["_seconds"] = time.monotonic() - started
    return out


_ERRORED_RUNS: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def errored(backend: str, he0: Task) -> dict[str, Any]:
    if backend not in _ERRORED_RUNS:
        _ERRORED_RUNS[backend] = _run(_errored_batch(backend, he0))
    return _ERRORED_RUNS[backend]


@pytest.mark.parametrize("name", [j.name for j in ERRORED])
def test_own_failure_is_fail_not_error_hidden(name: str, errored: dict[str, Any]) -> None:
    v: Verdict = errored[name]["hidden"]
    assert v.status != "exception", f"{name}: the harness raised: {v.detail}"
    assert v.status in CANDIDATE_FAILURE and not v.passed, f"{name}: {v}"


@pytest.mark.parametrize("name", [j.name for j in ERRORED])
def test_own_failure_is_fail_not_error_self_tests(name: str, errored: dict[str, Any]) -> None:
    vs: list[Verdict] = errored[name]["self"]
    assert not any(v.status == "exception" for v in vs), f"{name}: the harness raised: {vs}"
    assert len(vs) == 2 and not any(v.passed for v in vs), f"{name}: {vs}"
    assert all(v.status in CANDIDATE_FAILURE for v in vs), f"{name}: {vs}"


def test_the_worker_still_judges_after_the_errored_programs(errored: dict[str, Any]) -> None:
    assert errored["_right"].passed, errored["_right"]


# --------------------------------------------------------------------------- 4. self-tests


async def _bomb_batch(backend: str, task: Task) -> dict[str, Any]:
    sb = make_sandbox(backend, jobs=1)
    right = canonical(task)
    out: dict[str, Any] = {}
    try:
        await self_tests(sb, right, [CONTROL_TEST])  # warm the worker
        for b in BOMBS:
            t0 = time.monotonic()
            vs = await self_tests(sb, right, [b.test, CONTROL_TEST])
            out[b.name] = (vs, time.monotonic() - t0)
        out["_vacuous"] = await self_tests(sb, right, [*(v.test for v in VACUOUS), CONTROL_TEST])
    finally:
        await sb.aclose()
    return out


_BOMBED: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def bombed(backend: str, he0: Task) -> dict[str, Any]:
    if backend not in _BOMBED:
        _BOMBED[backend] = _run(_bomb_batch(backend, he0))
    return _BOMBED[backend]


@pytest.mark.parametrize("name", [b.name for b in BOMBS])
def test_self_test_bomb_is_bounded(name: str, bombed: dict[str, Any]) -> None:
    vs, seconds = bombed[name]
    assert vs[0].status != "exception", f"{name}: the harness raised: {vs[0].detail}"
    assert len(vs) == 2, vs
    assert not vs[0].passed, f"{name}: scored pass: {vs[0]}"
    assert vs[0].status != "error", f"{name}: an errored trial: {vs[0]}"
    # The judge survived it: the next (normal) test still runs and passes.
    assert vs[1].passed, f"{name}: the test after the bomb: {vs[1]}"
    assert seconds < BOMB_WALL_S, f"{name}: took {seconds:.1f}s (bounded: < {BOMB_WALL_S}s)"


@pytest.mark.parametrize("case", VACUOUS, ids=[v.name for v in VACUOUS])
def test_vacuous_assert_is_refused_by_the_whitelist(case: Any) -> None:
    assert check_self_test(case.test, ENTRY) is not None, case.test
    assert check_self_test(CONTROL_TEST, ENTRY) is None


@pytest.mark.parametrize("index", range(len(VACUOUS)), ids=[v.name for v in VACUOUS])
def test_vacuous_assert_is_rejected_by_the_judge(index: int, bombed: dict[str, Any]) -> None:
    vs: list[Verdict] = bombed["_vacuous"]
    assert len(vs) == len(VACUOUS) + 1, vs
    v = vs[index]
    assert not v.passed, f"{VACUOUS[index].test!r} ran and passed: {v}"
    assert "reject" in v.detail.lower(), f"{VACUOUS[index].test!r}: {v}"


def test_a_normal_self_test_still_runs(bombed: dict[str, Any]) -> None:
    assert bombed["_vacuous"][-1].passed, bombed["_vacuous"][-1]


# --------------------------------------------------------------------------- 5. property


async def _property(backend: str, task: Task, jobs: int) -> dict[str, list[Verdict]]:
    """EVERY_CHANNEL judged PROPERTY_ROUNDS times, each judgment followed by another
    program (correct, wrong, another learner, one that does not load); on ``jobs=2`` a
    second stream of programs runs alongside, so the learner meets both workers."""
    sb = make_sandbox(backend, jobs=jobs)
    learner = program_of(EVERY_CHANNEL, task)
    others = {
        "correct": canonical(task),
        "wrong": full_program("humaneval", task, WRONG_HE0),
        "shm learner": program_of(next(j for j in LEARNERS if j.name == "learn_sysv_shm"), task),
        "syntax": program_of(next(j for j in ERRORED if j.name == "err_syntax_error"), task),
    }
    names = list(others)
    seen: dict[str, list[Verdict]] = {"learner": [], **{n: [] for n in names}}

    async def main_stream() -> None:
        for r in range(PROPERTY_ROUNDS):
            seen["learner"].append(await hidden(sb, task, learner))
            name = names[r % len(names)]
            seen[name].append(await hidden(sb, task, others[name]))

    async def side_stream() -> None:
        for r in range(PROPERTY_ROUNDS):
            name = names[(r + 1) % len(names)]
            seen[name].append(await hidden(sb, task, others[name]))

    try:
        if jobs > 1:
            await asyncio.gather(main_stream(), side_stream())
        else:
            await main_stream()
        # For the report: the channel a judgment's state was read from ("none" if none).
        seen["source"] = await self_tests(sb, learner, [SOURCE_TEST])
    finally:
        await sb.aclose()
    return seen


@pytest.mark.parametrize("jobs", [1, 2])
def test_repeated_judgment_gives_identical_verdicts(backend: str, he0: Task, jobs: int) -> None:
    seen = _run(_property(backend, he0, jobs))
    lv = seen["learner"]
    assert len(lv) == PROPERTY_ROUNDS
    keys = [(v.status, v.passed, norm(v.detail)) for v in lv]
    source = seen["source"][0].detail
    assert len(set(keys)) == 1, f"jobs={jobs}: the learner's verdicts differ: {keys}; {source}"
    assert not lv[0].passed and lv[0].status in CANDIDATE_FAILURE, (lv[0], f"state from {source}")
    assert seen["correct"] and all(v.passed for v in seen["correct"]), seen["correct"]
    for name in ("wrong", "shm learner", "syntax"):
        assert seen[name] and all(v.status == "fail" for v in seen[name]), (name, seen[name])


# --------------------------------------------------------------------------- 6. evaluate


@pytest.mark.parametrize("jobs", [1, 2])
def test_evaluate_on_copies_of_a_learner_passes_none(
    backend: str, he0: Task, jobs: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion_bench.commands.evaluate import main

    program = program_of(EVERY_CHANNEL, he0)
    rows = [{"task_id": TASK, "solution": program} for _ in range(12)]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "results.jsonl"
    group, *backend_sets = sandbox_overrides(backend)
    argv = ["--benchmark", "humaneval", "--samples", str(samples), "--out", str(out)]
    argv += ["--jobs", str(jobs), "--timeout", str(HIDDEN_TIMEOUT_S)]
    argv += ["--sandbox", group.split("=", 1)[1]]
    for o in [f"paths.data_dir={SHARED_DATA}", *backend_sets]:
        argv += ["--set", o]
    assert main(argv) == 0, capsys.readouterr()
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(results) == 12
    assert [r["task_id"] for r in results] == [TASK] * 12
    assert not [i for i, r in enumerate(results) if r["passed"]], results
    assert {r["status"] for r in results} <= CANDIDATE_FAILURE, results
    assert len({norm(str(r["detail"])) for r in results}) == 1, [r["detail"] for r in results]


# --------------------------------------------------------------------------- 7. a full run


def _learning_reply(messages: Sequence[Message], config: GenerateConfig) -> str:
    """A scripted model that submits the every-channel learner at every trial (the
    program that would pass by its LEARN_WITHIN-th judgment if any state persisted),
    writes ordinary self-tests and reflects without content."""
    system = messages[0].content if messages else ""
    if "unit tests" in system and "You write" in system:
        return "```python\n" + "\n".join(ST_TESTS) + "\n```\n"
    if "You review" in system:
        return "The implementation failed; try again."
    return f"```python\n{textwrap.dedent(EVERY_CHANNEL.program).strip()}\n```\n"


def test_a_run_whose_model_submits_a_learner_at_every_trial_scores_zero(
    backend: str, tmp_path: Path
) -> None:
    from hydra import compose, initialize_config_dir

    from reflexion_bench.analysis.metrics import summarize
    from reflexion_bench.config import CONFIG_DIR
    from reflexion_bench.models.mock import MockModel
    from reflexion_bench.runner.run import build_context, execute
    from reflexion_bench.runner.runlog import load_run_records

    trials = LEARN_WITHIN + 2
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "model=mock",
                "progress=false",
                "env=humaneval",
                "limit=1",  # HumanEval/0, the learner's task
                "strategy=reflexion",
                f"strategy.max_trials={trials}",
                f"scorer.timeout_s={HIDDEN_TIMEOUT_S}",
                f"evaluator.test_timeout_s={SELF_TEST_TIMEOUT_S}",
                *sandbox_overrides(backend),
            ],
        )
    ctx = build_context(cfg, tmp_path / "run")
    ctx.services.model = MockModel(responder=_learning_reply)

    async def go() -> None:
        try:
            await execute(ctx)
        finally:
            if ctx.services.sandbox is not None:
                await ctx.services.sandbox.aclose()

    _run(go())
    records = load_run_records(ctx.run_dir)
    assert [r["task_id"] for r in records] == [TASK] * len(records) and records
    # The learner really was what the model submitted, at every trial.
    assert all("def has_close_elements" in (r.get("candidate") or "") for r in records)
    summary = summarize(records)
    assert summary["first_try"] == 0.0, summary
    assert summary["final"] == 0.0, summary  # pass@1
    hidden_verdicts = [(r.get("hidden") or {}).get("status") for r in records]
    assert not any((r.get("hidden") or {}).get("passed") for r in records), hidden_verdicts
    assert set(hidden_verdicts) <= CANDIDATE_FAILURE, hidden_verdicts
