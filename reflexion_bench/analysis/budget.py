"""Success against compute: per-task verdict matrices, spend curves, equal-budget
comparisons, and the ``best_of_n`` sample count that matches a Reflexion run.

Budget axes: ``trials``, ``tokens`` (prompt + completion), ``calls`` (model calls),
``dollars`` and ``wall`` (seconds of wall time per task). Tokens, calls and dollars are
counted *as run live*: a call replayed from the response cache counts what its live
call spent, so a strategy compared after another one (``simple`` and ``reflexion``
share first-trial prompts) does not get its shared calls for free. Wall time is what
the run took.

Equal-budget comparison: a run's *spend curve* is the mean cumulative spend per task
after k trials (a task that stopped earlier counts what it spent), paired with its
success after k trials (``success_at_trial``). The success of a run at budget B is
read off that curve by linear interpolation between trials; below the spend of one
trial it is undefined (None), above the last trial it is the final success.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from reflexion_bench.analysis.metrics import hidden_verdict, trials_frame

AXES = {
    "trials": None,
    "tokens": "tokens",
    "calls": "model_calls",
    "dollars": "cost_usd",
    "wall": "wall_time_s",
}
AXIS_LABELS = {
    "trials": "trials",
    "tokens": "tokens per task",
    "calls": "model calls per task",
    "dollars": "US$ per task",
    "wall": "wall time per task (s)",
}


def _by_task(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        out.setdefault(str(r["task_id"]), []).append(r)
    for recs in out.values():
        recs.sort(key=lambda r: int(r["trial"]))
    return out


def _verdict(rec: dict[str, Any]) -> bool | None:
    return hidden_verdict(rec)


def verdict_matrix(
    records: Sequence[dict[str, Any]], max_k: int | None = None, *, kind: str = "submitted"
) -> tuple[list[str], np.ndarray] | None:
    """Tasks x trials 0/1 matrix: the submitted verdict after <= k trials
    (``kind="submitted"``) or any pass so far (``kind="solved"``).

    None when a needed verdict is unknown (imported logs), so no interval is made up.
    """
    tasks = _by_task(records)
    if not tasks:
        return None
    k_max = max_k or max(int(r["trial"]) for r in records)
    ids = list(tasks)
    m = np.zeros((len(ids), k_max))
    for i, tid in enumerate(ids):
        recs = tasks[tid]
        for k in range(1, k_max + 1):
            upto = [r for r in recs if int(r["trial"]) <= k]
            if not upto:
                return None
            vs = [_verdict(r) for r in upto]
            if kind == "solved":
                if any(v is True for v in vs):
                    m[i, k - 1] = 1
                elif any(v is None for v in vs):
                    return None
            else:
                if vs[-1] is None:
                    return None
                m[i, k - 1] = float(vs[-1])
    return ids, m


def spend_curve(
    records: Sequence[dict[str, Any]], axis: str, max_k: int | None = None
) -> list[float | None]:
    """Mean cumulative spend per task after k = 1..K trials on ``axis``."""
    if axis not in AXES:
        raise ValueError(f"unknown budget axis {axis!r} (allowed: {', '.join(AXES)})")
    df = trials_frame(records)
    if df.empty:
        return []
    k_max = max_k or int(df["trial"].max())
    col = AXES[axis]
    out: list[float | None] = []
    for k in range(1, k_max + 1):
        upto = df[df["trial"] <= k]
        if col is None:
            per_task = upto.groupby("task_id")["trial"].max()
        else:
            if upto[col].isna().any():
                out.append(None)
                continue
            per_task = upto.groupby("task_id")[col].sum()
        out.append(float(per_task.reindex(df["task_id"].unique()).fillna(0).mean()))
    return out


def success_at_budget(
    spend: Sequence[float | None], success: Sequence[float | None], budget: float
) -> float | None:
    """Success read off a (spend, success) curve at ``budget`` (see the module docstring)."""
    pts = [
        (float(x), float(y))
        for x, y in zip(spend, success, strict=False)
        if x is not None and y is not None
    ]
    if not pts:
        return None
    xs = [x for x, _ in pts]
    ys = [y for _, y in pts]
    if budget < xs[0] - 1e-12:
        return None
    if budget >= xs[-1]:
        return ys[-1]
    return float(np.interp(budget, xs, ys))


def best_of_n_for_budget(records: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``best_of_n`` n whose worst-case token spend matches a Reflexion run.

    n = (W - S) / A, rounded, where W is the mean tokens of the run's tasks that used
    every trial (the worst case: both strategies stop early on a self-test pass, so
    matching the worst case matches what a hard task may spend), S the mean one-off
    self-test generation tokens per task (``self_test`` role, paid once by both), and
    A the mean actor tokens of a first attempt (one sample of ``best_of_n`` costs the
    same: no memory in the prompt). None when the log has no token counts.
    """
    tasks = _by_task(records)
    if not tasks:
        return None
    k_max = max(int(r["trial"]) for r in records)

    def tokens(recs: list[dict[str, Any]], role: str | None = None) -> float | None:
        total = 0.0
        for r in recs:
            calls = r.get("model_calls")
            if calls is None:
                return None
            for c in calls:
                if role is None or c.get("role") == role:
                    total += float(c.get("prompt_tokens") or 0) + float(
                        c.get("completion_tokens") or 0
                    )
        return total

    full = [recs for recs in tasks.values() if int(recs[-1]["trial"]) == k_max]
    w_vals = [tokens(recs) for recs in full]
    s_vals = [tokens(recs, "self_test") for recs in tasks.values()]
    a_vals = [tokens([recs[0]], "actor") for recs in tasks.values() if int(recs[0]["trial"]) == 1]
    if any(v is None for v in [*w_vals, *s_vals, *a_vals]) or not w_vals or not a_vals:
        return None
    w = float(np.mean([v for v in w_vals if v is not None]))
    s = float(np.mean([v for v in s_vals if v is not None]))
    a = float(np.mean([v for v in a_vals if v is not None]))
    if a <= 0:
        return None
    n = max(1, round((w - s) / a))
    return {
        "n": int(n),
        "worst_case_tokens_per_task": w,
        "self_test_tokens_per_task": s,
        "tokens_per_sample": a,
        "tasks_using_all_trials": len(full),
        "max_trials": k_max,
    }
