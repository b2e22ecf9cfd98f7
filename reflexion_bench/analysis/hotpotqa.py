"""HotpotQA analysis from run logs: success by trial per strategy (the paper's Figure 4
layout), first-trial failures fixed later, and breakdowns by question type and level.

Everything here reads run-log records (``load_run_records``), never in-memory state.
The actors copy each question's ``type`` (bridge / comparison) and ``level`` (easy /
medium / hard) into the trial record's ``extra``; the scorer also puts them in
``hidden.extra``, and either is used.

The success-by-trial table has one row per run (``<actor> + <strategy>``) and one
column per trial: the share of questions answered correctly (exact match) at any
trial up to k, i.e. the paper's cumulative curves. Reference rows (the paper's
numbers, typed in or parsed from its logs with :func:`parse_trial_summaries`) sit in
the same table, labelled as such.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from reflexion_bench.analysis.paper import with_canonical_strategies
from reflexion_bench.core.runlog import load_run_records

ACTOR_NAMES = {"react": "ReAct", "cot": "CoT", "cot_context": "CoT (GT)"}


def _tag(rec: Mapping[str, Any], key: str) -> str | None:
    extra = rec.get("extra") or {}
    hidden_extra = (rec.get("hidden") or {}).get("extra") or {}
    value = extra.get(key, hidden_extra.get(key))
    return None if value is None else str(value)


def trials_frame(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per trial: task, trial, strategy, actor, type, level, EM, F1, halt reason."""
    rows = []
    for r in records:
        hidden = r.get("hidden") or {}
        extra = r.get("extra") or {}
        rows.append(
            {
                "task_id": str(r["task_id"]),
                "trial": int(r["trial"]),
                "strategy": r.get("strategy"),
                "model": r.get("model"),
                "actor": extra.get("actor"),
                "type": _tag(r, "type"),
                "level": _tag(r, "level"),
                "passed": bool(hidden.get("passed")),
                "f1": float(hidden.get("value") or 0.0),
                "halted": extra.get("halted"),
                "invalid_steps": int(extra.get("invalid_steps") or 0),
                "error": r.get("error"),
            }
        )
    df = pd.DataFrame(rows)
    if not df.empty:
        df = df.sort_values(["task_id", "trial"], kind="stable").reset_index(drop=True)
    return df


def run_label(records: Sequence[Mapping[str, Any]]) -> str:
    """``<actor> + <strategy>`` of a run, e.g. ``ReAct + reflexion``."""
    df = trials_frame(records)
    if df.empty:
        return "empty run"
    actors = sorted({str(a) for a in df["actor"].dropna()})
    strategies = sorted({str(s) for s in df["strategy"].dropna()})
    actor = "/".join(ACTOR_NAMES.get(a, a) for a in actors) or "?"
    return f"{actor} + {'/'.join(strategies) or '?'}"


def solved_by_trial(records: Sequence[Mapping[str, Any]], max_k: int | None = None) -> list[float]:
    """Share of questions with a correct answer at any trial <= k, for k = 1..K.

    A question that stopped early (solved, or errored) keeps its verdict for the
    later trials, as in the paper's curves. K is the run's (logged by the actors as
    ``extra.max_trials``), else its last trial.
    """
    df = trials_frame(records)
    if df.empty:
        return []
    k_max = max_k or max(int(df["trial"].max()), _logged_k(records))
    first_pass = df[df["passed"]].groupby("task_id")["trial"].min()
    n = df["task_id"].nunique()
    return [float((first_pass <= k).sum()) / n for k in range(1, k_max + 1)]


def _logged_k(records: Sequence[Mapping[str, Any]]) -> int:
    """K as the actors logged it (``extra.max_trials``), 0 when absent."""
    ks = [int((r.get("extra") or {}).get("max_trials") or 0) for r in records]
    return max(ks, default=0)


def fixed_after_first_failure(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Of the questions failed at trial 1, how many were answered correctly later.

    The paper reports that its base agents (no memory) never fix a first-trial
    failure on retry; this is that measure for any strategy.
    """
    df = trials_frame(records)
    if df.empty:
        return {"first_failures": 0, "fixed": 0, "share": None, "fixed_at_trial": {}}
    first = df[df["trial"] == 1].set_index("task_id")["passed"]
    failed = set(first[~first].index)
    later = df[(df["trial"] > 1) & df["passed"] & df["task_id"].isin(failed)]
    fixed_at = later.groupby("task_id")["trial"].min()
    return {
        "first_failures": len(failed),
        "fixed": int(fixed_at.size),
        "share": (fixed_at.size / len(failed)) if failed else None,
        "fixed_at_trial": {int(k): int(v) for k, v in fixed_at.value_counts().sort_index().items()},
    }


def breakdown(records: Sequence[Mapping[str, Any]], by: str = "type") -> pd.DataFrame:
    """Per ``type`` or ``level`` group: questions, first-trial accuracy, final accuracy
    (correct at any trial) and mean F1 of the last trial."""
    if by not in ("type", "level"):
        raise ValueError(f"breakdown by `type` or `level`, not {by!r}")
    df = trials_frame(records)
    cols = [by, "questions", "first_trial", "final", "mean_f1_last"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    df[by] = df[by].fillna("unknown")
    per_task = df.groupby("task_id", sort=False).agg(
        group=(by, "first"),
        first_trial=("passed", "first"),
        final=("passed", "any"),
        f1_last=("f1", "last"),
    )
    out = per_task.groupby("group").agg(
        questions=("first_trial", "size"),
        first_trial=("first_trial", "mean"),
        final=("final", "mean"),
        mean_f1_last=("f1_last", "mean"),
    )
    out = out.reset_index().rename(columns={"group": by})
    return out[cols]


def success_by_trial_table(
    curves: Mapping[str, Sequence[float]],
    reference: Mapping[str, Sequence[float]] | None = None,
    reference_prefix: str = "paper: ",
) -> pd.DataFrame:
    """Rows = runs (and reference rows), columns = trial 1..K, values = share solved.

    Runs with different K share one table: the trials a run did not have are blank
    (NaN), not extrapolated.
    """
    rows: dict[str, Sequence[float]] = dict(curves)
    for label, values in (reference or {}).items():
        rows[f"{reference_prefix}{label}"] = values
    k = max((len(v) for v in rows.values()), default=0)
    data = {
        label: [float(v[i]) if i < len(v) else float("nan") for i in range(k)]
        for label, v in rows.items()
    }
    return pd.DataFrame.from_dict(
        data, orient="index", columns=[f"trial {i}" for i in range(1, k + 1)]
    )


def parse_trial_summaries(text: str, n_questions: int | None = None) -> list[float]:
    """Per-trial accuracy from the paper's HotpotQA logs (``hotpotqa_runs/root/...txt``).

    Those logs open each trial with ``Trial summary: Correct: N, Incorrect: M``;
    correct questions are not re-run, so N is cumulative. Pass ``n_questions``
    (100) when the log does not count unfinished (halted) questions as incorrect.
    """
    out = []
    for m in re.finditer(r"Trial summary:\s*Correct:\s*(\d+),\s*Incorrect:\s*(\d+)", text):
        correct, incorrect = int(m.group(1)), int(m.group(2))
        n = n_questions or (correct + incorrect)
        out.append(correct / n if n else 0.0)
    return out


def load_reference(path: str | Path) -> dict[str, list[float]]:
    """Reference curves from a JSON/YAML file ``{label: [share at trial 1, 2, ...]}``."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected an object {{label: [values per trial]}}")
    out: dict[str, list[float]] = {}
    for label, values in data.items():
        if not isinstance(values, list) or not all(isinstance(v, int | float) for v in values):
            raise ValueError(f"{p}: `{label}` must be a list of numbers (share per trial)")
        scale = 100.0 if any(v > 1 for v in values) else 1.0  # percentages or shares
        out[str(label)] = [float(v) / scale for v in values]
    return out


def to_markdown(df: pd.DataFrame, percent: bool = True, index_name: str = "") -> str:
    """A GitHub-flavoured Markdown table (no extra dependency)."""
    if df.empty:
        return "(no data)"

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            if v != v:  # NaN
                return "-"
            return f"{100 * v:.1f}" if percent else f"{v:.3f}"
        return str(v)

    head = [index_name, *map(str, df.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for idx, row in df.iterrows():
        lines.append("| " + " | ".join([str(idx), *(fmt(v) for v in row)]) + " |")
    return "\n".join(lines)


def hotpotqa_report(
    run_dirs: Iterable[str | Path],
    reference: Mapping[str, Sequence[float]] | str | Path | None = None,
) -> str:
    """A Markdown report of HotpotQA runs (one run folder per actor/strategy).

    Sections: success by trial (%) per run with optional reference rows, the share
    of first-trial failures fixed later, and accuracy by question type and level.
    """
    if isinstance(reference, str | Path):
        reference = load_reference(reference)
    runs: dict[str, list[dict[str, Any]]] = {}
    for d in run_dirs:
        records = with_canonical_strategies(load_run_records(Path(d)))  # `none` -> `retry`
        label = run_label(records)
        if label in runs:
            label = f"{label} ({Path(d).name})"
        runs[label] = records
    curves = {label: solved_by_trial(recs) for label, recs in runs.items()}
    parts = [
        "### Success by trial (% of questions, exact match, cumulative)",
        "",
        to_markdown(success_by_trial_table(curves, reference), index_name="run"),
        "",
        "### First-trial failures fixed in later trials",
        "",
        "| run | failed at trial 1 | fixed later | share |",
        "|---|---|---|---|",
    ]
    for label, recs in runs.items():
        f = fixed_after_first_failure(recs)
        share = "-" if f["share"] is None else f"{100 * f['share']:.1f}%"
        parts.append(f"| {label} | {f['first_failures']} | {f['fixed']} | {share} |")
    for by in ("type", "level"):
        parts += ["", f"### By question {by} (%)", ""]
        for label, recs in runs.items():
            table = breakdown(recs, by).set_index(by)
            table["questions"] = table["questions"].astype(int).astype(str)
            parts += [f"{label}:", "", to_markdown(table, index_name=by), ""]
    return "\n".join(parts).rstrip() + "\n"
