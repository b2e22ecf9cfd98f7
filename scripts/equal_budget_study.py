"""The study driver: run a study defined as data (``results/<study>/study.yaml``),
resumably, over as many sessions as it takes.

    python scripts/equal_budget_study.py [--study results/<study>] pilot
    python scripts/equal_budget_study.py [--study ...] plan      # wall-time plan from the pilot
    python scripts/equal_budget_study.py [--study ...] run [--stop-at HH:MM] [--commit]
    python scripts/equal_budget_study.py [--study ...] status [--write]   # --write: README blocks
    python scripts/equal_budget_study.py [--study ...] share     # export the shared calls

``--study`` defaults to results/reflection-at-equal-budget, the study this driver was
written for, so that its README's commands keep working as they are.

A study's ``study.yaml`` lists its benchmarks (tasks, the experiment file, the token
budget, an optional ``cut_to``), its arms (benchmark, strategies, an optional
``evaluator`` and Hydra ``overrides``; required, or optional with a ``priority`` and the
arm whose wall time it is estimated from, ``cost_as``), arms read from another study
(``read``: never run, never copied), the pinned server settings, the pilot and step
sizes, the compute cap in hours and an optional power check. :func:`load_study` refuses
a definition with a problem in one line naming the key to fix, and ``pilot``/``plan``/
``run`` refuse an arm whose strategy or evaluator has no config file yet.

Every arm is one run folder, ``<study>/<layout>`` (e.g. ``<benchmark>/<strategy>`` or
``<benchmark>/<evaluator>/<strategy>``), grown in steps of tasks (``limit`` may grow on
resume: the logged tasks are a prefix of the larger selection), arms in turn, so that a
stopped study leaves its arms at about the same size and the paired comparisons use as
many tasks as possible. The required arms come first, benchmark by benchmark in the
file's order; then the optional arms the plan chose, one priority at a time.

``pilot`` runs the first step of every required arm; ``plan`` extrapolates each arm's
wall time per task from it (``compute.jsonl``: every step's wall time, as run), cuts the
benchmark with a ``cut_to`` where the required part at full size exceeds the cap, adds
the optional arms in priority order while the total stays under the cap (a priority is
taken whole or not at all, and none after the first that does not fit), and writes
``plan.json`` and the README's ``<!-- plan -->`` block; ``run`` does the rest, and where
the study has a power check, grows its benchmark once every arm has its planned tasks
(``reestimate``: a rule that reads only the discordance, fixed in advance). Children run
under ``nice`` (19) unless ``--no-nice``; ``--stop-at`` starts no step after that time
and interrupts a running step then (it resumes where it stopped). After every step the
new programs are judged under the plus tests (``rescore --tests plus``, incremental);
``--commit`` also rebuilds the report (``report <study> [read arms] --out
<study>/report``, which refreshes the README's blocks) and commits the study folder
(``git commit -- <study>``: other staged changes are left alone), so that the next
session resumes from the repository.

The response cache stays on its machine, so the calls every arm shares travel with the
study: ``shared_calls.jsonl`` (the cache's greedy entries of the pinned server, less
those of the studies it imports from) is imported before the first step of ``pilot`` and
``run``, together with the ``import_calls`` of other studies (so that a study reading
another's arms starts from the same trial 1), and exported after every step.
"""

from __future__ import annotations

import argparse
import dataclasses
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
DEFAULT_STUDY = ROOT / "results" / "reflection-at-equal-budget"

#: What a new study's progress block says where trial 1 differs between arms (a study
#: may say more in its ``trial1_note``: reflection-at-equal-budget tells its history).
TRIAL1_NOTE = (
    "a later arm's call was not served from the response cache (see `shared_calls.jsonl`), "
    "and greedy decoding in parallel slots is not bit-reproducible. Each arm is judged on "
    "its own trials, so the paired comparisons stay valid, but first try is not identical "
    "across arms on those tasks."
)
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


class StudyError(SystemExit):
    """A study definition the driver cannot run: one line naming the key (or the config
    file) to fix. A SystemExit, so the command stops with that line and nothing else."""


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    tasks: int
    experiment: str
    budget_tokens: int
    cut_to: int | None = None


@dataclasses.dataclass(frozen=True)
class Arm:
    """One run folder of the study: ``name`` is its folder under the benchmark's
    (``retry``; ``oracle/retry``), the ``arm`` of compute.jsonl and the tables."""

    benchmark: str
    strategy: str
    name: str
    evaluator: str | None = None  # None: the experiment's (the benchmark's default)
    overrides: tuple[str, ...] = ()
    priority: int | None = None  # None: required
    cost_as: str | None = None  # optional arms: the required arm whose s/task it borrows

    @property
    def id(self) -> str:
        return f"{self.benchmark}/{self.name}"

    @property
    def required(self) -> bool:
        return self.priority is None


@dataclasses.dataclass(frozen=True)
class ReadArm:
    """An arm of another study this one compares with: read from ``path``, never run."""

    benchmark: str
    strategy: str
    evaluator: str
    path: str  # relative to the project root

    @property
    def id(self) -> str:
        return f"{self.benchmark}/{self.evaluator}/{self.strategy}"


@dataclasses.dataclass(frozen=True)
class PowerCheck:
    compare: tuple[str, str]  # arm names: (this, reference)
    target: float
    grow: str  # the benchmark that grows


@dataclasses.dataclass(frozen=True)
class Study:
    title: str
    model_name: str
    server: tuple[str, ...]
    pilot: int
    step: int
    hours_limit: float
    benchmarks: dict[str, Benchmark]
    arms: tuple[Arm, ...]
    read: tuple[ReadArm, ...] = ()
    import_calls: tuple[str, ...] = ()
    power_check: PowerCheck | None = None
    trial1_note: str = TRIAL1_NOTE

    def arm(self, bench: str, name: str) -> Arm:
        return next(a for a in self.arms if (a.benchmark, a.name) == (bench, name))

    @property
    def required(self) -> list[Arm]:
        return [a for a in self.arms if a.required]

    @property
    def optional_groups(self) -> list[tuple[int, list[Arm]]]:
        """The optional arms by priority, lowest number first (one group, one unit)."""
        prios = sorted({a.priority for a in self.arms if a.priority is not None})
        return [(p, [a for a in self.arms if a.priority == p]) for p in prios]

    @property
    def cut(self) -> Benchmark | None:
        return next((b for b in self.benchmarks.values() if b.cut_to), None)


_TOP = {
    "title": True,
    "model_name": True,
    "server": True,
    "pilot": True,
    "step": True,
    "hours_limit": True,
    "layout": True,
    "benchmarks": True,
    "arms": True,
    "read": False,
    "import_calls": False,
    "power_check": False,
    "trial1_note": False,
}
_BENCH = {"title", "tasks", "cut_to", "experiment", "budget_tokens"}
_ARM = {"benchmark", "strategies", "evaluator", "as", "overrides", "priority", "cost_as"}
_READ = {"benchmark", "strategy", "evaluator", "path"}
_POWER = {"compare", "target", "grow"}


def _keys(where: str, node: Any, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise StudyError(f"{where}: expected a mapping, got {type(node).__name__}")
    unknown = sorted(set(node) - allowed)
    if unknown:
        raise StudyError(
            f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )
    missing = sorted(required - set(node))
    if missing:
        raise StudyError(f"{where}: missing key {missing[0]!r}")
    return node


def _positive_int(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise StudyError(f"{where}: expected a positive whole number, got {value!r}")
    return value


def parse_study(data: Any, where: str = "study.yaml") -> Study:
    """A study definition from its parsed YAML, checked for everything the file alone can
    tell (config files are :func:`check_configs`' business). Raises :class:`StudyError`
    with one line naming the key to fix."""
    top = _keys(where, data, set(_TOP), {k for k, req in _TOP.items() if req})
    benchmarks: dict[str, Benchmark] = {}
    if not isinstance(top["benchmarks"], dict) or not top["benchmarks"]:
        raise StudyError(f"{where}: benchmarks: expected a mapping of benchmark names")
    for name, node in top["benchmarks"].items():
        at = f"{where}: benchmarks.{name}"
        b = _keys(at, node, _BENCH, _BENCH - {"cut_to"})
        tasks = _positive_int(f"{at}.tasks", b["tasks"])
        cut = b.get("cut_to")
        if cut is not None and not 0 < _positive_int(f"{at}.cut_to", cut) < tasks:
            raise StudyError(f"{at}.cut_to: {cut} is not below tasks ({tasks})")
        budget = _positive_int(f"{at}.budget_tokens", b["budget_tokens"])
        benchmarks[name] = Benchmark(
            name, str(b["title"]), tasks, str(b["experiment"]), budget, cut
        )
    if sum(b.cut_to is not None for b in benchmarks.values()) > 1:
        raise StudyError(
            f"{where}: benchmarks: cut_to on more than one benchmark (the plan cuts one)"
        )
    layout = str(top["layout"])
    if layout not in ("{benchmark}/{strategy}", "{benchmark}/{evaluator}/{strategy}"):
        raise StudyError(
            f"{where}: layout: {layout!r} is neither '{{benchmark}}/{{strategy}}' "
            "nor '{benchmark}/{evaluator}/{strategy}'"
        )
    arms: list[Arm] = []
    if not isinstance(top["arms"], list) or not top["arms"]:
        raise StudyError(f"{where}: arms: expected a list of arms")
    for i, node in enumerate(top["arms"]):
        at = f"{where}: arms[{i}]"
        a = _keys(at, node, _ARM, {"benchmark", "strategies"})
        if a["benchmark"] not in benchmarks:
            raise StudyError(
                f"{at}.benchmark: {a['benchmark']!r} is not one of benchmarks "
                f"({', '.join(benchmarks)})"
            )
        strategies = a["strategies"]
        if not isinstance(strategies, list) or not strategies:
            raise StudyError(f"{at}.strategies: expected a list of strategy names")
        evaluator = a.get("evaluator")
        label = str(a.get("as") or evaluator or "")
        if "{evaluator}" in layout and not label:
            raise StudyError(f"{at}: the layout names the evaluator: set evaluator")
        if "{evaluator}" not in layout and (evaluator or a.get("as")):
            raise StudyError(f"{at}: evaluator set but the layout has no {{evaluator}} level")
        overrides = a.get("overrides") or {}
        if not isinstance(overrides, dict):
            raise StudyError(f"{at}.overrides: expected a mapping of Hydra keys to values")
        priority = a.get("priority")
        if priority is not None:
            _positive_int(f"{at}.priority", priority)
            if not a.get("cost_as"):
                raise StudyError(
                    f"{at}: an optional arm (priority) needs cost_as: the required arm of "
                    "its benchmark whose wall time per task estimates its own"
                )
        elif a.get("cost_as"):
            raise StudyError(f"{at}.cost_as: only an optional arm (with a priority) borrows a cost")
        for strategy in strategies:
            name = f"{label}/{strategy}" if "{evaluator}" in layout else str(strategy)
            arms.append(
                Arm(
                    benchmark=a["benchmark"],
                    strategy=str(strategy),
                    name=name,
                    evaluator=evaluator,
                    overrides=tuple(f"{k}={_yaml_value(v)}" for k, v in overrides.items()),
                    priority=priority,
                    cost_as=_cost_as(a.get("cost_as"), str(strategy), layout),
                )
            )
    seen: set[str] = set()
    for arm in arms:
        if arm.id in seen:
            raise StudyError(
                f"{where}: arms: two arms run into {arm.id} (set `as` to tell them apart)"
            )
        seen.add(arm.id)
    required = {a.id for a in arms if a.required}
    if not required:
        raise StudyError(f"{where}: arms: no required arm (one without a priority)")
    for arm in arms:
        if arm.cost_as and f"{arm.benchmark}/{arm.cost_as}" not in required:
            raise StudyError(
                f"{where}: arms: {arm.id} cost_as {arm.cost_as!r} is not a required arm of "
                f"{arm.benchmark} ({', '.join(sorted(r for r in required if r.startswith(arm.benchmark + '/')))})"
            )
    read = []
    for i, node in enumerate(top.get("read") or []):
        at = f"{where}: read[{i}]"
        r = _keys(at, node, _READ, _READ)
        if r["benchmark"] not in benchmarks:
            raise StudyError(f"{at}.benchmark: {r['benchmark']!r} is not one of benchmarks")
        read.append(
            ReadArm(r["benchmark"], str(r["strategy"]), str(r["evaluator"]), str(r["path"]))
        )
    power = None
    if top.get("power_check") is not None:
        p = _keys(f"{where}: power_check", top["power_check"], _POWER, _POWER)
        if p["grow"] not in benchmarks:
            raise StudyError(f"{where}: power_check.grow: {p['grow']!r} is not one of benchmarks")
        pair = tuple(p["compare"])
        names = {a.name for a in arms if a.required}
        if len(pair) != 2 or not set(pair) <= names:
            raise StudyError(f"{where}: power_check.compare: two required arm names, got {pair!r}")
        power = PowerCheck((str(pair[0]), str(pair[1])), float(p["target"]), str(p["grow"]))
    server = top["server"]
    if not isinstance(server, list) or not all(isinstance(x, str) and "=" in x for x in server):
        raise StudyError(f"{where}: server: expected a list of key=value overrides")
    return Study(
        title=str(top["title"]),
        model_name=str(top["model_name"]),
        server=tuple(server),
        pilot=_positive_int(f"{where}: pilot", top["pilot"]),
        step=_positive_int(f"{where}: step", top["step"]),
        hours_limit=float(top["hours_limit"]),
        benchmarks=benchmarks,
        arms=tuple(arms),
        read=tuple(read),
        import_calls=tuple(str(x) for x in top.get("import_calls") or ()),
        power_check=power,
        trial1_note=str(top.get("trial1_note") or TRIAL1_NOTE),
    )


def _cost_as(value: Any, strategy: str, layout: str) -> str | None:
    """The arm name an optional arm's cost is borrowed from. Under the evaluator layout a
    bare evaluator (``oracle``) means that evaluator's arm of the same strategy; a full
    name (``oracle/reflexion``) names another strategy's (wrong_reflection costs what
    reflexion does: the same loop, another lesson)."""
    if not value:
        return None
    if "{evaluator}" in layout and "/" not in str(value):
        return f"{value}/{strategy}"
    return str(value)


def _yaml_value(value: Any) -> str:
    """A Hydra override's value as typed in YAML (0.3 stays 0.3, True becomes true)."""
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def load_study(folder: Path) -> Study:
    """The definition in ``<folder>/study.yaml``, checked (see :func:`parse_study`), and
    the folders of its read arms, which must exist: a study compares with them."""
    import yaml

    path = folder / "study.yaml"
    where = _rel(path)
    if not path.is_file():
        raise StudyError(f"{where}: no study definition (see results/*/study.yaml)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise StudyError(f"{where}: not YAML ({str(exc).splitlines()[0]})") from None
    study = parse_study(data, where)
    for r in study.read:
        if not (ROOT / r.path / "log.jsonl").is_file():
            raise StudyError(f"{where}: read: {r.id} has no run log at {r.path}/log.jsonl")
    for calls in study.import_calls:
        if not (ROOT / calls).is_file():
            raise StudyError(f"{where}: import_calls: no file {calls}")
    return study


def check_configs(study: Study, where: str, configs: Path | None = None) -> None:
    """Refuse (one line naming the files) a study whose arms name a config that does not
    exist yet: an experiment, a strategy or an evaluator (another branch may be adding
    it), or an override key its evaluator's config does not have. Checked before
    anything runs, not an hour into the run that needs it."""
    import yaml

    configs = configs or ROOT / "configs"
    missing: dict[str, list[str]] = {}  # config file -> what names it
    problems: list[str] = []

    def need(path: Path, who: str) -> bool:
        if path.is_file():
            return True
        missing.setdefault(str(path.relative_to(configs.parent)), []).append(who)
        return False

    for b in study.benchmarks.values():
        exp = configs / "experiment" / f"{b.experiment}.yaml"
        if need(exp, f"benchmarks.{b.name}"):
            tokens = (
                (yaml.safe_load(exp.read_text(encoding="utf-8")) or {}).get("budget") or {}
            ).get("tokens")
            if tokens != b.budget_tokens:
                problems.append(
                    f"benchmarks.{b.name}.budget_tokens is {b.budget_tokens} but "
                    f"{exp.relative_to(configs.parent)} sets budget.tokens {tokens}"
                )
    for arm in study.arms:
        need(configs / "strategy" / f"{arm.strategy}.yaml", arm.id)
        if arm.evaluator is None:
            continue
        ev = configs / "evaluator" / f"{arm.evaluator}.yaml"
        if not need(ev, arm.id):
            continue
        keys = yaml.safe_load(ev.read_text(encoding="utf-8")) or {}
        for override in arm.overrides:
            key = override.split("=", 1)[0]
            if key.startswith("evaluator.") and key.removeprefix("evaluator.") not in keys:
                problems.append(
                    f"arm {arm.id}: {key} is not a key of {ev.relative_to(configs.parent)}"
                )
    if missing:
        # One clause per file, not per arm: what to add is the file.
        named = [
            f"{path} (named by {who[0]}" + (f" and {len(who) - 1} more)" if len(who) > 1 else ")")
            for path, who in missing.items()
        ]
        problems.insert(0, "no such config yet: " + ", ".join(named))
    if problems:
        raise StudyError(
            f"{where}: " + "; ".join(problems) + ": add the config (or drop those arms)"
        )


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


# The study in use: its folder and definition (``use`` sets both; tests patch STUDY to a
# scratch folder and keep the definition).
STUDY = DEFAULT_STUDY
SPEC = load_study(DEFAULT_STUDY)
SHARED_CALLS = STUDY / "shared_calls.jsonl"


def use(folder: Path) -> Study:
    """Make ``folder`` the study in use (every stage below reads these globals)."""
    global STUDY, SPEC, SHARED_CALLS
    spec = load_study(folder)
    STUDY, SPEC, SHARED_CALLS = folder, spec, folder / "shared_calls.jsonl"
    return spec


def _server_setting(name: str) -> int:
    return int(next(x.split("=", 1)[1] for x in SPEC.server if x.startswith(f"model.{name}=")))


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


def _calls_files() -> list[Path]:
    """The shared calls to import: the other studies' first (this study reads their
    arms, so it should start from their trial 1), then its own."""
    return [ROOT / x for x in SPEC.import_calls] + [SHARED_CALLS]


def import_shared_calls() -> None:
    """Seed this machine's response cache with the committed shared calls (local entries
    are kept; an entry whose key is not its request's is refused)."""
    from reflexion_bench.models.cache import import_entries

    for path in _calls_files():
        if not path.is_file():
            continue
        cache = _cache()
        try:
            counts = import_entries(cache, path)
        finally:
            cache.close()
        name = "shared calls" if path == SHARED_CALLS else f"shared calls of {_rel(path)}"
        print(
            f"{name}: {counts['added']} added to the response cache, "
            f"{counts['present']} already there, {counts['refused']} refused",
            flush=True,
        )
        for problem in counts["problems"]:
            print(f"  refused {problem}", file=sys.stderr)


def export_shared_calls() -> None:
    """Write the study's greedy calls from this machine's cache to ``SHARED_CALLS``
    (what the cache holds: the imported entries and the new ones, oldest first), less
    the entries of the studies it imports from: they travel with those studies."""
    from reflexion_bench.models.cache import export_entries

    cache = _cache()
    try:
        export_entries(
            cache, SHARED_CALLS, greedy_only=True, model=SPEC.model_name, where=_study_identity
        )
    finally:
        cache.close()
    theirs: set[str] = set()
    for path in _calls_files()[:-1]:
        theirs |= {json.loads(x)["key"] for x in path.read_text(encoding="utf-8").splitlines() if x}
    if theirs:
        lines = SHARED_CALLS.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [x for x in lines if x.strip() and json.loads(x)["key"] not in theirs]
        SHARED_CALLS.write_text("".join(kept), encoding="utf-8")


def _trial1_folders(plan: dict[str, Any], bench: str) -> list[Path]:
    """The folders whose trial 1 should agree: the planned arms and the read ones."""
    return [run_dir(bench, a.name) for a in arms(plan) if a.benchmark == bench] + [
        ROOT / r.path for r in SPEC.read if r.benchmark == bench
    ]


def trial1_agreement(plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per benchmark, over the tasks every planned (and read) arm has a trial 1 of: how
    many got the same first program in every arm, how many did not, how many of those had
    a first verdict that differs too, and how many were decoded again (a trial-1 actor
    call not served from the cache in some arm)."""
    out: dict[str, dict[str, int]] = {}
    for bench in SPEC.benchmarks:
        firsts: list[dict[str, dict[str, Any]]] = []
        for folder in _trial1_folders(plan, bench):
            seen: dict[str, dict[str, Any]] = {}
            for rec in _records(folder / "log.jsonl"):
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


def render_agreement(agree: dict[str, dict[str, int]], plan: dict[str, Any] | None = None) -> str:
    if not any(a["tasks"] for a in agree.values()):
        return "Trial 1: no task has a trial 1 in every arm of its benchmark yet."
    parts = [
        f"{bench} {a['same']} of {a['tasks']}"
        + (
            f" ({a['differ']} differ, {a['verdict_differs']} of them with another first verdict)"
            if a["differ"]
            else ""
        )
        for bench, a in agree.items()
    ]
    counts = {len(_trial1_folders(plan or {}, bench)) for bench in agree}
    n = counts.pop() if len(counts) == 1 else None
    which = f"all {_WORDS[n]} arms" if n is not None and n < len(_WORDS) else "every arm"
    differ = sum(a["differ"] for a in agree.values())
    again = sum(a["decoded_again"] for a in agree.values())
    text = (
        "Trial 1 (greedy, one computation meant to be shared by every arm) gave the same "
        f"program in every arm, of the tasks {which} ran, on " + "; ".join(parts) + "."
    )
    if differ:
        text += (
            f" On {again} of the {differ} that differ, trial 1 was decoded more than once: "
            + SPEC.trial1_note
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
    """Tasks per benchmark: the definition's, or the plan's for a benchmark it sized."""
    return {name: int(plan.get(f"{name}_tasks") or b.tasks) for name, b in SPEC.benchmarks.items()}


def arms(plan: dict[str, Any]) -> list[Arm]:
    """The arms to run: the required ones and the optional ones the plan chose."""
    chosen = set(plan.get("optional_arms") or [])
    return [a for a in SPEC.arms if a.required or a.id in chosen]


def steps(total: int) -> list[int]:
    out = [SPEC.pilot]
    while out[-1] < total:
        out.append(min(total, out[-1] + SPEC.step))
    return out


class Stopped(Exception):
    """The --stop-at time came, or a signal stopped a step: the study stops cleanly and
    resumes next time (the message says which). ``ran``: a run was stopped part-way, so
    its folder holds new, uncommitted work."""

    def __init__(self, why: str, ran: bool = False) -> None:
        super().__init__(why)
        self.ran = ran


def _deadline(text: str | None) -> float | None:
    if not text:
        return None
    hh, mm = (int(x) for x in text.split(":"))
    now = dt.datetime.now()
    at = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if at <= now:
        at += dt.timedelta(days=1)
    return at.timestamp()


def step_command(bench: str, name: str, limit: int) -> list[str]:
    """The ``reflexion-bench run`` of one step of one arm. An arm without an evaluator
    passes none (the experiment's default), so the first study's command is unchanged."""
    arm = SPEC.arm(bench, name)
    return [
        sys.executable,
        "-m",
        "reflexion_bench.cli",
        "run",
        f"experiment={SPEC.benchmarks[bench].experiment}",
        f"strategy={arm.strategy}",
        *([f"evaluator={arm.evaluator}"] if arm.evaluator else []),
        *arm.overrides,
        f"run_dir={run_dir(bench, name).relative_to(ROOT)}",
        f"limit={limit}",
        *SPEC.server,
    ]


#: The signal (SIGINT, SIGTERM) that asked the driver to stop, once one has.
_STOP: dict[str, int | None] = {"signal": None}


def _ask_to_stop(signum: int, frame: object) -> None:
    """The first SIGINT or SIGTERM stops the driver the clean way: the running step is
    asked to stop (SIGINT), its finished tasks are committed, then the driver exits. A
    second one quits at once."""
    if _STOP["signal"] is not None:
        raise KeyboardInterrupt
    _STOP["signal"] = signum
    print(
        f"{signal.Signals(signum).name}: stopping after the running step is committed "
        "(again to quit at once)",
        flush=True,
    )


def catch_stop_signals() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _ask_to_stop)


def run_step(bench: str, arm: str, limit: int, deadline: float | None, nice: bool) -> None:
    folder = run_dir(bench, arm)
    before = finished_tasks(folder)
    if before >= limit:
        return
    if _STOP["signal"] is not None:
        raise Stopped("by a signal")
    if deadline is not None and time.time() >= deadline:
        raise Stopped("at --stop-at")
    cmd = step_command(bench, arm, limit)
    if nice:
        cmd = ["nice", "-n", "19", *cmd]
    started = time.time()
    print(f"[{dt.datetime.now():%H:%M}] {bench}/{arm}: {before} -> {limit} tasks", flush=True)
    # In the driver's process group: whatever stops the driver's group stops the run too
    # (an orphaned run writing on beside the next session's driver would mix two logs).
    proc = subprocess.Popen(cmd, cwd=ROOT)
    interrupted: float | None = None
    while proc.poll() is None:
        due = deadline is not None and time.time() >= deadline
        if (due or _STOP["signal"] is not None) and interrupted is None:
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
    if interrupted is not None:
        # The driver stopped it (its --stop-at, or a signal the driver was sent): it resumes.
        raise Stopped("at --stop-at" if _STOP["signal"] is None else "by a signal", ran=True)
    if proc.returncode == 130:
        raise Stopped("by a signal", ran=True)  # 130: from outside (Ctrl-C); it resumes
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
    the README names), the read arms included: the report compares with them."""
    rel = str(STUDY.relative_to(ROOT))
    cmd = [
        sys.executable,
        "-m",
        "reflexion_bench.cli",
        "report",
        rel,
        *(r.path for r in SPEC.read),
        "--out",
        f"{rel}/report",
    ]
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


def _commit_step(args: argparse.Namespace, message: str) -> None:
    export_shared_calls()
    write_report(not args.no_nice)
    # The README's progress block too: a commit whose README disagrees with `status`
    # fails the study's own README test.
    refresh_progress(read_plan())
    commit(f"study: {message}")


def _step(
    args: argparse.Namespace, arm: Arm, limit: int, deadline: float | None, message: str | None
) -> None:
    """One step of one arm and, with --commit, its commit (``message``, or the arm's
    finished tasks). A step stopped part-way is committed before the stop goes on: its
    log resumes next session, which must find it committed, not lying in the work tree."""
    folder = run_dir(arm.benchmark, arm.name)
    try:
        run_step(arm.benchmark, arm.name, limit, deadline, not args.no_nice)
    except Stopped as why:
        if args.commit and why.ran:
            _commit_step(
                args,
                f"{arm.id} stopped {why} at {finished_tasks(folder)} of {limit} tasks (resumable)",
            )
        raise
    if args.commit:
        _commit_step(args, message or f"{arm.id} at {finished_tasks(folder)} tasks")


def pilot(args: argparse.Namespace) -> None:
    import_shared_calls()
    for arm in SPEC.required:
        if finished_tasks(run_dir(arm.benchmark, arm.name)) >= SPEC.pilot:
            continue  # done in an earlier session: no step, no report rebuilt, no commit
        _step(
            args, arm, SPEC.pilot, _deadline(args.stop_at), f"pilot {arm.id} ({SPEC.pilot} tasks)"
        )


def compute_rows() -> list[dict[str, Any]]:
    """Every step's record in ``compute.jsonl`` (none before the first step)."""
    path = STUDY / "compute.jsonl"
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def estimate() -> dict[str, dict[str, float]]:
    """Seconds per task of every arm, from the pilot's steps in compute.jsonl: an arm's
    pilot may have run over several sessions (a step interrupted at a session's end and
    resumed), so its steps up to the pilot's size are added up; the time of an
    interrupted step counts in full (its last tasks in flight were lost and redone: a
    conservative estimate). An arm whose steps do not reach the pilot's size is missing.
    A step that starts at the pilot's size is the next step's, even where it was stopped
    before finishing a task (20 -> 20: its seconds are not the pilot's)."""
    rows = compute_rows()
    spent: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["to_tasks"] <= SPEC.pilot and int(r.get("from_tasks", 0)) < SPEC.pilot:
            acc = spent.setdefault((r["benchmark"], r["arm"]), [0.0, 0.0])
            acc[0] += float(r["wall_s"])
            acc[1] = max(acc[1], float(r["to_tasks"]))
    per: dict[str, dict[str, float]] = {}
    for (bench, arm), (wall, tasks) in spent.items():
        if tasks >= SPEC.pilot:
            per.setdefault(bench, {})[arm] = wall / tasks
    return per


def make_plan(args: argparse.Namespace | None) -> dict[str, Any]:
    per = estimate()
    missing = [a.id for a in SPEC.required if a.name not in per.get(a.benchmark, {})]
    if missing:
        raise SystemExit(f"the pilot is not complete ({', '.join(missing)}): run `pilot` first")

    def hours(arm: Arm, n: int) -> float:
        # An optional arm is not piloted: its rate is that of the arm it names.
        s = per[arm.benchmark].get(arm.name) or per[arm.benchmark][arm.cost_as or arm.name]
        return float(s * n) / 3600

    full_sizes = {name: b.tasks for name, b in SPEC.benchmarks.items()}
    full = sum(hours(a, full_sizes[a.benchmark]) for a in SPEC.required)
    sizes = dict(full_sizes)
    cut = SPEC.cut
    if cut is not None and full > SPEC.hours_limit:
        sizes[cut.name] = int(cut.cut_to or cut.tasks)
    required = sum(hours(a, sizes[a.benchmark]) for a in SPEC.required)
    plan: dict[str, Any] = {
        "pilot_tasks": SPEC.pilot,
        "seconds_per_task": {b: {a: round(v, 1) for a, v in d.items()} for b, d in per.items()},
        "hours_full": round(full, 2),
        "hours_limit": SPEC.hours_limit,
        **({f"{cut.name}_tasks": sizes[cut.name]} if cut is not None else {}),
        "hours_required": round(required, 2),
        "optional_arms": [],
    }
    groups = SPEC.optional_groups
    if groups:
        # In priority order, each priority whole or not at all, and none after the first
        # that does not fit: a lower priority never runs in place of a higher one.
        total, fits, considered = required, True, []
        for priority, group in groups:
            cost = sum(hours(a, sizes[a.benchmark]) for a in group)
            fits = fits and total + cost <= SPEC.hours_limit
            if fits:
                total += cost
                plan["optional_arms"] += [a.id for a in group]
            considered.append(
                {
                    "priority": priority,
                    "arms": [a.id for a in group],
                    "cost_as": {a.id: f"{a.benchmark}/{a.cost_as}" for a in group},
                    "hours": round(cost, 2),
                    "planned": fits,
                }
            )
        plan["optional"] = considered
        plan["hours_planned"] = round(total, 2)
    (STUDY / "plan.json").write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    refresh_readme(plan)
    print(render_plan(plan))
    if args is not None and getattr(args, "commit", False):
        # The README's progress block reads the plan (its targets): refreshed with it.
        refresh_progress(plan)
        commit(f"study: plan ({plan.get('hours_planned', plan.get('hours_full'))} h planned)")
    return plan


def render_plan(plan: dict[str, Any]) -> str:
    """The README's plan block: the pilot's rates, the sizes chosen, the optional arms
    and the power checks (before any pilot: what the plan will decide, and how)."""
    if not plan:
        return render_unplanned()
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
    lines.append("")
    cut = SPEC.cut
    if cut is not None:
        # The pilot's choice, before any power check grew the benchmark.
        key = f"at_{cut.name}_tasks"
        first = (plan.get("reestimation") or [{key: plan[f"{cut.name}_tasks"]}])[0]
        chosen = int(first[key])
        per_bench = {len([a for a in SPEC.required if a.benchmark == b]) for b in SPEC.benchmarks}
        which = (
            f"all {_WORDS[per_bench.pop()]} arms" if len(per_bench) == 1 else "the required arms"
        )
        sizes = " + ".join(f"{b.tasks} {b.title}" for b in SPEC.benchmarks.values())
        lines.append(
            f"Extrapolated: {plan['hours_full']:.1f} h for {which} on {sizes} tasks (limit "
            f"{plan['hours_limit']:g} h), so {cut.title} runs "
            + (
                f"its first {chosen} tasks (cut): {plan['hours_required']:.1f} h."
                if chosen < cut.tasks
                else f"all {chosen} tasks: {plan['hours_required']:.1f} h."
            )
        )
    else:
        sizes = " + ".join(f"{b.tasks} {b.title}" for b in SPEC.benchmarks.values())
        over = plan["hours_required"] > plan["hours_limit"]
        lines.append(
            f"Extrapolated: {plan['hours_required']:.1f} h for the {len(SPEC.required)} "
            f"required runs on {sizes} tasks (cap {plan['hours_limit']:g} h)"
            + (": over the cap already, so no optional arm runs." if over else ".")
        )
    for o in plan.get("optional") or []:
        borrowed = ", ".join(f"{a} as {c}" for a, c in o["cost_as"].items())
        lines += [
            "",
            f"Optional, priority {o['priority']}: {', '.join(o['arms'])}: "
            f"{o['hours']:.1f} h (not piloted; s/task borrowed: {borrowed}): "
            + ("planned." if o["planned"] else "not planned (over the cap, or after one that is)."),
        ]
    if "hours_planned" in plan:
        lines += ["", f"Planned: {plan['hours_planned']:.1f} h of {plan['hours_limit']:g} h."]
    checks = render_reestimation(plan)
    return "\n".join(lines) + (f"\n\n{checks}" if checks else "")


def render_unplanned() -> str:
    """The plan block before the pilot: what will run, and the rule that will decide."""
    lines = [
        f"No runs yet. `pilot` runs the first {SPEC.pilot} tasks of each of the "
        f"{len(SPEC.required)} required arms; `plan` then extrapolates their wall time per "
        f"task to the planned sizes and fills this block:",
        "",
        "| benchmark | arm | tasks | budget (tokens) | experiment | overrides |",
        "|---|---|---|---|---|---|",
    ]
    for a in SPEC.required:
        b = SPEC.benchmarks[a.benchmark]
        chosen = [f"evaluator={a.evaluator}"] if a.evaluator else []
        over = " ".join([f"strategy={a.strategy}", *chosen, *a.overrides])
        lines.append(
            f"| {b.name} | {a.name} | {b.tasks} | {b.budget_tokens} | {b.experiment} | `{over}` |"
        )
    groups = SPEC.optional_groups
    if groups:
        lines += [
            "",
            f"Then, while the total stays within {SPEC.hours_limit:g} h of wall time on this "
            "machine, the optional arms in priority order (a priority whole or not at all, "
            "none after the first that does not fit; each estimated from the required arm "
            "it names, not piloted):",
            "",
        ]
        for priority, group in groups:
            settings = sorted({" ".join(a.overrides) for a in group if a.overrides})
            lines.append(
                f"{priority}. "
                + ", ".join(a.id for a in group)
                + (f" (`{'`, `'.join(settings)}`)" if settings else "")
                + ", timed as "
                + ", ".join(f"{a.benchmark}/{a.cost_as}" for a in group)
            )
    if SPEC.read:
        lines += [
            "",
            "Read, never run or copied: "
            + ", ".join(f"{r.id} from `{r.path}`" for r in SPEC.read)
            + ".",
        ]
    return "\n".join(lines)


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


def _phases(plan: dict[str, Any]) -> list[list[Arm]]:
    """The order arms grow in: the required ones, then each chosen optional priority."""
    chosen = arms(plan)
    out = [[a for a in chosen if a.required]]
    for _, group in SPEC.optional_groups:
        out.append([a for a in group if a in chosen])
    return [p for p in out if p]


def run(args: argparse.Namespace) -> None:
    plan = read_plan()
    if not plan:
        raise SystemExit("no plan.json: run `pilot` and `plan` first")
    deadline = _deadline(args.stop_at)
    import_shared_calls()
    while True:
        size = targets(plan)
        for phase in _phases(plan):
            for bench in SPEC.benchmarks:  # in the file's order (HumanEval first: never cut)
                group = [a for a in phase if a.benchmark == bench]
                for limit in steps(size[bench]) if group else []:
                    for arm in group:
                        folder = run_dir(bench, arm.name)
                        if finished_tasks(folder) >= limit:
                            continue
                        _step(args, arm, limit, deadline, None)
        if SPEC.power_check is None:
            return
        # Every arm has its planned tasks: the power check, which may grow a benchmark.
        grown = reestimate(plan)
        if args.commit:
            grow = SPEC.power_check.grow
            _commit_step(
                args,
                f"power check at {SPEC.benchmarks[grow].title} "
                f"{plan['reestimation'][-1][f'at_{grow}_tasks']}"
                f" -> {SPEC.benchmarks[grow].title} {targets(plan)[grow]}",
            )
        if not grown:
            return


def pooled_discordance() -> tuple[int, float, float | None]:
    """The pooled comparison of the power check as the report computes it from the
    logs: paired tasks, the share of them on which the two arms disagree (either way),
    and the difference they detect with 80% power (None: no power at any difference)."""
    from reflexion_bench.analysis.report import build_comparison

    assert SPEC.power_check is not None
    this, ref = SPEC.power_check.compare
    report = build_comparison([STUDY], n_resamples=200)
    for r in (report.get("strategies") or {}).get("pooled") or []:
        cmp = r.get(f"vs_{ref}") if r["strategy"] == this else None
        if cmp:
            n = int(cmp["n_common"])
            detectable = (cmp.get("assessment") or {}).get("detectable_difference")
            return n, (cmp["only_this"] + cmp["only_ref"]) / n, detectable
    raise SystemExit(f"the report has no pooled {this}-vs-{ref} comparison")


def size_needed(n_paired: int, psi: float, detectable: float | None, now: int) -> int:
    """The grown benchmark's size under the rule: unchanged where the pooled comparison
    already detects the target; else the smallest size in steps (at most all its tasks)
    whose projected detectable difference, at the discordance seen so far, is within it.

    The rule reads only the discordance (how often the arms disagree, in either
    direction), never which arm is ahead or a p-value: re-estimating a sample size from
    this nuisance parameter leaves the tests' false-positive rate where it was (an
    internal pilot; Wittes and Brittain 1990, Lu and Bean 1995 for McNemar)."""
    from reflexion_bench.analysis.power import detectable_difference

    assert SPEC.power_check is not None
    target = SPEC.power_check.target
    total = SPEC.benchmarks[SPEC.power_check.grow].tasks
    if detectable is not None and detectable <= target:
        return now
    other = n_paired - now  # the other benchmarks' tasks, never grown
    n = now
    while n < total:
        n = min(total, n + SPEC.step)
        if detectable_difference(other + n, psi) <= target:
            break
    return n


def reestimate(plan: dict[str, Any]) -> bool:
    """The power check once every arm has its planned tasks: record it in ``plan.json``
    (and the README's plan block), grow the benchmark where :func:`size_needed` says so
    (the answer blocks' ``planned=`` follow), and say whether it grew."""
    assert SPEC.power_check is not None
    grow = SPEC.power_check.grow
    now = targets(plan)[grow]
    n, psi, detectable = pooled_discordance()
    last = (plan.get("reestimation") or [{}])[-1]
    if last.get(f"at_{grow}_tasks") == now and last.get("paired") == n:
        return False  # this size was checked already (a rerun of a complete study)
    new = size_needed(n, psi, detectable, now)
    plan.setdefault("reestimation", []).append(
        {
            f"at_{grow}_tasks": now,
            "paired": n,
            "discordance": round(psi, 4),
            "detectable": None if detectable is None else round(detectable, 4),
            f"{grow}_tasks": new,
        }
    )
    plan[f"{grow}_tasks"] = new
    (STUDY / "plan.json").write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    refresh_readme(plan)
    readme = STUDY / "README.md"
    if new != now and readme.is_file():
        text = readme.read_text(encoding="utf-8")
        readme.write_text(
            re.sub(rf"(planned=\S*\b{re.escape(grow)}:)\d+", rf"\g<1>{new}", text),
            encoding="utf-8",
        )
    print(render_reestimation(plan), flush=True)
    return new != now


def render_reestimation(plan: dict[str, Any]) -> str:
    """The power checks done so far, one sentence each (the plan block's last lines)."""
    if SPEC.power_check is None:
        return ""
    grow = SPEC.power_check.grow
    title = SPEC.benchmarks[grow].title
    this, ref = SPEC.power_check.compare
    lines = []
    for r in plan.get("reestimation") or []:
        det = (
            "no power at any difference"
            if r["detectable"] is None
            else (f"a detectable difference of {100 * r['detectable']:.1f} points")
        )
        grown = (
            f"{title} grows to {r[f'{grow}_tasks']} tasks"
            if r[f"{grow}_tasks"] != r[f"at_{grow}_tasks"]
            else f"{title} stays at {r[f'{grow}_tasks']} tasks"
        )
        lines.append(
            f"Power check at {title} {r[f'at_{grow}_tasks']}: {r['paired']} paired tasks, "
            f"{this} and {ref} disagree on {100 * r['discordance']:.1f}% of them, {det}"
            f" (target {100 * SPEC.power_check.target:g}): {grown}."
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
    chosen = arms(plan)
    for bench in SPEC.benchmarks:
        for arm in (a for a in chosen if a.benchmark == bench):
            steps_ = [r for r in rows if (r["benchmark"], r["arm"]) == (bench, arm.name)]
            wall = sum(float(r["wall_s"]) for r in steps_)
            added = sum(max(0, int(r["to_tasks"]) - int(r["from_tasks"])) for r in steps_)
            rate = wall / added if added else None
            done = finished_tasks(run_dir(bench, arm.name))
            left = max(0, size[bench] - done)
            out.append(
                {
                    "benchmark": bench,
                    "arm": arm.name,
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
    if not any(r["finished"] or r["wall_h"] for r in rows):
        lines += ["", "No step has run yet: `pilot` comes first."]
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


def render_read() -> str:
    """The read arms, with what their study finished (they are never run from here)."""
    if not SPEC.read:
        return ""
    size = targets(read_plan())
    parts = [
        f"{r.id} from `{r.path}` ({finished_tasks(ROOT / r.path)} tasks finished; "
        f"this study plans {size[r.benchmark]})"
        for r in SPEC.read
    ]
    return "Read from another study, never run or copied here: " + "; ".join(parts) + "."


PROGRESS = re.compile(r"(<!-- progress -->\n).*?(<!-- /progress -->)", re.S)


def refresh_progress(plan: dict[str, Any]) -> None:
    """The README's ``<!-- progress -->`` block, from the logs and compute.jsonl (never
    typed by hand)."""
    refresh_block(PROGRESS, progress_block(plan))


def progress_block(plan: dict[str, Any]) -> str:
    read = render_read()
    return (
        render_progress(progress(plan))
        + (f"\n\n{read}" if read else "")
        + "\n\n"
        + render_agreement(trial1_agreement(plan), plan)
    )


def status(args: argparse.Namespace) -> None:
    plan = read_plan()
    print(progress_block(plan))
    if getattr(args, "write", False):
        refresh_readme(plan)
        refresh_progress(plan)


def share(args: argparse.Namespace) -> None:
    """Export the shared calls now (``run --commit`` does it after every step)."""
    export_shared_calls()
    n = sum(1 for _ in SHARED_CALLS.open(encoding="utf-8"))
    print(f"{n} shared calls in {SHARED_CALLS.relative_to(ROOT)}")


_LOCK: Any = None


def _single_driver() -> None:
    """One driver per study at a time: two would run the same arm into one folder."""
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
    p.add_argument(
        "--study",
        type=Path,
        help="the study folder, holding study.yaml (default: results/reflection-at-equal-budget)",
    )
    p.add_argument("--stop-at", help="HH:MM (local time): start no step after it, stop then")
    p.add_argument("--commit", action="store_true", help="commit the study folder per step")
    p.add_argument("--no-nice", action="store_true", help="run the children at normal priority")
    p.add_argument(
        "--write", action="store_true", help="status: also refresh the README's generated blocks"
    )
    args = p.parse_args(argv)
    if args.study is not None:
        use((args.study if args.study.is_absolute() else Path.cwd() / args.study).resolve())
    if args.stage in ("pilot", "plan", "run"):
        # Before anything runs (or is planned): an arm that cannot run yet is named now.
        check_configs(SPEC, _rel(STUDY / "study.yaml"))
    STUDY.mkdir(parents=True, exist_ok=True)
    if args.stage != "status":
        _single_driver()
        catch_stop_signals()
    try:
        stages = {"pilot": pilot, "plan": make_plan, "run": run, "status": status, "share": share}
        stages[args.stage](args)
    except Stopped as why:
        print(f"stopped {why}; run the same command again to resume", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
