"""What the viewer's pages show, built from run logs (the source of truth).

Every number comes from the functions ``reflexion-bench report`` uses: the run summary
from :func:`~reflexion_bench.analysis.report.load_summary`, the 95% intervals from the
report's own group data (:func:`~reflexion_bench.analysis.tables.build_report`'s
``_group_data``), and the paired comparison from the same task verdicts, exact
McNemar test and paired interval (Newcombe's for 0/1 verdicts) as the report's
``paired`` table. Nothing is
recomputed another way.

A :class:`Catalog` holds the run folders being viewed and reloads a run when its log
changes (size or mtime), so a page refreshed during a live run shows the new trials.
Tasks still running (no finished attempt yet, so not in the metrics) are listed as
``in_progress`` with the trials logged so far.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.answer_key import label_text
from reflexion_bench.analysis.metrics import first_to_final, fixes_breaks, hidden_verdict
from reflexion_bench.core.runlog import (
    effective_records,
    iter_run_records,
    run_log_files,
)

# clean_json moved to core/types.py (analysis/compare.py uses it too); kept importable here.
from reflexion_bench.core.types import clean_json as clean_json

DEFAULT_RESAMPLES = 10_000
RUN_FILES = ("config.yaml", "provenance.json")
log = logging.getLogger(__name__)


def dumps(value: Any) -> str:
    return json.dumps(clean_json(value), ensure_ascii=False, default=str, allow_nan=False)


# --------------------------------------------------------------------------- one run


def _self_passed(rec: dict[str, Any]) -> bool | None:
    st = rec.get("self_test")
    if not isinstance(st, dict) or st.get("passed") is None:
        return None
    return bool(st["passed"])


def task_row(
    task_id: str, trials: Sequence[dict[str, Any]], *, in_progress: bool
) -> dict[str, Any]:
    """One line of the run page's task table: verdicts per trial and the filter flags.

    ``fixed``/``broken`` are the report's "fixed/broken from trial 1" (trial-1
    verdict vs the submitted one), ``n_fixes``/``n_breaks`` its "fixes/breaks between
    trials" (:mod:`reflexion_bench.analysis.metrics`); ``self_fp`` marks a trial whose self-tests passed a
    candidate the hidden tests failed (the report's self-test false positive).
    """
    verdicts = [hidden_verdict(r) for r in trials]
    selfs = [_self_passed(r) for r in trials]
    first = verdicts[0] if trials and int(trials[0]["trial"]) == 1 else None
    final = verdicts[-1] if trials else None
    last = trials[-1] if trials else {}
    errored = bool(last.get("error")) and not in_progress
    n_fixes, n_breaks = fixes_breaks(verdicts)
    return {
        "id": task_id,
        "trials": [int(r["trial"]) for r in trials],
        "verdicts": verdicts,
        "self": selfs,
        "final": None if in_progress else final,
        "errored": errored,
        "fixed": not in_progress and first_to_final(first, final) == "fixed",
        "broken": not in_progress and first_to_final(first, final) == "broken",
        "self_fp": any(s is True and v is False for s, v in zip(selfs, verdicts, strict=True)),
        "reflections": sum(1 for r in trials if r.get("reflection")),
        "in_progress": in_progress,
        # For sorting the task table: fixes and breaks between trials (the report's
        # count), tokens of every model call (None when no trial logged its calls).
        "n_fixes": n_fixes,
        "n_breaks": n_breaks,
        "tokens": _tokens(trials),
    }


def _tokens(trials: Sequence[dict[str, Any]]) -> int | None:
    total, seen = 0, False
    for r in trials:
        calls = r.get("model_calls")
        if not isinstance(calls, list):
            continue
        seen = True
        for c in calls:
            if isinstance(c, dict):
                total += int(c.get("prompt_tokens") or 0) + int(c.get("completion_tokens") or 0)
    return total if seen else None


def _diff(prev: str | None, cur: str | None) -> list[list[str]] | None:
    """Line diff of two candidates as [op, line] rows (op: ' ', '-', '+'), from difflib."""
    if prev is None or cur is None:
        return None
    a, b = prev.splitlines(), cur.splitlines()
    rows: list[list[str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [[" ", line] for line in a[i1:i2]]
        else:
            rows += [["-", line] for line in a[i1:i2]]
            rows += [["+", line] for line in b[j1:j2]]
    return rows


_STEP = re.compile(r"^(Thought|Action|Observation)(?: \d+)?:\s?(.*)$")


def transcript(rec: dict[str, Any]) -> list[dict[str, str]] | None:
    """An ALFWorld or HotpotQA trajectory as [{kind, text}] (kinds: task, think, act,
    obs), for reading as a transcript; None for other benchmarks (code shows diffs)."""
    bench = str(rec.get("benchmark") or "")
    text = rec.get("trajectory") or ""
    extra = rec.get("extra") or {}
    if bench == "alfworld":
        alf = extra.get("alfworld") if isinstance(extra, dict) else None
        steps = alf.get("steps") if isinstance(alf, dict) else None
        if isinstance(alf, dict) and isinstance(steps, list) and steps:
            out = [{"kind": "task", "text": str(alf.get("goal") or "")}]
            for step in steps:
                action, obs = str(step[0]), str(step[1]) if len(step) > 1 else ""
                kind = "think" if action.startswith("think:") else "act"
                out.append({"kind": kind, "text": action})
                out.append({"kind": "obs", "text": obs})
            return out
        if not text:
            return None
        out = []
        for line in text.splitlines():
            if line.startswith("> "):
                kind = "think" if line[2:].startswith("think:") else "act"
                out.append({"kind": kind, "text": line[2:]})
            elif out and out[-1]["kind"] == "obs":
                out[-1]["text"] += "\n" + line
            else:
                out.append({"kind": "obs" if out else "task", "text": line})
        return out
    if bench.startswith("hotpot"):
        full = extra.get("full_trajectory") if isinstance(extra, dict) else None
        text = full or text
        if not text:
            return None
        out = []
        kinds = {"Thought": "think", "Action": "act", "Observation": "obs"}
        for line in str(text).splitlines():
            m = _STEP.match(line)
            if m:
                out.append({"kind": kinds[m.group(1)], "text": m.group(2)})
            elif out:
                out[-1]["text"] += "\n" + line
            else:
                out.append({"kind": "task", "text": line})
        return out
    return None


def _self_test_view(st: Any) -> dict[str, Any] | None:
    if not isinstance(st, dict):
        return None
    details = st.get("details") or {}
    results = details.get("results") if isinstance(details, dict) else None
    generated = details.get("generated") if isinstance(details, dict) else None
    return {
        "passed": st.get("passed"),
        "text": st.get("text") or "",
        "results": [
            {"test": r.get("test"), "status": r.get("status"), "output": r.get("output")}
            for r in results or []
            if isinstance(r, dict)
        ],
        "n_tests": details.get("n_tests") if isinstance(details, dict) else None,
        "generated": (generated or {}).get("raw") if isinstance(generated, dict) else None,
    }


def _shard_jobs(folder: Path, jobs: dict[Path, dict[str, Any]]) -> dict[str, Any] | None:
    """The sweep jobs of a sharded experiment's shards (taken out of ``jobs``) as one:
    its overrides with ``shard=*/N``, done when every shard's job is."""
    from reflexion_bench.core.shards import is_shard_set, shard_children

    if not is_shard_set(folder):
        return None
    children = shard_children(folder)
    parts = [j for _, p in children.values() if (j := jobs.pop(p.resolve(), None))]
    if not parts:
        return None
    count = max(c for c, _ in children.values())
    statuses = {str(j.get("status")) for j in parts}
    status = "failed" if "failed" in statuses else "running" if statuses != {"done"} else "done"
    if status == "done" and len(parts) < count:
        status = "running"  # a shard's job has not started yet
    overrides = [o for o in parts[0].get("overrides") or [] if not str(o).startswith("shard=")]
    return {"overrides": [*overrides, f"shard=*/{count}"], "status": status}


def _pass_at_budget(records: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """pass@1 at the per-task token budget the run was given, as the report's strategies
    table reads it (each task's last trial paid for within the budget), beside pass@1 as
    the run ended (which may overshoot by the last trial); None without a budget."""
    from reflexion_bench.analysis.equal_budget import (
        run_budget,
        task_budget_points,
        verdicts_at_budget,
    )

    budget = run_budget(records, "tokens")
    if budget is None or not records:
        return None
    verdicts = verdicts_at_budget(task_budget_points(records, "tokens"), budget)
    known = [bool(v) for v in verdicts.values()]
    return {
        "axis": "tokens",
        "budget": budget,
        # Over every task, an unknown verdict counted as failed (as pass@1 is).
        "pass_at_budget": sum(known) / len(known) if known else None,
    }


def _calls_view(calls: list[Any]) -> list[dict[str, Any]]:
    """The trial's calls for the page, each request in full (the log writes a call as
    what it adds to the previous one of its role: core/calllog.py)."""
    from reflexion_bench.core.calllog import expand_messages

    rows = [c for c in calls if isinstance(c, dict)]
    full = expand_messages(rows)
    return [
        {**{k: c.get(k) for k in _CALL_KEYS}, "messages": m}
        for c, m in zip(rows, full, strict=True)
    ]


_CALL_KEYS = (
    "role",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "cost_usd",
    "cached",
    "temperature",
    "retries",
    "error",
    "finish_reason",
    # The request and reply of every call (newer logs; None in older ones).
    "messages",
    "reply",
    "messages_chars",
    "temperature_sent",
    "seed_sent",
)


def episode_text(rec: dict[str, Any], steps: list[dict[str, str]] | None = None) -> str | None:
    """What a trial *did* in an ALFWorld or HotpotQA episode: its actions and thoughts,
    one per line (observations left out: they follow from the actions). Two trials'
    episodes are compared by these lines; their outcome texts ("not won: step limit
    reached") say nothing of how they differ. None for code benchmarks. ``steps``: the
    record's :func:`transcript`, where the caller has it already."""
    if steps is None:
        steps = transcript(rec)
    if steps is None:
        return None
    return "\n".join(s["text"] for s in steps if s["kind"] in ("act", "think"))


# The in-loop evaluators whose verdict *is* the final score's (same signal, same rule):
# ALFWorld's reads the game's ``won`` (so does its scorer), HotpotQA's paper evaluator
# exact match with the gold answer (its scorer's ``passed``). core/answer_key.py.
_SAME_SIGNAL = {
    "alfworld": ("evaluator.env_success", "the game's success"),
    "hotpotqa": ("evaluator.gold_answer", "exact match with the gold answer"),
}
_IN_LOOP_TITLE = {
    "alfworld": "Game signal (in the loop: the evaluator sees the game's success)",
    "hotpotqa": "Exact match with the gold answer (in the loop: the evaluator is told "
    "whether the answer matches)",
}


def _loop_kind(rec: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """``(kind, uses)``: ``alfworld``/``hotpotqa`` where the paper's in-loop evaluator
    judges by the scorer's own signal, None for the code benchmarks (the model's own
    tests); the trial's logged ``answer_key_uses`` (None where the log lacks it)."""
    bench = str(rec.get("benchmark") or "")
    kind = "alfworld" if bench == "alfworld" else "hotpotqa" if bench.startswith("hotpot") else None
    uses = rec.get("answer_key_uses")
    return kind, uses if isinstance(uses, dict) else None


def _signal_titles(rec: dict[str, Any]) -> tuple[str, str]:
    """The headings of a trial's in-loop verdict and of its score, saying truthfully
    what the loop saw. Read from the trial's logged ``answer_key_uses`` (every read of
    the answer key by a loop role; core/answer_key.py): ALFWorld's evaluator reads the
    game's own success and HotpotQA's paper evaluator the gold answer, the very signal
    their scorers judge by, so their score is no hidden verdict but the same one the
    loop saw; the code benchmarks' self-tests are the model's own and their hidden
    tests never reach the loop. A log without the field (imported) says so."""
    kind, uses = _loop_kind(rec)
    logged = uses is not None
    sources = sorted(uses or {})
    if kind is None:
        in_loop = "Self-tests (in the loop)"
        if sources:
            score = f"Score (the answer key, which the loop also read: {', '.join(sources)})"
        elif logged:
            score = "Hidden tests (never shown to the loop)"
        else:
            score = "Hidden tests (whether the loop saw them is not in this log)"
        return in_loop, score
    source, what = _SAME_SIGNAL[kind]
    if source in sources:
        in_loop = _IN_LOOP_TITLE[kind]
        score = (
            f"Score: {what}, the same signal the loop saw "
            f"(read in the loop by {', '.join(sources)})"
        )
    elif not logged:
        in_loop = f"{_IN_LOOP_TITLE[kind].split(' (')[0]} (in the loop in the paper's protocol)"
        score = (
            f"Score: {what} (an imported log: it does not record what the loop saw; "
            "in the paper's protocol the loop is told this verdict)"
        )
    else:
        in_loop = "In-loop evaluation (it did not read the answer key)"
        score = (
            f"Score: {what} (the answer key, which the loop also read: {', '.join(sources)})"
            if sources
            else f"Score: {what} (never shown to the loop)"
        )
    return in_loop, score


def _signal_labels(rec: dict[str, Any]) -> tuple[str, str]:
    """Short verdict labels (badges): ``self-tests``/``hidden`` only where the loop's
    verdict is the model's own tests and the score is hidden from it."""
    kind, uses = _loop_kind(rec)
    code = kind is None
    hidden = code and not uses
    return ("self-tests" if code else "in loop"), ("hidden" if hidden else "score")


def trial_view(rec: dict[str, Any], prev: dict[str, Any] | None) -> dict[str, Any]:
    """Everything the task page shows of one trial."""
    hidden_raw = rec.get("hidden")
    hidden: dict[str, Any] | None = hidden_raw if isinstance(hidden_raw, dict) else None
    extra_raw = rec.get("extra")
    extra: dict[str, Any] = extra_raw if isinstance(extra_raw, dict) else {}
    calls = rec.get("model_calls")
    steps = transcript(rec)
    episode = episode_text(rec, steps)
    in_loop_title, score_title = _signal_titles(rec)
    in_loop_label, score_label = _signal_labels(rec)
    if prev is None:
        diff = None
    elif episode is not None:
        diff = _diff(episode_text(prev), episode)
    else:
        diff = _diff(prev.get("candidate"), rec.get("candidate"))
    return {
        "trial": int(rec["trial"]),
        "final": bool(rec.get("final")),
        "attempt_id": rec.get("attempt_id"),
        "candidate": rec.get("candidate"),
        "diff": diff,
        # Episodes (ALFWorld, HotpotQA) are compared by their actions, code by its text.
        "diff_of": "episode" if episode is not None else "candidate",
        "episode": episode,
        "in_loop_title": in_loop_title,
        "score_title": score_title,
        "in_loop_label": in_loop_label,
        "score_label": score_label,
        "answer_key_uses": rec.get("answer_key_uses"),
        "self_test": _self_test_view(rec.get("self_test")),
        "reflection": rec.get("reflection"),
        "memory_shown": rec.get("memory_shown"),
        "hidden": None
        if hidden is None
        else {
            "passed": hidden_verdict(rec),
            "status": hidden.get("status"),
            "detail": hidden.get("detail") or "",
        },
        "verdict": hidden_verdict(rec),
        "logged_verdict": extra.get("logged_hidden_passed"),
        "calls": None if calls is None else _calls_view(calls),
        "wall_time_s": rec.get("wall_time_s"),
        "error": rec.get("error"),
        "stopped": extra.get("stopped"),
        "missing": extra.get("missing") or [],
        "transcript": steps,
        "trajectory": None if steps is not None else rec.get("trajectory"),
        # What explains a trial (issue 33): the actor's request, the extraction outcome,
        # why the loop stopped and against which budget, the temperature sampled at.
        "prompt": _prompt_view(rec.get("prompt")),
        "extraction": _extraction_view(extra),
        "stop_reason": extra.get("stop_reason"),
        "budget_spent": extra.get("budget_spent")
        if isinstance(extra.get("budget_spent"), dict)
        else None,
        "budget": extra.get("budget") if isinstance(extra.get("budget"), dict) else None,
        "temperature": extra.get("actor_temperature"),
        "raw_reply": rec.get("trajectory"),
    }


def _prompt_view(prompt: Any) -> list[dict[str, str]] | None:
    """The actor's request as logged, as [{role, content}] (a plain string is one user
    message); None when the log has no prompt."""
    if prompt is None:
        return None
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if isinstance(prompt, list):
        out = []
        for m in prompt:
            if isinstance(m, dict):
                out.append(
                    {"role": str(m.get("role") or "?"), "content": str(m.get("content") or "")}
                )
            else:
                out.append({"role": "?", "content": str(m)})
        return out
    return [{"role": "?", "content": str(prompt)}]


_NO_CODE = "no code found in the reply"


def _extraction_view(extra: dict[str, Any]) -> dict[str, Any] | None:
    """How the candidate was taken from the reply: the method (``fenced``, ``raw``,
    ``body``; ``none`` when the harness inserted a placeholder that raises), its notes,
    and for a placeholder the outcome in words (e.g. "no code found in the reply")."""
    kind = extra.get("extraction")
    notes = [str(n) for n in extra.get("extraction_notes") or []]
    if kind is None and not notes:
        return None
    placeholder = kind == "none"
    outcome = None
    if placeholder:
        why = notes[-1] if notes else ""
        outcome = _NO_CODE if "no code found" in why else (why or "no candidate extracted")
    return {"method": kind, "notes": notes, "placeholder": placeholder, "outcome": outcome}


def task_view(
    task_id: str, trials: Sequence[dict[str, Any]], *, in_progress: bool
) -> dict[str, Any]:
    ordered = sorted(trials, key=lambda r: int(r["trial"]))
    views = [trial_view(rec, ordered[i - 1] if i else None) for i, rec in enumerate(ordered)]
    return {
        "id": task_id,
        "benchmark": ordered[0].get("benchmark") if ordered else None,
        "in_progress": in_progress,
        "row": task_row(task_id, ordered, in_progress=in_progress),
        "trials": views,
    }


def _search_text(trials: Iterable[dict[str, Any]]) -> str:
    parts: list[str] = []
    for r in trials:
        for key in ("candidate", "reflection", "trajectory", "error"):
            if r.get(key):
                parts.append(str(r[key]))
        for key in ("self_test", "hidden"):
            part = r.get(key)
            if isinstance(part, dict):
                parts.append(str(part.get("text") or part.get("detail") or ""))
    return "\n".join(parts).lower()


@dataclass
class RunView:
    """One run folder, loaded from its log."""

    path: Path
    name: str
    records: list[dict[str, Any]]
    """Effective trial records (what every metric counts)."""
    running: dict[str, list[dict[str, Any]]]
    """Tasks without a finished attempt: the newest attempt's trials so far."""
    summary: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    _intervals: dict[str, Any] | None = None
    _by_task: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _search: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for r in self.records:
            self._by_task.setdefault(str(r["task_id"]), []).append(r)

    @property
    def task_ids(self) -> list[str]:
        return [*self._by_task, *(t for t in self.running if t not in self._by_task)]

    def trials_of(self, task_id: str) -> tuple[list[dict[str, Any]], bool] | None:
        if task_id in self._by_task:
            return self._by_task[task_id], False
        if task_id in self.running:
            return self.running[task_id], True
        return None

    def task(self, task_id: str) -> dict[str, Any] | None:
        found = self.trials_of(task_id)
        if found is None:
            return None
        trials, running = found
        return task_view(task_id, trials, in_progress=running)

    def search(self, query: str) -> list[str]:
        """Task ids whose id or text (candidates, reflections, feedback, verdict details,
        trajectories) contains ``query``, case-insensitively."""
        q = query.lower().strip()
        if not q:
            return self.task_ids
        out = []
        for tid in self.task_ids:
            if q in tid.lower():
                out.append(tid)
                continue
            if tid not in self._search:
                found = self.trials_of(tid)
                self._search[tid] = _search_text(found[0] if found else [])
            if q in self._search[tid]:
                out.append(tid)
        return out

    def rows(self) -> list[dict[str, Any]]:
        out = [task_row(t, trs, in_progress=False) for t, trs in self._by_task.items()]
        out += [
            task_row(t, trs, in_progress=True)
            for t, trs in self.running.items()
            if t not in self._by_task
        ]
        return out

    def intervals(self) -> dict[str, Any]:
        """The report's 95% intervals (first try, pass@1, pass@1 over finished tasks, the
        curves: Wilson for one run's 0/1 verdicts, the bootstrap over tasks for means over
        seeds), computed on first use: they are the slow part of a run page (the group
        data behind them), so pages show the estimates first."""
        if self._intervals is None:
            self._intervals = _intervals(self, self.n_resamples, self.seed)
        return self._intervals

    def overview(self, *, with_intervals: bool = False) -> dict[str, Any]:
        """One row of the sweep page (estimates; with their intervals if asked)."""
        s = self.summary
        iv = (
            self.intervals()
            if with_intervals
            else {
                "first_try": {"estimate": s.get("first_try")},
                "final": {"estimate": s.get("final")},
                "final_finished": {"estimate": s.get("final_finished")},
                "success_at_trial": [{"estimate": v} for v in s.get("success_at_trial") or []],
                "solved_by_trial": [{"estimate": v} for v in s.get("solved_by_trial") or []],
            }
        )
        return {
            "name": self.name,
            "path": str(self.path),
            "benchmark": s.get("benchmark"),
            "strategy": s.get("strategy"),
            "model": s.get("model"),
            "n_tasks": s.get("n_tasks", 0),
            "running": len([t for t in self.running if t not in self._by_task]),
            "planned": self.planned(),
            "final": iv.get("final"),
            "first_try": iv.get("first_try"),
            "final_finished": iv.get("final_finished"),
            "fixes": s.get("fixes"),
            "breaks": s.get("breaks"),
            "first_to_final": s.get("first_to_final"),
            "errored_tasks": s.get("errored_tasks"),
            "totals": s.get("totals"),
            "per_task_mean": s.get("per_task_mean"),
            "answer_key": label_text(s["answer_key"]) if s.get("answer_key") else None,
            "imported": bool(self.meta.get("import")),
            "shards": s.get("shards"),
            "at_budget": s.get("at_budget"),
            "intervals": with_intervals,
            "success_at_trial": iv.get("success_at_trial"),
            "solved_by_trial": iv.get("solved_by_trial"),
        }

    def page(self, *, with_intervals: bool = False) -> dict[str, Any]:
        """The run page's data: summary, curve, and the task table (no trial contents:
        a task's trials are loaded when it is opened)."""
        return {
            **self.overview(with_intervals=with_intervals),
            "summary": self.summary,
            "import": self.meta.get("import"),
            "tasks": self.rows(),
            "files": self.files(),
            # Trials with a self-test result: none (an imported paper log without them,
            # a strategy that writes none) makes the confusion counts unknown, not zeros.
            "self_tests_logged": sum(1 for r in self.records if r.get("self_test") is not None),
        }

    def planned(self) -> int | None:
        """The tasks the run's latest session was asked to finish (``tasks_planned`` in
        ``provenance.json``), so that a live run reads "12 of 164"; None where the
        provenance does not say (older or imported runs). A sharded run sums its shards."""
        from reflexion_bench.core.shards import run_parts
        from reflexion_bench.runner.provenance import read_provenance

        total = 0
        for part in run_parts(self.path):
            prov = read_provenance(part)
            planned = prov.get("tasks_planned") if prov else None
            if not isinstance(planned, int):
                return None
            total += planned
        return total

    def files(self) -> dict[str, str | None]:
        """The run folder's ``config.yaml`` and ``provenance.json`` as text (secrets are
        masked when they are written); None when absent. Only these two names, only in
        the run folder itself."""
        out: dict[str, str | None] = {}
        for name in RUN_FILES:
            p = self.path / name
            try:
                out[name] = p.read_text(encoding="utf-8") if p.is_file() else None
            except (OSError, UnicodeDecodeError) as exc:
                out[name] = f"(unreadable: {exc})"
        return out


def _running_tasks(raw: list[dict[str, Any]], done: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Per unfinished task, the trials of its newest attempt (a live run's progress)."""
    newest: dict[str, str] = {}
    trials: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in raw:
        if r.get("type", "trial") != "trial":
            continue
        tid = str(r["task_id"])
        if tid in done:
            continue
        key = (tid, str(r.get("attempt_id", "")))
        newest[tid] = key[1]
        trials.setdefault(key, []).append(r)
    return {
        tid: sorted(trials[(tid, att)], key=lambda r: int(r["trial"]))
        for tid, att in newest.items()
    }


def load_run_view(
    path: Path, name: str, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> RunView:
    """Load a run folder: its effective records, summary and intervals as the report
    computes them, and the trials of tasks still running."""
    from reflexion_bench.analysis.alfworld import summary_section
    from reflexion_bench.analysis.answer_key import run_answer_key
    from reflexion_bench.analysis.metrics import summarize

    raw = list(iter_run_records(path))
    records = effective_records(raw)
    # As report.load_summary, from the records already read (one pass over the log).
    summary = summarize(records)
    from reflexion_bench.core.shards import run_parts, shard_status

    parts = run_parts(path)
    summary["answer_key"] = run_answer_key(records, parts)
    if parts != [path]:
        summary["shards"] = shard_status(path).to_dict()
    at_budget = _pass_at_budget(records)
    if at_budget is not None:
        summary["at_budget"] = at_budget
    section = summary_section(records)
    if section is not None:
        summary["alfworld"] = section
    meta: dict[str, Any] = {}
    manifest = path / "import.json"
    if manifest.is_file():
        try:
            meta["import"] = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            meta["import"] = {"error": f"unreadable import.json: {exc}"}
    done = {str(r["task_id"]) for r in records}
    return RunView(
        path=path,
        name=name,
        records=records,
        running=_running_tasks(raw, done),
        summary=summary,
        meta=meta,
        n_resamples=n_resamples,
        seed=seed,
    )


def _intervals(view: RunView, n_resamples: int, seed: int) -> dict[str, Any]:
    """The intervals of the report's group data for this run alone."""
    from reflexion_bench.analysis.runs import Group, Run
    from reflexion_bench.analysis.tables import _group_data

    if not view.records:
        return {}
    run = Run(path=view.path, records=view.records, summary=view.summary)
    bench, strategy, model = run.key
    group = Group(bench, strategy, model, runs=[run], label=view.name, records=view.records)
    group.summary = view.summary
    data = _group_data(group, n_resamples=n_resamples, seed=seed)
    keys = ("first_try", "final", "final_finished", "success_at_trial", "solved_by_trial")
    cleaned: dict[str, Any] = clean_json({k: data.get(k) for k in keys})
    return cleaned


# --------------------------------------------------------------------------- two runs


def compare(
    a: RunView, b: RunView, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """Two runs task by task: the report's paired comparison (final verdicts on the
    tasks both runs finished with a known verdict: exact McNemar, the difference with
    the interval the report's tables print, Newcombe's for 0/1 verdicts) and the tasks
    where the two differ."""
    from reflexion_bench.analysis.runs import Group, Run
    from reflexion_bench.analysis.seeds import task_verdicts as _task_verdicts
    from reflexion_bench.analysis.stats import mcnemar_exact, paired_difference_interval

    def verdicts(v: RunView) -> dict[str, tuple[bool | None, bool | None, str | None]]:
        run = Run(path=v.path, records=v.records, summary=v.summary)
        return _task_verdicts(Group(*run.key, runs=[run], records=v.records))

    va, vb = verdicts(a), verdicts(b)
    common = [t for t in va if t in vb and va[t][1] is not None and vb[t][1] is not None]
    out: dict[str, Any] = {
        "a": a.overview(),
        "b": b.overview(),
        "n_common": len(common),
        "only_in_a": [t for t in va if t not in vb],
        "only_in_b": [t for t in vb if t not in va],
        "unknown": [t for t in va if t in vb and t not in common],
        "differ": [
            {"id": t, "a": va[t][1], "b": vb[t][1], "a_first": va[t][0], "b_first": vb[t][0]}
            for t in common
            if va[t][1] != vb[t][1]
        ],
        "mcnemar": None,
        "diff": None,
    }
    if common:
        xa = [bool(va[t][1]) for t in common]
        xb = [bool(vb[t][1]) for t in common]
        out["final_a"] = sum(xa) / len(xa)
        out["final_b"] = sum(xb) / len(xb)
        out["mcnemar"] = mcnemar_exact(xa, xb).to_dict()
        out["diff"] = paired_difference_interval(
            xa, xb, n_resamples=n_resamples, seed=seed
        ).to_dict()
    cleaned: dict[str, Any] = clean_json(out)
    return cleaned


# --------------------------------------------------------------------------- many runs


def series_style() -> dict[str, list[str]]:
    """The report's figure colours and markers (analysis/plots.py PALETTE, MARKERS),
    for the viewer's overlay of run curves: series i gets colour i and marker i."""
    from reflexion_bench.analysis.plots import MARKERS, PALETTE

    return {"palette": list(PALETTE), "markers": list(MARKERS)}


def _log_stamp(path: Path) -> tuple[int, int]:
    # A sharded run changes when any shard's log does (or a shard appears).
    stats = [p.stat() for p in run_log_files(path) if p.exists()]
    return max((st.st_mtime_ns for st in stats), default=0), sum(st.st_size for st in stats)


class Catalog:
    """The run folders being viewed; a run is (re)loaded when its log changed."""

    def __init__(
        self, paths: Sequence[str | Path], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
    ) -> None:
        from reflexion_bench.analysis.runs import find_run_dirs

        self.paths = [Path(p) for p in paths]
        self.dirs = find_run_dirs(self.paths)
        self.n_resamples = n_resamples
        self.seed = seed
        self.names = _names(self.dirs)
        self.slugs = _slugs(self.dirs)
        self._cache: dict[int, tuple[tuple[int, int], RunView]] = {}
        self._compare: dict[tuple[int, int, tuple[int, int], tuple[int, int]], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.dirs)

    def run(self, i: int) -> RunView:
        if not 0 <= i < len(self.dirs):
            raise KeyError(f"no run {i} (0..{len(self.dirs) - 1})")
        stamp = _log_stamp(self.dirs[i])
        with self._lock:
            hit = self._cache.get(i)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        view = load_run_view(
            self.dirs[i], self.names[i], n_resamples=self.n_resamples, seed=self.seed
        )
        with self._lock:
            self._cache[i] = (stamp, view)
        return view

    def refresh(self) -> None:
        """Add run folders that appeared since (a sweep's jobs start one after another);
        the runs already listed keep their ids."""
        from reflexion_bench.analysis.runs import find_run_dirs

        try:
            found = find_run_dirs(self.paths)
        except FileNotFoundError:
            return
        known = {d.resolve() for d in self.dirs}
        new = [d for d in found if d.resolve() not in known]
        if new:
            with self._lock:
                self.dirs = [*self.dirs, *new]
                self.names = _names(self.dirs)
                self.slugs = _slugs(self.dirs)

    def jobs(self) -> dict[Path, dict[str, Any]]:
        """Sweep jobs from the sweep indexes (``index.jsonl``) under the viewed folders:
        each job folder's newest record (overrides, status, error)."""
        from reflexion_bench.runner.sweep import INDEX_NAME, read_index

        out: dict[Path, dict[str, Any]] = {}
        for root in self.paths:
            if not root.is_dir():
                continue
            for index in sorted(root.rglob(INDEX_NAME)):
                for rec in read_index(index.parent):
                    if rec.get("job_dir"):
                        out[Path(str(rec["job_dir"])).resolve()] = rec
        return out

    def index(self, *, with_intervals: bool = False) -> dict[str, Any]:
        self.refresh()
        jobs = self.jobs()
        runs = []
        for i, d in enumerate(self.dirs):
            row = {
                "id": i,
                "slug": self.slugs[i],
                **self.run(i).overview(with_intervals=with_intervals),
            }
            job = jobs.pop(d.resolve(), None)
            if job is None:
                job = _shard_jobs(d, jobs)
            if job is not None:
                row["overrides"] = job.get("overrides") or []
                row["job_status"] = job.get("status")
            runs.append(row)
        # Jobs with no run log yet (just started) or none at all (failed at start).
        pending = [
            {
                "job_dir": str(k),
                "status": v.get("status"),
                "overrides": v.get("overrides") or [],
                "error": v.get("error"),
            }
            for k, v in jobs.items()
        ]
        return {
            "runs": runs,
            "jobs_without_log": pending,
            "configurations": self.configurations(),
            # The overlay of run curves draws each series as the report's figures do.
            "series_style": series_style(),
        }

    def configurations(self) -> list[dict[str, Any]]:
        """The sweep page's seeds table: each configuration run under several seeds
        (``report``'s ``seeds`` rows, the same function), with the ids of its runs."""
        from reflexion_bench.analysis.runs import Run, group_runs, read_config, seed_sets
        from reflexion_bench.analysis.seeds import seed_row

        views = {d.resolve(): i for i, d in enumerate(self.dirs)}
        runs = []
        for i, d in enumerate(self.dirs):
            v = self.run(i)
            runs.append(Run(path=d, records=v.records, summary=v.summary, config=read_config(d)))
        sets = [st for st in seed_sets(group_runs(runs)) if st.n_seeds > 1]
        out = []
        for st in sets:
            row = seed_row(st, n_resamples=self.n_resamples, seed=self.seed)
            row["run_ids"] = [views[r.path.resolve()] for g in st.members for r in g.runs]
            out.append(row)
        return out

    def run_page(self, i: int, *, with_intervals: bool = False) -> dict[str, Any]:
        page = self.run(i).page(with_intervals=with_intervals)  # KeyError: no run i
        return {"id": i, "slug": self.slugs[i], **page}

    def routes(self) -> list[dict[str, Any]]:
        """Each run's id, URL name (``#/run/<slug>``) and display name, without loading
        any log: the page maps a stable URL to the run it names."""
        self.refresh()
        return [
            {"id": i, "slug": s, "name": n}
            for i, (s, n) in enumerate(zip(self.slugs, self.names, strict=True))
        ]

    def intervals(self, i: int) -> dict[str, Any]:
        return {"id": i, **self.run(i).intervals()}

    def runs_with_task(self, task_id: str) -> list[int]:
        """The ids of the viewed runs that have ``task_id`` (finished or still running):
        the task page offers to put the task beside it in those of its benchmark."""
        self.refresh()
        return [i for i in range(len(self.dirs)) if self.run(i).trials_of(task_id) is not None]

    def warm(self) -> None:
        """Load every run and its intervals (the server does this in the background at
        start, so the first page a user opens is ready)."""
        for i in range(len(self.dirs)):
            try:
                self.run(i).intervals()
            except (OSError, ValueError) as exc:  # shown again when the page asks
                log.warning("view: cannot load %s: %s", self.dirs[i], exc)

    def compare(self, i: int, j: int) -> dict[str, Any]:
        a, b = self.run(i), self.run(j)
        key = (i, j, _log_stamp(a.path), _log_stamp(b.path))
        with self._lock:
            if key in self._compare:
                return self._compare[key]
        out = {"ids": [i, j], **compare(a, b, n_resamples=self.n_resamples, seed=self.seed)}
        with self._lock:
            self._compare[key] = out
        return out


def _names(dirs: Sequence[Path]) -> list[str]:
    """Short distinct names: each folder's path below the folders' common parent."""
    if not dirs:
        return []
    resolved = [d.resolve() for d in dirs]
    if len(resolved) == 1:
        return [resolved[0].name]
    parts = [p.parts for p in resolved]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    return ["/".join(p[common:]) for p in parts]


def _slugs(dirs: Sequence[Path]) -> list[str]:
    """URL names of runs: each run folder's name; runs sharing a name get as many parent
    folders as make them distinct (``a/reflexion``, ``b/reflexion``), and a name still
    shared (the same folder given twice) gets ``~2``, ``~3`` in order. Deterministic for
    a given list of folders, whatever the others are called."""
    parts = [d.resolve().parts for d in dirs]
    out: list[str] = []
    for p in parts:
        depth = 1
        while True:
            mine = "/".join(p[-depth:])
            clash = [q for q in parts if q != p and "/".join(q[-depth:]) == mine]
            if not clash or depth >= len(p):
                break
            depth += 1
        out.append(mine.lstrip("/") or "run")
    seen: dict[str, int] = {}
    for n, slug in enumerate(out):
        seen[slug] = seen.get(slug, 0) + 1
        if seen[slug] > 1:
            out[n] = f"{slug}~{seen[slug]}"
    return out
