"""Lifelong-memory metrics, computed from the run log and the memory events log.

- learning curve: success (hidden verdict of the submitted candidate, and first-try)
  over the task index of the stream, with a rolling mean;
- repeat-failure rate: among tasks that have a similar earlier task which failed,
  the share that fail with a failure signature already seen on such a task (memory
  that works lowers it, by avoiding the failure or by failing differently);
- usefulness of post-failure vs post-success reflections: how often each kind is
  retrieved and how the tasks that saw it fared;
- precision@k of a retriever against a labelled set;
- store size and active size over the stream; gating counts per policy.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reflexion_bench.memory.lifelong.signature import UNKNOWN, failure_signature

POST_FAILURE = ("failure", "partial")


# --------------------------------------------------------------------------- per task
@dataclass
class TaskRow:
    """One task of the stream, reduced from its trial records."""

    index: int
    task_id: str
    benchmark: str
    success: bool
    first_try: bool
    trials: int
    signatures: list[str]


def task_rows(records: Sequence[dict[str, Any]], source: str = "hidden") -> list[TaskRow]:
    """Tasks in stream order (the order they first appear in the log).

    Args:
        records: Effective trial records of one run.
        source: Where failure signatures come from: ``hidden`` (the scorer's detail,
            the true failure) or ``self_test`` (the in-loop feedback).
    """
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    rows = []
    for i, (tid, recs) in enumerate(by_task.items()):
        recs = sorted(recs, key=lambda r: int(r["trial"]))
        sigs = []
        for r in recs:
            hidden = r.get("hidden") or {}
            self_test = r.get("self_test") or {}
            failed = (
                not hidden.get("passed") if source == "hidden" else self_test.get("passed") is False
            )
            if r.get("error"):
                failed = True
            if not failed:
                continue
            text = hidden.get("detail") if source == "hidden" else self_test.get("text")
            sigs.append(failure_signature(text or self_test.get("text"), r.get("error")))
        rows.append(
            TaskRow(
                index=i,
                task_id=tid,
                benchmark=_benchmark_of(tid, recs[0]),
                success=bool((recs[-1].get("hidden") or {}).get("passed")),
                first_try=bool((recs[0].get("hidden") or {}).get("passed")),
                trials=len(recs),
                signatures=sigs,
            )
        )
    return rows


def _benchmark_of(task_id: str, rec: dict[str, Any]) -> str:
    bench = str(rec.get("benchmark") or "")
    if bench and bench != "stream":
        return bench
    # A stream run logs the stream's name; the task id says the benchmark.
    return task_id.split("/", 1)[0].lower() if "/" in task_id else bench


# --------------------------------------------------------------------------- curve
def learning_curve(rows: Sequence[TaskRow], window: int = 10) -> list[dict[str, Any]]:
    """Success over task index with a trailing rolling mean of ``window`` tasks."""
    out = []
    for i, row in enumerate(rows):
        lo = max(0, i - window + 1)
        win = rows[lo : i + 1]
        out.append(
            {
                "index": i,
                "task_id": row.task_id,
                "success": row.success,
                "first_try": row.first_try,
                "rolling_success": sum(r.success for r in win) / len(win),
                "rolling_first_try": sum(r.first_try for r in win) / len(win),
                "cumulative_success": sum(r.success for r in rows[: i + 1]) / (i + 1),
            }
        )
    return out


# --------------------------------------------------------------------------- similarity
def tfidf_neighbours(
    texts: Mapping[str, str], order: Sequence[str], min_sim: float = 0.2, top: int = 5
) -> dict[str, list[str]]:
    """For each task, its most similar *earlier* tasks (TF-IDF cosine >= ``min_sim``).

    Memory-independent (task text only), so runs with and without memory are
    compared on the same notion of "similar".
    """
    from reflexion_bench.memory.lifelong.retrieval import tokenize

    ids = [t for t in order if t in texts]
    toks = tokenize([texts[t] for t in ids]) if ids else []
    df: Counter[str] = Counter()
    for t in toks:
        df.update(set(t))
    n = len(ids)
    vocab = {w: j for j, w in enumerate(df)}
    mat = np.zeros((n, len(vocab)), dtype=np.float32)
    for i, t in enumerate(toks):
        for w, c in Counter(t).items():
            # Smoothed idf (as scikit-learn): words in every task still count a little.
            mat[i, vocab[w]] = (1 + math.log(c)) * (math.log((1 + n) / (1 + df[w])) + 1)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    mat = (mat / np.where(norms == 0, 1, norms)).astype(np.float32)
    sim = mat @ mat.T if n else np.zeros((0, 0))
    out: dict[str, list[str]] = {}
    for i, tid in enumerate(ids):
        earlier = [(float(sim[i, j]), ids[j]) for j in range(i) if sim[i, j] >= min_sim]
        earlier.sort(key=lambda p: -p[0])
        out[tid] = [t for _, t in earlier[:top]]
    return out


def same_benchmark_neighbours(rows: Sequence[TaskRow]) -> dict[str, list[str]]:
    """Fallback similarity: every earlier task of the same benchmark."""
    out: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        out[row.task_id] = [r.task_id for r in rows[:i] if r.benchmark == row.benchmark]
    return out


# --------------------------------------------------------------------------- repeat failure
def repeat_failure_rate(
    rows: Sequence[TaskRow],
    neighbours: Mapping[str, Iterable[str]],
    ignore: Sequence[str] = (UNKNOWN,),
) -> dict[str, Any]:
    """Share of exposed tasks that repeat a failure signature of a similar earlier task.

    A task is *exposed* when at least one of its similar earlier tasks (``neighbours``)
    failed with a (non-ignored) signature; it is a *repeat* when it fails with one of
    those signatures itself.
    """
    sigs = {r.task_id: {s for s in r.signatures if s not in ignore} for r in rows}
    exposed = repeats = 0
    per_task = []
    by_sig: Counter[str] = Counter()
    for row in rows:
        seen: set[str] = set()
        for other in neighbours.get(row.task_id, ()):
            seen |= sigs.get(other, set())
        if not seen:
            continue
        exposed += 1
        repeated = sorted(sigs[row.task_id] & seen)
        if repeated:
            repeats += 1
            by_sig.update(repeated)
        per_task.append({"task_id": row.task_id, "repeated": repeated})
    return {
        "rate": repeats / exposed if exposed else None,
        "repeats": repeats,
        "exposed": exposed,
        "by_signature": dict(by_sig.most_common()),
        "per_task": per_task,
    }


# --------------------------------------------------------------------------- events
def load_events(path: Path) -> list[dict[str, Any]]:
    """Memory events of a run (the last begin/end event per task: a resumed task's
    newest attempt wins, like in the run log)."""
    if not path.exists():
        return []
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    order: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            key = (str(ev.get("event")), str(ev.get("task_id")))
            if key not in latest:
                order.append(key)
            latest[key] = ev
    return [latest[k] for k in order]


def gating_counts(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many tasks each policy would have reflected on, and what was written."""
    ends = [e for e in events if e.get("event") == "end_task" and "decisions" in e]
    per_policy: Counter[str] = Counter()
    for e in ends:
        per_policy.update(k for k, v in e["decisions"].items() if v)
    written = sum(int(e.get("wrote", 0)) for e in ends)
    policy = ends[-1].get("policy") if ends else None
    always = per_policy.get("always", 0)
    return {
        "tasks": len(ends),
        "active_policy": policy,
        "would_reflect": dict(per_policy),
        "written": written,
        "reduction_vs_always": (1 - per_policy.get(str(policy), 0) / always) if always else None,
    }


def store_growth(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Store size and active size after each task, in stream order."""
    out = []
    for e in events:
        if e.get("event") == "end_task" and "store_size" in e:
            out.append(
                {"task_id": e["task_id"], "size": e["store_size"], "active": e.get("active_size")}
            )
    return out


def usefulness(
    events: Sequence[dict[str, Any]], rows: Sequence[TaskRow], outcome_of: Mapping[str, str]
) -> dict[str, Any]:
    """Post-failure vs post-success reflections: retrievals and the fate of the tasks that saw them.

    Args:
        events: Memory events of the run.
        rows: Tasks of the run.
        outcome_of: Reflection id -> outcome (from the store).
    """
    by_task = {r.task_id: r for r in rows}
    stats: dict[str, dict[str, float]] = {
        k: {
            "stored": 0,
            "retrievals": 0,
            "first_try_when_retrieved": 0,
            "success_when_retrieved": 0,
        }
        for k in ("post_failure", "post_success", "unknown_outcome")
    }
    for outcome in outcome_of.values():
        stats[_kind(outcome)]["stored"] += 1
    for e in events:
        if e.get("event") != "begin_task":
            continue
        row = by_task.get(str(e.get("task_id")))
        if row is None:
            continue
        for hit in e.get("retrieved") or []:
            outcome = outcome_of.get(hit["id"]) or hit.get("outcome")
            if outcome is None:
                continue
            s = stats[_kind(outcome)]
            s["retrievals"] += 1
            s["first_try_when_retrieved"] += int(row.first_try)
            s["success_when_retrieved"] += int(row.success)
    out: dict[str, Any] = {}
    for kind, s in stats.items():
        n = s["retrievals"]
        out[kind] = {
            "stored": int(s["stored"]),
            "retrievals": int(n),
            "retrievals_per_stored": n / s["stored"] if s["stored"] else None,
            "first_try_when_retrieved": s["first_try_when_retrieved"] / n if n else None,
            "success_when_retrieved": s["success_when_retrieved"] / n if n else None,
            # Retrievals followed by a solved task, per stored reflection of the kind.
            "useful_per_stored": s["success_when_retrieved"] / s["stored"] if s["stored"] else None,
        }
    a, b = out["post_failure"]["useful_per_stored"], out["post_success"]["useful_per_stored"]
    out["ratio_post_failure_to_post_success"] = a / b if a is not None and b else None
    return out


def _kind(outcome: str) -> str:
    # A lesson of a task with no verdict (``unknown``) is neither post-failure nor
    # post-success: kept apart rather than guessed into one of them.
    if outcome == "unknown":
        return "unknown_outcome"
    return "post_failure" if outcome in POST_FAILURE else "post_success"


# --------------------------------------------------------------------------- precision
def precision_at_k(
    search: Callable[[str], Sequence[str]], labelled: Sequence[Mapping[str, Any]], k: int = 5
) -> dict[str, Any]:
    """Mean precision@k of ``search`` (query -> ranked ids) over a labelled set.

    Args:
        search: Returns ranked reflection ids for a query (at least k asked).
        labelled: Items ``{"query": str, "relevant": [ids]}``.
        k: Cut-off.
    """
    precisions = []
    for item in labelled:
        got = list(search(str(item["query"])))[:k]
        relevant = set(item["relevant"])
        precisions.append(sum(1 for g in got if g in relevant) / k)
    return {
        "k": k,
        "queries": len(precisions),
        "precision": float(np.mean(precisions)) if precisions else None,
    }


def load_labelled(path: Path) -> list[dict[str, Any]]:
    """A labelled set: JSONL with ``{"query": ..., "relevant": [ids]}`` per line."""
    items = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        if "query" not in item or "relevant" not in item:
            raise ValueError(f"{path}:{i}: a labelled item needs `query` and `relevant`")
        items.append(item)
    return items


def outcome_index(store_rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    return {str(r["id"]): str(r["outcome"]) for r in store_rows}
