"""Seeds as an axis: one row per configuration over its seeds, from the logs only.

A :class:`~reflexion_bench.analysis.runs.SeedSet` is one configuration run under S
seeds (runs whose config differs only in ``seed``). Its verdicts form a tasks x seeds
table over the tasks every seed finished with a verdict; the task stays the unit of
every interval, so S seeds of 40 tasks are never treated as 40 * S independent tasks:

- **pass@1 mean ± sd**: the mean over seeds of each seed's pass@1, and the standard
  deviation across seeds (ddof 1): how much one run's headline moves with the seed.
- **task-level interval**: a percentile bootstrap over tasks of each task's mean verdict
  over seeds (``stats.proportion_interval``: means over seeds are not binomial counts),
  so the interval reflects both the tasks drawn and the seeds' agreement on each.
- **pass^k** (k = S): tasks that every seed solves (reliability, as in tau-bench's
  pass^k); **pass@k over seeds**: tasks that some seed solves. Both 0/1 per task,
  with Wilson intervals.

**Seeds that cannot differ.** Where every model call of a set was greedy (temperature
0 sent: the log's ``temperature_sent``, read in its older forms too by
:func:`~reflexion_bench.core.types.sent_temperature`) or a replay from the response cache, its seeds repeat one another by construction:
the spread is 0 and the "seeds" are one run counted S times. :func:`cannot_differ`
names the reason (also where the seeds' candidates are observed identical on every
trial of every task, e.g. a deterministic mock), and the report prints it as a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from reflexion_bench.analysis.metrics import hidden_verdict
from reflexion_bench.analysis.runs import Group, SeedSet
from reflexion_bench.analysis.stats import proportion_interval
from reflexion_bench.core.types import sent_temperature


def task_verdicts(group: Group) -> dict[str, tuple[bool | None, bool | None, str | None]]:
    """task -> (trial-1 verdict, final verdict, trial-1 candidate)."""
    per: dict[str, list[dict[str, Any]]] = {}
    for r in group.records:
        per.setdefault(str(r["task_id"]), []).append(r)
    out: dict[str, tuple[bool | None, bool | None, str | None]] = {}
    for tid, recs in per.items():
        recs.sort(key=lambda r: int(r["trial"]))
        first = recs[0] if int(recs[0]["trial"]) == 1 else None
        out[tid] = (
            hidden_verdict(first) if first else None,
            hidden_verdict(recs[-1]),
            None if first is None else first.get("candidate"),
        )
    return out


def final_verdicts(group: Group) -> dict[str, bool | None]:
    """task -> the submitted (last trial's) hidden verdict (None: errored, no verdict)."""
    return {t: v[1] for t, v in task_verdicts(group).items()}


def verdict_table(st: SeedSet) -> tuple[list[str], np.ndarray]:
    """The tasks every seed finished with a verdict (in the first seed's order) and their
    tasks x seeds 0/1 table."""
    per = [final_verdicts(g) for g in st.members]
    tasks = [t for t in per[0] if all(p.get(t) is not None for p in per)]
    table = np.array([[float(bool(p[t])) for p in per] for t in tasks], dtype=float)
    return tasks, table.reshape(len(tasks), len(per))


def _first_try(group: Group) -> float | None:
    firsts = [hidden_verdict(r) for r in group.records if int(r["trial"]) == 1]
    known = [bool(v) for v in firsts if v is not None]
    return float(np.mean(known)) if known else None


def _greedy_by_config(group: Group) -> bool:
    """Older logs (no temperature per call): greedy where the config says so."""
    for run in group.runs:
        cfg = run.config or {}
        gen = cfg.get("generate") or {}
        strategy = cfg.get("strategy") or {}
        if not isinstance(gen, dict) or not isinstance(strategy, dict):
            return False
        if float(gen.get("temperature") or 0) != 0 or float(strategy.get("retry_temperature") or 0):
            return False
        if cfg.get("role_models"):
            return False  # a role may sample: not provable from here
    return bool(group.runs)


def _temperature_logged(call: dict[str, Any]) -> bool:
    """Whether the log says what temperature this call sent (every call since
    ``seed_sent`` was logged; older calls where the temperature asked for was logged)."""
    return "seed_sent" in call or call.get("temperature") is not None


def cannot_differ(st: SeedSet) -> str | None:
    """Why the seeds of ``st`` cannot (or did not) differ, or None."""
    if st.n_seeds < 2:
        return None
    calls = [c for g in st.members for r in g.records for c in r.get("model_calls") or []]
    if calls and all(c.get("cached") for c in calls):
        return "every model call was a replay from the response cache"
    live = [c for c in calls if not c.get("cached")]
    if live and all(_temperature_logged(c) for c in live):
        # What was sent, not what the role's config asked for: a sampled strategy's
        # retries send their own temperature, and a temperature not sent at all leaves
        # the provider's default (sampled), so only a sent 0 is greedy.
        if all(sent_temperature(c) == 0 for c in live):
            return "every model call was greedy (temperature 0) or a cache replay"
    elif live and all(_greedy_by_config(g) for g in st.members):
        return "the config samples greedily (generate.temperature 0, no retry temperature)"
    trials = [
        {(str(r["task_id"]), int(r["trial"])): r.get("candidate") for r in g.records}
        for g in st.members
    ]
    if trials[0] and all(t == trials[0] for t in trials[1:]):
        return "every seed gave the same candidate on every trial of every task"
    return None


def seed_row(st: SeedSet, *, n_resamples: int, seed: int) -> dict[str, Any]:
    """One configuration's row of the ``seeds`` table (see the module docstring)."""
    tasks, table = verdict_table(st)
    g0 = st.members[0]
    row: dict[str, Any] = {
        "benchmark": st.benchmark,
        "strategy": st.name,
        "model": st.model,
        "n_seeds": st.n_seeds,
        "seeds": st.seeds,
        "runs": [g.name for g in st.members],
        "n_tasks": len(tasks),
        "answer_key": (g0.summary.get("answer_key") or {}).get("label"),
        "cannot_differ": cannot_differ(st),
    }
    if not tasks:
        return row
    per_seed = table.mean(axis=0)
    row["pass1_by_seed"] = [float(x) for x in per_seed]
    row["pass1_mean"] = float(per_seed.mean())
    row["pass1_sd"] = float(per_seed.std(ddof=1)) if st.n_seeds > 1 else None
    # pass^k and pass@k are 0/1 per task (Wilson); pass@1's per-task means over seeds
    # are not counts (the task bootstrap), except at one seed.
    row["pass1"] = proportion_interval(
        table.mean(axis=1), n_resamples=n_resamples, seed=seed
    ).to_dict()
    row["pass_hat_k"] = proportion_interval(
        table.min(axis=1), n_resamples=n_resamples, seed=seed
    ).to_dict()
    row["pass_at_k"] = proportion_interval(
        table.max(axis=1), n_resamples=n_resamples, seed=seed
    ).to_dict()
    firsts = [_first_try(g) for g in st.members]
    known = [f for f in firsts if f is not None]
    row["first_try_mean"] = float(np.mean(known)) if known else None
    row["first_try_sd"] = float(np.std(known, ddof=1)) if len(known) > 1 else None
    return row


def seed_warnings(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per configuration whose seeds cannot (or did not) differ."""
    out = []
    for r in rows:
        why = r.get("cannot_differ")
        if not why:
            continue
        verb = "did not differ" if why.startswith("every seed") else "cannot differ"
        out.append(
            f"warning: the {r['n_seeds']} seeds ({', '.join(map(str, r['seeds']))}) of "
            f"{r['strategy']} ({r['benchmark']} / {r['model']}) {verb}: {why}; their spread "
            "is 0 by construction, not a measurement (sample with generate.temperature > 0, "
            "or turn the response cache off)"
        )
    return out
