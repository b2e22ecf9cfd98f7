"""``reflexion-bench rescore --tests plus`` on tiny real run folders, with the real
sandbox and the real plus data: a right program, a program of the paper's that passes
the base tests and fails plus (results/plus-tests/paper_rescore.txt: HumanEval/10, and
MBPP's mbpp_89_closest_num), the verdict file, resuming, and the report's plus columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.rescore import (
    RESCORE_NAME,
    current_verdicts,
    program_sha256,
    read_rows,
    with_rescore,
)
from reflexion_bench.commands import report as report_cmd
from reflexion_bench.commands import rescore as rescore_cmd
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.environments.humaneval import HumanEvalEnvironment

PAPER_RUNS = "reflexion-original-repo/programming_runs/root"
HE_LOG = "reflexion_humaneval_py_pass_at_1/reflexion_humaneval_py_pass_at_1.jsonl"
MBPP_LOG = "reflexion_mbpp_py/mbpp-py._reflexion_5_gpt-4_pass_at_k_1_py.jsonl"


def _paper_program(shared: Path, log: str, key: str, task_id: str) -> tuple[str, str, str]:
    """(solution, prompt, entry point) of one task in one of the paper's logs."""
    path = shared / PAPER_RUNS / log
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get(key) == task_id:
            return str(row["solution"]), str(row["prompt"]), str(row["entry_point"])
    raise AssertionError(f"{task_id} not in {path}")


def _rec(
    benchmark: str, task_id: str, trial: int, final: bool, program: str, self_p: bool, base: bool
) -> dict[str, Any]:
    return {
        "schema": 1,
        "type": "trial",
        "run_id": "t",
        "attempt_id": f"a-{task_id}",
        "task_id": task_id,
        "benchmark": benchmark,
        "strategy": "reflexion",
        "model": "logged",
        "final": final,
        "trial": trial,
        "candidate": program,
        "self_test": {"passed": self_p},
        "hidden": {
            "passed": base,
            "status": "pass" if base else "fail",
            "value": float(base),
            "detail": "",
            "extra": {},
        },
        "model_calls": [],
        "wall_time_s": 1.0,
        "error": None,
    }


def _write_run(run_dir: Path, records: list[dict[str, Any]]) -> Path:
    run_dir.mkdir(parents=True)
    with (run_dir / "log.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return run_dir


@pytest.fixture
def study(tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A study of three runs: HumanEval and MBPP (to re-score) and a HumanEval run
    left without a rescore file."""
    # The reference's expected outputs are computed afresh, not read from ~/.cache.
    monkeypatch.setenv("REFLEXION_BENCH_CACHE", str(tmp_path / "cache"))
    lang = PythonLanguage()
    he = {t.id: t for t in HumanEvalEnvironment().load_tasks()}
    right = {tid: he[tid].prompt + str(he[tid].data["canonical_solution"]) for tid in he}
    sol, prompt, entry = _paper_program(shared_data, HE_LOG, "task_id", "HumanEval/10")
    he10_wrong = lang.complete_solution(sol, prompt, entry)
    wrong2 = he["HumanEval/2"].prompt + "    return 0.0\n"
    he_records = [
        # HumanEval/10: self-tests and base pass, plus fails (the paper's program).
        _rec("humaneval", "HumanEval/10", 1, True, he10_wrong, True, True),
        # HumanEval/0: right at once.
        _rec("humaneval", "HumanEval/0", 1, True, right["HumanEval/0"], True, True),
        # HumanEval/2: wrong at trial 1, right at trial 2.
        _rec("humaneval", "HumanEval/2", 1, False, wrong2, False, False),
        _rec("humaneval", "HumanEval/2", 2, True, right["HumanEval/2"], True, True),
    ]
    root = tmp_path / "study"
    _write_run(root / "he", he_records)
    _write_run(root / "retry", [{**r, "strategy": "retry"} for r in he_records])
    msol, mprompt, mentry = _paper_program(shared_data, MBPP_LOG, "name", "mbpp_89_closest_num")
    _write_run(
        root / "mbpp",
        [
            _rec(
                "mbpp",
                "mbpp_89_closest_num",
                1,
                True,
                lang.complete_solution(msol, mprompt, mentry),
                True,
                True,
            ),
        ],
    )
    return root


def _rescore(args: list[str], shared: Path) -> int:
    return rescore_cmd.main(
        [*args, "--tests", "plus", "--sandbox", "local", "--data", str(shared), "--quiet"]
    )


def test_rescore_writes_verdicts_resumes_and_the_report_shows_plus_columns(
    study: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    he, mbpp, retry = study / "he", study / "mbpp", study / "retry"
    assert _rescore([str(he), str(mbpp)], shared_data) == 0
    out = capsys.readouterr().out
    assert "4 programs, 4 judged now, 0 already judged, 0 errors" in out

    rows = read_rows(he)
    assert len(rows) == 4
    by_task = {(r["task_id"], r["trial"]): r for r in rows}
    wrong = by_task[("HumanEval/10", 1)]
    assert (wrong["status"], wrong["passed"], wrong["judged"]) == ("fail", False, True)
    assert wrong["verdict"]["inputs"] > 0 and "failed_input" in wrong["verdict"]
    assert by_task[("HumanEval/0", 1)]["status"] == "pass"
    assert by_task[("HumanEval/2", 2)]["passed"] is True
    # A base failure in the log fails plus without running.
    first2 = by_task[("HumanEval/2", 1)]
    assert (first2["passed"], first2["judged"]) == (False, False)
    for r in rows:
        assert r["program_sha256"] == program_sha256(
            next(
                x["candidate"]
                for x in map(json.loads, (he / "log.jsonl").read_text().splitlines())
                if (x["task_id"], x["trial"]) == (r["task_id"], r["trial"])
            )
        )
        s = r["settings"]
        assert s["tests"] == "plus" and s["plus_inputs"]["name"] == "humaneval_plus_inputs.jsonl.gz"
        assert len(s["plus_inputs"]["sha256"]) == 64
        assert r["date"] and r["sandbox"]["isolation"] and "command" in r
    (mrow,) = read_rows(mbpp)
    assert (
        mrow["passed"] is False and mrow["settings"]["plus_inputs"]["name"] == "MbppPlus-v1.jsonl"
    )

    # Resuming judges nothing; --force judges every program again (appended).
    assert _rescore([str(study)], shared_data) == 0
    out = capsys.readouterr().out
    assert f"{he}: 4 programs, 0 judged now, 4 already judged" in out
    assert f"{retry}: 4 programs, 4 judged now" in out  # the study folder: every run
    assert len(read_rows(he)) == 4
    (retry / RESCORE_NAME).unlink()  # this one is the run without a rescore file
    assert _rescore([str(mbpp), "--force"], shared_data) == 0
    assert len(read_rows(mbpp)) == 2 and len(current_verdicts(read_rows(mbpp))) == 1

    # The report, rebuilt from the files: plus columns where a rescore file exists.
    report_dir = study / "report"
    assert report_cmd.main([str(study), "--out", str(report_dir), "--resamples", "200"]) == 0
    capsys.readouterr()
    data = json.loads((report_dir / "report.json").read_text())
    groups = {(g["benchmark"], g["strategy"]): g for g in data["groups"]}
    p = groups[("humaneval", "reflexion")]["plus"]
    assert (p["first_try"], p["final"], p["solved_by_trial"][-1]) == (1 / 3, 2 / 3, 2 / 3)
    assert groups[("humaneval", "reflexion")]["final"]["estimate"] == 1.0  # base: as logged
    assert (p["base_pass_plus_fail"], p["unseen_fp"]) == (1, 1)
    assert p["base_pass_plus_fail_tasks"] == ["HumanEval/10"]
    assert groups[("mbpp", "reflexion")]["plus"]["final"] == 0.0
    assert "plus" not in groups[("humaneval", "retry")]
    with (report_dir / "table_main.csv").open(encoding="utf-8") as fh:
        main = {(r["benchmark"], r["strategy"]): r for r in csv.DictReader(fh)}
    he_row, retry_row = main[("humaneval", "reflexion")], main[("humaneval", "retry")]
    assert float(he_row["first_try_plus"]) == pytest.approx(1 / 3)
    assert float(he_row["final_plus"]) == pytest.approx(2 / 3)
    assert float(he_row["solved_plus"]) == pytest.approx(2 / 3)
    assert float(he_row["self_base_pass_plus_fail"]) == 1
    # A run without a rescore file: the cells are empty, not zero.
    for col in ("first_try_plus", "final_plus", "solved_plus", "self_base_pass_plus_fail"):
        assert retry_row[col] == ""
    assert "plus" in (report_dir / "report.md").read_text()


def test_a_study_without_rescore_files_has_no_plus_columns(study: Path) -> None:
    from reflexion_bench.analysis.report import build_comparison
    from reflexion_bench.analysis.tables import tables

    frames = tables(build_comparison([study], n_resamples=50))
    assert not [c for c in frames["main"].columns if "plus" in c]


def test_an_error_row_is_no_verdict_and_is_judged_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A program that does not define the entry point, logged as a base pass.
    program = "def f():\n    pass\n"
    run = _write_run(
        tmp_path / "run", [_rec("humaneval", "HumanEval/0", 1, True, program, True, True)]
    )
    row = {
        "schema": 1,
        "type": "plus_verdict",
        "task_id": "HumanEval/0",
        "trial": 1,
        "program_sha256": program_sha256(program),
        "settings_key": "k",
        "status": "error",
        "passed": None,
        "verdict": None,
        "detail": "SandboxError: boom",
    }
    (run / RESCORE_NAME).write_text(json.dumps(row) + "\n")
    assert current_verdicts(read_rows(run)) == {}
    records = [json.loads((run / "log.jsonl").read_text())]
    assert with_rescore(records, run) is records  # no verdict: nothing laid over

    assert rescore_cmd.main([str(run), "--tests", "plus", "--sandbox", "local", "--quiet"]) == 0
    assert "1 programs, 1 judged now" in capsys.readouterr().out
    rows = read_rows(run)
    assert [r["status"] for r in rows] == ["error", "fail"]
    (plus,) = [r["hidden"]["extra"]["plus"] for r in with_rescore(records, run)]
    assert plus["passed"] is False and plus["source"] == RESCORE_NAME


def test_a_sandbox_failure_is_an_error_row_and_the_run_goes_on(tmp_path: Path) -> None:
    import asyncio
    from types import SimpleNamespace

    from reflexion_bench.analysis.rescore import Judge, rescore_run
    from reflexion_bench.sandbox.base import SandboxError

    good, bad = "def f():\n    return 1\n", "def f():\n    return 2\n"
    run = _write_run(
        tmp_path / "run",
        [
            _rec("humaneval", "HumanEval/0", 1, True, good, True, True),
            _rec("humaneval", "HumanEval/1", 1, True, bad, True, True),
        ],
    )

    class Scorer:
        timeout_s = 10.0
        plus = SimpleNamespace(
            humaneval_plus_path=str(
                Path(__file__).resolve().parents[2]
                / "reflexion_bench/data/humaneval_plus_inputs.jsonl.gz"
            ),
            mbpp_plus_path=None,
            min_call_s=1.0,
            time_factor=4.0,
            reference_limit_s=10.0,
        )

        def timeout_for(self, task: Any) -> float:
            return 10.0

        async def run_plus(self, sandbox: Any, task: Any, program: str, base: Any) -> dict:
            if program == bad:
                raise SandboxError("the judge never started")
            return {"passed": True, "status": "pass", "detail": "", "inputs": 3}

    tasks = {t: SimpleNamespace(id=t) for t in ("HumanEval/0", "HumanEval/1")}
    judge = Judge("humaneval", tasks, Scorer(), sandbox=None)
    res = asyncio.run(rescore_run(run, judge))
    assert (res.judged, res.errors) == (1, 1)
    rows = {r["task_id"]: r for r in read_rows(run)}
    assert rows["HumanEval/0"]["status"] == "pass"
    err = rows["HumanEval/1"]
    assert (err["status"], err["passed"], err["verdict"]) == ("error", None, None)
    assert "SandboxError: the judge never started" in err["detail"]
    # The next run judges only the errored program again.
    res = asyncio.run(rescore_run(run, judge))
    assert (res.skipped, res.errors) == (1, 1)
