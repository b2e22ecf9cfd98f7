"""The answer key inside the loop, on HotpotQA: the gold-answer evaluator is counted per
trial and labels the run ``answer-in-loop``; a run without it is ``clean``. The real
config and runner, the scripted model at the model boundary; labels are read back
from what the run wrote (log, summary.json, report tables, figures)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis import plots
from reflexion_bench.analysis.report import (
    build_comparison,
    format_table,
    plot_trial_curve,
    write_run_outputs,
)
from reflexion_bench.analysis.tables import render, tables
from tests.hotpotqa.conftest import Compose, compose_hotpot_config
from tests.hotpotqa.helpers import run_with_model, scripted


def _gold(shared_data: Path, n: int) -> dict[str, str]:
    """question -> gold answer of the first ``n`` questions, read from the data file."""
    out = {}
    path = shared_data / "hotpotqa-distractor-100.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines()[:n]:
        row = json.loads(line)
        out[row["question"]] = row["answer"]
    return out


def _script(gold: dict[str, str], right_at: dict[int, int]):  # type: ignore[no-untyped-def]
    """Question i (in file order) is answered wrong until its ``right_at[i]``-th answer."""
    order = list(gold)
    answers: dict[str, int] = {}

    def react(_n: int, user: str) -> str:
        current = user.rsplit("\nQuestion: ", 1)[-1]
        question = next(q for q in order if current.startswith(q))
        answers[question] = answers.get(question, 0) + 1
        i = order.index(question)
        ok = answers[question] >= right_at[i]
        answer = gold[question] if ok else f"wrong {answers[question]}"
        return f"Thought 1: I know it.\nAction 1: Finish[{answer}]"

    return scripted(react, lambda n: f"Reflection: lesson {n}.")


def _run(
    compose_hotpot: Compose, shared_data: Path, run_dir: Path, *overrides: str
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    cfg = compose_hotpot("actor=react", "limit=2", *overrides)
    # Question 1 right at its second answer, question 2 at its first.
    model, seen = _script(_gold(shared_data, 2), {0: 2, 1: 1})
    _, records = run_with_model(cfg, run_dir, model)
    return records, seen


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Any]:
    def compose_hotpot(*overrides: str) -> Any:
        return compose_hotpot_config(shared_data, *overrides)

    root = tmp_path_factory.mktemp("answer_key")
    gold_dir, clean_dir = root / "gold", root / "clean"
    gold, _ = _run(
        compose_hotpot, shared_data, gold_dir, "strategy=reflexion", "strategy.max_trials=3"
    )
    clean, seen = _run(
        compose_hotpot,
        shared_data,
        clean_dir,
        "strategy=reflexion_no_tests",
        "strategy.max_trials=2",
    )
    return {"gold": (gold_dir, gold), "clean": (clean_dir, clean, seen)}


def test_gold_evaluator_is_counted_per_trial_and_labels_the_run(runs: dict[str, Any]) -> None:
    run_dir, records = runs["gold"]
    trials = [r for r in records if r.get("type", "trial") == "trial"]
    # The script: question 1 is right at its second trial, question 2 at its first.
    assert [r["hidden"]["passed"] for r in trials] == [False, True, True]
    # Each trial read the gold answer once, in the evaluator.
    assert [r["answer_key_uses"] for r in trials] == [{"evaluator.gold_answer": 1}] * 3

    summary = write_run_outputs(run_dir)
    on_disk = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    for s in (summary, on_disk):
        ak = s["answer_key"]
        assert ak["label"] == "answer-in-loop"
        assert ak["uses"] == 3 and ak["by_source"] == {"evaluator.gold_answer": 3}
        assert ak["trials_with_uses"] == 3 and ak["tasks_with_uses"] == 2
    assert "answer-in-loop (3 uses): evaluator.gold_answer 3" in format_table(summary)


def test_a_run_without_the_gold_evaluator_is_clean(runs: dict[str, Any]) -> None:
    run_dir, records, seen = runs["clean"]
    trials = [r for r in records if r.get("type", "trial") == "trial"]
    assert len(trials) == 4 and all(r["self_test"]["passed"] is None for r in trials)
    assert all(r["answer_key_uses"] == {} for r in trials)
    summary = write_run_outputs(run_dir)
    assert summary["answer_key"]["label"] == "clean"
    assert summary["answer_key"]["uses"] == 0
    # Nothing judged the answers, and the reflector is not told they were wrong.
    assert seen["reflector"]
    assert all("judged incorrect" not in p for p in seen["reflector"])
    assert all("not checked" in p for p in seen["reflector"])


def test_report_tables_and_figures_carry_the_label(
    runs: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold_dir, clean_dir = runs["gold"][0], runs["clean"][0]
    report = build_comparison([gold_dir, clean_dir], n_resamples=200)
    main = tables(report)["main"]
    labels = dict(zip(main["strategy"], main["answer_key"], strict=True))
    assert labels == {"reflexion": "answer-in-loop (3 uses)", "reflexion_no_tests": "clean"}
    md = render(report, "md")
    assert "| answer key |" in md
    assert re.search(r"\|\s*answer-in-loop \(3 uses\)\s*\|", md)
    assert "`answer-in-loop` rows" in md

    # The figures: legend entries and the single-run title say so.
    figs: list[Any] = []
    real_save = plots._save

    def save(fig: Any, stem: Path) -> list[Path]:
        figs.append(fig)
        return real_save(fig, stem)

    monkeypatch.setattr(plots, "_save", save)
    plots.plot_trial_curves(report["groups"], tmp_path / "curve")
    legend = [t.get_text() for t in figs[0].legends[0].get_texts()]  # below the axes
    # Strategies by their human names (configs/labels.yaml), the label after them.
    assert any(t == "Reflexion (n=2) [answer-in-loop (3 uses)]" for t in legend), legend
    assert any(t == "Reflexion, no tests (n=2)" for t in legend), legend

    import matplotlib.pyplot as plt

    titles: list[str] = []
    real_close = plt.close
    monkeypatch.setattr(
        plt, "close", lambda fig=None: (titles.append(fig.axes[0].get_title()), real_close(fig))
    )
    summary = json.loads((gold_dir / "summary.json").read_text(encoding="utf-8"))
    plot_trial_curve(summary, tmp_path / "one.png")
    assert titles and titles[0].endswith("answer-in-loop (3 uses)")


def test_clean_and_answer_in_loop_runs_are_never_pooled(
    compose_hotpot: Compose, shared_data: Path, tmp_path: Path
) -> None:
    # Same benchmark x strategy name x model, disjoint questions (which would pool),
    # but one loop ran the gold evaluator and the other did not.
    ids = [json.loads(line)["id"] for line in
           (shared_data / "hotpotqa-distractor-100.jsonl").read_text().splitlines()[:2]]  # fmt: skip
    for name, qid, extra in (("a", ids[0], []), ("b", ids[1], ["strategy.self_test=false"])):
        cfg = compose_hotpot(
            "actor=react",
            "strategy=reflexion",
            "strategy.max_trials=1",
            f"task_ids=[{qid}]",
            *extra,
        )
        model, _ = scripted(lambda n, u: "Thought 1: x\nAction 1: Finish[no]", lambda n: "r")
        run_with_model(cfg, tmp_path / name, model)
    report = build_comparison([tmp_path], n_resamples=100)
    rows = {g["label"]: g["answer_key"]["label"] for g in report["groups"]}
    assert sorted(rows.values()) == ["answer-in-loop", "clean"]
    assert all(g["n_tasks"] == 1 for g in report["groups"])
