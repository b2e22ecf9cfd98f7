"""Turn the original Reflexion repository's run outputs into this project's run log.

The paper's logs carry much less than ours; what they lack is recorded as missing
(``null`` fields, listed in ``extra.missing`` and in ``import.json``), never made up:

Programming (``*.jsonl``, one line per problem: the problem fields, ``solution``,
``is_solved``, and for Reflexion runs ``reflections``):
  - The number of trials is inferred as 1 + the number of reflections (the original
    loop writes one reflection per failed implementation); only the *last*
    implementation is logged, so earlier trials have no candidate and no verdict.
  - The last solution is re-scored with the hidden tests through the same scorer a run
    uses (:mod:`reflexion_bench.commands.evaluate`); the logged verdict is kept beside
    it (``extra.logged_hidden_passed``), so ``report`` shows both pass rates.
  - Token counts, wall time, prompts and self-test verdicts are not in these logs.

ALFWorld (a folder of ``env_results_trial_<i>.json``: one list per trial of
``{name, memory, is_success}``, success cumulative):
  - Trial t of a game is recorded while it is unsolved; a game stops at its first
    success, as in the original loop, so ``solved_by_trial`` (and, equally,
    ``success_at_trial``) is the published cumulative curve.
  - The reflection written after a trial is the memory entry added in that trial's
    file; what was *shown* to the next trial is not logged (``memory_shown: null``;
    the run's stored memory is kept in ``extra.logged_memory``).
  - Trajectories (the games' transcripts) and which game ``env_i`` was are not logged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.runner.runlog import LOG_NAME, RunLogWriter

SOURCE_REPO = "noahshinn/reflexion"
MANIFEST = "import.json"


class ImportError_(RuntimeError):
    """The source cannot be imported; the message says which file or option to fix."""


def _digest(paths: Sequence[Path]) -> str:
    h = hashlib.sha1()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, int | float):
        return bool(value)
    return None


def _record(
    *,
    run_id: str,
    task_id: str,
    benchmark: str,
    strategy: str,
    model: str,
    trial: int,
    final: bool,
    meta: dict[str, Any],
    missing: list[str],
    **fields: Any,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": "trial",
        "run_id": run_id,
        "attempt_id": "imported",
        "task_id": task_id,
        "benchmark": benchmark,
        "strategy": strategy,
        "model": model,
        "final": final,
        "time": None,
        "trial": trial,
        "candidate": None,
        "trajectory": None,
        "prompt": None,
        "self_test": None,
        "hidden": None,
        "reflection": None,
        "memory_shown": None,
        "model_calls": None,
        "wall_time_s": None,
        "error": None,
        "extra": {},
        "meta": meta,
    }
    rec.update(fields)
    rec["extra"] = {**rec["extra"], "imported": True, "missing": sorted(missing)}
    return rec


def _prepare_out(out: Path, force: bool) -> None:
    log = out / LOG_NAME
    if log.exists():
        if not force:
            raise ImportError_(
                f"{log} exists; import into a new folder or pass --force to replace it"
            )
        log.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _write(out: Path, records: list[dict[str, Any]], manifest: dict[str, Any]) -> None:
    writer = RunLogWriter(out / LOG_NAME)
    try:
        for rec in records:
            writer.write(rec)
    finally:
        writer.close()
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")


# --------------------------------------------------------------------------- programming

Rescorer = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def guess_benchmark(name: str) -> str | None:
    """This project's benchmark name from an original log's file name."""
    low = name.lower()
    rust = "_rs" in low or "rust" in low
    for key, bench in (("leetcode", "leetcode_hard"), ("humaneval", "humaneval"), ("mbpp", "mbpp")):
        if key in low:
            return bench + ("_rs" if rust else "")
    return None


def guess_strategy(name: str) -> str:
    low = Path(name).name.lower()
    for prefix, strategy in (("reflexion", "reflexion"), ("simple", "simple"), ("base", "base")):
        if low.startswith(prefix):
            return strategy
    return "unknown"


def evaluate_rescorer(
    benchmark: str, data: str | None, jobs: int | None = 2, sandbox: str = "local"
) -> Rescorer:
    """Re-score with the ``evaluate`` library (the same scorer a run uses).

    Returns a function of ``[{task_id, solution}]`` -> ``[{task_id, passed, status,
    duration_s, detail, program}]`` (``program``: the complete program scored).
    """

    def rescore(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
        import asyncio

        try:
            from reflexion_bench.commands.evaluate import (
                build_benchmark,
                program_of,
                score_samples,
            )
        except ImportError as exc:  # pragma: no cover - the evaluate module ships with us
            raise ImportError_(
                f"re-scoring needs reflexion_bench.commands.evaluate: {exc}"
            ) from exc

        bench = build_benchmark(benchmark, data, sandbox, jobs)

        async def go() -> list[dict[str, Any]]:
            try:
                return await score_samples(samples, bench)
            finally:
                await bench.sandbox.aclose()

        results = asyncio.run(go())
        for sample, res in zip(samples, results, strict=True):
            task = bench.tasks.get(str(sample["task_id"]))
            if task is not None:
                with contextlib.suppress(ValueError):  # unscorable lines keep no program
                    res["program"] = program_of(sample, task)
        return results

    return rescore


def import_programming(
    src: Path,
    out: Path,
    *,
    benchmark: str | None = None,
    strategy: str | None = None,
    model: str = "unknown",
    rescorer: Rescorer | None = None,
    limit: int | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Import an original programming log (see the module docstring); return the manifest."""
    if not src.is_file():
        raise ImportError_(f"programming log not found: {src} (a .jsonl file)")
    rows: list[dict[str, Any]] = []
    with src.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportError_(f"{src}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or "task_id" not in row or "solution" not in row:
                raise ImportError_(
                    f"{src}:{lineno}: expected an object with task_id and solution "
                    "(is this an original Reflexion programming log?)"
                )
            rows.append(row)
    if limit is not None:
        rows = rows[:limit]
    bench = benchmark or guess_benchmark(src.name)
    if bench is None:
        raise ImportError_(f"cannot tell the benchmark from {src.name}; pass --benchmark")
    strat = strategy or guess_strategy(src.name)
    _prepare_out(out, force)
    run_id = f"imported-{_digest([src])}"
    meta = {"imported_from": str(src), "source": SOURCE_REPO, "kind": "programming"}

    results: dict[str, dict[str, Any]] = {}
    if rescorer is not None:
        samples = [{"task_id": r["task_id"], "solution": str(r["solution"])} for r in rows]
        for scored in rescorer(samples):
            results[str(scored["task_id"])] = scored

    records: list[dict[str, Any]] = []
    base_missing = [
        "trajectory",
        "prompt",
        "self_test",
        "memory_shown",
        "model_calls",
        "wall_time_s",
        "time",
    ]
    for row in rows:
        tid = str(row["task_id"])
        reflections = [str(x) for x in row.get("reflections") or []]
        n_trials = len(reflections) + 1
        for k, refl in enumerate(reflections, 1):
            records.append(
                _record(
                    run_id=run_id,
                    task_id=tid,
                    benchmark=bench,
                    strategy=strat,
                    model=model,
                    trial=k,
                    final=False,
                    meta=meta,
                    missing=[*base_missing, "candidate", "hidden"],
                    reflection=refl,
                )
            )
        logged = _as_bool(row.get("is_solved"))
        res = results.get(tid)
        solution = str(row["solution"])
        extra: dict[str, Any] = {
            "logged_hidden_passed": logged,
            "trials_inferred_from": "1 + number of logged reflections",
        }
        missing = list(base_missing)
        hidden: dict[str, Any] | None = None
        candidate = solution
        if res is not None:
            hidden = {
                "passed": bool(res.get("passed")),
                "status": str(res.get("status", "fail")),
                "value": None,
                "detail": str(res.get("detail") or ""),
                "extra": {"rescored": True, "duration_s": res.get("duration_s")},
            }
            program = res.get("program")
            if isinstance(program, str) and program != solution:
                candidate = program
                extra["logged_solution"] = solution
        else:
            missing.append("hidden")
        if logged is None:
            missing.append("logged_hidden_passed")
        records.append(
            _record(
                run_id=run_id,
                task_id=tid,
                benchmark=bench,
                strategy=strat,
                model=model,
                trial=n_trials,
                final=True,
                meta=meta,
                missing=missing,
                candidate=candidate,
                hidden=hidden,
                extra=extra,
            )
        )
    logged_pass = [_as_bool(r.get("is_solved")) for r in rows]
    manifest = {
        "kind": "programming",
        "source": SOURCE_REPO,
        "source_file": str(src),
        "run_id": run_id,
        "benchmark": bench,
        "strategy": strat,
        "model": model,
        "tasks": len(rows),
        "trial_records": len(records),
        "logged_passed": sum(1 for v in logged_pass if v),
        "rescored": bool(results),
        "rescored_passed": sum(1 for r in results.values() if r.get("passed")),
        "missing": {
            "all_trials": base_missing,
            "before_last_trial": ["candidate", "hidden"],
            "inferred": "trial count = 1 + number of reflections",
        },
    }
    _write(out, records, manifest)
    return manifest


# --------------------------------------------------------------------------- ALFWorld

_TRIAL_FILE = re.compile(r"env_results_trial_(\d+)\.json$")


def import_alfworld(
    src: Path,
    out: Path,
    *,
    strategy: str | None = None,
    model: str = "unknown",
    force: bool = False,
) -> dict[str, Any]:
    """Import an original ALFWorld run folder (see the module docstring)."""
    if not src.is_dir():
        raise ImportError_(f"ALFWorld log folder not found: {src}")
    files = sorted((int(m.group(1)), p) for p in src.iterdir() if (m := _TRIAL_FILE.search(p.name)))
    if not files:
        raise ImportError_(f"no env_results_trial_<i>.json files in {src}")
    indices = [i for i, _ in files]
    if indices != list(range(len(files))):
        raise ImportError_(f"trial files of {src} are not numbered 0..N-1: {indices}")
    trials: list[list[dict[str, Any]]] = []
    for _, path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ImportError_(f"{path}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, list) or not all(isinstance(e, dict) and "name" in e for e in data):
            raise ImportError_(f"{path}: expected a list of {{name, memory, is_success}}")
        trials.append(data)
    names = [e["name"] for e in trials[0]]
    for (i, path), data in zip(files, trials, strict=True):
        if [e["name"] for e in data] != names:
            raise ImportError_(f"{path}: games differ from trial 0's (file {i})")

    strat = strategy or guess_strategy(src.name)
    _prepare_out(out, force)
    run_id = f"imported-{_digest([p for _, p in files])}"
    meta = {"imported_from": str(src), "source": SOURCE_REPO, "kind": "alfworld"}
    missing = [
        "candidate",
        "trajectory",
        "prompt",
        "self_test",
        "memory_shown",
        "model_calls",
        "wall_time_s",
        "time",
    ]
    records: list[dict[str, Any]] = []
    regressions = 0
    for j, name in enumerate(names):
        prev_memory: list[str] = []
        solved = False
        for t, data in enumerate(trials):
            entry = data[j]
            ok = bool(_as_bool(entry.get("is_success")))
            memory = [str(m) for m in entry.get("memory") or []]
            if solved:
                regressions += int(not ok)
                continue
            new = (
                memory[len(prev_memory) :] if memory[: len(prev_memory)] == prev_memory else memory
            )
            last = ok or t == len(trials) - 1
            records.append(
                _record(
                    run_id=run_id,
                    task_id=str(name),
                    benchmark="alfworld",
                    strategy=strat,
                    model=model,
                    trial=t + 1,
                    final=last,
                    meta=meta,
                    missing=missing,
                    hidden={
                        "passed": ok,
                        "status": "pass" if ok else "fail",
                        "value": None,
                        "detail": "",
                        "extra": {},
                    },
                    reflection="\n".join(s.strip() for s in new) or None,
                    extra={"logged_memory": memory},
                )
            )
            prev_memory = memory
            solved = ok
    per_trial = [sum(bool(_as_bool(e.get("is_success"))) for e in data) for data in trials]
    manifest = {
        "kind": "alfworld",
        "source": SOURCE_REPO,
        "source_dir": str(src),
        "files": [p.name for _, p in files],
        "run_id": run_id,
        "benchmark": "alfworld",
        "strategy": strat,
        "model": model,
        "tasks": len(names),
        "trial_records": len(records),
        "logged_success_by_trial": per_trial,
        "regressions_ignored": regressions,
        "missing": {"all_trials": missing, "note": "which game env_i was is not logged"},
    }
    _write(out, records, manifest)
    return manifest
