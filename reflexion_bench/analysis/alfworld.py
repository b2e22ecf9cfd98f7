"""ALFWorld failure analysis and the paper's Figure 3 from run-log records.

Every failed episode is put in one of the paper's two classes by explicit rules over
the episode the actor logged (``extra["alfworld"]``: actions, the game's answers, and
the goal's object and receptacle types):

``hallucination``: the agent acts on, or claims, a state of the world it does not have.
Any one of these rules fires it:

- ``acts_on_unheld_object``: a put / heat / cool / clean command on an object the agent
  is not holding (the episode's own pick-ups and put-downs say what it holds), or a
  slice with a tool it is not holding;
- ``takes_unseen_object``: ``take X from Y`` where X appeared in no earlier answer;
- ``false_claim``: a ``think:`` that says the agent holds / found / cleaned / heated /
  cooled an object (``I have mug 1``, ``now I take a mug (1)``, ``mug 1 is clean``) when
  no earlier answer supports it (only object types that occur in the episode count, so
  "I have to ..." is no claim);
- ``placed_untransformed``: in a clean / heat / cool task, an object of the goal's type
  put into a receptacle of the goal's type without having been cleaned / heated /
  cooled: the agent believed a sub-goal done that was not;
- ``examined_wrong_object``: in an examine task, the lamp turned on while the agent holds
  an object, none of the goal's type (it took the held object for the goal's). Turning
  the lamp on with empty hands is only a plan in the wrong order, not a hallucination.

``inefficient_planning``: every other failed episode: loops (the repeat heuristic
stopped it), the step limit, wandering. The episode's ``reasons`` say which
(``repeated_action``, ``step_limit``, ``revisits`` (a place visited 3+ times),
``goal_object_never_seen``, ``invalid_actions``).

Errored trials (a crashed game or model) are counted apart, never as either class, and
so are failed records with no episode to read (``unclassified``: the paper's imported
logs hold only the verdict).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.environments.alfworld.text import NOTHING, put_target

HALLUCINATION = "hallucination"
INEFFICIENT = "inefficient_planning"
LABELS = (HALLUCINATION, INEFFICIENT)

_PICKUP = re.compile(r"^You pick up the (.+?) from the (.+?)\.$")
_PLACED = re.compile(r"^You (?:move the (.+?) to|put the (.+?) in/on) the (.+?)\.$")
_CHANGED = re.compile(r"^You (clean|heat|cool) the (.+?) using the (.+?)\.$")
_LAMP_ON = re.compile(r"^You turn on the (.+?)\.$")
_TAKE = re.compile(r"^take (.+?) from (.+)$")
_USE_WITH = re.compile(r"^(heat|cool|clean) (.+?) with (.+)$")
_SLICE = re.compile(r"^slice (.+?) with (.+)$")
_GO = re.compile(r"^go to (.+)$")
_ENTITY = re.compile(r"\b([a-z]+) (\d+)\b")

_STATE_OF = {"clean": "clean", "heat": "hot", "cool": "cool"}
_TASK_NEEDS = {"clean": "clean", "heat": "hot", "cool": "cool"}
# A claim: "<verb phrase> [a|an|the|some] <type>[ (<n>)| <n>]".
_CLAIM_HOLD = re.compile(
    r"\b(?:i (?:now )?(?:have|hold|am holding|am carrying|carry|took|picked up|got)"
    r"|now i (?:take|have|hold|pick up))"
    r" (?:an? |the |some |one )?([a-z]+)(?: \(?(\d+)\)?)?"
)
# Bare "I find" is a plan ("first I find the book and take it"), not a claim.
_CLAIM_FOUND = re.compile(
    r"\b(?:now i find|i (?:now )?(?:found|see|have found))"
    r" (?:an? |the |some |one )?([a-z]+)(?: \(?(\d+)\)?)?"
)
_CLAIM_STATE_VERB = re.compile(
    r"\b(?:now i|i (?:have )?(?:now )?)(clean(?:ed)?|heat(?:ed)?|cool(?:ed)?)"
    r" (?:an? |the |some |one )?([a-z]+)(?: \(?(\d+)\)?)?"
)
_CLAIM_STATE_IS = re.compile(r"\b([a-z]+) (\d+) is (?:now )?(clean|hot|cool)\b")


@dataclass
class Classification:
    """The class of one episode and the evidence for it."""

    label: str
    """``success``, ``hallucination``, ``inefficient_planning``, ``error``, or
    ``unclassified`` (a failed record without an episode, e.g. an imported paper log)."""
    hits: list[dict[str, Any]] = field(default_factory=list)
    """Hallucination rules that fired: ``{"rule", "step", "detail"}`` (step is 1-based)."""
    reasons: list[str] = field(default_factory=list)
    """What made the episode inefficient (also filled for hallucinations)."""


def _base(verb: str) -> str:
    return verb[:-2] if verb.endswith("ed") else verb


def classify_episode(info: Mapping[str, Any]) -> Classification:
    """Classify one episode record (the actor's ``extra["alfworld"]``)."""
    if info.get("won"):
        return Classification("success")
    steps: Sequence[Sequence[Any]] = info.get("steps") or []
    type_key = str(info.get("type_key") or "")
    goal_obj = str(info.get("object") or "")
    goal_recep = str(info.get("receptacle") or "")
    held: set[str] = set()
    seen: set[str] = set()
    changed: dict[str, set[str]] = {}
    visits: Counter[str] = Counter()
    hits: list[dict[str, Any]] = []

    def hit(rule: str, i: int, detail: str) -> None:
        hits.append({"rule": rule, "step": i + 1, "detail": detail})

    def entity_types() -> set[str]:
        return {e.split()[0] for e in seen | held} | ({goal_obj} if goal_obj else set())

    for i, row in enumerate(steps):
        action, obs = str(row[0]), str(row[1])
        a = action.lower().strip()
        if a.startswith("think:"):
            _check_claims(a[6:], i, held, seen, changed, entity_types(), hit)
            continue
        failed = obs.strip() == NOTHING
        m_take = _TAKE.match(a)
        target = put_target(a)
        m_use = _USE_WITH.match(a)
        m_slice = _SLICE.match(a)
        if m_take:
            obj = m_take.group(1).strip()
            if obj not in seen and obj not in held:
                hit("takes_unseen_object", i, f"`{action}`: {obj} was never seen")
        elif target is not None:
            obj = target[0]
            if obj not in held:
                hit("acts_on_unheld_object", i, f"`{action}` while not holding {obj}")
        elif m_use:
            obj = m_use.group(2).strip()
            if obj not in held:
                hit("acts_on_unheld_object", i, f"`{action}` while not holding {obj}")
        elif m_slice:
            tool = m_slice.group(2).strip()
            if tool not in held:
                hit("acts_on_unheld_object", i, f"`{action}` while not holding {tool}")
        m_go = _GO.match(a)
        if m_go and not failed:
            visits[m_go.group(1).strip()] += 1
        # Then update the world as the game's answer tells it.
        for line in obs.splitlines():
            line = line.strip()
            m = _PICKUP.match(line)
            if m:
                held.add(m.group(1))
            m = _PLACED.match(line)
            if m:
                obj = m.group(1) or m.group(2)
                held.discard(obj)
                recep = m.group(3)
                needs = _TASK_NEEDS.get(type_key)
                if (
                    needs
                    and obj.split()[0] == goal_obj
                    and recep.split()[0] == goal_recep
                    and needs not in changed.get(obj, set())
                ):
                    hit(
                        "placed_untransformed",
                        i,
                        f"put {obj} in {recep} without making it {needs}",
                    )
            m = _CHANGED.match(line)
            if m:
                changed.setdefault(m.group(2), set()).add(_STATE_OF[m.group(1)])
            m = _LAMP_ON.match(line)
            if (
                m
                and type_key == "examine"
                and goal_obj
                and held
                and not any(h.split()[0] == goal_obj for h in held)
            ):
                hit(
                    "examined_wrong_object",
                    i,
                    f"turned on {m.group(1)} holding {', '.join(sorted(held))}, not a {goal_obj}",
                )
        seen |= {f"{t} {n}" for t, n in _ENTITY.findall(obs.lower())}

    reasons = []
    stop = info.get("stop_reason")
    if stop in ("repeated_action", "step_limit"):
        reasons.append(str(stop))
    if visits and max(visits.values()) >= 3:
        reasons.append("revisits")
    if goal_obj and not any(e.split()[0] == goal_obj for e in seen):
        reasons.append("goal_object_never_seen")
    if int(info.get("invalid_actions", 0)) > 0:
        reasons.append("invalid_actions")
    label = HALLUCINATION if hits else INEFFICIENT
    return Classification(label, hits, reasons)


def _check_claims(
    thought: str,
    i: int,
    held: set[str],
    seen: set[str],
    changed: Mapping[str, set[str]],
    types: set[str],
    hit: Any,
) -> None:
    text = thought.lower()

    def known(kind: str, number: str | None, pool: set[str]) -> bool:
        if number:
            return f"{kind} {number}" in pool
        return any(e.split()[0] == kind for e in pool)

    for m in _CLAIM_HOLD.finditer(text):
        kind, number = m.group(1), m.group(2)
        if kind in types and not known(kind, number, held):
            hit("false_claim", i, f"claims to hold {kind}{' ' + number if number else ''}")
    for m in _CLAIM_FOUND.finditer(text):
        kind, number = m.group(1), m.group(2)
        if kind in types and not known(kind, number, seen | held):
            hit("false_claim", i, f"claims to have found {kind}{' ' + number if number else ''}")
    for m in _CLAIM_STATE_VERB.finditer(text):
        state = _STATE_OF[_base(m.group(1))]
        kind, number = m.group(2), m.group(3)
        if kind in types and not _has_state(changed, kind, number, state):
            hit("false_claim", i, f"claims {kind}{' ' + number if number else ''} is {state}")
    for m in _CLAIM_STATE_IS.finditer(text):
        kind, number, state = m.group(1), m.group(2), m.group(3)
        if kind in types and not _has_state(changed, kind, number, state):
            hit("false_claim", i, f"claims {kind} {number} is {state}")


def _has_state(changed: Mapping[str, set[str]], kind: str, number: str | None, state: str) -> bool:
    if number:
        return state in changed.get(f"{kind} {number}", set())
    return any(obj.split()[0] == kind and state in s for obj, s in changed.items())


# --------------------------------------------------------------------------- run level


def classify_record(rec: Mapping[str, Any]) -> Classification:
    """Classify one trial record of the run log."""
    if rec.get("error"):
        return Classification("error")
    hidden = rec.get("hidden") or {}
    if hidden.get("passed"):
        return Classification("success")
    info = (rec.get("extra") or {}).get("alfworld")
    if not isinstance(info, Mapping):
        # e.g. the paper's imported logs: a verdict but no trajectory to classify.
        return Classification("unclassified", reasons=["no ALFWorld episode in the record"])
    return classify_episode(info)


def _alfworld_records(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        r
        for r in records
        if r.get("benchmark") == "alfworld" or "alfworld" in (r.get("extra") or {})
    ]


def failures_by_trial(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per failed trial record: task, trial, label, fired rules, reasons."""
    rows = []
    for r in _alfworld_records(records):
        c = classify_record(r)
        if c.label == "success":
            continue
        rows.append(
            {
                "task_id": r.get("task_id"),
                "trial": int(r.get("trial", 0)),
                "label": c.label,
                "rules": sorted({h["rule"] for h in c.hits}),
                "reasons": c.reasons,
                "hits": c.hits,
            }
        )
    return rows


def figure3_table(
    records: Sequence[Mapping[str, Any]], n_tasks: int | None = None
) -> list[dict[str, Any]]:
    """Cumulative success and the failure split per trial, as in the paper's Figure 3.

    For each trial k: ``solved`` counts tasks won at any trial <= k; every other task is
    classified by its last trial <= k (``hallucination`` / ``inefficient_planning``, or
    ``errored``). ``n`` is the number of tasks (``n_tasks`` if given, e.g. 134 for a run
    that covered part of the split), and shares are of ``n``.

    Args:
        records: Effective trial records (``runner.runlog.load_run_records``).
        n_tasks: Denominator; defaults to the tasks present in the records.
    """
    recs = _alfworld_records(records)
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for r in recs:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    for trials in by_task.values():
        trials.sort(key=lambda r: int(r["trial"]))
    n = n_tasks if n_tasks is not None else len(by_task)
    max_k = max((int(r["trial"]) for r in recs), default=0)
    labels = {id(r): classify_record(r).label for r in recs}
    table = []
    for k in range(1, max_k + 1):
        counts: Counter[str] = Counter()
        for trials in by_task.values():
            upto = [r for r in trials if int(r["trial"]) <= k]
            if any(labels[id(r)] == "success" for r in upto):
                counts["solved"] += 1
            else:
                counts[labels[id(upto[-1])]] += 1
        table.append(
            {
                "trial": k,
                "n": n,
                "solved": counts["solved"],
                "solved_share": counts["solved"] / n if n else 0.0,
                HALLUCINATION: counts[HALLUCINATION],
                INEFFICIENT: counts[INEFFICIENT],
                "errored": counts["error"],
                "unclassified": counts["unclassified"],
                "hallucination_share": counts[HALLUCINATION] / n if n else 0.0,
                "inefficient_planning_share": counts[INEFFICIENT] / n if n else 0.0,
            }
        )
    return table


def version_symptom_episodes(records: Sequence[Mapping[str, Any]]) -> int:
    """Episodes where 2+ put commands in the other version's syntax got ``Nothing happens.``."""
    return sum(
        1
        for r in _alfworld_records(records)
        if int(((r.get("extra") or {}).get("alfworld") or {}).get("version_symptoms", 0)) >= 2
    )


def format_figure3(table: Sequence[Mapping[str, Any]], title: str = "ALFWorld") -> str:
    """Text rendering of :func:`figure3_table` for the terminal and reports."""
    if not table:
        return f"{title}: no ALFWorld trials in this run"
    n = table[0]["n"]
    extra = any(row.get("unclassified") for row in table)
    lines = [
        f"{title}: cumulative success and failure causes by trial (of {n}; paper Figure 3)",
        f"{'trial':>5}  {'solved':>14}  {'hallucination':>15}  {'inefficient planning':>20}"
        f"  {'errored':>7}" + (f"  {'unclassified':>12}" if extra else ""),
    ]
    for row in table:
        solved = f"{row['solved']}/{n} {100 * row['solved_share']:5.1f}%"
        hall = f"{row[HALLUCINATION]} ({100 * row['hallucination_share']:4.1f}%)"
        ineff = f"{row[INEFFICIENT]} ({100 * row['inefficient_planning_share']:4.1f}%)"
        lines.append(
            f"{row['trial']:>5}  {solved:>14}  {hall:>15}  {ineff:>20}  {row['errored']:>7}"
            + (f"  {row.get('unclassified', 0):>12}" if extra else "")
        )
    return "\n".join(lines)


def summary_section(
    records: Sequence[Mapping[str, Any]], n_tasks: int | None = None
) -> dict[str, Any] | None:
    """What an ALFWorld run adds to ``summary.json`` (None for other benchmarks)."""
    if not _alfworld_records(records):
        return None
    return {
        "figure3": figure3_table(records, n_tasks),
        "version_symptom_episodes": version_symptom_episodes(records),
    }


def format_summary_section(section: Mapping[str, Any]) -> str:
    """Text of :func:`summary_section` for the run's closing table and ``report``."""
    text = format_figure3(section.get("figure3") or [])
    symptoms = int(section.get("version_symptom_episodes") or 0)
    if symptoms:
        text += (
            f"\nWARNING: {symptoms} episode(s) used the put syntax of the other game version "
            "again and again (`Nothing happens.`): env.version and the prompts likely differ"
        )
    return text


def report_section(records: Sequence[Mapping[str, Any]], n_tasks: int | None = None) -> str | None:
    """The ALFWorld part of ``reflexion-bench report`` (None for other benchmarks)."""
    section = summary_section(records, n_tasks)
    return None if section is None else format_summary_section(section)


def plot_figure3(tables: Mapping[str, Sequence[Mapping[str, Any]]], path: str | Path) -> None:
    """Two panels as in the paper: (a) solved share by trial, (b) failure causes by trial.

    Args:
        tables: Label (e.g. ``ReAct + Reflexion``, ``ReAct only``) -> :func:`figure3_table`.
        path: Where to write the image.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(9, 3.5))
    for i, (label, table) in enumerate(tables.items()):
        ks = [r["trial"] for r in table]
        ax_a.plot(ks, [r["solved_share"] for r in table], marker="o", label=label)
        color = f"C{i}"
        ax_b.plot(
            ks,
            [r["hallucination_share"] for r in table],
            marker="s",
            color=color,
            label=f"{label}: hallucination",
        )
        ax_b.plot(
            ks,
            [r["inefficient_planning_share"] for r in table],
            marker="^",
            linestyle="--",
            color=color,
            label=f"{label}: inefficient planning",
        )
    ax_a.set(xlabel="trial", ylabel="proportion of solved environments", ylim=(0, 1.02))
    ax_b.set(xlabel="trial", ylabel="proportion of environments", ylim=(0, 1.02))
    ax_a.set_title("(a) ALFWorld success", fontsize=9)
    ax_b.set_title("(b) failure causes", fontsize=9)
    for ax in (ax_a, ax_b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
