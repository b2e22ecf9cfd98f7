"""Re-score logged programs (the paper's own runs) under the base and the plus tests.

:func:`rescore_rows` judges each row's program with the project's scorer twice (the
benchmark's base tests, then the plus tests of :mod:`reflexion_bench.scorers.plus`);
:func:`plus_verdicts` is the hook ``audit-paper`` calls for its "pass@1 under stronger
tests" column (``rescored_plus``). A task without plus inputs (23 MBPP problems that
MBPP+ lacks, mbpp_56 whose function MBPP+ names differently) keeps its base verdict, so
pass@1 under plus is over the same tasks as the paper's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reflexion_bench.environments.code_common import problem_to_task
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.code import CodeScorer


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an original-harness JSONL log."""
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def is_python_code_log(rows: list[dict[str, Any]]) -> bool:
    """HumanEval or MBPP in Python (what the plus tests cover)."""
    if not rows:
        return False
    first = rows[0]
    tid = str(first.get("task_id", first.get("name", "")))
    lang = str(first.get("language", "py"))
    return lang in ("py", "python") and (tid.startswith("HumanEval/") or tid.startswith("mbpp_"))


async def rescore_rows(
    rows: list[dict[str, Any]],
    sandbox: Sandbox,
    scorer: CodeScorer,
    programs: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One record per row: ``task_id``, ``logged`` (the log's ``is_solved``), ``base``,
    ``plus`` (bools), statuses and the plus detail. The program is ``programs[task_id]``
    when given, else the row's ``solution`` completed as the original harness did."""
    lang = PythonLanguage()

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        task = problem_to_task(row, "log", lang, "log")
        entry = str(row["entry_point"])
        program = (programs or {}).get(task.id)
        if program is None:
            program = lang.complete_solution(str(row.get("solution", "")), task.prompt, entry)
        base = await scorer.run(sandbox, task, program)
        plus = await scorer.run_plus(sandbox, task, program, base)
        logged = row.get("is_solved")
        return {
            "task_id": task.id,
            "logged": None if logged is None else str(logged).lower() == "true",
            "base": base.passed,
            "base_status": base.status,
            "plus": bool(plus["passed"]),
            "plus_status": plus["status"],
            "plus_detail": str(plus.get("detail", ""))[:300],
            "plus_inputs": int(plus.get("inputs", 0)),
        }

    return list(await asyncio.gather(*(one(r) for r in rows)))


def plus_verdicts(
    source: Path,
    programs: Mapping[str, str] | None = None,
    *,
    data_dir: Path | None = None,
    cache_dir: str | None = None,
    jobs: int = 2,
) -> dict[str, bool] | None:
    """``{task_id: passes plus}`` for a Python HumanEval/MBPP log of the original
    harness (None for any other log). ``data_dir`` holds ``evalplus/MbppPlus-v1.jsonl``
    (MBPP's plus inputs); ``cache_dir`` keeps the reference's expected outputs."""
    from reflexion_bench.sandbox.local import LocalSandbox

    rows = read_rows(source)
    if not is_python_code_log(rows):
        return None
    mbpp = data_dir / "evalplus" / "MbppPlus-v1.jsonl" if data_dir else None
    if str(rows[0].get("name", "")).startswith("mbpp_") and not (mbpp and mbpp.is_file()):
        return None  # MBPP's plus inputs are MBPP+'s: without the file, no plus verdict
    scorer = CodeScorer(
        tests="both",
        mbpp_plus_path=str(mbpp) if mbpp and mbpp.is_file() else None,
        cache_dir=cache_dir,
    )

    async def run() -> list[dict[str, Any]]:
        sb = LocalSandbox(jobs=jobs)
        try:
            return await rescore_rows(rows, sb, scorer, programs)
        finally:
            await sb.aclose()

    return {r["task_id"]: bool(r["plus"]) for r in asyncio.run(run())}
