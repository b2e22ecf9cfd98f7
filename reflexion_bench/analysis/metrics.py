"""Metrics computed from run-log records only (never from in-memory run state).

Definitions (K = the largest trial index in the run):
- first_try: share of tasks whose trial-1 candidate passes the hidden scorer.
- final: share of tasks whose *submitted* candidate (the last trial's) passes: pass@1.
- success_at_trial[k]: share of tasks whose submitted candidate after at most k
  trials passes (a task that stopped before k keeps its last verdict): the accuracy a
  run stopped at budget k would report.
- solved_by_trial[k]: share of tasks with any hidden pass among trials <= k (the
  paper's cumulative curves for ALFWorld/HotpotQA, where the in-loop signal is the
  ground truth, so the two coincide).
- fixes/breaks: consecutive trial pairs whose hidden verdict went wrong->right /
  right->wrong.
- self-test confusion over every trial that ran self-tests: TP (self pass, hidden
  pass), FP (self pass, hidden fail), FN (self fail, hidden pass), TN.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pandas as pd


def _hidden_passed(rec: dict[str, Any]) -> bool:
    hidden = rec.get("hidden") or {}
    return bool(hidden.get("passed"))


def _self_passed(rec: dict[str, Any]) -> bool | None:
    st = rec.get("self_test")
    if not st:
        return None
    p = st.get("passed")
    return None if p is None else bool(p)


def trials_frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per trial with the fields the metrics use."""
    rows = []
    for r in records:
        calls = r.get("model_calls") or []
        rows.append(
            {
                "task_id": str(r["task_id"]),
                "trial": int(r["trial"]),
                "benchmark": r.get("benchmark"),
                "strategy": r.get("strategy"),
                "model": r.get("model"),
                "final": bool(r.get("final")),
                "hidden_passed": _hidden_passed(r),
                "hidden_status": (r.get("hidden") or {}).get("status"),
                "self_passed": _self_passed(r),
                "error": r.get("error"),
                "has_reflection": bool(r.get("reflection")),
                "model_calls": len(calls),
                "prompt_tokens": sum(int(c.get("prompt_tokens", 0)) for c in calls),
                "completion_tokens": sum(int(c.get("completion_tokens", 0)) for c in calls),
                "cost_usd": sum(float(c.get("cost_usd", 0.0)) for c in calls),
                "wall_time_s": float(r.get("wall_time_s", 0.0)),
            }
        )
    df = pd.DataFrame(rows)
    if not df.empty:
        df["tokens"] = df["prompt_tokens"] + df["completion_tokens"]
        df = df.sort_values(["task_id", "trial"], kind="stable").reset_index(drop=True)
    return df


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """All run-level metrics as a JSON-friendly dict."""
    df = trials_frame(records)
    if df.empty:
        return {"n_tasks": 0}
    n = int(df["task_id"].nunique())
    max_k = int(df["trial"].max())
    by_task = {tid: g.sort_values("trial") for tid, g in df.groupby("task_id", sort=False)}

    success_at: list[float] = []
    solved_by: list[float] = []
    for k in range(1, max_k + 1):
        sub = 0
        solved = 0
        for g in by_task.values():
            upto = g[g["trial"] <= k]
            sub += int(bool(upto.iloc[-1]["hidden_passed"]))
            solved += int(bool(upto["hidden_passed"].any()))
        success_at.append(sub / n)
        solved_by.append(solved / n)

    fixes = breaks = 0
    for g in by_task.values():
        verdicts = list(g["hidden_passed"])
        for a, b in itertools.pairwise(verdicts):
            fixes += int((not a) and b)
            breaks += int(a and not b)

    st = df[df["self_passed"].notna()]
    tp = int(((st["self_passed"] == True) & st["hidden_passed"]).sum())  # noqa: E712
    fp = int(((st["self_passed"] == True) & ~st["hidden_passed"]).sum())  # noqa: E712
    fn = int(((st["self_passed"] == False) & st["hidden_passed"]).sum())  # noqa: E712
    tn = int(((st["self_passed"] == False) & ~st["hidden_passed"]).sum())  # noqa: E712
    finals = df.groupby("task_id", sort=False).tail(1)
    # Final-trial false positives: the task stopped on a self-test pass that was wrong.
    final_fp = int(((finals["self_passed"] == True) & ~finals["hidden_passed"]).sum())  # noqa: E712

    per_task = df.groupby("task_id", sort=False).agg(
        trials=("trial", "max"),
        tokens=("tokens", "sum"),
        calls=("model_calls", "sum"),
        wall_time_s=("wall_time_s", "sum"),
        cost_usd=("cost_usd", "sum"),
    )
    first = df[df["trial"] == 1]
    return {
        "benchmark": _single(df["benchmark"]),
        "strategy": _single(df["strategy"]),
        "model": _single(df["model"]),
        "n_tasks": n,
        "first_try": float(first["hidden_passed"].sum()) / n,
        "final": float(finals["hidden_passed"].sum()) / n,
        "success_at_trial": success_at,
        "solved_by_trial": solved_by,
        "fixes": fixes,
        "breaks": breaks,
        "errored_tasks": int(finals["error"].notna().sum()),
        "self_test_confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "final_fp": final_fp},
        "self_test_fp_rate": fp / (tp + fp) if (tp + fp) else None,
        "totals": {
            "trials": len(df),
            "model_calls": int(df["model_calls"].sum()),
            "prompt_tokens": int(df["prompt_tokens"].sum()),
            "completion_tokens": int(df["completion_tokens"].sum()),
            "tokens": int(df["tokens"].sum()),
            "cost_usd": float(df["cost_usd"].sum()),
            "wall_time_s": float(df["wall_time_s"].sum()),
        },
        "per_task_mean": {
            "trials": float(per_task["trials"].mean()),
            "tokens": float(per_task["tokens"].mean()),
            "model_calls": float(per_task["calls"].mean()),
            "wall_time_s": float(per_task["wall_time_s"].mean()),
            "cost_usd": float(per_task["cost_usd"].mean()),
        },
    }


def _single(col: pd.Series) -> Any:
    vals = [v for v in col.dropna().unique()]
    if len(vals) == 1:
        return vals[0]
    return vals or None
