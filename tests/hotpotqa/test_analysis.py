"""HotpotQA analysis from run-log records: success by trial, fixes, breakdowns, report."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.hotpotqa import (
    breakdown,
    fixed_after_first_failure,
    hotpotqa_report,
    load_reference,
    parse_trial_summaries,
    run_label,
    solved_by_trial,
    success_by_trial_table,
    to_markdown,
)
from reflexion_bench.runner.runlog import RunLogWriter
from tests.hotpotqa.conftest import Compose
from tests.hotpotqa.helpers import run_with_model, scripted


def _rec(
    task: str, trial: int, passed: bool, qtype: str = "bridge", level: str = "hard", **kw: Any
) -> dict[str, Any]:
    return {
        "type": "trial",
        "task_id": task,
        "attempt_id": "a",
        "trial": trial,
        "strategy": kw.get("strategy", "reflexion"),
        "model": "m",
        "final": kw.get("final", False),
        "hidden": {"passed": passed, "value": 1.0 if passed else kw.get("f1", 0.0)},
        "extra": {"actor": kw.get("actor", "react"), "type": qtype, "level": level},
    }


# q1: fails, fails, passes at 3; q2: passes at 1; q3: fails 3 times; q4 (comparison): fails, passes at 2.
RECORDS = [
    _rec("q1", 1, False),
    _rec("q1", 2, False),
    _rec("q1", 3, True, final=True),
    _rec("q2", 1, True, final=True),
    _rec("q3", 1, False, f1=0.5),
    _rec("q3", 2, False),
    _rec("q3", 3, False, f1=0.4, final=True),
    _rec("q4", 1, False, qtype="comparison", level="medium"),
    _rec("q4", 2, True, qtype="comparison", level="medium", final=True),
]


def test_solved_by_trial_is_cumulative_with_early_stops_carried() -> None:
    assert solved_by_trial(RECORDS) == [0.25, 0.5, 0.75]
    # K logged by the actors extends the curve past the last trial anyone needed.
    with_k = [{**r, "extra": {**r["extra"], "max_trials": 5}} for r in RECORDS]
    assert solved_by_trial(with_k) == [0.25, 0.5, 0.75, 0.75, 0.75]


def test_fixed_after_first_failure() -> None:
    f = fixed_after_first_failure(RECORDS)
    assert f == {
        "first_failures": 3,
        "fixed": 2,
        "share": pytest.approx(2 / 3),
        "fixed_at_trial": {2: 1, 3: 1},
    }
    assert fixed_after_first_failure([])["share"] is None


def test_breakdown_by_type_and_level() -> None:
    t = breakdown(RECORDS, "type").set_index("type")
    assert t.loc["bridge", "questions"] == 3
    assert t.loc["bridge", "first_trial"] == pytest.approx(1 / 3)
    assert t.loc["bridge", "final"] == pytest.approx(2 / 3)
    assert t.loc["bridge", "mean_f1_last"] == pytest.approx((1.0 + 1.0 + 0.4) / 3)
    assert t.loc["comparison", "final"] == 1.0
    lv = breakdown(RECORDS, "level").set_index("level")
    assert set(lv.index) == {"hard", "medium"}
    with pytest.raises(ValueError, match="type"):
        breakdown(RECORDS, "answer")


def test_tags_fall_back_to_the_scorer_extra() -> None:
    rec = _rec("q9", 1, True)
    rec["extra"] = {"actor": "cot"}
    rec["hidden"]["extra"] = {"type": "comparison", "level": "easy"}
    assert list(breakdown([rec], "level")["level"]) == ["easy"]


def test_table_holds_runs_and_reference_rows_of_any_length() -> None:
    df = success_by_trial_table(
        {"ReAct + reflexion": [0.3, 0.5]}, {"ReAct + Reflexion": [0.31, 0.45, 0.5]}
    )
    assert list(df.columns) == ["trial 1", "trial 2", "trial 3"]
    assert list(df.index) == ["ReAct + reflexion", "paper: ReAct + Reflexion"]
    row = list(df.loc["ReAct + reflexion"])
    assert row[:2] == [0.3, 0.5] and math.isnan(row[2])  # a run's missing trials stay blank
    assert "| ReAct + reflexion | 30.0 | 50.0 | - |" in to_markdown(df)
    empty = success_by_trial_table({"x": []})
    assert empty.empty or all(math.isnan(v) for v in empty.iloc[0])


def test_parse_trial_summaries_of_the_papers_log_format() -> None:
    log = (
        "\n####\nBEGIN TRIAL 1\nTrial summary: Correct: 61, Incorrect: 39\n####\n...agents...\n"
        "\n####\nBEGIN TRIAL 2\nTrial summary: Correct: 70, Incorrect: 30\n####\n"
    )
    assert parse_trial_summaries(log) == [0.61, 0.70]
    assert parse_trial_summaries("Trial summary: Correct: 30, Incorrect: 50", n_questions=100) == [
        0.30
    ]


def test_load_reference_accepts_percentages_and_rejects_junk(tmp_path: Path) -> None:
    p = tmp_path / "ref.json"
    p.write_text(json.dumps({"CoT (GT) + reflexion": [61, 70]}), encoding="utf-8")
    assert load_reference(p) == {"CoT (GT) + reflexion": [0.61, 0.70]}
    y = tmp_path / "ref.yaml"
    y.write_text("ReAct + none:\n  - 0.3\n  - 0.3\n", encoding="utf-8")
    assert load_reference(y) == {"ReAct + none": [0.3, 0.3]}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"x": ["a"]}), encoding="utf-8")
    with pytest.raises(ValueError, match="list of numbers"):
        load_reference(bad)


def test_report_from_real_run_logs(compose_hotpot: Compose, tmp_path: Path) -> None:
    """Two real (mock-model) runs, one per strategy, reported side by side."""

    def wrong_then_right(n_answered: int, user: str) -> str:
        # Every first answer is wrong; the retry of the VIVA question is right.
        question = user.rsplit("Question: ", 1)[-1]
        asked[question] = asked.get(question, 0) + 1
        if "VIVA Media AG" in question and asked[question] == 2:
            return "Thought: y\nAction: Finish[Gesellschaft mit beschränkter Haftung]"
        return "Thought: x\nAction: Finish[wrong]"

    dirs = []
    for strategy in ("retry", "reflexion"):
        asked: dict[str, int] = {}
        cfg = compose_hotpot(
            "actor=cot_context", f"strategy={strategy}", "strategy.max_trials=2", "limit=2"
        )
        model, _ = scripted(wrong_then_right, lambda n: "lesson")
        run_dir = tmp_path / strategy
        run_with_model(cfg, run_dir, model)
        dirs.append(run_dir)
    report = hotpotqa_report(dirs, reference={"CoT (GT) + reflexion": [0.61, 0.7]})
    # Trial 1: nothing right; trial 2: the VIVA question fixed, in both runs.
    assert "| CoT (GT) + retry | 0.0 | 50.0 |" in report
    assert "| CoT (GT) + reflexion | 0.0 | 50.0 |" in report
    assert "| CoT (GT) + retry | 2 | 1 | 50.0% |" in report
    assert "| paper: CoT (GT) + reflexion | 61.0 | 70.0 |" in report
    assert "### By question type (%)" in report and "| bridge |" in report
    # The log's own labels and tags drive it: the actor name is from the records.
    from reflexion_bench.runner.runlog import load_run_records

    records = load_run_records(dirs[1])
    assert run_label(records) == "CoT (GT) + reflexion"
    assert all(r["extra"]["type"] in ("bridge", "comparison") for r in records)
    # A log written under the baseline's old name (`none`) is compared as `retry`.
    log = dirs[0] / "log.jsonl"
    text = log.read_text(encoding="utf-8")
    assert '"strategy": "retry"' in text
    log.write_text(text.replace('"strategy": "retry"', '"strategy": "none"'), encoding="utf-8")
    again = hotpotqa_report(dirs)
    assert "| CoT (GT) + retry | 0.0 | 50.0 |" in again and "+ none" not in again


def test_report_reads_resumed_logs_once(tmp_path: Path) -> None:
    # A task re-run after an interruption: only its finished attempt counts.
    w = RunLogWriter(tmp_path / "log.jsonl")
    w.write({**_rec("q1", 1, False), "attempt_id": "old"})
    for r in RECORDS:
        w.write(r)
    w.close()
    report = hotpotqa_report([tmp_path])
    assert "| ReAct + reflexion | 25.0 | 50.0 | 75.0 |" in report
