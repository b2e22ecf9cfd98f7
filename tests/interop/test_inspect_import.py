"""``import-inspect`` on real Inspect logs (written by Inspect's own eval with its mock
model, tests/interop/conftest.py), and ``compare``/``report``/the viewer on the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.analysis.runs import load_groups, seed_sets
from reflexion_bench.cli import main as cli_main
from reflexion_bench.runner.runlog import load_run_records
from tests.interop.conftest import (
    INCORRECT,
    PLAIN_FINAL,
    REACT_FINAL,
    REACT_FIRST,
    REACT_SUBMISSIONS,
    REACT_TRIALS,
    REACT_USES,
    TARGETS,
)

pytestmark = pytest.mark.requires("inspect_ai")


def _by_task(records: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in records:
        out.setdefault(str(r["task_id"]), []).append(r)
    return out


@pytest.fixture(scope="module")
def imported(
    inspect_logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("imported")
    out = {}
    for name, log in inspect_logs.items():
        assert cli_main(["import-inspect", str(log), "--out", str(root / name)]) == 0
        out[name] = root / name
    return out


def test_plain_log_gives_one_task_per_sample_and_its_epochs_as_seeds(
    inspect_logs: dict[str, Path], imported: dict[str, Path]
) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(inspect_logs["plain"]))
    # Inspect's own verdicts, read straight from the log: C where the target is included.
    inspect_says = {(str(s.id), s.epoch): s.scores["includes"].value == "C" for s in log.samples}
    assert {k[0]: v for k, v in inspect_says.items()} == PLAIN_FINAL
    root = imported["plain"]
    seeds = sorted(p.name for p in root.iterdir() if (p / "log.jsonl").is_file())
    assert seeds == ["epoch-1", "epoch-2"]
    for epoch in (1, 2):
        records = load_run_records(root / f"epoch-{epoch}")
        tasks = _by_task(records)
        assert sorted(tasks) == sorted(TARGETS)  # 5 samples x 2 epochs: 5 task ids per seed
        assert all(len(t) == 1 for t in tasks.values())
        assert {t: rs[0]["hidden"]["passed"] for t, rs in tasks.items()} == {
            t: inspect_says[(t, epoch)] for t in TARGETS
        }
        assert all(r["answer_key_uses"] == {} for r in records)
        assert all(r["meta"]["seed"] == epoch for r in records)
        call = records[0]["model_calls"][0]
        assert call["model"] == "mockllm/model" and call["role"] == "actor"
        # No submit tool: the candidate is the reply, the sample's output.
        assert {r["candidate"] for r in records} == {"Default output from mockllm/model"}
        assert {r["extra"]["inspect"]["candidate_from"] for r in records} == {"reply"}
    # The two epochs are one configuration under two seeds, clean.
    sets = seed_sets(load_groups([root]))
    assert len(sets) == 1 and sets[0].seeds == [1, 2]
    assert {g.summary["answer_key"]["label"] for g in sets[0].members} == {"clean"}
    manifest = json.loads((root / "import.json").read_text())
    assert manifest["kind"] == "inspect" and manifest["tasks"] == 5
    provenance = json.loads((root / "epoch-1" / "provenance.json").read_text())
    assert provenance["model"]["model"] == "mockllm/model"
    assert provenance["task"]["task"] == "words" and provenance["dataset"]["samples"] == 5


def test_react_attempts_are_trials_and_the_run_is_answer_in_loop(imported: dict[str, Path]) -> None:
    records = load_run_records(imported["react"])
    tasks = _by_task(records)
    assert {t: len(rs) for t, rs in tasks.items()} == REACT_TRIALS
    assert {t: rs[-1]["hidden"]["passed"] for t, rs in tasks.items()} == REACT_FINAL
    assert {t: rs[0]["hidden"]["passed"] for t, rs in tasks.items()} == REACT_FIRST
    for tid, rs in tasks.items():
        # Every trial's candidate is the answer it submitted, the last one's too: the
        # viewer's diffs between trials compare answers, not react's tool-call text.
        assert [r["candidate"] for r in rs] == REACT_SUBMISSIONS[tid]
        assert {r["extra"]["inspect"]["candidate_from"] for r in rs} == {"submit"}
        # The assistant's own text is kept beside it (the mock model only calls submit).
        assert {r["extra"]["inspect"]["assistant_text"] for r in rs} == {
            "tool call for tool submit"
        }
        # What the final scorer read: react's output, the reply with the answer appended.
        assert [("output_completion" in r["extra"]["inspect"]) for r in rs] == [False] * (
            len(rs) - 1
        ) + [True]
        judged = rs[-1]["extra"]["inspect"]["output_completion"]
        assert judged.startswith("tool call for tool submit") and judged.endswith(
            rs[-1]["candidate"]
        )
    # The scorer's feedback between attempts is the trial's in-loop text.
    q2 = tasks["q2"]
    assert [r["self_test"]["passed"] for r in q2[:2]] == [False, False]
    assert INCORRECT in q2[0]["self_test"]["text"]
    assert q2[2]["self_test"] is None  # react does not score the last allowed attempt
    summary = json.loads(Path(imported["react"], "summary.json").read_text())
    assert summary["answer_key"]["label"] == "answer-in-loop"
    assert summary["answer_key"]["uses"] == REACT_USES
    assert summary["answer_key"]["by_source"] == {"solver.scorer_verdict": REACT_USES}
    assert summary["first_to_final"]["fixed"] == 2  # q1 and q3


def test_compare_gives_the_viewers_mcnemar_table(imported: dict[str, Path], capsys) -> None:
    from reflexion_bench.view.data import Catalog

    a, b = imported["plain"] / "epoch-1", imported["react"]
    capsys.readouterr()
    assert cli_main(["compare", str(a), str(b), "--format", "json", "--resamples", "500"]) == 0
    result = json.loads(capsys.readouterr().out)
    page = Catalog([a, b], n_resamples=500).compare(0, 1)
    assert result["mcnemar"] == page["mcnemar"]
    assert result["mcnemar"] | {"p_value": None} == {
        "n": 5,
        "both": 3,
        "only_a": 0,
        "only_b": 1,
        "neither": 1,
        "p_value": None,
    }
    assert result["diff"] == page["diff"]
    assert [d["id"] for d in result["differ"]] == [d["id"] for d in page["differ"]] == ["q4"]
    assert result["a"]["answer_key"] == "clean" and result["b"]["answer_key"] == "answer-in-loop"
    assert any("answer key differs" in n for n in result["notes"])
    assert result["assessment"]["verdict"] in ("inconclusive", "different", "equivalent")
    assert cli_main(["compare", str(a), str(b), "--format", "md", "--resamples", "500"]) == 0
    md = capsys.readouterr().out
    assert "| McNemar table (both / only A / only B / neither) | 3 / 0 / 1 / 1 |" in md
    assert cli_main(["compare", str(a), str(b), "--format", "latex", "--resamples", "500"]) == 0
    assert r"\begin{tabular}" in capsys.readouterr().out


def test_compare_pairs_the_epochs_as_seeds(imported: dict[str, Path], capsys) -> None:
    capsys.readouterr()
    args = [
        str(imported["plain"]),
        str(imported["react"]),
        "--format",
        "json",
        "--resamples",
        "200",
    ]
    assert cli_main(["compare", *args]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["a"]["n_seeds"] == 2 and result["b"]["n_seeds"] == 1
    assert result["test"]["name"] == "sign_flip_exact" and result["n_common"] == 5
    assert [d["id"] for d in result["differ"]] == ["q4"]


def test_report_and_viewer_read_the_imports(imported: dict[str, Path], capsys) -> None:
    from reflexion_bench.view.data import Catalog

    root = imported["plain"].parent
    assert (
        cli_main(["report", str(root), "--format", "json", "--resamples", "200", "--no-write"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert {g["strategy"] for g in report["groups"]} == {"generate", "react"}
    cat = Catalog([imported["plain"] / "epoch-1", imported["react"]], n_resamples=200)
    page = cat.run_page(1)
    assert [row["id"] for row in page["tasks"]] == list(TARGETS)
    assert page["answer_key"] == f"answer-in-loop ({REACT_USES} uses)"
    task = cat.run(1).task("q2")
    assert task is not None and len(task["trials"]) == 3


def test_a_folder_of_logs_imports_each(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    src = tmp_path / "logs"
    (src / "sub").mkdir(parents=True)
    (src / "plain.eval").write_bytes(inspect_logs["plain"].read_bytes())
    # The react log in Inspect's other format (.json), one folder down.
    write_eval_log(read_eval_log(str(inspect_logs["react"])), str(src / "sub" / "react.json"))
    out = tmp_path / "out"
    assert cli_main(["import-inspect", str(src), "--out", str(out)]) == 0
    made = sorted(str(p.parent.relative_to(out)) for p in out.rglob("log.jsonl"))
    assert made == ["plain/epoch-1", "plain/epoch-2", "react"]
    tasks = _by_task(load_run_records(out / "react"))
    assert {t: len(rs) for t, rs in tasks.items()} == REACT_TRIALS
    manifest = json.loads((out / "import.json").read_text())
    assert [Path(p["file"]).name for p in manifest["logs"]] == ["plain.eval", "react.json"]


def test_bad_input_is_one_line_naming_what_to_fix(
    inspect_logs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    capsys.readouterr()
    assert (
        cli_main(["import-inspect", str(tmp_path / "nope.eval"), "--out", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: not found:") and err.count("\n") == 1
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert cli_main(["import-inspect", str(broken), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "not a readable Inspect log" in err and "Traceback" not in err and err.count("\n") == 1
    # A scorer value no mapping covers: the error names the scorer, the value and --map.
    log = read_eval_log(str(inspect_logs["plain"]))
    for s in log.samples:
        s.scores["includes"].value = "maybe"
    odd = tmp_path / "odd.eval"
    write_eval_log(log, str(odd))
    assert cli_main(["import-inspect", str(odd), "--out", str(tmp_path / "odd")]) == 2
    err = capsys.readouterr().err
    assert "'includes' gave the value 'maybe'" in err and "--map includes:maybe=pass" in err
    assert err.count("\n") == 1
    out = tmp_path / "odd-mapped"
    assert (
        cli_main(["import-inspect", str(odd), "--out", str(out), "--map", "includes:maybe=pass"])
        == 0
    )
    assert all(r["hidden"]["passed"] for r in load_run_records(out / "epoch-1"))
    assert cli_main(["import-inspect", str(odd), "--out", str(out), "--map", "maybe=pass"]) == 2
    assert "exists; import into a new folder or pass --force" in capsys.readouterr().err
    assert (
        cli_main(
            [
                "import-inspect",
                str(inspect_logs["plain"]),
                "--out",
                str(tmp_path / "s"),
                "--scorer",
                "nope",
            ]
        )
        == 2
    )
    assert "no scorer 'nope'" in capsys.readouterr().err
    assert (
        cli_main(["import-inspect", str(odd), "--out", str(tmp_path / "m"), "--map", "maybe"]) == 2
    )
    assert "expected [SCORER:]VALUE=pass" in capsys.readouterr().err


def test_compare_reports_degenerate_cases_and_exits_zero(
    imported: dict[str, Path], tmp_path: Path, capsys
) -> None:
    a = imported["plain"] / "epoch-1"
    capsys.readouterr()
    # A run against itself: no discordant task.
    assert cli_main(["compare", str(a), str(a), "--format", "json", "--resamples", "100"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mcnemar"]["p_value"] == 1.0 and result["differ"] == []
    assert any("no discordant task" in n for n in result["notes"])
    assert cli_main(["compare", str(a), str(tmp_path / "missing")]) == 2
    assert "error: B:" in capsys.readouterr().err


def test_secrets_in_a_log_never_reach_the_run_folder(
    inspect_logs: dict[str, Path], tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    secret = "sk-test-0123456789abcdefghijklmnop"
    log = read_eval_log(str(inspect_logs["plain"]))
    log.eval.model_args = {"api_key": secret, "temperature_hint": 0}
    log.eval.model_base_url = f"https://user:{secret}@models.example.org/v1"
    leaky = tmp_path / "leaky.eval"
    write_eval_log(log, str(leaky))
    out = tmp_path / "out"
    assert cli_main(["import-inspect", str(leaky), "--out", str(out)]) == 0
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {
        "config.yaml",
        "provenance.json",
        "import.json",
        "log.jsonl",
    }
    for p in written:
        if p.suffix in (".json", ".yaml", ".jsonl"):
            assert secret not in p.read_text(encoding="utf-8"), p
    config = (out / "epoch-1" / "config.yaml").read_text()
    assert "api_key: '***'" in config


def test_a_sample_that_errored_is_an_errored_task(tmp_path: Path) -> None:
    """Inspect records a failed sample (``fail_on_error=False``) with its error and no
    score: imported, it is a task that errored, counted as failed, as one of ours."""
    from inspect_ai import Task
    from inspect_ai.model import get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    from tests.interop.conftest import _dataset, _run, _sample_of, plain_model

    def flaky(input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        if _sample_of(input) == "q1":
            raise RuntimeError("the mock provider is down for q1")
        return plain_model(input, tools, tool_choice, config)

    log = _run(
        Task(dataset=_dataset(), solver=generate(), scorer=includes(), name="words"),
        tmp_path / "logs",
        model=get_model("mockllm/model", custom_outputs=flaky),
        fail_on_error=False,
    )
    out = tmp_path / "run"
    assert cli_main(["import-inspect", str(log), "--out", str(out)]) == 0
    tasks = _by_task(load_run_records(out))
    assert sorted(tasks) == sorted(TARGETS)
    assert "the mock provider is down for q1" in tasks["q1"][-1]["error"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errored_task_ids"] == ["q1"]
    assert summary["final"] == pytest.approx(2 / 5)  # q0, q3 pass; q1 errored = failed
