"""Model-call accounting from run-log records: calls, tokens, dollars, latency, retries
and cache hits, per role and per trial (per task is in the run summary already).

Computed from the log only, like every metric, so a replayed or resumed run is
accounted from what it recorded.

Two views of spend: ``tokens``/``cost_usd``/``latency_s`` are *as run live* (every
successful call, a replayed one counting what its live call spent: what the run costs
without a cache, the number to compare strategies by), and ``paid_tokens``/
``paid_cost_usd`` are *paid now* (the calls not served from the cache).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

_FIELDS = (
    "calls",
    "live_calls",
    "cached_calls",
    "failed_calls",
    "retries",
    "prompt_tokens",
    "completion_tokens",
    "tokens",
    "cost_usd",
    "latency_s",
    "paid_prompt_tokens",
    "paid_completion_tokens",
    "paid_tokens",
    "paid_cost_usd",
)


def _empty() -> dict[str, float]:
    return dict.fromkeys(_FIELDS, 0)


def _add(acc: dict[str, float], call: dict[str, Any]) -> None:
    cached = bool(call.get("cached"))
    failed = call.get("error") is not None
    acc["calls"] += 1
    acc["cached_calls"] += int(cached)
    acc["failed_calls"] += int(failed)
    acc["live_calls"] += int(not cached and not failed)
    acc["retries"] += int(call.get("retries") or 0)
    pt, ct = int(call.get("prompt_tokens") or 0), int(call.get("completion_tokens") or 0)
    acc["prompt_tokens"] += pt
    acc["completion_tokens"] += ct
    acc["tokens"] += pt + ct
    cost = float(call.get("cost_usd") or 0.0)
    acc["cost_usd"] += cost
    acc["latency_s"] += float(call.get("latency_s") or 0.0)
    if not cached:
        acc["paid_prompt_tokens"] += pt
        acc["paid_completion_tokens"] += ct
        acc["paid_tokens"] += pt + ct
        acc["paid_cost_usd"] += cost


def usage_summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Totals, per role and per trial index of the ``model_calls`` of trial records.

    Args:
        records: Trial records of a run log (e.g. ``load_run_records(run_dir)``).

    Returns:
        ``{"total": {...}, "by_role": {role: {...}}, "by_trial": {k: {...}}}`` where each
        ``{...}`` has calls, live/cached/failed calls, retries, prompt/completion/total
        tokens, cost in USD and summed latency in seconds (as run live), and the
        ``paid_*`` tokens and cost of the calls not replayed from the cache (paid now).
    """
    total = _empty()
    by_role: dict[str, dict[str, float]] = defaultdict(_empty)
    by_trial: dict[int, dict[str, float]] = defaultdict(_empty)
    for rec in records:
        trial = int(rec.get("trial", 0))
        for call in rec.get("model_calls") or []:
            for acc in (total, by_role[str(call.get("role", "unknown"))], by_trial[trial]):
                _add(acc, call)
    return {
        "total": total,
        "by_role": dict(sorted(by_role.items())),
        "by_trial": {k: by_trial[k] for k in sorted(by_trial)},
    }
