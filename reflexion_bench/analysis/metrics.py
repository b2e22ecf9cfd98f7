"""Metrics computed from run-log records only (never from in-memory run state).

Definitions (K = the largest trial index in the run):
- first_try: share of tasks whose trial-1 candidate passes the hidden scorer.
- final: share of tasks whose *submitted* candidate (the last trial's) passes: pass@1,
  the headline, over all tasks: a task that errored (no verdict: an outage, a broken
  sandbox) counts as failed.
- errored_tasks / finished_tasks / final_finished: tasks whose last trial errored,
  the others, and pass@1 over those others only. The two pass@1 differ exactly when
  errors hid verdicts; a gap between them says the headline is an error count.
- success_at_trial[k]: share of tasks whose submitted candidate after at most k
  trials passes (a task that stopped before k keeps its last verdict): the accuracy a
  run stopped at budget k would report.
- solved_by_trial[k]: share of tasks with any hidden pass among trials <= k (the
  paper's cumulative curves for ALFWorld/HotpotQA, where the in-loop signal is the
  ground truth, so the two coincide).
- fixes/breaks (between trials): consecutive trial pairs of one task whose hidden
  verdict went wrong->right / right->wrong (:func:`fixes_breaks`; a task may count
  several); first_to_final (fixed/broken from trial 1): tasks whose trial-1 verdict
  was wrong and submitted one right (fixed) or the reverse (broken)
  (:func:`first_to_final`). Two quantities, two names: the glossary of
  docs/reports.md ("Metrics") defines every name the tables, figures, ``compare`` and
  the viewer use.
- self-test confusion over every trial that ran self-tests: TP (self pass, hidden
  pass), FP (self pass, hidden fail), FN (self fail, hidden pass), TN; the rates in
  the paper's Table 2 normalisation are per self-test verdict (TP+FP = 1, FN+TN = 1).
  False positives are split into those that stopped a task early (before trial K) on
  a wrong pass, those at trial K, and those that did not stop the task.
- in_loop: the same confusion named by the run's evaluator (self_tests, visible_tests,
  oracle...), with its rates also per hidden verdict (FP / (FP + TN): the false-positive
  rate of the feedback) and the trials where the evaluator gave no verdict (fallback).

Imported logs (e.g. the paper's own runs) can lack information: a trial whose
``hidden`` is null and listed in ``extra.missing`` has an unknown verdict (in a live
run a trial without a verdict errored, and counts as failed); a null
``model_calls`` means unknown tokens.
Metrics that depend on an unknown value are ``None`` (never guessed), and
``missing`` says what was unknown. Records may carry a logged verdict beside the
re-scored one (``extra.logged_hidden_passed``); ``logged`` then compares the two.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pandas as pd

from reflexion_bench.models.accounting import usage_summary


def hidden_verdict(rec: dict[str, Any]) -> bool | None:
    """The hidden verdict; None only where the log says it is missing (imported logs).

    A live trial without a verdict (the actor errored before scoring) is a failure.
    """
    hidden = rec.get("hidden")
    if isinstance(hidden, dict) and hidden.get("passed") is not None:
        return bool(hidden["passed"])
    if "hidden" in ((rec.get("extra") or {}).get("missing") or ()):
        return None
    return False


def plus_verdict(rec: dict[str, Any]) -> bool | None:
    """The plus tests' verdict (``scorer.tests=both|plus``), None where none was logged."""
    hidden = rec.get("hidden")
    if not isinstance(hidden, dict):
        return None
    plus = (hidden.get("extra") or {}).get("plus")
    if isinstance(plus, dict) and plus.get("passed") is not None:
        return bool(plus["passed"])
    return None


def plus_inputs(rec: dict[str, Any]) -> int | None:
    """How many plus inputs the logged plus verdict had (0: the task has no plus suite and
    kept its base verdict), None where the log does not say."""
    hidden = rec.get("hidden")
    if not isinstance(hidden, dict):
        return None
    plus = (hidden.get("extra") or {}).get("plus")
    if isinstance(plus, dict) and isinstance(plus.get("inputs"), int):
        return int(plus["inputs"])
    return None


def base_verdict(rec: dict[str, Any]) -> bool | None:
    """The base hidden tests' verdict (with ``scorer.tests=plus`` the headline is plus,
    and the base verdict sits in ``hidden.extra.base``)."""
    hidden = rec.get("hidden")
    if isinstance(hidden, dict):
        base = (hidden.get("extra") or {}).get("base")
        if isinstance(base, dict) and base.get("passed") is not None:
            return bool(base["passed"])
    return hidden_verdict(rec)


def _self_passed(rec: dict[str, Any]) -> bool | None:
    st = rec.get("self_test")
    if not st:
        return None
    p = st.get("passed")
    return None if p is None else bool(p)


def _fallback(rec: dict[str, Any]) -> str | None:
    """Why the in-loop evaluator gave no verdict (``visible_tests`` on a task whose
    prompt shows no example: ``no_feedback``), or None."""
    details = (rec.get("self_test") or {}).get("details") or {}
    value = details.get("fallback") if isinstance(details, dict) else None
    return None if value is None else str(value)


def _logged_passed(rec: dict[str, Any]) -> bool | None:
    value = (rec.get("extra") or {}).get("logged_hidden_passed")
    return None if value is None else bool(value)


def _calls_sum(
    calls: list[dict[str, Any]] | None, key: str, cast: type = int, paid: bool = False
) -> Any:
    """Sum of ``key`` over calls: as run live (a replayed call counts what its live call
    spent), or with ``paid`` only the calls not replayed from the cache (paid now)."""
    if calls is None:
        return float("nan")
    return sum(cast(c.get(key) or 0) for c in calls if not (paid and c.get("cached")))


def trials_frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per trial with the fields the metrics use.

    ``hidden_passed`` is False where the verdict is unknown; ``hidden_known`` says
    which rows are known. Token/cost/time columns are NaN where the log lacks them.
    """
    rows = []
    for r in records:
        calls = r.get("model_calls")
        hidden = hidden_verdict(r)
        wall = r.get("wall_time_s")
        rows.append(
            {
                "task_id": str(r["task_id"]),
                "trial": int(r["trial"]),
                "benchmark": r.get("benchmark"),
                "strategy": r.get("strategy"),
                "evaluator": r.get("evaluator"),
                "model": r.get("model"),
                "final": bool(r.get("final")),
                "hidden_passed": bool(hidden),
                "hidden_known": hidden is not None,
                "hidden_status": (r.get("hidden") or {}).get("status"),
                "self_passed": _self_passed(r),
                "fallback": _fallback(r),
                "base_passed": base_verdict(r),
                "plus_passed": plus_verdict(r),
                "plus_inputs": plus_inputs(r),
                "logged_passed": _logged_passed(r),
                "error": r.get("error"),
                "has_reflection": bool(r.get("reflection")),
                "model_calls": float("nan") if calls is None else len(calls),
                "prompt_tokens": _calls_sum(calls, "prompt_tokens"),
                "completion_tokens": _calls_sum(calls, "completion_tokens"),
                "cost_usd": _calls_sum(calls, "cost_usd", float),
                "paid_tokens": _calls_sum(calls, "prompt_tokens", paid=True)
                + _calls_sum(calls, "completion_tokens", paid=True),
                "paid_cost_usd": _calls_sum(calls, "cost_usd", float, paid=True),
                "wall_time_s": float("nan") if wall is None else float(wall),
            }
        )
    df = pd.DataFrame(rows)
    if not df.empty:
        df["tokens"] = df["prompt_tokens"] + df["completion_tokens"]
        df = df.sort_values(["task_id", "trial"], kind="stable").reset_index(drop=True)
    return df


def _share(values: list[bool | None], n: int) -> float | None:
    if any(v is None for v in values):
        return None
    return sum(bool(v) for v in values) / n


def _count(values: list[bool | None]) -> int | None:
    if any(v is None for v in values):
        return None
    return sum(bool(v) for v in values)


def _verdicts(g: pd.DataFrame) -> list[bool | None]:
    return [
        bool(p) if known else None
        for p, known in zip(g["hidden_passed"], g["hidden_known"], strict=True)
    ]


def _total(col: pd.Series, cast: type = float) -> Any:
    """Sum of a column, or None when any value is unknown (NaN)."""
    if col.isna().any():
        return None
    return cast(col.sum())


def _mean(col: pd.Series) -> float | None:
    if col.isna().any() or col.empty:
        return None
    return float(col.mean())


def _curve_counts(
    verdicts: dict[str, list[bool | None]], trials: dict[str, list[int]], max_k: int
) -> tuple[list[int | None], list[int | None]]:
    """Per k = 1..max_k: tasks whose submitted candidate after at most k trials passes,
    and tasks with any pass among trials <= k (None where an unknown verdict decides)."""
    success_counts: list[int | None] = []
    solved_counts: list[int | None] = []
    for k in range(1, max_k + 1):
        sub: list[bool | None] = []
        solved: list[bool | None] = []
        for tid, vs in verdicts.items():
            upto = [v for t, v in zip(trials[tid], vs, strict=True) if t <= k]
            if not upto:  # an imported task whose trial 1 is missing entirely
                sub.append(None)
                solved.append(None)
                continue
            sub.append(upto[-1])
            if any(v is True for v in upto):
                solved.append(True)
            else:
                solved.append(None if any(v is None for v in upto) else False)
        success_counts.append(_count(sub))
        solved_counts.append(_count(solved))
    return success_counts, solved_counts


def fixes_breaks(verdicts: Sequence[bool | None]) -> tuple[int, int]:
    """Fixes and breaks between trials of one task (its hidden verdicts in trial
    order): consecutive pairs that went wrong->right / right->wrong; a pair with an
    unknown verdict is neither. The one definition the report, its ``rewrites`` table
    and the viewer count with."""
    fixes = breaks = 0
    for a, b in itertools.pairwise(verdicts):
        if a is None or b is None:
            continue
        fixes += int((not a) and b)
        breaks += int(a and not b)
    return fixes, breaks


def first_to_final(first: bool | None, final: bool | None) -> str | None:
    """``fixed`` (wrong at trial 1, right when submitted), ``broken`` (the reverse),
    ``same`` or None when either verdict is unknown: "fixed/broken from trial 1"."""
    if first is None or final is None:
        return None
    if first == final:
        return "same"
    return "fixed" if final else "broken"


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """All run-level metrics as a JSON-friendly dict (see the module docstring)."""
    df = trials_frame(records)
    if df.empty:
        return {"n_tasks": 0}
    n = int(df["task_id"].nunique())
    max_k = int(df["trial"].max())
    by_task = {tid: g.sort_values("trial") for tid, g in df.groupby("task_id", sort=False)}
    verdicts = {tid: _verdicts(g) for tid, g in by_task.items()}
    trials = {tid: list(g["trial"]) for tid, g in by_task.items()}

    success_counts, solved_counts = _curve_counts(verdicts, trials, max_k)

    fixes = breaks = 0
    fixed_from_first = broken_from_first = 0
    unknown_first_final = 0
    for tid, vs in verdicts.items():
        task_fixes, task_breaks = fixes_breaks(vs)
        fixes += task_fixes
        breaks += task_breaks
        change = first_to_final(vs[0] if trials[tid][0] == 1 else None, vs[-1])
        unknown_first_final += int(change is None)
        fixed_from_first += int(change == "fixed")
        broken_from_first += int(change == "broken")

    known = df[df["hidden_known"]]
    st = known[known["self_passed"].notna()]
    self_pass = st["self_passed"] == True  # noqa: E712
    self_fail = st["self_passed"] == False  # noqa: E712
    tp = int((self_pass & st["hidden_passed"]).sum())
    fp = int((self_pass & ~st["hidden_passed"]).sum())
    fn = int((self_fail & st["hidden_passed"]).sum())
    tn = int((self_fail & ~st["hidden_passed"]).sum())
    finals = df.groupby("task_id", sort=False).tail(1)
    known_finals = finals[finals["hidden_known"]]
    # Final-trial false positives: the task stopped on a self-test pass that was wrong.
    final_fp_rows = known_finals[
        (known_finals["self_passed"] == True) & ~known_finals["hidden_passed"]  # noqa: E712
    ]
    final_fp = len(final_fp_rows)
    fp_early = int((final_fp_rows["trial"] < max_k).sum())
    fp_rows = st[self_pass & ~st["hidden_passed"]]

    per_task = df.groupby("task_id", sort=False).agg(
        trials=("trial", "max"),
        tokens=("tokens", lambda c: c.sum(min_count=len(c))),
        calls=("model_calls", lambda c: c.sum(min_count=len(c))),
        wall_time_s=("wall_time_s", lambda c: c.sum(min_count=len(c))),
        cost_usd=("cost_usd", lambda c: c.sum(min_count=len(c))),
        paid_tokens=("paid_tokens", lambda c: c.sum(min_count=len(c))),
        paid_cost_usd=("paid_cost_usd", lambda c: c.sum(min_count=len(c))),
    )
    first_verdicts = [vs[0] if trials[tid][0] == 1 else None for tid, vs in verdicts.items()]
    final_verdicts = [vs[-1] for vs in verdicts.values()]
    errored_ids = set(finals.loc[finals["error"].notna(), "task_id"])
    finished_verdicts = [vs[-1] for tid, vs in verdicts.items() if tid not in errored_ids]
    # LeetcodeHard: visible tests left out of the prompt because they are broken.
    left_out: dict[str, int] = {}
    for r in records:
        extra = (r.get("hidden") or {}).get("extra") or {}
        if "n_broken_visible_tests" in extra:
            left_out[str(r["task_id"])] = int(extra["n_broken_visible_tests"])
    in_loop = in_loop_section(df, tp, fp, fn, tn)
    summary: dict[str, Any] = {
        "benchmark": _single(df["benchmark"]),
        "strategy": _single(df["strategy"]),
        # The in-loop evaluator (configs/evaluator/<name>; None in logs written before
        # it was recorded, or where no trial ran one).
        "evaluator": _single(df["evaluator"]),
        "model": _single(df["model"]),
        "n_tasks": n,
        "first_try": _share(first_verdicts, n),
        "final": _share(final_verdicts, n),
        "success_at_trial": [None if c is None else c / n for c in success_counts],
        "solved_by_trial": [None if c is None else c / n for c in solved_counts],
        "success_counts_at_trial": success_counts,
        "solved_counts_by_trial": solved_counts,
        "fixes": fixes,
        "breaks": breaks,
        "first_to_final": {
            "fixed": fixed_from_first,
            "broken": broken_from_first,
            "unknown": unknown_first_final,
        },
        "errored_tasks": len(errored_ids),
        "finished_tasks": len(finished_verdicts),
        "final_finished": _share(finished_verdicts, len(finished_verdicts))
        if finished_verdicts
        else None,
        "errored_task_ids": sorted(errored_ids),
        "self_test_confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "final_fp": final_fp},
        "self_test_fp_rate": in_loop["rates_per_verdict"]["fp"],
        "self_test_rates": dict(in_loop["rates_per_verdict"]),
        "self_test_fp_split": {
            "stopped_early": fp_early,
            "at_last_trial": final_fp - fp_early,
            "not_stopped": len(fp_rows) - final_fp,
        },
        "in_loop": in_loop,
        # Calls, tokens and dollars per role (actor, self_test, reflector...) and trial.
        "usage": usage_summary(records),
        "visible_tests_left_out": (
            {"tasks": sum(1 for v in left_out.values() if v), "tests": sum(left_out.values())}
            if left_out
            else None
        ),
        "totals": {
            "trials": len(df),
            "model_calls": _total(df["model_calls"], int),
            "prompt_tokens": _total(df["prompt_tokens"], int),
            "completion_tokens": _total(df["completion_tokens"], int),
            "tokens": _total(df["tokens"], int),
            "cost_usd": _total(df["cost_usd"]),
            # tokens/cost_usd above are as run live (replays count what their live
            # call spent); these are what this run paid (calls not from the cache).
            "paid_tokens": _total(df["paid_tokens"], int),
            "paid_cost_usd": _total(df["paid_cost_usd"]),
            "wall_time_s": _total(df["wall_time_s"]),
        },
        "per_task_mean": {
            "trials": float(per_task["trials"].mean()),
            "tokens": _mean(per_task["tokens"]),
            "model_calls": _mean(per_task["calls"]),
            "wall_time_s": _mean(per_task["wall_time_s"]),
            "cost_usd": _mean(per_task["cost_usd"]),
            "paid_tokens": _mean(per_task["paid_tokens"]),
            "paid_cost_usd": _mean(per_task["paid_cost_usd"]),
        },
    }
    unknown_trials = int((~df["hidden_known"]).sum())
    if unknown_trials or df["tokens"].isna().any() or df["wall_time_s"].isna().any():
        summary["missing"] = {
            "trials_with_unknown_hidden_verdict": unknown_trials,
            "tasks_with_unknown_first_try": sum(v is None for v in first_verdicts),
            "tasks_with_unknown_final": sum(v is None for v in final_verdicts),
            "trials_without_token_counts": int(df["tokens"].isna().sum()),
            "trials_without_wall_time": int(df["wall_time_s"].isna().sum()),
        }
    plus = plus_summary(df)
    if plus is not None:
        summary["plus"] = plus
    logged = finals["logged_passed"]
    if logged.notna().any():
        pairs = [
            (bool(lp), v)
            for lp, v in zip(logged, final_verdicts, strict=True)
            if lp is not None and not pd.isna(lp)
        ]
        agree = [lp == v for lp, v in pairs if v is not None]
        summary["logged"] = {
            "n_tasks": len(pairs),
            "final": sum(lp for lp, _ in pairs) / len(pairs),
            "final_count": sum(lp for lp, _ in pairs),
            "rescored_agreement": sum(agree) / len(agree) if agree else None,
            "disagreeing_tasks": [
                str(tid)
                for tid, lp, v in zip(finals["task_id"], logged, final_verdicts, strict=True)
                if lp is not None and not pd.isna(lp) and v is not None and bool(lp) != v
            ],
        }
    return summary


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def in_loop_section(df: pd.DataFrame, tp: int, fp: int, fn: int, tn: int) -> dict[str, Any]:
    """The in-loop evaluator's verdicts against the hidden ones, whatever the evaluator.

    The counts are the self-test confusion above (one computation for every evaluator:
    ``self_test`` is the trial record's name for any in-loop verdict). Two views of the
    rates: ``rates`` per hidden verdict (``fp`` = FP / (FP + TN): how often a wrong
    program is called right, the rate ``noisy_oracle``'s ``fp_rate`` sets; ``fn`` = FN /
    (FN + TP)), and ``rates_per_verdict``, the paper's Table 2 normalisation (per
    in-loop verdict: TP + FP = 1), the same as ``self_test_rates``. ``no_feedback_trials``:
    trials where the evaluator had nothing to check and gave no verdict (``visible_tests``
    on a task without examples), left out of the confusion; ``no_feedback_tasks`` their
    tasks.
    """
    fallback = df[df["fallback"].notna()] if "fallback" in df else df.iloc[0:0]
    return {
        "evaluator": _single(df["evaluator"]),
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "trials_judged": tp + fp + fn + tn,
        "rates": {
            "tp": _ratio(tp, tp + fn),
            "fn": _ratio(fn, tp + fn),
            "fp": _ratio(fp, fp + tn),
            "tn": _ratio(tn, fp + tn),
        },
        "rates_per_verdict": {
            "tp": _ratio(tp, tp + fp),
            "fp": _ratio(fp, tp + fp),
            "fn": _ratio(fn, fn + tn),
            "tn": _ratio(tn, fn + tn),
        },
        "no_feedback_trials": len(fallback),
        "no_feedback_tasks": int(fallback["task_id"].nunique()),
        "fallbacks": {str(k): int(v) for k, v in fallback["fallback"].value_counts().items()},
    }


def _plus_known(plus: Any, base: Any) -> bool | None:
    """A trial's verdict under the plus tests: the plus verdict where one was logged (or
    re-scored), a failure where the program failed the base tests (plus runs them
    first), else unknown (None: a base pass never judged under plus)."""
    if plus is not None and not pd.isna(plus):
        return bool(plus)
    if base is not None and not pd.isna(base) and not bool(base):
        return False
    return None


def plus_summary(df: pd.DataFrame) -> dict[str, Any] | None:
    """Base vs plus hidden tests (None when no trial has a plus verdict).

    The plus verdicts come from the log (``scorer.tests=both|plus``) or from a re-score
    of the logged programs (``reflexion-bench rescore``, overlaid by
    :func:`reflexion_bench.analysis.rescore.with_rescore`). ``first_try``, ``final``,
    ``success_at_trial`` and ``solved_by_trial`` are the headline metrics with the plus
    verdict in place of the base one (a program that fails base fails plus); any of them
    that depends on a base pass never judged under plus (``unjudged`` trials) is None.
    ``base_pass_plus_fail``: tasks whose submitted program passes the base tests and
    fails plus (a "pass" the paper would count that stronger tests reject);
    ``unseen_fp``: trials whose program passed its self-tests *and* the base tests but
    fails plus (a false positive of both tests the paper had), with ``unseen_fp_final``
    those that were submitted. ``weak_oracles``: the tasks of this run with a plus
    verdict whose MBPP+ oracle cannot reject a program that passes base
    (:func:`reflexion_bench.scorers.plus_oracles.weak_oracle_tasks`: Mbpp/164 accepts
    any value, Mbpp/295 also 0); their plus verdicts are EvalPlus's, unchanged, and
    counted above like any other.
    """
    from reflexion_bench.scorers.plus_oracles import weak_oracle_tasks

    if df.empty or not df["plus_passed"].notna().any():
        return None
    df = df.assign(
        plus_known=[
            _plus_known(p, b) for p, b in zip(df["plus_passed"], df["base_passed"], strict=True)
        ]
    )
    by_task = {tid: g.sort_values("trial") for tid, g in df.groupby("task_id", sort=False)}
    verdicts: dict[str, list[bool | None]] = {
        tid: [None if v is None or pd.isna(v) else bool(v) for v in g["plus_known"]]
        for tid, g in by_task.items()
    }
    trials = {tid: [int(t) for t in g["trial"]] for tid, g in by_task.items()}
    success_counts, solved_counts = _curve_counts(verdicts, trials, int(df["trial"].max()))
    first = [vs[0] if trials[tid][0] == 1 else None for tid, vs in verdicts.items()]
    final = [vs[-1] for vs in verdicts.values()]
    finals = df.groupby("task_id", sort=False).tail(1)
    n = len(finals)
    base = finals["base_passed"] == True  # noqa: E712
    plus_fail = finals["plus_known"] == False  # noqa: E712
    bp_pf = finals[base & plus_fail]
    self_pass = df["self_passed"] == True  # noqa: E712
    base_pass = df["base_passed"] == True  # noqa: E712
    unseen = df[self_pass & base_pass & (df["plus_known"] == False)]  # noqa: E712
    last = set(zip(finals["task_id"], finals["trial"], strict=True))
    unseen_final = [
        tid for tid, k in zip(unseen["task_id"], unseen["trial"], strict=True) if (tid, k) in last
    ]
    return {
        "n_tasks": n,
        "tasks_with_plus_verdict": int(finals["plus_passed"].notna().sum()),
        "unjudged": sum(v is None for vs in verdicts.values() for v in vs),
        "first_try": _share(first, n),
        "first_try_count": sum(v is True for v in first),
        "final": _share(final, n),
        "final_count": sum(v is True for v in final),
        "base_final_count": int(base.sum()),
        "success_at_trial": [None if c is None else c / n for c in success_counts],
        "solved_by_trial": [None if c is None else c / n for c in solved_counts],
        "success_counts_at_trial": success_counts,
        "solved_counts_by_trial": solved_counts,
        "base_pass_plus_fail": len(bp_pf),
        "base_pass_plus_fail_tasks": sorted(str(t) for t in bp_pf["task_id"]),
        "unseen_fp": len(unseen),
        "unseen_fp_final": len(unseen_final),
        "unseen_fp_final_tasks": sorted(unseen_final),
        # A task without a plus suite (inputs 0: it kept its base verdict) ran no oracle.
        "weak_oracles": weak_oracle_tasks(
            sorted(
                str(t)
                for t, v, k in zip(
                    finals["task_id"], finals["plus_passed"], finals["plus_inputs"], strict=True
                )
                if v is not None and not pd.isna(v) and k != 0
            )
        ),
    }


def _single(col: pd.Series) -> Any:
    vals = [v for v in col.dropna().unique()]
    if len(vals) == 1:
        return vals[0]
    return vals or None
