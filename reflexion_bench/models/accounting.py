"""Model-call accounting from run-log records: calls, tokens, dollars, latency, retries
and cache hits, per role and per trial (per task is in the run summary already).

Computed from the log only, like every metric, so a replayed or resumed run is
accounted from what it recorded.
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
    acc["cost_usd"] += float(call.get("cost_usd") or 0.0)
    acc["latency_s"] += float(call.get("latency_s") or 0.0)


def usage_summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Totals, per role and per trial index of the ``model_calls`` of trial records.

    Args:
        records: Trial records of a run log (e.g. ``load_run_records(run_dir)``).

    Returns:
        ``{"total": {...}, "by_role": {role: {...}}, "by_trial": {k: {...}}}`` where each
        ``{...}`` has calls, live/cached/failed calls, retries, prompt/completion/total
        tokens, cost in USD and summed latency in seconds.
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
