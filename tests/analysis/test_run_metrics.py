"""Each run metric on a hand-made log whose values were worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.analysis.report import write_run_outputs


def rec(
    task: str, trial: int, self_ok: bool | None, hidden_ok: bool, final: bool, tokens: int = 10
) -> dict:  # type: ignore[type-arg]
    return {
        "type": "trial",
        "task_id": task,
        "attempt_id": "a",
        "trial": trial,
        "final": final,
        "benchmark": "toy",
        "strategy": "reflexion",
        "model": "m",
        "self_test": {"passed": self_ok},
        "hidden": {"passed": hidden_ok},
        "model_calls": [
            {"role": "actor", "prompt_tokens": tokens, "completion_tokens": 1, "cost_usd": 0.5}
        ],
        "wall_time_s": 2.0,
        "error": None,
    }


# A: fail -> pass (fix).  B: stops on a wrong self-test pass.  C: pass -> fail -> fail (break).
# D: passes at once.
LOG = [
    rec("A", 1, False, False, False),
    rec("A", 2, True, True, True),
    rec("B", 1, True, False, True),
    rec("C", 1, False, True, False),
    rec("C", 2, False, False, False),
    rec("C", 3, False, False, True),
    rec("D", 1, True, True, True),
]


def test_hand_made_log() -> None:
    s = summarize(LOG)
    assert s["n_tasks"] == 4
    assert s["first_try"] == pytest.approx(0.5)  # C, D
    assert s["final"] == pytest.approx(0.5)  # A, D
    assert s["success_at_trial"] == pytest.approx([0.5, 0.5, 0.5])
    assert s["solved_by_trial"] == pytest.approx([0.5, 0.75, 0.75])
    assert (s["fixes"], s["breaks"]) == (1, 1)
    assert s["self_test_confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 3, "final_fp": 1}
    assert s["totals"]["trials"] == 7
    assert s["totals"]["model_calls"] == 7
    assert s["totals"]["tokens"] == 77
    assert s["totals"]["cost_usd"] == pytest.approx(3.5)
    assert s["per_task_mean"]["trials"] == pytest.approx(7 / 4)
    assert s["per_task_mean"]["wall_time_s"] == pytest.approx(14 / 4)


def test_summary_and_curve_written_from_log(tmp_path: Path) -> None:
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LOG))
    s = write_run_outputs(tmp_path)
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["final"] == s["final"] == pytest.approx(0.5)
    png = (tmp_path / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_broken_visible_tests_are_counted_per_task() -> None:
    log = [dict(r) for r in LOG]
    log[0] = {**log[0], "hidden": {"passed": False, "extra": {"n_broken_visible_tests": 2}}}
    log[1] = {**log[1], "hidden": {"passed": True, "extra": {"n_broken_visible_tests": 2}}}
    log[2] = {**log[2], "hidden": {"passed": False, "extra": {"n_broken_visible_tests": 0}}}
    s = summarize(log)
    assert s["visible_tests_left_out"] == {"tasks": 1, "tests": 2}
    assert summarize(LOG)["visible_tests_left_out"] is None
