"""Re-judge a finished run's logged programs under the plus tests, without any model.

A run scored with ``scorer.tests=base`` holds every program its scorer judged (each
trial's ``candidate``) but no plus verdict. :func:`rescore_run` judges those programs
with the project's own plus tests (:meth:`reflexion_bench.scorers.code.CodeScorer.run_plus`:
HumanEval+ inputs shipped in the package, MBPP+ from the data folder) and appends one
verdict per program to ``RUN_DIR/rescore_plus.jsonl``; :func:`with_rescore` lays those
verdicts over the run's records (``hidden.extra.plus``, as a live ``scorer.tests=both``
run logs them), so the report's plus columns come from the files alone.

Which programs: every effective trial record (:func:`reflexion_bench.runner.runlog.
load_run_records`, what pass@1 and the per-trial curves count) whose ``hidden`` verdict
is known and that has a ``candidate``. The base half of the plus verdict is the logged
base verdict (the plus tests are the base tests and then the plus inputs; a program
that failed base in the log fails plus without running: that is the report's base
column, never re-decided here). Trials without a hidden verdict (the actor errored
before scoring) have no program to judge; they fail under plus as they fail base.

The file (one JSON object a line, append-only; newest row wins):

    {"schema": 1, "type": "plus_verdict", "task_id", "trial", "attempt_id",
     "program_sha256", "settings_key", "settings": {...}, "status", "passed", "detail",
     "verdict": {the scorer's whole plus verdict dict}, "logged_base": {...},
     "judged": true|false, "duration_s", "date", "sandbox": {...}, "code": {...}}

``status`` is ``pass``, ``fail`` or ``timeout`` (``verdict.status`` keeps the scorer's own,
e.g. a logged base ``error``), or ``error`` when there is no verdict: the judgment
raised (the sandbox failed), ``verdict`` is null and ``detail`` says why.
``settings`` names what decides a verdict (the scorer's timeouts, the plus call limits,
the identity and SHA-256 of the plus inputs' file, that base is taken from the log);
``settings_key`` is its hash. A program already judged (task, trial, program hash) under
the same settings is skipped on a second run; a row with ``status: "error"`` (the
sandbox failed: no verdict) is not a verdict, so the next run judges that program
again. :func:`with_rescore` uses the rows of the newest settings in the file only, so a
re-score under other settings never mixes with an older one.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from reflexion_bench.core.runlog import RunLogWriter, iter_records

RESCORE_NAME = "rescore_plus.jsonl"
ROW_TYPE = "plus_verdict"
#: Benchmarks with plus tests (Python HumanEval and MBPP).
PLUS_BENCHMARKS = ("humaneval", "mbpp")


def rescore_path(run_dir: Path) -> Path:
    return run_dir / RESCORE_NAME


def program_sha256(program: str) -> str:
    return hashlib.sha256(program.encode("utf-8", "surrogatepass")).hexdigest()


@lru_cache(maxsize=8)
def file_identity(path: str) -> dict[str, Any]:
    """Name, size and SHA-256 of a data file (the plus inputs' identity)."""
    from reflexion_bench.models.identity import file_digest

    p = Path(path)
    return {"name": p.name, "bytes": p.stat().st_size, "sha256": file_digest(p, None)}


def settings_key(settings: Mapping[str, Any]) -> str:
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# --------------------------------------------------------------------------- reading


def read_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The rows of ``RUN_DIR/rescore_plus.jsonl`` in file order ([] when absent); a
    corrupt line is dropped with a warning (as in the run log)."""
    path = rescore_path(run_dir)
    if not path.is_file():
        return []
    return [r for r in iter_records(path) if r.get("type") == ROW_TYPE]


def row_key(task_id: Any, trial: Any, sha: str) -> tuple[str, int, str]:
    return (str(task_id), int(trial), sha)


def current_verdicts(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, int, str], dict[str, Any]]:
    """``{(task, trial, program hash): row}``: the newest verdict (not error) of each
    program under the newest settings in the file."""
    verdicts = [
        r for r in rows if r.get("status") != "error" and isinstance(r.get("verdict"), dict)
    ]
    if not verdicts:
        return {}
    current = verdicts[-1].get("settings_key")
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    for r in verdicts:
        if r.get("settings_key") == current:
            out[row_key(r["task_id"], r["trial"], str(r["program_sha256"]))] = r
    return out


def judged_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trial records whose program the scorer judged (a known hidden verdict and a
    candidate): the programs pass@1 and the per-trial curves count."""
    out = []
    for r in records:
        hidden = r.get("hidden")
        if not isinstance(hidden, dict) or hidden.get("passed") is None:
            continue
        if isinstance(r.get("candidate"), str):
            out.append(r)
    return out


def with_rescore(records: list[dict[str, Any]], run_dir: Path) -> list[dict[str, Any]]:
    """``records`` with each re-scored program's plus verdict in ``hidden.extra.plus``
    (copies; ``source`` names the file). Without a rescore file: ``records`` itself."""
    rows = read_rows(run_dir) if run_dir.is_dir() else []
    verdicts = current_verdicts(rows)
    if not verdicts:
        return records
    out = []
    for r in records:
        cand = r.get("candidate")
        hidden = r.get("hidden")
        if not (isinstance(cand, str) and isinstance(hidden, dict)):
            out.append(r)
            continue
        row = verdicts.get(row_key(r["task_id"], r["trial"], program_sha256(cand)))
        if row is None:
            out.append(r)
            continue
        rec = dict(r)
        rec["hidden"] = {**hidden, "extra": dict(hidden.get("extra") or {})}
        rec["hidden"]["extra"]["plus"] = {
            **copy.deepcopy(row["verdict"]),
            "source": RESCORE_NAME,
            "settings_key": row.get("settings_key"),
        }
        out.append(rec)
    return out


# --------------------------------------------------------------------------- judging


@dataclass
class Judge:
    """What judging one benchmark's programs needs: tasks by id, a scorer built with
    ``tests=plus``, and a sandbox (shared by every run of the benchmark)."""

    benchmark: str
    tasks: Mapping[str, Any]
    scorer: Any
    sandbox: Any
    env_timeout_s: float | None = None
    _memo: dict[tuple[str, str, str], asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    def settings(self) -> dict[str, Any]:
        """What decides this benchmark's plus verdicts (hashed into ``settings_key``):
        the scorer's timeouts (a task's own follows from them), the plus call limits
        and the plus inputs' file."""
        plus = self.scorer.plus
        if self.benchmark == "humaneval":
            inputs: dict[str, Any] | None = file_identity(plus.humaneval_plus_path)
        elif plus.mbpp_plus_path:
            inputs = file_identity(plus.mbpp_plus_path)
        else:
            inputs = None
        return {
            "tests": "plus",
            "base": "as logged",
            "timeout_s": float(self.scorer.timeout_s),
            "env_timeout_s": self.env_timeout_s,
            "plus_min_call_s": float(plus.min_call_s),
            "plus_time_factor": float(plus.time_factor),
            "reference_limit_s": float(plus.reference_limit_s),
            "plus_inputs": inputs,
        }


def _logged_base(rec: dict[str, Any]) -> Any:
    """The logged base verdict as the scorer's outcome (``hidden.extra.base`` when the
    run's headline was plus)."""
    from reflexion_bench.environments.code_common import HiddenOutcome

    hidden = rec["hidden"]
    base = (hidden.get("extra") or {}).get("base")
    src = base if isinstance(base, dict) and base.get("passed") is not None else hidden
    status = str(src.get("status") or ("pass" if src.get("passed") else "fail"))
    if bool(src.get("passed")) != (status == "pass"):
        status = "pass" if src.get("passed") else "fail"
    return HiddenOutcome(status, str(src.get("detail") or ""))


async def _verdict(judge: Judge, task: Any, program: str, base: Any) -> dict[str, Any]:
    """The scorer's plus verdict (shared by identical programs of one task)."""
    key = (str(task.id), program_sha256(program), "pass" if base.passed else base.status)
    fut = judge._memo.get(key)
    if fut is None:
        fut = asyncio.ensure_future(judge.scorer.run_plus(judge.sandbox, task, program, base))
        judge._memo[key] = fut
    # A failed judgment (sandbox error) is not shared: the next identical program retries.
    try:
        return dict(await asyncio.shield(fut))
    except Exception:
        if judge._memo.get(key) is fut:
            del judge._memo[key]
        raise


@dataclass
class RunResult:
    """What one ``rescore_run`` did."""

    run_dir: Path
    programs: int = 0
    judged: int = 0
    skipped: int = 0
    errors: int = 0
    seconds: float = 0.0
    note: str = ""
    error_details: list[str] = field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


async def rescore_run(
    run_dir: Path,
    judge: Judge,
    *,
    force: bool = False,
    jobs: int = 2,
    provenance: Mapping[str, Any] | None = None,
    on_program: Callable[[dict[str, Any]], None] | None = None,
) -> RunResult:
    """Judge every program of ``run_dir`` not yet judged under the current settings
    (all of them with ``force``); append a row per program to ``rescore_plus.jsonl``.
    A program whose judgment fails (the sandbox failed) gets an error row; the others
    are still judged."""
    from reflexion_bench.core.runlog import load_run_records

    started = time.perf_counter()
    result = RunResult(run_dir)
    records = judged_records(load_run_records(run_dir))
    result.programs = len(records)
    settings = judge.settings()
    skey = settings_key(settings)
    # Done: a verdict (not an error) of the same program under the same settings.
    done = (
        set()
        if force
        else {
            row_key(r["task_id"], r["trial"], str(r["program_sha256"]))
            for r in read_rows(run_dir)
            if r.get("settings_key") == skey and r.get("status") != "error"
        }
    )
    todo: list[tuple[dict[str, Any], Any]] = []
    for rec in records:
        key = row_key(rec["task_id"], rec["trial"], program_sha256(str(rec["candidate"])))
        if key in done:
            result.skipped += 1
            if on_program is not None:
                on_program({"status": "skipped"})
            continue
        todo.append((rec, judge.tasks.get(str(rec["task_id"]))))
    if not todo:
        result.seconds = time.perf_counter() - started
        return result

    writer = RunLogWriter(rescore_path(run_dir))
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(rec: dict[str, Any], task: Any) -> None:
        program = str(rec["candidate"])
        base = _logged_base(rec)
        row: dict[str, Any] = {
            "type": ROW_TYPE,
            "task_id": str(rec["task_id"]),
            "trial": int(rec["trial"]),
            "attempt_id": rec.get("attempt_id"),
            "program_sha256": program_sha256(program),
            "settings_key": skey,
            "settings": settings,
            "load_timeout_s": None if task is None else float(judge.scorer.timeout_for(task)),
            "logged_base": {"passed": base.passed, "status": base.status},
        }
        async with gate:
            t0 = time.perf_counter()
            try:
                if task is None:
                    raise LookupError(
                        f"task {rec['task_id']!r} is not in the {judge.benchmark} data"
                    )
                verdict = await _verdict(judge, task, program, base)
                passed = bool(verdict.get("passed"))
                status = str(verdict.get("status"))
                row.update(
                    # "error" is reserved for no verdict; a program whose logged base
                    # verdict is an old-style "error" (did not load) fails plus.
                    status=status if passed or status in ("fail", "timeout") else "fail",
                    passed=passed,
                    detail=str(verdict.get("detail", ""))[:500],
                    verdict=verdict,
                    # False: failed base in the log, or no plus suite (the base verdict).
                    judged=bool(base.passed) and int(verdict.get("inputs") or 0) > 0,
                )
            except Exception as exc:  # no verdict on this program; the run goes on
                from reflexion_bench.core.errors import ConfigError

                if isinstance(exc, ConfigError):
                    raise  # the settings are wrong for every program: stop
                row.update(
                    status="error",
                    passed=None,
                    detail=f"{type(exc).__name__}: {exc}"[:500],
                    verdict=None,
                    judged=False,
                )
        row["duration_s"] = round(time.perf_counter() - t0, 3)
        row["date"] = _now()
        row.update(provenance or {})
        writer.write(row)
        if row["status"] == "error":
            result.errors += 1
            result.error_details.append(f"{row['task_id']} trial {row['trial']}: {row['detail']}")
        else:
            result.judged += 1
        if on_program is not None:
            on_program(row)

    try:
        await asyncio.gather(*(one(*t) for t in todo))
    finally:
        writer.close()
    result.seconds = time.perf_counter() - started
    return result


# --------------------------------------------------------------------------- a run's config


def run_benchmark(run_dir: Path) -> str | None:
    """The benchmark a run's records name (None: no trial, or several)."""
    from reflexion_bench.core.runlog import load_run_records

    names = {str(r.get("benchmark")) for r in load_run_records(run_dir)}
    return names.pop() if len(names) == 1 else None


def run_overrides(run_dir: Path, benchmark: str, data_dir: Path | None) -> tuple[str, ...]:
    """Config overrides that rebuild the run's scorer with ``tests=plus``: its own
    timeouts and plus limits (``config.yaml``), its own problem file when it still
    exists, the data folder's MBPP+ for MBPP (none needed for HumanEval)."""
    ovr = ["scorer.tests=plus"]
    if data_dir is not None:
        ovr.append(f"paths.data_dir={json.dumps(str(data_dir.resolve()))}")
    cfg_path = run_dir / "config.yaml"
    scorer: Mapping[str, Any] = {}
    env: Mapping[str, Any] = {}
    if cfg_path.is_file():
        import yaml

        cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8")) or {}
        scorer = cfg.get("scorer") or {}
        env = cfg.get("env") or {}
    for key in ("timeout_s", "plus_min_call_s", "plus_time_factor"):
        if scorer.get(key) is not None:
            ovr.append(f"scorer.{key}={float(scorer[key])}")
    if env.get("timeout_s") is not None:
        ovr.append(f"env.timeout_s={float(env['timeout_s'])}")
    he_path = scorer.get("humaneval_plus_path")
    if he_path and Path(str(he_path)).is_file():
        ovr.append(f"scorer.humaneval_plus_path={json.dumps(str(he_path))}")
    if benchmark == "humaneval":
        ovr.append("scorer.mbpp_plus_path=null")
    env_path = env.get("path")
    if env_path and Path(str(env_path)).is_file():
        ovr.append(f"env.path={json.dumps(str(env_path))}")
    return tuple(ovr)


async def rescore_runs(
    run_dirs: Sequence[Path],
    build: Callable[[str, tuple[str, ...]], Awaitable[Judge] | Judge],
    *,
    data_dir: Path | None = None,
    force: bool = False,
    jobs: int = 2,
    provenance: Mapping[str, Any] | None = None,
    on_program: Callable[[dict[str, Any]], None] | None = None,
    on_run: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """:func:`rescore_run` for each run, one :class:`Judge` per benchmark and settings
    (``build(benchmark, overrides)``): identical programs across the runs of a study
    (the frozen first trials) are judged once. A run of another benchmark is skipped
    with a note."""
    judges: dict[tuple[str, tuple[str, ...]], Judge] = {}
    results: list[RunResult] = []
    try:
        for run_dir in run_dirs:
            bench = run_benchmark(run_dir)
            if bench not in PLUS_BENCHMARKS:
                res = RunResult(run_dir, note=f"skipped: no plus tests for benchmark {bench!r}")
                results.append(res)
                if on_run is not None:
                    on_run(res)
                continue
            ovr = run_overrides(run_dir, bench, data_dir)
            judge = judges.get((bench, ovr))
            if judge is None:
                try:
                    built = build(bench, ovr)
                    judge = await built if isinstance(built, Awaitable) else built
                except Exception as exc:  # no data, no sandbox: this run cannot be judged
                    res = RunResult(run_dir, note=f"skipped: {type(exc).__name__}: {exc}")
                    results.append(res)
                    if on_run is not None:
                        on_run(res)
                    continue
                judges[(bench, ovr)] = judge
            res = await rescore_run(
                run_dir,
                judge,
                force=force,
                jobs=jobs,
                provenance=provenance,
                on_program=on_program,
            )
            results.append(res)
            if on_run is not None:
                on_run(res)
    finally:
        closed: set[int] = set()
        for j in judges.values():
            if id(j.sandbox) not in closed:
                closed.add(id(j.sandbox))
                await j.sandbox.aclose()
    return results
