"""The HumanEval+ input generator is deterministic (issue 28): no cap depends on a clock.

``scripts/make_humaneval_plus.py --only`` regenerates single problems and must give them
exactly the rows of the shipped file, on any machine, quiet or loaded. The problems
chosen are fast and hit the step cap, where the old per-input time cap made a busy
machine keep other inputs: HumanEval/55 and /63 (recursive canonical solutions that run
past ``--max-steps`` on the larger inputs) and /39 (a reference that draws random
Miller-Rabin witnesses, a canonical solution that trial-divides large Fibonacci
numbers). HumanEval/147 is left out: its cubic canonical solution costs about 20 s of
CPU per hash seed, a minute or more on a busy machine.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_humaneval_plus.py"
SHIPPED = ROOT / "reflexion_bench" / "data" / "humaneval_plus_inputs.jsonl.gz"
TASKS = ("HumanEval/39", "HumanEval/55", "HumanEval/63")


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return {r["task_id"]: r for r in map(json.loads, fh) if r}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_humaneval_plus", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.requires("shared_data")
def test_only_regenerates_the_shipped_rows(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "plus.jsonl.gz"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    only = ["--only", ",".join(TASKS[:2]), "--only", TASKS[2]]  # a list, and repeated
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(shared_data), "--out", str(out), *only],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got, shipped = _rows(out), _rows(SHIPPED)
    assert sorted(got) == sorted(TASKS)
    for tid in TASKS:
        assert got[tid]["inputs"] == shipped[tid]["inputs"], tid
        assert got[tid] == shipped[tid], tid  # the counts and the reasons too
    # Some inputs were dropped by the step cap: the cap is exercised, not idle.
    assert any("steps" in why for tid in TASKS for why in got[tid]["dropped"])


def test_only_without_out_refuses_to_overwrite_the_shipped_file(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path), "--only", "HumanEval/0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2 and "--out" in proc.stderr


SOLUTIONS = """
def fib(n):
    "A docstring stays one."
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def spin():
    while True:
        pass

def swallow():  # a bare except, as in HumanEval/105's canonical solution
    while True:
        try:
            while True:
                pass
        except:
            pass

def items(n):  # comprehensions and lambdas count; a map taking the tick's StopIteration
    return len(list(map(lambda x: x, [i for i in range(n)])))
"""


def test_step_counter_is_exact_and_stops_loops() -> None:
    mod = _script()
    ns: dict[str, Any] = {}
    exec(mod.instrument(SOLUTIONS), ns)  # as the worker compiles them
    fib, spin, swallow, items = (ns[k] for k in ("fib", "spin", "swallow", "items"))
    assert fib.__doc__ == "A docstring stays one."
    # One step per call: fib(15) makes 1973 calls, the same count every time.
    assert mod.run_counted(fib, (15,), 10**6) == mod.run_counted(fib, (15,), 10**6)
    assert mod.run_counted(fib, (15,), 10**6) == ("ok", 610, 1973)
    assert mod.run_counted(fib, (15,), 1973) == ("ok", 610, 1973)  # exactly enough
    assert mod.run_counted(fib, (15,), 1972) == ("steps", None, 1972)
    assert mod.run_counted(spin, (), 1000) == ("steps", None, 1000)
    # The counter's StopIteration caught by a bare except: the next tick raises again.
    assert mod.run_counted(swallow, (), 1000) == ("steps", None, 1000)
    assert mod.run_counted(items, (10,), 1000) == ("ok", 10, 21)  # 1 + 10 + 10
    # Past the cap inside the map's lambda: list() takes StopIteration for the map's
    # end and returns a short list, but the verdict is still steps.
    assert mod.run_counted(items, (10,), 15) == ("steps", None, 15)
