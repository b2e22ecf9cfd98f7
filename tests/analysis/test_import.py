"""Importing the paper's own logs (../shared/data/reflexion-original-logs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.analysis.imports import (
    ImportError_,
    detect_programming,
    import_alfworld,
    import_programming,
    read_programming_rows,
)
from reflexion_bench.commands import import_logs, report
from reflexion_bench.runner.runlog import load_run_records


def published_alfworld_curve(folder: Path) -> list[int]:
    """Successes per trial file, read straight from the paper's files."""
    files = sorted(
        folder.glob("env_results_trial_*.json"), key=lambda p: int(p.stem.rsplit("_", 1)[1])
    )
    return [sum(bool(e["is_success"]) for e in json.loads(f.read_text())) for f in files]


@pytest.mark.parametrize("run", ["reflexion_run_logs", "base_run_logs"])
def test_alfworld_report_json_gives_the_published_curve(
    shared_data: Path, tmp_path: Path, run: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = shared_data / "reflexion-original-logs" / "alfworld" / run
    out = tmp_path / run
    assert import_logs.main(["--kind", "alfworld", str(src), "--out", str(out)]) == 0
    capsys.readouterr()
    assert report.main([str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    curve = published_alfworld_curve(src)
    assert len(curve) >= 2
    assert summary["n_tasks"] == 134
    assert summary["solved_counts_by_trial"] == curve
    assert summary["success_counts_at_trial"] == curve
    assert summary["success_at_trial"] == [c / 134 for c in curve]
    assert summary["strategy"] == run.split("_")[0]
    # What the logs do not hold is missing, not zero.
    assert summary["totals"]["tokens"] is None
    records = load_run_records(out)
    assert all(r["memory_shown"] is None and r["candidate"] is None for r in records)
    manifest = json.loads((out / "import.json").read_text())
    assert manifest["logged_success_by_trial"] == curve


def test_alfworld_reflections_are_the_memory_added_per_trial(
    shared_data: Path, tmp_path: Path
) -> None:
    src = shared_data / "reflexion-original-logs" / "alfworld" / "reflexion_run_logs"
    import_alfworld(src, tmp_path / "r")
    records = {(r["task_id"], r["trial"]): r for r in load_run_records(tmp_path / "r")}
    trial0 = {e["name"]: e for e in json.loads((src / "env_results_trial_0.json").read_text())}
    trial1 = {e["name"]: e for e in json.loads((src / "env_results_trial_1.json").read_text())}
    failed = [n for n, e in trial0.items() if not e["is_success"]]
    assert failed
    for name in failed:
        rec = records[(name, 1)]
        assert rec["hidden"]["passed"] is False and rec["final"] is False
        assert rec["reflection"] == "\n".join(m.strip() for m in trial0[name]["memory"])
        assert records[(name, 2)]["hidden"]["passed"] is bool(trial1[name]["is_success"])
    # Solved games stop: no trial 2 for a game won at trial 1.
    won = next(n for n, e in trial0.items() if e["is_success"])
    assert (won, 2) not in records and records[(won, 1)]["final"] is True
    with pytest.raises(ImportError_, match="exists"):
        import_alfworld(src, tmp_path / "r")


def test_programming_import_without_rescoring_marks_unknowns(
    shared_data: Path, tmp_path: Path
) -> None:
    src = (
        shared_data
        / "reflexion-original-logs"
        / "programming"
        / "reflexion_humaneval_py_pass_at_1.jsonl"
    )
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    manifest = import_programming(src, tmp_path / "r", model="gpt-4")
    assert manifest["benchmark"] == "humaneval" and manifest["strategy"] == "reflexion"
    records = load_run_records(tmp_path / "r")
    by_task: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for r in records:
        by_task.setdefault(r["task_id"], []).append(r)
    for row in rows:
        recs = by_task[row["task_id"]]
        assert len(recs) == 1 + len(row["reflections"])
        assert [r["reflection"] for r in recs[:-1]] == row["reflections"]
        assert all(r["candidate"] is None and r["hidden"] is None for r in recs[:-1])
        assert recs[-1]["extra"]["logged_hidden_passed"] is bool(row["is_solved"])
        assert recs[-1]["candidate"] == row["solution"]
    from reflexion_bench.analysis.metrics import summarize

    s = summarize(records)
    assert s["final"] is None  # nothing re-scored: the hidden verdict is unknown
    assert s["logged"]["final"] == pytest.approx(
        sum(bool(r["is_solved"]) for r in rows) / len(rows)
    )


def test_programming_import_rescores_with_hidden_tests(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real sandbox: the first 12 problems of the one-attempt GPT-4 log."""
    src = (
        shared_data / "reflexion-original-logs" / "programming" / "simple_humaneval_py_gpt-4.jsonl"
    )
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()][:12]
    out = tmp_path / "simple"
    code = import_logs.main(
        ["--kind", "programming", str(src), "--out", str(out), "--model", "gpt-4", "--limit", "12"]
    )
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert report.main([str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_tasks"] == 12 and summary["strategy"] == "simple"
    logged = [bool(r["is_solved"]) for r in rows]
    assert summary["logged"]["final"] == pytest.approx(sum(logged) / 12)
    assert summary["final"] is not None
    # Re-scored with the real hidden tests: close to the logged verdicts (the paper's
    # harness and ours may differ on a rare edge case, never on most problems).
    assert summary["logged"]["rescored_agreement"] >= 10 / 12
    records = load_run_records(out)
    assert all(r["hidden"]["extra"]["rescored"] for r in records)


@pytest.mark.slow
def test_full_humaneval_reflexion_log_rescored(shared_data: Path, tmp_path: Path) -> None:
    """All 164 solutions of the paper's Reflexion HumanEval run, re-scored for real."""
    src = (
        shared_data
        / "reflexion-original-logs"
        / "programming"
        / "reflexion_humaneval_py_pass_at_1.jsonl"
    )
    out = tmp_path / "full"
    assert (
        import_logs.main(["--kind", "programming", str(src), "--out", str(out), "--model", "gpt-4"])
        == 0
    )
    from reflexion_bench.analysis.report import load_summary

    s = load_summary(out)
    assert s["n_tasks"] == 164
    assert s["logged"]["final_count"] == 150
    assert s["logged"]["rescored_agreement"] >= 0.97
    assert s["final"] == pytest.approx(s["logged"]["final"], abs=0.03)
    # Body-only solutions were completed with the prompt to be scored; the logged
    # text is kept beside the program that was scored.
    body_only = [r for r in load_run_records(out) if "logged_solution" in r["extra"]]
    assert body_only
    for r in body_only:
        assert r["extra"]["logged_solution"].strip() in r["candidate"]


def test_import_errors_name_what_to_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x"}\n')
    assert (
        import_logs.main(
            ["--kind", "programming", str(bad), "--out", str(tmp_path / "o"), "--no-rescore"]
        )
        == 2
    )
    assert "task_id (or name) and solution" in capsys.readouterr().err
    assert (
        import_logs.main(["--kind", "alfworld", str(tmp_path), "--out", str(tmp_path / "o2")]) == 2
    )
    assert "env_results_trial_" in capsys.readouterr().err


@pytest.mark.parametrize(
    "rel",
    [
        "reflexion-original-logs/programming/reflexion_humaneval_py_pass_at_1.jsonl",
        "reflexion-original-repo/programming_runs/root/reflexion_humaneval_py_pass_at_1/"
        "reflexion_humaneval_py_pass_at_1.jsonl",
    ],
)
def test_a_log_naming_no_model_takes_its_partners_model(shared_data: Path, rel: str) -> None:
    """The paper's HumanEval-py Reflexion log names no model; its one-attempt partner
    (flat sample) or every other HumanEval-py log of the repository names gpt-4, so both
    logs of the pair read as gpt-4, and the manifest says where that came from."""
    src = shared_data / rel
    det = detect_programming(src, read_programming_rows(src))
    assert det.model == "gpt-4"
    assert "beside it" in det.model_source and "gpt-4" in det.model_source
    # The partner itself is read from its own file name.
    partner = shared_data / "reflexion-original-logs/programming/simple_humaneval_py_gpt-4.jsonl"
    pdet = detect_programming(partner, read_programming_rows(partner))
    assert (pdet.model, pdet.model_source) == ("gpt-4", "file name")


def _log(path: Path, task: str = "HumanEval/0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task_id": task, "solution": "pass", "is_solved": "False"}) + "\n")
    return path


def test_sibling_models_are_taken_only_when_unanimous(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _log(tmp_path / "flat" / "reflexion_humaneval_py_run.jsonl")
    # Nothing beside it: unknown.
    assert detect_programming(src, read_programming_rows(src)).model == "unknown"
    # Another benchmark's or language's log does not count.
    _log(tmp_path / "flat" / "simple_mbpp_py_gpt-4.jsonl")
    _log(tmp_path / "flat" / "simple_humaneval_rs_gpt-4.jsonl")
    assert detect_programming(src, read_programming_rows(src)).model == "unknown"
    # One HumanEval-py partner naming a model: taken.
    _log(tmp_path / "flat" / "simple_humaneval_py_gpt-3.5-turbo.jsonl")
    det = detect_programming(src, read_programming_rows(src))
    assert det.model == "gpt-3.5-turbo"
    assert "simple_humaneval_py_gpt-3.5-turbo.jsonl" in det.model_source
    # The import says where the model came from (so a wrong guess is seen).
    out = tmp_path / "cli"
    assert (
        import_logs.main(["--kind", "programming", str(src), "--out", str(out), "--no-rescore"])
        == 0
    )
    said = capsys.readouterr().out
    assert "model gpt-3.5-turbo: from the other humaneval logs beside it" in said
    assert json.loads((out / "import.json").read_text())["model"] == "gpt-3.5-turbo"
    # Two partners disagreeing: unknown again, and the manifest says why.
    _log(tmp_path / "flat" / "testacc_humaneval_py_gpt-4.jsonl")
    det = detect_programming(src, read_programming_rows(src))
    assert det.model == "unknown" and "gpt-3.5-turbo" in det.model_source
    # --model wins over anything detected, and the manifest says so.
    manifest = import_programming(src, tmp_path / "out", model="claude")
    assert (manifest["model"], manifest["model_source"]) == ("claude", "--model")
