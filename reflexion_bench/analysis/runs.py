"""Find run folders, load their logs, and group runs by benchmark x strategy x model.

Accepts run folders, ``log.jsonl`` paths and sweep folders (any folder is searched
recursively for ``log.jsonl``). Runs of the same group whose task sets do not overlap
(e.g. shards of one experiment) are pooled into one group; runs that repeat tasks
(seeds, replicates) stay separate rows, labelled by folder name, and so do a ``clean``
and an ``answer-in-loop`` run (:mod:`reflexion_bench.analysis.answer_key`).

**Evaluator arms.** Runs whose in-loop feedback differs are never pooled or compared as
one arm: the evaluator decides when a loop stops and what it is told. An arm is the
evaluator's name and, for evaluators whose settings change the feedback
(:data:`ARM_SETTINGS`: ``noisy_oracle``'s ``fn_rate`` and ``fp_rate``), those settings
as the run's ``config.yaml`` records them (:func:`evaluator_arm`:
``noisy_oracle(fn=0.3,fp=0)``); trial records name the evaluator only. Where the rows
of one benchmark x model span several arms, each is labelled by its arm
(``retry (oracle)``, ``wrong_reflection (oracle)``).

**Seeds.** Rows that differ only in ``seed`` (their ``config.yaml`` equal in every key
that changes results but ``seed``/``generate.seed``, the same answer key) form a
:class:`SeedSet`, one per configuration (:func:`seed_sets`): the report's ``seeds``
table and its paired comparisons are over those sets, so seed i of one configuration is
never compared with seed j of another. A run without ``config.yaml`` (an imported log)
is a set of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.answer_key import run_answer_key
from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.core.runfolder import read_config as read_config
from reflexion_bench.core.runlog import LOG_NAME, load_run_records

#: Logs written before trial records named their evaluator ran self-tests.
DEFAULT_EVALUATOR = "self_tests"
#: Per evaluator, the ``config.yaml`` settings (``evaluator.<key>``) that make a run
#: another arm, each with the short name its arm id prints: a noisy oracle at
#: ``fn_rate`` 0.3 is not the one at 0.6. An evaluator not listed is one arm whatever
#: its settings.
ARM_SETTINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "noisy_oracle": (("fn_rate", "fn"), ("fp_rate", "fp")),
}


def _setting_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "?" if value is None else str(value)
    return f"{float(value):g}"


def evaluator_arm(evaluator: str | None, config: Mapping[str, Any] | None) -> str | None:
    """The arm id of a run under ``evaluator`` (its trial records' name; None for logs
    naming none) with the saved ``config``: the name itself, or for an evaluator of
    :data:`ARM_SETTINGS` the name and those settings, ``noisy_oracle(fn=0.3,fp=0)``
    (``noisy_oracle(settings unknown)`` without a config naming them: such a run is
    never pooled with one whose settings are known)."""
    if evaluator is None or evaluator not in ARM_SETTINGS:
        return evaluator
    node = config.get("evaluator") if config is not None else None
    if not isinstance(node, Mapping) or node.get("name", evaluator) != evaluator:
        return f"{evaluator}(settings unknown)"
    parts = [f"{short}={_setting_text(node.get(key))}" for key, short in ARM_SETTINGS[evaluator]]
    return f"{evaluator}({','.join(parts)})"


def arm_settings(arm: str) -> tuple[str, dict[str, float] | None]:
    """An arm id's evaluator name and its settings by short name (``noisy_oracle(fn=0.3,
    fp=0)`` -> ``("noisy_oracle", {"fn": 0.3, "fp": 0.0})``); None for an arm with no
    settings, or whose settings are unknown or not numbers."""
    name, sep, tail = arm.partition("(")
    if not sep or not tail.endswith(")"):
        return arm, None
    settings: dict[str, float] = {}
    for item in tail[:-1].split(","):
        key, eq, value = item.partition("=")
        try:
            settings[key.strip()] = float(value)
        except ValueError:
            return name, None
        if not eq:
            return name, None
    return name, settings


def arm_name(evaluator: str | None) -> str:
    """An arm id with logs naming no evaluator read as :data:`DEFAULT_EVALUATOR`."""
    return evaluator or DEFAULT_EVALUATOR


# Folders never holding run logs of ours (W&B's offline copies, caches).
_SKIP_DIRS = {"wandb", ".git", "__pycache__", ".ipynb_checkpoints", ".hydra"}


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Every run folder under ``paths`` (folders holding a ``log.jsonl``), de-duplicated,
    in the order given (sorted within a searched folder)."""
    from reflexion_bench.core.shards import is_shard_set

    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_file() and p.name == LOG_NAME:
            found = [p.parent]
        elif (p / LOG_NAME).is_file() or is_shard_set(p):
            found = [p]
        elif p.is_dir():
            found = sorted(
                log.parent
                for log in p.rglob(LOG_NAME)
                if not (_SKIP_DIRS & set(log.relative_to(p).parts[:-1]))
            )
            if not found:
                raise FileNotFoundError(f"no {LOG_NAME} under {p} (not a run or sweep folder)")
        else:
            raise FileNotFoundError(f"{p} is not a run folder, a sweep folder or a {LOG_NAME}")
        # The shards of one experiment are one run: their experiment folder.
        found = [f.parent if (f.parent != p and _is_shard(f)) else f for f in found]
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def _is_shard(folder: Path) -> bool:
    from reflexion_bench.core.shards import parse_folder

    return parse_folder(folder.name) is not None


@dataclass
class Run:
    """One run folder's effective records and summary (and its saved config, if any)."""

    path: Path
    records: list[dict[str, Any]]
    summary: dict[str, Any]
    config: dict[str, Any] | None = None

    @property
    def seed(self) -> int | None:
        """The run's seed: ``generate.seed`` where set, else ``seed`` (from config.yaml,
        else from the records' ``meta``); None where unknown or mixed."""
        if self.config is not None:
            gen = self.config.get("generate") or {}
            value = gen.get("seed") if isinstance(gen, dict) else None
            if value is None:
                value = self.config.get("seed")
            return value if isinstance(value, int) else None
        seeds = {(r.get("meta") or {}).get("seed") for r in self.records}
        (only,) = seeds if len(seeds) == 1 else (None,)
        return only if isinstance(only, int) else None

    @property
    def config_key(self) -> str | None:
        """Every result-changing key of config.yaml but the seed (None without one)."""
        return None if self.config is None else configuration_key(self.config)

    @property
    def key(self) -> tuple[str, str, str]:
        s = self.summary
        return (_label(s.get("benchmark")), _label(s.get("strategy")), _label(s.get("model")))

    @property
    def task_ids(self) -> set[str]:
        return {str(r["task_id"]) for r in self.records}

    @property
    def evaluator(self) -> str | None:
        """The run's evaluator arm (:func:`evaluator_arm`; None: the log names none)."""
        return evaluator_arm(self.summary.get("evaluator"), self.config)


_SEED_KEYS = ("seed", "generate.seed")


def configuration_key(config: dict[str, Any]) -> str:
    """Every result-changing key of a saved config but the seed, as canonical JSON: runs
    with equal keys are one configuration under different seeds."""
    from reflexion_bench.config import result_config

    keys = result_config(config)
    for k in _SEED_KEYS:
        keys.pop(k, None)
    return json.dumps(keys, sort_keys=True, default=str)


def configuration_group(config: dict[str, Any]) -> str:
    """A short name shared by the seeds of one configuration (the W&B group): the run's
    ``name`` and a digest of :func:`configuration_key`."""
    import hashlib

    digest = hashlib.sha256(configuration_key(config).encode()).hexdigest()[:10]
    return f"{config.get('name') or 'run'}-{digest}"


def _label(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(map(str, value))
    return "?" if value is None else str(value)


def load_run(path: Path) -> Run:
    from reflexion_bench.analysis.paper import with_canonical_strategies
    from reflexion_bench.analysis.rescore import with_rescore

    # A run re-judged by `reflexion-bench rescore` gets its plus verdicts from the file.
    # A log written under a strategy's old name (`none`) is compared under its name now.
    from reflexion_bench.core.shards import is_shard_set, merged_config, shard_dirs, shard_status

    if is_shard_set(path):
        # A sharded experiment: its shards' records as one run, checked complete.
        parts = [load_run(d) for d in shard_dirs(path)]
        records = [r for part in parts for r in part.records]
        summary = summarize(records)
        summary["answer_key"] = run_answer_key(records, [part.path for part in parts])
        summary["shards"] = shard_status(path).to_dict()
        return Run(path=path, records=records, summary=summary, config=merged_config(path))
    records = with_canonical_strategies(with_rescore(load_run_records(path), path))
    summary = summarize(records)
    summary["answer_key"] = run_answer_key(records, [path])
    return Run(path=path, records=records, summary=summary, config=read_config(path))


def _answer_label(summary: dict[str, Any]) -> str:
    return str((summary.get("answer_key") or {}).get("label"))


@dataclass
class Group:
    """A row of the report: one benchmark x strategy x model (possibly several runs)."""

    benchmark: str
    strategy: str
    model: str
    runs: list[Run] = field(default_factory=list)
    label: str = ""
    records: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.benchmark, self.strategy, self.model)

    @property
    def name(self) -> str:
        return self.label or self.strategy

    @property
    def seed(self) -> int | None:
        """The seed all its runs share (None where unknown or mixed)."""
        seeds = {r.seed for r in self.runs}
        (only,) = seeds if len(seeds) == 1 else (None,)
        return only

    @property
    def config_key(self) -> str | None:
        keys = {r.config_key for r in self.runs}
        (only,) = keys if len(keys) == 1 else (None,)
        return only

    @property
    def evaluator(self) -> str | None:
        """The evaluator arm of its runs (one by construction: :func:`group_runs`)."""
        return self.runs[0].evaluator if self.runs else self.summary.get("evaluator")


@dataclass
class SeedSet:
    """One configuration run under several seeds: one :class:`Group` per seed."""

    benchmark: str
    strategy: str
    model: str
    members: list[Group]
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.strategy

    @property
    def seeds(self) -> list[int | None]:
        return [g.seed for g in self.members]

    @property
    def n_seeds(self) -> int:
        return len(self.members)


def same_seed(g: Group, candidates: Sequence[Group]) -> Group | None:
    """The reference row to compare ``g`` with: the one of ``g``'s seed; the only one
    where there is just one (no seeds to confuse); else none (seed i of one strategy is
    never the control of seed j of another)."""
    same = [c for c in candidates if c.seed is not None and c.seed == g.seed]
    if same:
        return same[0]
    return candidates[0] if len(candidates) == 1 else None


def seed_sets(groups: Sequence[Group]) -> list[SeedSet]:
    """The groups as configurations: rows of one benchmark x strategy x model with the
    same result-changing config but the seed, the same answer key and distinct known
    seeds are one set (members sorted by seed); every other row is a set of one.
    Labels: the strategy, or with several sets of one strategy in a benchmark x model,
    each set's row labels (its folders)."""
    sets: list[SeedSet] = []
    open_sets: dict[tuple[str, ...], list[SeedSet]] = {}
    for g in groups:
        ck, seed = g.config_key, g.seed
        if ck is None or seed is None:
            sets.append(SeedSet(g.benchmark, g.strategy, g.model, [g]))
            continue
        key = (*g.key, _answer_label(g.summary), str(g.evaluator), ck)
        candidates = open_sets.setdefault(key, [])
        target = next((s for s in candidates if seed not in s.seeds), None)
        if target is None:
            target = SeedSet(g.benchmark, g.strategy, g.model, [])
            candidates.append(target)
            sets.append(target)
        target.members.append(g)
    for st in sets:
        st.members.sort(key=lambda g: -1 if g.seed is None else g.seed)
    count: dict[tuple[str, str, str], int] = {}
    for st in sets:
        k = (st.benchmark, st.strategy, st.model)
        count[k] = count.get(k, 0) + 1
    for st in sets:
        if count[(st.benchmark, st.strategy, st.model)] > 1:
            st.label = " + ".join(g.name for g in st.members)
            if st.n_seeds > 1:
                st.label = f"{st.strategy} (seeds {', '.join(map(str, st.seeds))}: " + (
                    ", ".join(r.path.name for g in st.members for r in g.runs) + ")"
                )
    return sets


def group_runs(runs: Sequence[Run]) -> list[Group]:
    """Pool runs of one benchmark x strategy x model unless they repeat tasks."""
    groups: list[Group] = []
    by_key: dict[tuple[str, str, str], list[Group]] = {}
    for run in runs:
        if not run.records:
            continue
        candidates = by_key.setdefault(run.key, [])
        # A clean run and an answer-in-loop run are never pooled into one number.
        target = next(
            (
                g
                for g in candidates
                if not (g_tasks(g) & run.task_ids)
                and _answer_label(g.runs[0].summary) == _answer_label(run.summary)
                # Nor runs whose in-loop feedback differs (self-tests vs visible tests,
                # a noisy oracle at two noise rates).
                and g.runs[0].evaluator == run.evaluator
            ),
            None,
        )
        if target is None:
            target = Group(*run.key)
            candidates.append(target)
            groups.append(target)
        target.runs.append(run)
        target.records.extend(run.records)
    # A benchmark x model whose runs had several in-loop evaluators names every row by
    # its arm (a strategy run under one of them only is still not mistaken for another's).
    cluster_arms: dict[tuple[str, str], set[str]] = {}
    for g in groups:
        cluster_arms.setdefault((g.benchmark, g.model), set()).add(arm_name(g.evaluator))
    for key, gs in by_key.items():
        by_arm = len(cluster_arms[(key[0], key[2])]) > 1
        for g in gs:
            g.summary = summarize(g.records)
            g.summary["answer_key"] = run_answer_key(g.records, [r.path for r in g.runs])
            folders = ", ".join(r.path.name for r in g.runs)
            if by_arm:
                # Rows named by their arm (and their folders where the arm has several).
                arm = arm_name(g.evaluator)
                same = sum(1 for h in gs if arm_name(h.evaluator) == arm)
                g.label = f"{key[1]} ({arm})" if same == 1 else f"{key[1]} ({arm}; {folders})"
            elif len(gs) > 1:
                g.label = f"{key[1]} ({folders})"
    return groups


def g_tasks(group: Group) -> set[str]:
    return {str(r["task_id"]) for r in group.records}


def load_groups(paths: Iterable[str | Path]) -> list[Group]:
    """Find, load and group every run under ``paths``."""
    return group_runs([load_run(p) for p in find_run_dirs(paths)])
