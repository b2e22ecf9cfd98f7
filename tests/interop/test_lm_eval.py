"""``import-lm-eval`` on real lm-evaluation-harness ``--log_samples`` output, produced here
by lm-eval's own CLI (its ``dummy`` model, seeded, on a tiny local multiple-choice task),
then ``compare`` on two such runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_bench.cli import main as cli_main
from reflexion_bench.runner.runlog import load_run_records

pytestmark = pytest.mark.requires("lm_eval")

WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "melon", "peach", "pear", "plum"]
TASK_YAML = """\
task: tiny_fruit
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Which fruit is {{{{word}}}}?"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{label}}}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def _lm_eval(task_dir: Path, out: Path, seed: int) -> Path:
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    cmd = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "dummy",
        "--tasks",
        "tiny_fruit",
        "--include_path",
        str(task_dir),
        "--log_samples",
        "--output_path",
        str(out),
        "--seed",
        str(seed),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (samples,) = sorted(out.rglob("samples_tiny_fruit_*.jsonl"))
    return samples


@pytest.fixture(scope="module")
def lm_eval_samples(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("lm-eval")
    data = root / "fruit.jsonl"
    with data.open("w", encoding="utf-8") as fh:
        for i, w in enumerate(WORDS):
            choices = [w, WORDS[(i + 1) % len(WORDS)], WORDS[(i + 2) % len(WORDS)]]
            fh.write(json.dumps({"word": w, "choices": choices, "label": 0}) + "\n")
    task_dir = root / "tasks"
    task_dir.mkdir()
    (task_dir / "tiny_fruit.yaml").write_text(TASK_YAML.format(data=data), encoding="utf-8")
    return {seed: _lm_eval(task_dir, root / f"out-{seed}", seed) for seed in (1, 2)}


def test_import_gives_doc_ids_as_tasks_and_the_metric_as_verdict(
    lm_eval_samples: dict[int, Path], tmp_path: Path
) -> None:
    src = lm_eval_samples[1]
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    out = tmp_path / "run"
    assert cli_main(["import-lm-eval", str(src), "--out", str(out)]) == 0
    records = load_run_records(out)
    assert [r["task_id"] for r in records] == [str(r["doc_id"]) for r in rows]
    assert len(records) == len(WORDS)
    assert [r["hidden"]["passed"] for r in records] == [row["acc"] == 1.0 for row in rows]
    assert all(r["trial"] == 1 and r["answer_key_uses"] == {} for r in records)
    # The dummy backend has no checkpoint: the model is named by the backend.
    assert records[0]["benchmark"] == "tiny_fruit" and records[0]["model"] == "dummy"
    summary = json.loads((out / "summary.json").read_text())
    results = json.loads(next(src.parent.glob("results_*.json")).read_text())
    assert summary["final"] == pytest.approx(results["results"]["tiny_fruit"]["acc,none"])
    assert summary["answer_key"]["label"] == "clean"
    manifest = json.loads((out / "import.json").read_text())
    assert manifest["kind"] == "lm-eval" and manifest["metric"] == "acc"
    assert manifest["seed"] == 1 and manifest["source_file"] == str(src)


def test_two_runs_compare_and_repeats_are_seeds(
    lm_eval_samples: dict[int, Path], tmp_path: Path, capsys
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli_main(["import-lm-eval", str(lm_eval_samples[1]), "--out", str(a)]) == 0
    assert cli_main(["import-lm-eval", str(lm_eval_samples[2]), "--out", str(b)]) == 0
    capsys.readouterr()
    assert cli_main(["compare", str(a), str(b), "--format", "json", "--resamples", "200"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n_common"] == len(WORDS) and result["mcnemar"]["n"] == len(WORDS)
    va = {r["task_id"]: r["hidden"]["passed"] for r in load_run_records(a)}
    vb = {r["task_id"]: r["hidden"]["passed"] for r in load_run_records(b)}
    assert result["mcnemar"]["only_a"] == sum(va[t] and not vb[t] for t in va)
    assert result["mcnemar"]["only_b"] == sum(vb[t] and not va[t] for t in va)
    # Both files together: one configuration under its two seeds.
    both = tmp_path / "both"
    assert (
        cli_main(
            ["import-lm-eval", str(lm_eval_samples[1]), str(lm_eval_samples[2]), "--out", str(both)]
        )
        == 0
    )
    seeds = sorted(p.parent.name for p in both.rglob("log.jsonl"))
    assert seeds == ["seed-1", "seed-2"]
    capsys.readouterr()
    assert cli_main(["compare", str(both), str(a), "--format", "json", "--resamples", "200"]) == 0
    assert json.loads(capsys.readouterr().out)["a"]["n_seeds"] == 2


def test_bad_samples_are_one_line_naming_what_to_fix(
    lm_eval_samples: dict[int, Path], tmp_path: Path, capsys
) -> None:
    capsys.readouterr()
    bad = tmp_path / "samples_tiny_fruit_2026-01-01T00-00-00.000000.jsonl"
    bad.write_text('{"doc_id": 0, "acc": 1.0}\nnot json\n', encoding="utf-8")
    assert cli_main(["import-lm-eval", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: not valid JSON" in err and err.count("\n") == 1
    assert (
        cli_main(["import-lm-eval", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")])
        == 2
    )
    assert "not found" in capsys.readouterr().err
    src = lm_eval_samples[1]
    assert (
        cli_main(["import-lm-eval", str(src), "--out", str(tmp_path / "m"), "--metric", "bleu"])
        == 2
    )
    assert "no metric 'bleu'" in capsys.readouterr().err
    odd = tmp_path / "samples_tiny_fruit_2026-01-01T00-00-01.000000.jsonl"
    odd.write_text('{"doc_id": 0, "metrics": ["grade"], "grade": "B+"}\n', encoding="utf-8")
    assert cli_main(["import-lm-eval", str(odd), "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert "'grade' gave the value 'B+'" in err and "--map grade:B+=pass" in err
