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

import ast
import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion_bench.core.runlog import LOG_NAME, RunLogWriter
from reflexion_bench.environments._rust_syntax import brace_balance

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

#: The run-name part of the original harness's log file names:
#: ``<dataset>._<strategy>_<max_iters>_<model>_pass_at_k_<k>_<lang>.jsonl``.
_RUN_NAME = re.compile(
    r"(?:^|[._])(simple|reflexion-ucs|reflexion|immediate-refinement|immediate-reflexion|test-acc)"
    r"_(\d+)_([A-Za-z0-9.\-]+?)_pass_at_k_(\d+)"
)
#: The original strategy names -> this project's (configs/strategy/<name>.yaml).
STRATEGY_NAMES = {
    "simple": "simple",
    "reflexion": "reflexion",
    "immediate-refinement": "tests_no_reflection",
    "immediate-reflexion": "reflexion_no_tests",
    "reflexion-ucs": "reflexion_ucs",
    "test-acc": "test_acc",
}
_MODELS = (
    ("gpt-3.5-turbo", "gpt-3.5-turbo"),
    ("gpt-4", "gpt-4"),
    ("gpt4", "gpt-4"),
    ("text-davinci-003", "text-davinci-003"),
)


@dataclass(frozen=True)
class Detected:
    """What an original log is, read from its file name, folder and rows."""

    benchmark: str | None
    language: str
    strategy: str
    strategy_original: str
    model: str
    max_iters: int | None
    #: Where ``model`` came from: ``"file name"``, ``"folder name"``, a sentence naming
    #: the sibling logs it was read from, or ``"unknown"``.
    model_source: str = "file name"


def _id_of(row: dict[str, Any]) -> Any:
    # HumanEval/LeetCode logs use ``task_id``; MultiPL-E's (MBPP, Rust) use ``name``.
    return row.get("task_id", row.get("name"))


def read_programming_rows(src: Path) -> list[dict[str, Any]]:
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
            if not isinstance(row, dict) or _id_of(row) is None or "solution" not in row:
                raise ImportError_(
                    f"{src}:{lineno}: expected an object with task_id (or name) and solution "
                    "(is this an original Reflexion programming log?)"
                )
            rows.append(row)
    if not rows:
        raise ImportError_(f"{src}: no problems in the log")
    return rows


def _names_rust(path: str) -> bool:
    """Whether a log's path names Rust (``rs`` or ``rust`` as a word of it)."""
    return bool(re.search(r"(^|[_\-./])(rs|rust)([_\-./]|$)", path.lower()))


def guess_benchmark(name: str) -> str | None:
    """This project's benchmark name from an original log's path (file and folder)."""
    low = name.lower()
    rust = _names_rust(low)
    hard = "hardest50" in low or "hard50" in low
    for key, bench in (
        ("leetcode", "leetcode_hard"),
        ("humaneval", "humaneval"),
        ("human_eval", "humaneval"),
        ("mbpp", "mbpp"),
    ):
        if key in low:
            if bench == "humaneval" and hard:
                return "humaneval_rs_hard50" if rust else "humaneval_hard50"
            return bench + ("_rs" if rust else "")
    return None


def guess_strategy(name: str) -> str:
    """This project's strategy name from an original log's file or folder name."""
    m = _RUN_NAME.search(Path(name).name)
    if m:
        return STRATEGY_NAMES[m.group(1)]
    low = Path(name).name.lower()
    for prefix, strategy in (
        ("immediate_refinement", "tests_no_reflection"),
        ("immediate_reflexion", "reflexion_no_tests"),
        ("reflexion_ucs", "reflexion_ucs"),
        ("reflexion", "reflexion"),
        ("simple", "simple"),
        ("testacc", "test_acc"),
        ("base", "base"),
    ):
        if low.startswith(prefix):
            return strategy
    return "unknown"


def detect_programming(src: Path, rows: Sequence[dict[str, Any]]) -> Detected:
    """Benchmark, language, strategy, model and iteration bound of an original log.

    The file name is read first (the original harness named its logs after the run),
    then the folder name (the run name the authors chose), then the rows themselves.
    """
    folder, name = src.parent.name, src.name
    m = _RUN_NAME.search(name)
    if m:
        original, max_iters, model = m.group(1), int(m.group(2)), m.group(3)
    else:
        guessed = guess_strategy(name)
        if guessed == "unknown":
            guessed = guess_strategy(folder)
        original = next((k for k, v in STRATEGY_NAMES.items() if v == guessed), guessed)
        max_iters = None
        model = _model_named(f"{folder}/{name}")
    if model == "unknown":
        model_source = "unknown"
    else:
        model_source = "file name" if m or _model_named(name) == model else "folder name"
    lang_field = str(rows[0].get("language") or "").lower()
    path_text = f"{folder}/{name}"
    if lang_field in ("rs", "rust"):
        language = "rust"
    elif lang_field in ("py", "python"):
        language = "python"
    else:
        rusty = _names_rust(path_text)
        language = "rust" if rusty else "python"
    bench = guess_benchmark(name) or guess_benchmark(folder)
    first = str(_id_of(rows[0]))
    if bench is None:
        if first.startswith("HumanEval"):
            bench = "humaneval"
        elif first.startswith("mbpp"):
            bench = "mbpp"
        if bench is not None and language == "rust":
            bench += "_rs"
    elif language == "rust" and not bench.endswith("_rs") and "hard50" not in bench:
        bench += "_rs"
    if bench == "humaneval_rs" and len(rows) == 50 and "hard" in path_text.lower():
        bench = "humaneval_rs_hard50"
    if model == "unknown" and bench is not None:
        model, model_source = _model_of_siblings(src, bench, language)
    return Detected(
        benchmark=bench,
        language=language,
        strategy=STRATEGY_NAMES.get(original, original),
        strategy_original=original,
        model=model,
        max_iters=max_iters,
        model_source=model_source,
    )


def _model_named(text: str) -> str:
    """The model a log's path names (``unknown`` where it names none)."""
    m = _RUN_NAME.search(Path(text).name)
    if m:
        return m.group(3)
    return next((v for k, v in _MODELS if k in text.lower()), "unknown")


def _model_of_siblings(src: Path, bench: str, language: str) -> tuple[str, str]:
    """The model of a log whose name names none, read from the logs beside it.

    The paper's HumanEval-py Reflexion log (``reflexion_humaneval_py_pass_at_1``) names
    no model while its one-attempt partner (``simple_humaneval_py_gpt-4``) does; reading
    one as ``gpt-4`` and the other as ``unknown`` would keep the pair out of every paired
    table. The original harness wrote one run per folder (``root/<run>/<file>``) and the
    shared sample keeps them flat, so both layouts are searched: the other logs of the
    same benchmark and language there, by their names only (no rows read). Only a
    unanimous answer is taken, and the manifest says where it came from; several
    models, or none, leave ``unknown``."""
    here = src.resolve()
    candidates = {p.resolve() for p in src.parent.glob("*.jsonl")}
    candidates |= {p.resolve() for p in src.parent.parent.glob("*/*.jsonl")}
    candidates.discard(here)
    named: dict[str, list[str]] = {}
    for p in sorted(candidates):
        text = f"{p.parent.name}/{p.name}"
        if (guess_benchmark(p.name) or guess_benchmark(p.parent.name)) != bench:
            continue
        rusty = _names_rust(text)
        if rusty != (language == "rust"):
            continue
        model = _model_named(text)
        if model != "unknown":
            named.setdefault(model, []).append(p.name)
    if len(named) != 1:
        return (
            "unknown",
            "unknown" if not named else f"unknown (logs beside it name {sorted(named)})",
        )
    ((model, names),) = named.items()
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return model, f"the other {bench} logs beside it ({shown}), all {model}"


def _trials_of(det: Detected, reflections: int) -> tuple[int, str]:
    """The trial number of the logged (last) solution, and how it was found."""
    if det.strategy_original in ("simple", "test-acc"):
        return 1, "one attempt by design"
    if det.strategy_original == "immediate-refinement":
        # This loop writes no reflection, so the log holds nothing to count retries
        # with: the last solution is put at the iteration bound and earlier trials
        # stay unknown (their verdicts are null, never guessed).
        bound = det.max_iters or 1
        return bound, f"unknown: no reflections are logged; placed at max_iters={bound}"
    # reflexion, reflexion-ucs, immediate-reflexion: one reflection precedes every
    # implementation after the first (programming_runs/reflexion.py).
    return 1 + reflections, "1 + number of logged reflections"


def evaluate_rescorer(
    benchmark: str,
    data: str | None,
    jobs: int | None = 2,
    sandbox: str = "local",
    overrides: Sequence[str] = (),
) -> Rescorer:
    """Re-score with the ``evaluate`` library (the same scorer a run uses).

    Returns a function of ``[{task_id, solution}]`` -> ``[{task_id, passed, status,
    duration_s, detail, program}]`` (``program``: the complete program scored).
    """

    def rescore(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
        import asyncio

        from reflexion_bench.commands.evaluate import (
            build_benchmark,
            program_of,
            score_samples,
        )

        bench = build_benchmark(benchmark, data, sandbox, jobs, overrides=overrides)

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


def default_rescorer(
    det: Detected,
    src: Path,
    *,
    data_dir: Path | None = None,
    jobs: int | None = 2,
    sandbox: str = "local",
    repair_rust_braces: bool = False,
) -> tuple[Rescorer | None, str]:
    """The scorer that re-scores a log as its own harness assembled it, and a note.

    HumanEval/MBPP logs carry their problems (prompt, entry point, test): they are
    scored against exactly those. LeetcodeHard needs the offline hidden tests
    (``leetcode-hard-py-40-hidden.jsonl`` in ``data_dir``); without them the log is
    imported unscored, and the note says why.
    """
    bench = det.benchmark or ""
    if bench.startswith("leetcode_hard"):
        if data_dir is None or not (data_dir / "leetcode-hard-py-40-hidden.jsonl").is_file():
            return None, (
                "not re-scored: LeetcodeHard's offline hidden tests "
                f"(leetcode-hard-py-40-hidden.jsonl) not found in {data_dir}; pass --data DIR"
            )
        problems = (
            "leetcode-hard-rs-40.jsonl" if bench.endswith("_rs") else "leetcode-hard-py-40.jsonl"
        )
        ovr = [f"paths.data_dir={json.dumps(str(data_dir.resolve()))}"]
        if bench.endswith("_rs") and not repair_rust_braces:
            ovr.append("++env.language.close_braces=false")
        return (
            evaluate_rescorer(bench, str(data_dir / problems), jobs, sandbox, ovr),
            "offline hidden tests (the paper judged on leetcode.com)",
        )
    if det.language == "rust":
        ovr = [] if repair_rust_braces else ["++env.language.close_braces=false"]
        note = "the log's own problems; the solution compiled as logged"
        if repair_rust_braces:
            note += ", with missing closing braces appended (--repair-rust-braces)"
        return evaluate_rescorer("humaneval_rs", str(src), jobs, sandbox, ovr), note
    return (
        evaluate_rescorer("jsonl", str(src), jobs, sandbox),
        "the log's own problems; a function body is put under the prompt, as the original harness did",
    )


def _bound_names(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def _top_level_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _free_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    loaded = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return loaded - _bound_names(tree)


def shared_namespace_effects(
    programs: Sequence[tuple[str, str]], disagreeing: set[str]
) -> list[dict[str, Any]]:
    """Which disagreeing tasks read a name that an earlier program had defined.

    The original Python harness ``exec``-ed every program into one namespace
    (``programming_runs/executors/py_executor.py``: ``exec(code, globals())``), so a
    program saw the top-level names of every program run before it: ``mbpp_126_sum``
    defines ``sum``, and later programs that call the builtin ``sum`` got that one;
    a program that forgot ``import math`` found an earlier one's. ``programs`` is
    ``(task_id, program + test)`` in log order; only the logged (last) programs are
    known, so an effect through an earlier, unlogged attempt cannot be named.
    """
    import builtins

    effects: list[dict[str, Any]] = []
    defined: dict[str, str] = {}  # name -> the last task that defined it
    for tid, source in programs:
        if tid in disagreeing:
            free = _free_names(source)
            hits = {n: defined[n] for n in sorted(free) if n in defined}
            if hits:
                effects.append(
                    {
                        "task_id": tid,
                        "names": hits,
                        "why": ", ".join(
                            f"`{n}` {'(a builtin) ' if hasattr(builtins, n) else ''}"
                            f"was defined by {who}, run earlier in the same namespace"
                            for n, who in hits.items()
                        ),
                    }
                )
        for n in _top_level_names(source):
            defined[n] = tid
    return effects


def import_programming(
    src: Path,
    out: Path,
    *,
    benchmark: str | None = None,
    strategy: str | None = None,
    model: str | None = None,
    rescorer: Rescorer | None = None,
    rescore_note: str | None = None,
    repair_rust_braces: bool = False,
    limit: int | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Import an original programming log (see the module docstring); return the manifest."""
    rows = read_programming_rows(src)
    if limit is not None:
        rows = rows[:limit]
    det = detect_programming(src, rows)
    bench = benchmark or det.benchmark
    if bench is None:
        raise ImportError_(f"cannot tell the benchmark from {src}; pass --benchmark")
    strat = strategy or det.strategy
    model_name = model or det.model
    _prepare_out(out, force)
    run_id = f"imported-{_digest([src])}"
    meta = {"imported_from": str(src), "source": SOURCE_REPO, "kind": "programming"}

    results: dict[str, dict[str, Any]] = {}
    if rescorer is not None:
        samples = [{"task_id": str(_id_of(r)), "solution": str(r["solution"])} for r in rows]
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
    body_under_prompt: list[str] = []
    unclosed: list[str] = []
    rust_changed: list[str] = []
    trial_note = ""
    for row in rows:
        tid = str(_id_of(row))
        reflections = [str(x) for x in row.get("reflections") or []]
        n_trials, trial_note = _trials_of(det, len(reflections))
        for k in range(1, n_trials):
            records.append(
                _record(
                    run_id=run_id,
                    task_id=tid,
                    benchmark=bench,
                    strategy=strat,
                    model=model_name,
                    trial=k,
                    final=False,
                    meta=meta,
                    missing=[*base_missing, "candidate", "hidden"],
                    reflection=reflections[k - 1] if k - 1 < len(reflections) else None,
                )
            )
        logged = _as_bool(row.get("is_solved"))
        res = results.get(tid)
        solution = str(row["solution"])
        extra: dict[str, Any] = {"logged_hidden_passed": logged, "trials_inferred_from": trial_note}
        if det.language == "rust" and brace_balance(solution) > 0:
            unclosed.append(tid)
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
            if isinstance(program, str) and program.strip() != solution.strip():
                candidate = program
                extra["logged_solution"] = solution
                (body_under_prompt if det.language == "python" else rust_changed).append(tid)
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
                model=model_name,
                trial=n_trials,
                final=True,
                meta=meta,
                missing=missing,
                candidate=candidate,
                hidden=hidden,
                extra=extra,
            )
        )
    logged_pass = {str(_id_of(r)): bool(_as_bool(r.get("is_solved"))) for r in rows}
    disagree = sorted(
        t
        for t, r in results.items()
        if t in logged_pass and bool(r.get("passed")) != logged_pass[t]
    )
    effects: list[dict[str, Any]] = []
    if results and det.language == "python":
        by_id = {str(_id_of(r)): r for r in rows}
        programs = [
            (
                t,
                str(results.get(t, {}).get("program") or by_id[t]["solution"])
                + "\n"
                + str(by_id[t].get("test") or ""),
            )
            for t in by_id
        ]
        effects = shared_namespace_effects(programs, set(disagree))
    manifest = {
        "kind": "programming",
        "source": SOURCE_REPO,
        "source_file": str(src),
        "run_id": run_id,
        "benchmark": bench,
        "language": det.language,
        "strategy": strat,
        "strategy_original": det.strategy_original,
        "model": model_name,
        "model_source": "--model" if model else det.model_source,
        "max_iters": det.max_iters,
        "tasks": len(rows),
        "trial_records": len(records),
        "logged_passed": sum(logged_pass.values()),
        "rescored": bool(results),
        "rescored_passed": sum(1 for r in results.values() if r.get("passed")) if results else None,
        # Fewer than ``tasks`` when only a subset was re-scored (the others stay unknown).
        "rescored_tasks": len(results),
        "rescore_note": rescore_note,
        "disagreeing_tasks": disagree,
        "assembly": {
            # Not a repair: the original harness itself put a body under the prompt.
            "python_body_under_prompt": len(body_under_prompt),
            "python_body_under_prompt_tasks": body_under_prompt,
            # e.g. the reply's own `fn main` dropped: a change the original did not make.
            "rust_changed_from_logged": rust_changed,
        },
        "repairs": {
            "rust_close_braces": {
                "applied": bool(repair_rust_braces and unclosed and results),
                "solutions_with_unclosed_braces": len(unclosed),
                "tasks": unclosed,
                "note": "the original harness compiled the solution as logged; an unclosed "
                "function failed there. Closing it is opt-in (--repair-rust-braces).",
            }
        },
        "harness_quirks": {
            "shared_namespace": effects,
            "note": "the original Python harness ran every program in one namespace; "
            "these disagreeing tasks read a name an earlier program had defined",
        }
        if det.language == "python"
        else {},
        "missing": {
            "all_trials": base_missing,
            "before_last_trial": ["candidate", "hidden"],
            "inferred": f"trial count = {trial_note}",
        },
    }
    _write(out, records, manifest)
    return manifest


# --------------------------------------------------------------------------- HotpotQA

_BEGIN_TRIAL = re.compile(r"^BEGIN TRIAL (\d+)\s*$", re.M)
_SUMMARY = re.compile(r"Trial summary: Correct: (\d+), Incorrect: (\d+)(?:, Halted: (\d+))?")
_SECTION = re.compile(r"^-+ BEGIN (CORRECT|INCORRECT) AGENTS -+\s*$", re.M)
_GOLD = re.compile(r"^Correct answer: ?(.*)$", re.M)
_FINISH = re.compile(r"Finish\[(.*?)\]\s*$", re.M)
_QUESTION = re.compile(r"Question: ?(.*)$", re.M)

#: The original HotpotQA folders -> (agent, this project's strategy name).
HOTPOTQA_AGENTS = {"cot/context": "cot_context", "cot/no_context": "cot", "react": "react"}
HOTPOTQA_STRATEGIES = {
    # Retry without memory: this project's `retry` baseline. Kept as `none`, the name the
    # committed paper audit (results/paper-audit) was built with; reports compare it as
    # `retry` (analysis/paper.py: LEGACY_STRATEGIES).
    "base": "none",
    "reflexion": "reflexion",
    "last_trial": "last_attempt",
    "last_trial_and_reflexion": "last_attempt_and_reflexion",
}


@dataclass
class HotpotAgent:
    question: str
    correct: bool
    answer: str | None
    gold: str
    reflections: list[str]
    transcript: str


def _question_of(block: str) -> str:
    found = _QUESTION.findall(block)
    if not found:
        return ""
    # The first "Question:" is the question (a later one may quote it again, or sit in
    # a fetched page); ReAct + Reflexion appends its instructions on the same line.
    q = found[0].split("You have attempted")[0]
    return " ".join(q.split())


def _reflections_of(block: str) -> list[str]:
    idx = block.rfind("Reflections:")
    if idx < 0:
        return []
    out: list[str] = []
    for line in block[idx + len("Reflections:") :].splitlines()[1:]:
        if line.startswith("- "):
            out.append(line[2:].strip())
        elif out:  # the list ends at its first other line
            break
    return out


def parse_hotpotqa_log(
    src: Path,
) -> list[tuple[int, tuple[int, int, int | None], list[HotpotAgent]]]:
    """Trials of an original HotpotQA ``.txt`` log: (trial number, the logged summary
    (correct, incorrect, halted), the agents parsed from the transcript)."""
    text = src.read_text(encoding="utf-8", errors="replace")
    heads = list(_BEGIN_TRIAL.finditer(text))
    if not heads:
        raise ImportError_(
            f"{src}: no 'BEGIN TRIAL N' lines (not a HotpotQA trial log of the original "
            "repository; appendix and thought logs are not run logs)"
        )
    trials = []
    for i, h in enumerate(heads):
        body = text[h.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        sm = _SUMMARY.search(body)
        if sm is None:
            raise ImportError_(f"{src}: trial {h.group(1)} has no 'Trial summary' line")
        summary = (int(sm.group(1)), int(sm.group(2)), int(sm.group(3)) if sm.group(3) else None)
        agents: list[HotpotAgent] = []
        sections = list(_SECTION.finditer(body))
        for j, sec in enumerate(sections):
            chunk = body[
                sec.end() : sections[j + 1].start() if j + 1 < len(sections) else len(body)
            ]
            correct = sec.group(1) == "CORRECT"
            start = 0
            for g in _GOLD.finditer(chunk):
                block = chunk[start : g.end()].strip("\n")
                start = g.end()
                finish = _FINISH.findall(block)
                agents.append(
                    HotpotAgent(
                        question=_question_of(block),
                        correct=correct,
                        answer=finish[-1] if finish else None,
                        gold=g.group(1).strip(),
                        reflections=_reflections_of(block),
                        transcript=block,
                    )
                )
        trials.append((int(h.group(1)), summary, agents))
    return trials


def detect_hotpotqa(src: Path) -> tuple[str, str, str]:
    """(agent, this project's strategy, the original folder name) from a log's path."""
    parts = [p.lower() for p in src.parts]
    agent = "unknown"
    if "react" in parts:
        agent = "react"
    elif "cot" in parts:
        i = parts.index("cot")
        agent = HOTPOTQA_AGENTS.get(f"cot/{parts[i + 1]}", "cot") if i + 1 < len(parts) else "cot"
    folder = src.parent.name.lower()
    return agent, HOTPOTQA_STRATEGIES.get(folder, folder), folder


def hotpot_task_id(question: str) -> str:
    """A stable id for a question (the logs carry the text, not HotpotQA's ids)."""
    return "hotpotqa-" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:10]


def import_hotpotqa(
    src: Path,
    out: Path,
    *,
    strategy: str | None = None,
    model: str | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Import an original HotpotQA ``.txt`` log (CoT with/without context, ReAct).

    Every trial logs all 100 agents, split into correct and incorrect ones; a question
    answered correctly stays correct (the original loop re-runs only the others), so
    as for ALFWorld a question's trials are recorded until its first success. The
    transcript of a trial is the record's ``trajectory`` and the reflections it shows
    are ``memory_shown``; the reflection written after trial t is the one trial t+1
    shows last.
    """
    if not src.is_file():
        raise ImportError_(f"HotpotQA log not found: {src} (a .txt file)")
    trials = parse_hotpotqa_log(src)
    agent, strat_default, folder = detect_hotpotqa(src)
    strat = strategy or f"{agent}_{strat_default}"
    model_name = model or "unknown"
    per_trial: list[dict[str, HotpotAgent]] = []
    duplicates = 0
    for _, _, agents in trials:
        by_q: dict[str, HotpotAgent] = {}
        for agent_ in agents:
            # ReAct's base log prints a few agents twice: the same question, same verdict.
            duplicates += int(agent_.question in by_q)
            by_q[agent_.question] = agent_
        per_trial.append(by_q)
    questions = list(per_trial[0])
    for by_q in per_trial[1:]:
        questions += [q for q in by_q if q not in questions]
    _prepare_out(out, force)
    run_id = f"imported-{_digest([src])}"
    meta = {"imported_from": str(src), "source": SOURCE_REPO, "kind": "hotpotqa", "agent": agent}
    missing = ["candidate", "prompt", "self_test", "model_calls", "wall_time_s", "time"]
    # Some logs print only the scratchpad: what memory was shown is then unknown, not empty.
    shows_memory = any(x.reflections for by_q in per_trial for x in by_q.values())
    if not shows_memory:
        missing.append("memory_shown")
    records: list[dict[str, Any]] = []
    for q in questions:
        mine: list[dict[str, Any]] = []
        for i, ((t, _, _), by_q) in enumerate(zip(trials, per_trial, strict=True)):
            a = by_q.get(q)
            if a is None:
                continue
            nxt = per_trial[i + 1].get(q) if i + 1 < len(per_trial) else None
            written = None
            if not a.correct and nxt is not None and nxt.reflections:
                if nxt.reflections[: len(a.reflections)] == a.reflections or not a.reflections:
                    new = nxt.reflections[len(a.reflections) :] or nxt.reflections[-1:]
                else:
                    new = nxt.reflections[-1:]
                written = "\n".join(new)
            mine.append(
                _record(
                    run_id=run_id,
                    task_id=hotpot_task_id(q),
                    benchmark="hotpotqa",
                    strategy=strat,
                    model=model_name,
                    trial=t,
                    final=False,
                    meta=meta,
                    missing=missing,
                    trajectory=a.transcript,
                    hidden={
                        "passed": a.correct,
                        "status": "pass" if a.correct else "fail",
                        "value": None,
                        "detail": "" if a.correct else f"answered {a.answer!r}, gold {a.gold!r}",
                        "extra": {},
                    },
                    reflection=written,
                    memory_shown=a.reflections if shows_memory else None,
                    extra={
                        "question": q,
                        "answer": a.answer,
                        "gold": a.gold,
                        "halted": a.answer is None,
                    },
                )
            )
            if a.correct:
                break
        # A question the log leaves out of its last trial ends at the last it shows.
        mine[-1]["final"] = True
        records.extend(mine)
    logged = [s[0] for _, s, _ in trials]
    manifest = {
        "kind": "hotpotqa",
        "source": SOURCE_REPO,
        "source_file": str(src),
        "run_id": run_id,
        "benchmark": "hotpotqa",
        "agent": agent,
        "strategy": strat,
        "strategy_original": folder,
        "model": model_name,
        "tasks": len(questions),
        "trials": [t for t, _, _ in trials],
        "trial_records": len(records),
        "logged_correct_by_trial": logged,
        "logged_summary_by_trial": [list(s) for _, s, _ in trials],
        "parsed_correct_by_trial": [sum(a.correct for a in by_q.values()) for by_q in per_trial],
        "parsed_agents_by_trial": [len(by_q) for by_q in per_trial],
        "duplicate_questions": duplicates,
        "logged_passed": logged[-1],
        "rescored": False,
        "rescored_passed": None,
        "rescore_note": "not re-scored: the logged verdict is the original's exact match on the logged answer",
        "missing": {"all_trials": missing, "note": "question ids are hashes of the question text"},
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
        # Success is cumulative in these files: the last trial's count is the run's.
        "logged_passed": per_trial[-1],
        "rescored": False,
        "rescored_passed": None,
        "rescore_note": "not re-scored: the logged verdict is the game's own reward",
        "regressions_ignored": regressions,
        "missing": {"all_trials": missing, "note": "which game env_i was is not logged"},
    }
    _write(out, records, manifest)
    return manifest


# --------------------------------------------------------------------------- any log


def default_data_dir() -> Path:
    """Where the benchmark data lives by default (as ``paths.data_dir`` resolves it)."""
    import os

    env = os.environ.get("REFLEXION_BENCH_DATA")
    if env:
        return Path(env)
    root = Path(os.environ.get("REFLEXION_BENCH_ROOT", "."))
    return root / ".." / "shared" / "data"


def detect_kind(src: Path) -> str:
    """``programming`` (a .jsonl), ``hotpotqa`` (a .txt) or ``alfworld`` (a folder of
    ``env_results_trial_<i>.json``)."""
    if src.is_dir():
        if any(_TRIAL_FILE.search(p.name) for p in src.iterdir()):
            return "alfworld"
        raise ImportError_(
            f"{src} is a folder without env_results_trial_<i>.json files; give a "
            "programming .jsonl, a HotpotQA .txt log or an ALFWorld run folder"
        )
    if src.suffix == ".jsonl":
        return "programming"
    if src.suffix == ".txt":
        return "hotpotqa"
    if not src.exists():
        raise ImportError_(f"not found: {src}")
    raise ImportError_(
        f"cannot tell what {src} is (expected .jsonl, .txt or a folder); pass --kind"
    )


def import_log(
    src: Path,
    out: Path,
    *,
    kind: str | None = None,
    benchmark: str | None = None,
    strategy: str | None = None,
    model: str | None = None,
    rescore: bool = True,
    rescorer: Rescorer | None = None,
    rescore_note: str | None = None,
    data_dir: Path | None = None,
    jobs: int | None = 2,
    sandbox: str = "local",
    repair_rust_braces: bool = False,
    limit: int | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Import any log of the original repository, detecting what it is; the manifest.

    Programming logs are re-scored as their harness assembled them
    (:func:`default_rescorer`) unless ``rescore`` is false or ``rescorer`` is given.
    """
    kind = kind or detect_kind(src)
    if kind == "alfworld":
        return import_alfworld(src, out, strategy=strategy, model=model or "unknown", force=force)
    if kind == "hotpotqa":
        return import_hotpotqa(src, out, strategy=strategy, model=model, force=force)
    if kind != "programming":
        raise ImportError_(f"unknown kind {kind!r} (programming, hotpotqa, alfworld)")
    note: str | None = rescore_note
    if rescorer is None and rescore:
        rows = read_programming_rows(src)
        det = detect_programming(src, rows)
        if benchmark is not None:
            det = Detected(
                benchmark,
                det.language,
                det.strategy,
                det.strategy_original,
                det.model,
                det.max_iters,
            )
        rescorer, note = default_rescorer(
            det,
            src,
            data_dir=data_dir if data_dir is not None else default_data_dir(),
            jobs=jobs,
            sandbox=sandbox,
            repair_rust_braces=repair_rust_braces,
        )
    elif not rescore:
        note = "not re-scored (--no-rescore)"
    return import_programming(
        src,
        out,
        benchmark=benchmark,
        strategy=strategy,
        model=model,
        rescorer=rescorer,
        rescore_note=note,
        repair_rust_braces=repair_rust_braces,
        limit=limit,
        force=force,
    )
