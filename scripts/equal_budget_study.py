"""The reflection-at-equal-budget study (results/reflection-at-equal-budget/README.md):
run it, resumably, over as many sessions as it takes.

    python scripts/equal_budget_study.py pilot     # the first 20 tasks of every arm
    python scripts/equal_budget_study.py plan      # wall-time estimate from the pilot
    python scripts/equal_budget_study.py run [--stop-at HH:MM] [--commit]
    python scripts/equal_budget_study.py status [--write]   # progress; --write: README block
    python scripts/equal_budget_study.py share     # export the shared calls (run does too)

Every arm (``retry``, ``reflexion``, ``wrong_reflection``; ``raw_log`` when the plan
allows) of both benchmarks is one run folder, ``<study>/<benchmark>/<arm>``, grown in
steps of tasks (``limit`` may grow on resume: the logged tasks are a prefix of the
larger selection), arms in turn, so that a stopped study leaves its arms at about the
same size and the paired comparisons use as many tasks as possible. HumanEval goes
first and is never cut; MBPP runs to the size the plan chose (397, or its first 200 when
the pilot says the required part would exceed ~8 hours on this machine), and grows past
it where the power check says the pooled reflexion-vs-retry comparison cannot detect 7
points (``reestimate``: a rule that reads only the discordance, fixed in advance).

``pilot`` runs the first step (20 tasks) of every required arm; ``plan`` extrapolates
each arm's wall time per task from it (``compute.jsonl``: every step's wall time, as run)
and writes ``plan.json`` and the study README's ``<!-- plan -->`` block; ``run`` does
the rest. Children run under ``nice`` (19) unless ``--no-nice``; ``--stop-at`` starts no
step after that time and interrupts a running step then (it resumes where it stopped);
After every step the new programs are judged under the plus tests (``rescore --tests
plus``, incremental); ``--commit`` also rebuilds the report (``report <study> --out
<study>/report``, which refreshes the README's blocks) and commits the study folder
(``git commit -- <study>``: other staged changes are left alone), so that the next
session resumes from the repository.

The server settings are the same for every run and pinned (``SERVER``): the response
cache's key includes ``n_ctx`` and ``n_parallel``, so that trial 1 (greedy, the same
request in every arm) is computed once, and a resume on another machine does not resolve
``auto`` differently and refuse the folder. The response cache stays on its machine, so
the calls every arm shares travel with the study: ``shared_calls.jsonl`` (the cache's
greedy entries of the pinned server) is imported before the first step of ``pilot`` and
``run`` and exported after every step (``reflexion-bench cache``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "results" / "reflection-at-equal-budget"
ARMS = ("retry", "reflexion", "wrong_reflection")
OPTIONAL_ARMS = ("raw_log",)
#: Tasks per benchmark; MBPP may be cut to MBPP_CUT by the plan (never HumanEval).
SIZES = {"humaneval": 164, "mbpp": 397}
MBPP_CUT = 200
PILOT = 20
#: Step sizes (run folders grow to these limits in turn).
STEP = 40
#: Above this many hours for the required arms the plan cuts MBPP (the issue's rule).
HOURS_LIMIT = 8.0
#: The power the study owes its pooled reflexion-vs-retry comparison: a detectable
#: difference (80% power, alpha 0.05) of at most 7 points. Where the planned tasks fall
#: short of it, MBPP grows (``reestimate``: a rule fixed before MBPP reached its plan).
DETECTABLE_TARGET = 0.07
#: Pinned server settings of every run: the 0.5B's `auto` on 2 quiet cores (6 slots, the
#: winner of results/bench/server_options.json; see the module docstring).
SERVER = [
    "model=embedded",
    "model.n_threads=2",
    "model.n_parallel=6",
    "model.n_ctx=24576",
    "model.max_connections=6",
    "max_concurrent_tasks=6",
    "model.timeout_s=3600",
    "generate.timeout_s=3600",
    "progress=false",
]


#: The calls every arm shares (temperature 0: trial 1's actor and self-test writer; the
#: reflector's greedy calls come along), exported from the response cache after every
#: step and imported before the first, so that a session on another machine serves
#: trial 1 from the entries the other arms used instead of decoding it again: greedy
#: decoding in 6 parallel slots is not bit-reproducible, and a task's arms would start
#: from different first programs (``trial1_agreement`` counts them).
SHARED_CALLS = STUDY / "shared_calls.jsonl"
MODEL_NAME = "qwen2.5-coder-0.5b-instruct"


def _server_setting(name: str) -> int:
    return int(next(x.split("=", 1)[1] for x in SERVER if x.startswith(f"model.{name}=")))


def _study_identity(request: dict[str, Any]) -> bool:
    """A cache entry of the study's pinned server (not the same model run otherwise)."""
    server = (request.get("identity") or {}).get("server") or {}
    return bool(
        server.get("n_ctx") == _server_setting("n_ctx")
        and server.get("n_parallel") == _server_setting("n_parallel")
    )


def _cache() -> Any:
    from reflexion_bench.commands.cache import default_cache
    from reflexion_bench.models.cache import ResponseCache

    return ResponseCache(default_cache())


def import_shared_calls() -> None:
    """Seed this machine's response cache with the committed shared calls (local entries
    are kept; an entry whose key is not its request's is refused)."""
    if not SHARED_CALLS.is_file():
        return
    from reflexion_bench.models.cache import import_entries

    cache = _cache()
    try:
        counts = import_entries(cache, SHARED_CALLS)
    finally:
        cache.close()
    print(
        f"shared calls: {counts['added']} added to the response cache, "
        f"{counts['present']} already there, {counts['refused']} refused",
        flush=True,
    )
    for problem in counts["problems"]:
        print(f"  refused {problem}", file=sys.stderr)


def export_shared_calls() -> None:
    """Write the study's greedy calls from this machine's cache to ``SHARED_CALLS``
    (what the cache holds: the imported entries and the new ones, oldest first)."""
    from reflexion_bench.models.cache import export_entries

    cache = _cache()
    try:
        export_entries(
            cache, SHARED_CALLS, greedy_only=True, model=MODEL_NAME, where=_study_identity
        )
    finally:
        cache.close()


def trial1_agreement(plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per benchmark, over the tasks every required arm has a trial 1 of: how many got
    the same first program in every arm, how many did not, how many of those had a
    first verdict that differs too, and how many were decoded again (a trial-1 actor
    call not served from the cache in some arm)."""
    out: dict[str, dict[str, int]] = {}
    for bench in SIZES:
        firsts: list[dict[str, dict[str, Any]]] = []
        for arm in ARMS:
            path = run_dir(bench, arm) / "log.jsonl"
            seen: dict[str, dict[str, Any]] = {}
            for rec in _records(path):
                if rec.get("trial") == 1 and "task_id" in rec:
                    # The last one: a task redone on resume supersedes its cut attempt.
                    seen[rec["task_id"]] = rec
            firsts.append(seen)
        common = set.intersection(*(set(f) for f in firsts)) if firsts else set()
        differ = [t for t in common if len({f[t].get("candidate") for f in firsts}) > 1]
        verdicts = [
            t for t in differ if len({(f[t].get("hidden") or {}).get("passed") for f in firsts}) > 1
        ]
        # Decoded more than once: the first arm computes trial 1, the others should be
        # served it from the cache; two uncached trial-1 actor calls mean it was not.
        decoded = [
            t
            for t in differ
            if sum(not c.get("cached") for f in firsts for c in (f[t].get("model_calls") or [])[:1])
            > 1
        ]
        out[bench] = {
            "tasks": len(common),
            "same": len(common) - len(differ),
            "differ": len(differ),
            "verdict_differs": len(verdicts),
            "decoded_again": len(decoded),
        }
    return out


def render_agreement(agree: dict[str, dict[str, int]]) -> str:
    parts = [
        f"{bench} {a['same']} of {a['tasks']}"
        + (
            f" ({a['differ']} differ, {a['verdict_differs']} of them with another first verdict)"
            if a["differ"]
            else ""
        )
        for bench, a in agree.items()
    ]
    differ = sum(a["differ"] for a in agree.values())
    again = sum(a["decoded_again"] for a in agree.values())
    text = (
        "Trial 1 (greedy, one computation meant to be shared by every arm) gave the same "
        "program in every arm, of the tasks all three arms ran, on " + "; ".join(parts) + "."
    )
    if differ:
        text += (
            f" On {again} of the {differ} that differ, trial 1 was decoded more than once: "
            "a later arm's call was not served from the response cache, which stays on "
            "its machine while the study moved between machines, and greedy decoding in 6 "
            "parallel slots is not bit-reproducible. Each arm is judged on its own trials, "
            "so the paired comparisons stay valid, but first try is not identical across "
            "arms on those tasks. Since 2026-12-05 the shared calls travel with the study "
            "(`shared_calls.jsonl`, exported after every step, imported before a "
            "session's first)."
        )
    return text


def run_dir(bench: str, arm: str) -> Path:
    return STUDY / bench / arm


def finished_tasks(folder: Path) -> int:
    """Tasks with a final record in the folder's log (what a resume will not redo)."""
    return len(
        {r["task_id"] for r in _records(folder / "log.jsonl") if r.get("final") and "task_id" in r}
    )


def _records(log: Path) -> Iterator[dict[str, Any]]:
    """A run log's records through the runner's own reader (a line cut by a stop is
    skipped, as a resume skips it); none where the arm has not started."""
    if not log.is_file():
        return iter(())
    from reflexion_bench.runner.runlog import iter_records

    return iter_records(log)


def read_plan() -> dict[str, Any]:
    path = STUDY / "plan.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def targets(plan: dict[str, Any]) -> dict[str, int]:
    out = dict(SIZES)
    if plan.get("mbpp_tasks"):
        out["mbpp"] = int(plan["mbpp_tasks"])
    return out


def arms(plan: dict[str, Any]) -> list[str]:
    return [*ARMS, *(a for a in OPTIONAL_ARMS if a in (plan.get("optional_arms") or []))]


def steps(total: int) -> list[int]:
    out = [PILOT]
    while out[-1] < total:
        out.append(min(total, out[-1] + STEP))
    return out


class Stopped(Exception):
    """The --stop-at time came, or a signal stopped a step: the study stops cleanly and
    resumes next time (the message says which)."""


def _deadline(text: str | None) -> float | None:
    if not text:
        return None
    hh, mm = (int(x) for x in text.split(":"))
    now = dt.datetime.now()
    at = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if at <= now:
        at += dt.timedelta(days=1)
    return at.timestamp()


def run_step(bench: str, arm: str, limit: int, deadline: float | None, nice: bool) -> None:
    folder = run_dir(bench, arm)
    before = finished_tasks(folder)
    if before >= limit:
        return
    if deadline is not None and time.time() >= deadline:
        raise Stopped("at --stop-at")
    cmd = [
        sys.executable,
        "-m",
        "reflexion_bench.cli",
        "run",
        f"experiment=equal_budget_{bench}",
        f"strategy={arm}",
        f"run_dir={folder.relative_to(ROOT)}",
        f"limit={limit}",
        *SERVER,
    ]
    if nice:
        cmd = ["nice", "-n", "19", *cmd]
    started = time.time()
    print(f"[{dt.datetime.now():%H:%M}] {bench}/{arm}: {before} -> {limit} tasks", flush=True)
    # In the driver's process group: whatever stops the driver's group stops the run too
    # (an orphaned run writing on beside the next session's driver would mix two logs).
    proc = subprocess.Popen(cmd, cwd=ROOT)
    interrupted: float | None = None
    while proc.poll() is None:
        if deadline is not None and time.time() >= deadline and interrupted is None:
            # The runner stops on SIGINT (to it alone: its sandbox workers must not see
            # it mid-judgment) after logging what finished; a resume redoes only the
            # unfinished tasks.
            proc.send_signal(signal.SIGINT)
            interrupted = time.time()
        elif interrupted is not None and time.time() - interrupted > 300:
            proc.terminate()  # it did not stop on SIGINT: SIGTERM (also a clean stop)
            interrupted = float("inf")
        time.sleep(2)
    wall = time.time() - started
    after = finished_tasks(folder)
    record = {
        "benchmark": bench,
        "arm": arm,
        "from_tasks": before,
        "to_tasks": after,
        "limit": limit,
        "wall_s": round(wall, 1),
        "start": dt.datetime.fromtimestamp(started, dt.UTC).isoformat(timespec="seconds"),
        "returncode": proc.returncode,
        "interrupted": interrupted is not None or proc.returncode == 130,
        "load_avg_1min_at_end": round(os.getloadavg()[0], 2),
    }
    with (STUDY / "compute.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    print(f"   {after} tasks finished, {wall / 60:.1f} min, rc {proc.returncode}", flush=True)
    if interrupted is not None or proc.returncode == 130:
        raise Stopped("by a signal")  # 130: from outside (Ctrl-C); it resumes
    if proc.returncode != 0:
        raise SystemExit(f"{bench}/{arm} failed (rc {proc.returncode}); see its run folder")
    # The plus verdicts grow with the log (only the new programs are judged), so the
    # report's plus columns are current at every commit.
    rescore = [
        sys.executable,
        "-m",
        "reflexion_bench.cli",
        "rescore",
        str(folder),
        "--tests",
        "plus",
    ]
    subprocess.run(["nice", "-n", "19", *rescore] if nice else rescore, cwd=ROOT, check=False)


def write_report(nice: bool) -> None:
    """The study's report and README blocks, from the committed logs only (the command
    the README names)."""
    rel = str(STUDY.relative_to(ROOT))
    cmd = [sys.executable, "-m", "reflexion_bench.cli", "report", rel, "--out", f"{rel}/report"]
    subprocess.run(
        ["nice", "-n", "19", *cmd] if nice else cmd,
        cwd=ROOT,
        check=False,
        stdout=subprocess.DEVNULL,
    )


def commit(message: str) -> None:
    rel = str(STUDY.relative_to(ROOT))
    for attempt in range(5):  # another git command may hold the index for a moment
        add = subprocess.run(["git", "add", rel], cwd=ROOT, capture_output=True, text=True)
        done = subprocess.run(
            ["git", "commit", "-q", "-m", message, "--", rel],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if add.returncode == 0 and done.returncode == 0:
            return
        if "nothing to commit" in done.stdout + done.stderr:
            return
        time.sleep(5 * (attempt + 1))
    print(f"warning: could not commit the study: {done.stderr.strip()}", file=sys.stderr)


def pilot(args: argparse.Namespace) -> None:
    import_shared_calls()
    for bench in SIZES:
        for arm in ARMS:
            run_step(bench, arm, PILOT, _deadline(args.stop_at), not args.no_nice)
            if args.commit:
                export_shared_calls()
                write_report(not args.no_nice)
                commit(f"study: pilot {bench}/{arm} ({PILOT} tasks)")


def compute_rows() -> list[dict[str, Any]]:
    """Every step's record in ``compute.jsonl`` (none before the first step)."""
    path = STUDY / "compute.jsonl"
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def estimate() -> dict[str, Any]:
    """Seconds per task of every arm, from the pilot's steps in compute.jsonl: an arm's
    pilot may have run over several sessions (a step interrupted at a session's end and
    resumed), so its steps up to the pilot's size are added up; the time of an
    interrupted step counts in full (its last tasks in flight were lost and redone: a
    conservative estimate). An arm whose steps do not reach the pilot's size is missing."""
    rows = compute_rows()
    spent: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["to_tasks"] <= PILOT:
            acc = spent.setdefault((r["benchmark"], r["arm"]), [0.0, 0.0])
            acc[0] += float(r["wall_s"])
            acc[1] = max(acc[1], float(r["to_tasks"]))
    per: dict[str, dict[str, float]] = {}
    for (bench, arm), (wall, tasks) in spent.items():
        if tasks >= PILOT:
            per.setdefault(bench, {})[arm] = wall / tasks
    return per


def make_plan(args: argparse.Namespace) -> dict[str, Any]:
    per = estimate()
    missing = [f"{b}/{a}" for b in SIZES for a in ARMS if a not in per.get(b, {})]
    if missing:
        raise SystemExit(f"the pilot is not complete ({', '.join(missing)}): run `pilot` first")

    def hours(bench: str, n: int, which: tuple[str, ...]) -> float:
        return float(sum(per[bench][a] * n for a in which)) / 3600

    full = hours("humaneval", SIZES["humaneval"], ARMS) + hours("mbpp", SIZES["mbpp"], ARMS)
    mbpp = SIZES["mbpp"] if full <= HOURS_LIMIT else MBPP_CUT
    required = hours("humaneval", SIZES["humaneval"], ARMS) + hours("mbpp", mbpp, ARMS)
    plan = {
        "pilot_tasks": PILOT,
        "seconds_per_task": {b: {a: round(v, 1) for a, v in d.items()} for b, d in per.items()},
        "hours_full": round(full, 2),
        "hours_limit": HOURS_LIMIT,
        "mbpp_tasks": mbpp,
        "hours_required": round(required, 2),
        # raw_log would cost about what wrong_reflection does (one reflection-sized
        # memory per trial); optional arms are not planned while the required part
        # alone is over the limit.
        "optional_arms": [],
    }
    (STUDY / "plan.json").write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    refresh_readme(plan)
    print(render_plan(plan))
    return plan


def render_plan(plan: dict[str, Any]) -> str:
    lines = [
        f"Pilot: the first {plan['pilot_tasks']} tasks of every arm; wall time per task "
        "(this machine, the study's settings, trial 1 shared through the response cache):",
        "",
        "| benchmark | arm | s/task (pilot) |",
        "|---|---|---|",
    ]
    for bench, d in plan["seconds_per_task"].items():
        for arm, s in d.items():
            lines.append(f"| {bench} | {arm} | {s:.1f} |")
    # The pilot's choice, before any power check grew MBPP.
    first = (plan.get("reestimation") or [{"at_mbpp_tasks": plan["mbpp_tasks"]}])[0]
    chosen = int(first["at_mbpp_tasks"])
    lines += [
        "",
        f"Extrapolated: {plan['hours_full']:.1f} h for all three arms on 164 HumanEval + "
        f"397 MBPP tasks (limit {plan['hours_limit']:g} h), so MBPP runs "
        + (
            f"its first {chosen} tasks (cut): {plan['hours_required']:.1f} h."
            if chosen < SIZES["mbpp"]
            else f"all {chosen} tasks: {plan['hours_required']:.1f} h."
        ),
    ]
    checks = render_reestimation(plan)
    return "\n".join(lines) + (f"\n\n{checks}" if checks else "")


BLOCK = re.compile(r"(<!-- plan -->\n).*?(<!-- /plan -->)", re.S)


def refresh_block(block: re.Pattern[str], body: str) -> None:
    """Rewrite one generated block of the study README (left alone where absent)."""
    readme = STUDY / "README.md"
    if not readme.is_file():
        return
    text = readme.read_text(encoding="utf-8")
    new = block.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
    if new != text:
        readme.write_text(new, encoding="utf-8")


def refresh_readme(plan: dict[str, Any]) -> None:
    refresh_block(BLOCK, render_plan(plan))


def run(args: argparse.Namespace) -> None:
    plan = read_plan()
    if not plan:
        raise SystemExit("no plan.json: run `pilot` and `plan` first")
    deadline = _deadline(args.stop_at)
    import_shared_calls()
    while True:
        size = targets(plan)
        for bench in SIZES:  # HumanEval first: it is never cut
            for limit in steps(size[bench]):
                for arm in arms(plan):
                    folder = run_dir(bench, arm)
                    if finished_tasks(folder) >= limit:
                        continue
                    run_step(bench, arm, limit, deadline, not args.no_nice)
                    if args.commit:
                        export_shared_calls()
                        write_report(not args.no_nice)
                        refresh_progress(plan)
                        commit(f"study: {bench}/{arm} at {finished_tasks(folder)} tasks")
        # Every arm has its planned tasks: the power check, which may grow MBPP.
        grown = reestimate(plan)
        if args.commit:
            write_report(not args.no_nice)
            refresh_progress(plan)
            commit(
                f"study: power check at MBPP {plan['reestimation'][-1]['at_mbpp_tasks']}"
                f" -> MBPP {targets(plan)['mbpp']}"
            )
        if not grown:
            return


def pooled_discordance() -> tuple[int, float, float | None]:
    """The pooled reflexion-vs-retry comparison as the report computes it from the logs:
    paired tasks, the share of them on which the two arms disagree (either way), and the
    difference they detect with 80% power (None: no power at any difference)."""
    from reflexion_bench.analysis.report import build_comparison

    report = build_comparison([STUDY], n_resamples=200)
    for r in (report.get("strategies") or {}).get("pooled") or []:
        cmp = r.get("vs_retry") if r["strategy"] == "reflexion" else None
        if cmp:
            n = int(cmp["n_common"])
            detectable = (cmp.get("assessment") or {}).get("detectable_difference")
            return n, (cmp["only_this"] + cmp["only_ref"]) / n, detectable
    raise SystemExit("the report has no pooled reflexion-vs-retry comparison")


def mbpp_needed(n_paired: int, psi: float, detectable: float | None, mbpp_now: int) -> int:
    """MBPP's size under the rule: unchanged where the pooled comparison already detects
    DETECTABLE_TARGET; else the smallest size in steps of STEP (at most all of MBPP)
    whose projected detectable difference, at the discordance seen so far, is within it.

    The rule reads only the discordance (how often the arms disagree, in either
    direction), never which arm is ahead or a p-value: re-estimating a sample size from
    this nuisance parameter leaves the tests' false-positive rate where it was (an
    internal pilot; Wittes and Brittain 1990, Lu and Bean 1995 for McNemar)."""
    from reflexion_bench.analysis.power import detectable_difference

    if detectable is not None and detectable <= DETECTABLE_TARGET:
        return mbpp_now
    other = n_paired - mbpp_now  # the HumanEval tasks, never cut
    n = mbpp_now
    while n < SIZES["mbpp"]:
        n = min(SIZES["mbpp"], n + STEP)
        if detectable_difference(other + n, psi) <= DETECTABLE_TARGET:
            break
    return n


def reestimate(plan: dict[str, Any]) -> bool:
    """The power check once every arm has its planned tasks: record it in ``plan.json``
    (and the README's plan block), grow MBPP where :func:`mbpp_needed` says so (the
    answer block's ``planned=`` follows), and say whether it grew."""
    now = targets(plan)["mbpp"]
    n, psi, detectable = pooled_discordance()
    last = (plan.get("reestimation") or [{}])[-1]
    if last.get("at_mbpp_tasks") == now and last.get("paired") == n:
        return False  # this size was checked already (a rerun of a complete study)
    new = mbpp_needed(n, psi, detectable, now)
    plan.setdefault("reestimation", []).append(
        {
            "at_mbpp_tasks": now,
            "paired": n,
            "discordance": round(psi, 4),
            "detectable": None if detectable is None else round(detectable, 4),
            "mbpp_tasks": new,
        }
    )
    plan["mbpp_tasks"] = new
    (STUDY / "plan.json").write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    refresh_readme(plan)
    readme = STUDY / "README.md"
    if new != now and readme.is_file():
        text = readme.read_text(encoding="utf-8")
        readme.write_text(
            re.sub(r"(planned=humaneval:\d+,mbpp:)\d+", rf"\g<1>{new}", text), encoding="utf-8"
        )
    print(render_reestimation(plan), flush=True)
    return new != now


def render_reestimation(plan: dict[str, Any]) -> str:
    """The power checks done so far, one sentence each (the plan block's last lines)."""
    lines = []
    for r in plan.get("reestimation") or []:
        det = (
            "no power at any difference"
            if r["detectable"] is None
            else (f"a detectable difference of {100 * r['detectable']:.1f} points")
        )
        grown = (
            f"MBPP grows to {r['mbpp_tasks']} tasks"
            if r["mbpp_tasks"] != r["at_mbpp_tasks"]
            else f"MBPP stays at {r['mbpp_tasks']} tasks"
        )
        lines.append(
            f"Power check at MBPP {r['at_mbpp_tasks']}: {r['paired']} paired tasks, reflexion"
            f" and retry disagree on {100 * r['discordance']:.1f}% of them, {det}"
            f" (target {100 * DETECTABLE_TARGET:g}): {grown}."
        )
    return "\n\n".join(lines)


def progress(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Per arm: tasks finished of its target, wall time spent over every session
    (``compute.jsonl``), the wall time per task measured over all its steps (an
    interrupted step counts in full: its tasks in flight were lost and redone, so the
    rate errs long), and the hours that rate leaves for the rest of the arm."""
    rows = compute_rows()
    size = targets(plan)
    out = []
    for bench in SIZES:
        for arm in arms(plan):
            steps_ = [r for r in rows if (r["benchmark"], r["arm"]) == (bench, arm)]
            wall = sum(float(r["wall_s"]) for r in steps_)
            added = sum(max(0, int(r["to_tasks"]) - int(r["from_tasks"])) for r in steps_)
            rate = wall / added if added else None
            done = finished_tasks(run_dir(bench, arm))
            left = max(0, size[bench] - done)
            out.append(
                {
                    "benchmark": bench,
                    "arm": arm,
                    "finished": done,
                    "target": size[bench],
                    "wall_h": wall / 3600,
                    "s_per_task": rate,
                    "hours_left": None if rate is None else left * rate / 3600,
                }
            )
    return out


def render_progress(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| benchmark | arm | tasks finished | wall time spent (h) | s/task (all steps) "
        "| hours left at that rate |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        rate = "n/a" if r["s_per_task"] is None else f"{r['s_per_task']:.1f}"
        left = "n/a" if r["hours_left"] is None else f"{r['hours_left']:.1f}"
        lines.append(
            f"| {r['benchmark']} | {r['arm']} | {r['finished']} of {r['target']} "
            f"| {r['wall_h']:.2f} | {rate} | {left} |"
        )
    spent = sum(r["wall_h"] for r in rows)
    if all(r["finished"] >= r["target"] for r in rows):
        lines += ["", f"Spent: {spent:.1f} h of wall time. Every arm has all its planned tasks."]
        return "\n".join(lines)
    known = [r["hours_left"] for r in rows if r["hours_left"] is not None]
    unknown = len(rows) - len(known)
    lines += [
        "",
        f"Spent so far: {spent:.1f} h of wall time. Left: about {sum(known):.1f} h at the "
        "rates measured so far"
        + (f" ({unknown} arm(s) without a measured rate not counted)" if unknown else "")
        + ". Rates measured beside other work on the machine (see `compute.jsonl`: the "
        "load average at each step's end) err long.",
    ]
    return "\n".join(lines)


PROGRESS = re.compile(r"(<!-- progress -->\n).*?(<!-- /progress -->)", re.S)


def refresh_progress(plan: dict[str, Any]) -> None:
    """The README's ``<!-- progress -->`` block, from the logs and compute.jsonl (never
    typed by hand)."""
    refresh_block(PROGRESS, progress_block(plan))


def progress_block(plan: dict[str, Any]) -> str:
    return render_progress(progress(plan)) + "\n\n" + render_agreement(trial1_agreement(plan))


def status(args: argparse.Namespace) -> None:
    plan = read_plan()
    print(progress_block(plan))
    if getattr(args, "write", False):
        refresh_progress(plan)


def share(args: argparse.Namespace) -> None:
    """Export the shared calls now (``run --commit`` does it after every step)."""
    export_shared_calls()
    n = sum(1 for _ in SHARED_CALLS.open(encoding="utf-8"))
    print(f"{n} shared calls in {SHARED_CALLS.relative_to(ROOT)}")


_LOCK: Any = None


def _single_driver() -> None:
    """One driver at a time: two would run the same arm into one folder."""
    import fcntl

    global _LOCK
    _LOCK = (STUDY / ".driver.lock").open("w")
    try:
        fcntl.flock(_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise SystemExit("another equal_budget_study.py is running (see `ps`)") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stage", choices=("pilot", "plan", "run", "status", "share"))
    p.add_argument("--stop-at", help="HH:MM (local time): start no step after it, stop then")
    p.add_argument("--commit", action="store_true", help="commit the study folder per step")
    p.add_argument("--no-nice", action="store_true", help="run the children at normal priority")
    p.add_argument(
        "--write", action="store_true", help="status: also refresh the README's progress block"
    )
    args = p.parse_args(argv)
    STUDY.mkdir(parents=True, exist_ok=True)
    if args.stage != "status":
        _single_driver()
    try:
        stages = {"pilot": pilot, "plan": make_plan, "run": run, "status": status, "share": share}
        stages[args.stage](args)
    except Stopped as why:
        print(f"stopped {why}; run the same command again to resume", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
