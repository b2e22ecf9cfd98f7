"""The failure classifier on hand-written episodes, and the Figure 3 table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reflexion_bench.analysis.alfworld import (
    HALLUCINATION,
    INEFFICIENT,
    classify_episode,
    failures_by_trial,
    figure3_table,
    format_figure3,
    format_summary_section,
    plot_figure3,
    report_section,
    summary_section,
)

ROOM = "On the countertop 1, you see a apple 1, a knife 1, and a mug 2."


def ep(steps: list[list[Any]], **kw: Any) -> dict[str, Any]:
    return {
        "won": False,
        "steps": steps,
        "type_key": "put",
        "object": "mug",
        "receptacle": "shelf",
        "stop_reason": "step_limit",
        **kw,
    }


def rules(info: dict[str, Any]) -> list[str]:
    return [h["rule"] for h in classify_episode(info).hits]


def test_putting_an_object_not_held_is_hallucination() -> None:
    info = ep(
        [
            ["go to countertop 1", ROOM],
            ["go to shelf 1", "On the shelf 1, you see nothing."],
            ["move mug 2 to shelf 1", "Nothing happens."],
        ]
    )
    c = classify_episode(info)
    assert c.label == HALLUCINATION
    assert c.hits[0]["rule"] == "acts_on_unheld_object" and c.hits[0]["step"] == 3


def test_the_same_put_after_taking_is_fine() -> None:
    info = ep(
        [
            ["go to countertop 1", ROOM],
            ["take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1."],
            ["go to shelf 1", "On the shelf 1, you see nothing."],
            ["move mug 2 to shelf 1", "You move the mug 2 to the shelf 1."],
            ["move mug 2 to shelf 1", "Nothing happens."],  # already put down: holds nothing
        ]
    )
    assert rules(info) == ["acts_on_unheld_object"]
    assert classify_episode({**info, "steps": info["steps"][:4]}).label == INEFFICIENT


def test_taking_an_object_never_seen_is_hallucination() -> None:
    info = ep([["go to countertop 1", ROOM], ["take mug 1 from countertop 1", "Nothing happens."]])
    assert rules(info) == ["takes_unseen_object"]
    seen = ep([["go to countertop 1", ROOM], ["take mug 2 from countertop 1", "Nothing happens."]])
    assert rules(seen) == []  # it was there: a wrong place or a closed door, not imagination


def test_false_claims_in_thoughts() -> None:
    claim_hold = ep(
        [["go to countertop 1", ROOM], ["think: Now I take a mug (2). Next, the shelf.", "OK."]]
    )
    assert rules(claim_hold) == ["false_claim"]
    claim_found = ep([["think: Now I find a mug (3).", "OK."], ["go to countertop 1", ROOM]])
    assert rules(claim_found) == ["false_claim"]
    claim_state = ep(
        [
            ["go to countertop 1", ROOM],
            ["take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1."],
            ["think: mug 2 is clean now, so I go to the shelf.", "OK."],
        ],
        type_key="clean",
    )
    assert rules(claim_state) == ["false_claim"]
    # True claims and plans are not claims.
    fine = ep(
        [
            ["think: I have to find a mug first.", "OK."],
            ["think: First I find the mug and take it, then I go to a shelf.", "OK."],
            ["go to countertop 1", ROOM],
            ["think: Now I find a mug (2). Next, I need to take it.", "OK."],
            ["take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1."],
            ["think: I am holding mug 2.", "OK."],
        ]
    )
    assert rules(fine) == []


def test_placing_without_the_required_change_is_hallucination() -> None:
    steps = [
        ["go to countertop 1", ROOM],
        ["take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1."],
        ["go to shelf 1", "On the shelf 1, you see nothing."],
        ["move mug 2 to shelf 1", "You move the mug 2 to the shelf 1."],
    ]
    assert rules(ep(steps, type_key="heat")) == ["placed_untransformed"]
    heated = [
        *steps[:2],
        ["heat mug 2 with microwave 1", "You heat the mug 2 using the microwave 1."],
        *steps[2:],
    ]
    assert rules(ep(heated, type_key="heat")) == []
    assert rules(ep(steps, type_key="put")) == []  # a plain put needs no change


def test_using_the_lamp_with_the_wrong_object_is_hallucination() -> None:
    take_mug = ["take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1."]
    lamp = ["use desklamp 1", "You turn on the desklamp 1."]
    base = {"type_key": "examine", "object": "book", "receptacle": "desklamp"}
    assert rules(ep([["go to countertop 1", ROOM], take_mug, lamp], **base)) == [
        "examined_wrong_object"
    ]
    assert rules(ep([lamp], **base)) == []  # empty hands: a plan in the wrong order
    right = {**base, "object": "mug"}
    assert rules(ep([["go to countertop 1", ROOM], take_mug, lamp], **right)) == []


def test_loops_and_step_limit_are_inefficient_planning_with_reasons() -> None:
    loop = ep(
        [["go to countertop 1", ROOM], ["go to shelf 1", "On the shelf 1, you see nothing."]] * 3
        + [["inventory", "You are not carrying anything."]] * 3,
        stop_reason="repeated_action",
        object="kettle",
    )
    c = classify_episode(loop)
    assert c.label == INEFFICIENT and c.hits == []
    assert set(c.reasons) >= {"repeated_action", "revisits", "goal_object_never_seen"}
    assert classify_episode({**loop, "won": True}).label == "success"


def record(
    task: str,
    trial: int,
    info: dict[str, Any] | None,
    passed: bool = False,
    error: str | None = None,
) -> dict[str, Any]:
    return {
        "task_id": task,
        "trial": trial,
        "benchmark": "alfworld",
        "error": error,
        "hidden": {"passed": passed},
        "extra": {"alfworld": info} if info else {},
    }


HALL = ep([["move mug 2 to shelf 1", "Nothing happens."]])
LOOP = ep([["look", "x"]] * 3, stop_reason="repeated_action")
WON = {**ep([]), "won": True}


def test_figure3_table_counts_cumulative_success_and_causes(tmp_path: Path) -> None:
    recs = [
        record("a", 1, HALL),
        record("a", 2, WON, passed=True),
        record("b", 1, LOOP),
        record("b", 2, HALL),
        record("b", 3, LOOP),
        record("c", 1, WON, passed=True),
        record("d", 1, None, error="GameWorkerError: worker died"),
    ]
    table = figure3_table(recs)
    assert [
        (r["trial"], r["solved"], r[HALLUCINATION], r[INEFFICIENT], r["errored"]) for r in table
    ] == [
        (1, 1, 1, 1, 1),
        (2, 2, 1, 0, 1),
        (3, 2, 0, 1, 1),
    ]
    assert table[1]["solved_share"] == 0.5
    assert figure3_table(recs, n_tasks=134)[2]["solved_share"] == 2 / 134
    text = format_figure3(table)
    assert "2/4" in text and "Figure 3" in text
    rows = failures_by_trial(recs)
    assert [(r["task_id"], r["trial"], r["label"]) for r in rows] == [
        ("a", 1, HALLUCINATION),
        ("b", 1, INEFFICIENT),
        ("b", 2, HALLUCINATION),
        ("b", 3, INEFFICIENT),
        ("d", 1, "error"),
    ]
    section = report_section(recs)
    assert section is not None and "WARNING" not in section
    # The JSON form that goes into summary.json renders to the same text.
    summary = summary_section(recs)
    assert summary is not None and json.loads(json.dumps(summary))["figure3"] == table
    assert format_summary_section(summary) == section
    symptom = record("e", 1, {**LOOP, "version_symptoms": 3})
    assert "WARNING" in (report_section([*recs, symptom]) or "")
    assert (
        report_section([{"task_id": "x", "trial": 1, "benchmark": "hotpotqa", "extra": {}}]) is None
    )
    plot_figure3({"ReAct + Reflexion": table}, tmp_path / "fig3.png")
    assert (tmp_path / "fig3.png").stat().st_size > 1000
