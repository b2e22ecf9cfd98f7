"""``reflexion-bench compare`` on run folders written here: the statistics are the
report's and the viewer's, and degenerate cases are reported, not errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from reflexion_bench.analysis.compare import compare_paths, render
from reflexion_bench.analysis.stats import mcnemar_exact, sign_flip_exact
from reflexion_bench.cli import main as cli_main
from reflexion_bench.runner.runlog import RunLogWriter


def _run(
    folder: Path, verdicts: dict[str, list[bool]], *, seed: int | None = None, name: str = "s"
) -> Path:
    """A run folder: per task its trials' hidden verdicts (the last one submitted)."""
    folder.mkdir(parents=True)
    w = RunLogWriter(folder / "log.jsonl")
    for tid, vs in verdicts.items():
        for k, v in enumerate(vs, 1):
            w.write(
                {
                    "type": "trial",
                    "run_id": folder.name,
                    "attempt_id": "a",
                    "task_id": tid,
                    "benchmark": "toy",
                    "strategy": name,
                    "model": "m",
                    "final": k == len(vs),
                    "trial": k,
                    "candidate": f"{tid}-{k}-{seed}",
                    "hidden": {"passed": v, "status": "pass" if v else "fail"},
                    "model_calls": [],
                    "wall_time_s": 0.1,
                    "answer_key_uses": {},
                }
            )
    w.close()
    if seed is not None:
        (folder / "config.yaml").write_text(yaml.safe_dump({"strategy": name, "seed": seed}))
    return folder


TASKS = [f"t{i}" for i in range(8)]


def test_one_seed_each_is_exact_mcnemar_on_the_common_tasks(tmp_path: Path) -> None:
    a_final = [True, True, True, False, False, True, False, True]
    b_final = [True, False, False, False, True, True, False, False]
    a = _run(tmp_path / "a", {t: [v] for t, v in zip(TASKS, a_final, strict=True)})
    # B also has a task A lacks and misses one A has: they are listed, not paired.
    b_tasks = {t: [False, v] for t, v in zip(TASKS[:-1], b_final[:-1], strict=True)}
    b = _run(tmp_path / "b", {**b_tasks, "extra": [True]})
    r = compare_paths(a, b, n_resamples=300)
    expected = mcnemar_exact(a_final[:-1], b_final[:-1]).to_dict()
    assert r["mcnemar"] == expected and r["n_common"] == 7
    assert r["only_in_a"] == ["t7"] and r["only_in_b"] == ["extra"]
    assert [d["id"] for d in r["differ"]] == ["t1", "t2", "t4"]
    assert r["differ"][0] == {"id": "t1", "a": True, "b": False, "a_first": True, "b_first": False}
    assert r["diff"]["estimate"] == pytest.approx((4 - 3) / 7)
    assert r["assessment"]["verdict"] == "inconclusive"
    assert r["b"]["fixes"] == 3 and r["b"]["first_try"] == 1 / 8  # "extra" passes at once
    md = render(r, "md")
    assert "| McNemar table (both / only A / only B / neither) | 2 / 2 / 1 / 2 |" in md
    assert "Not paired: 1 tasks only in A, 1 only in B" in md
    assert json.loads(render(r, "json"))["mcnemar"] == expected
    assert r"\begin{tabular}" in render(r, "latex")


def test_seeds_are_paired_by_task_with_the_sign_flip_test(tmp_path: Path) -> None:
    seeds_a = [[True] * 6 + [False] * 2, [True] * 5 + [False] * 3]
    seeds_b = [[False] * 8, [True] + [False] * 7]
    for s, vs in enumerate(seeds_a):
        _run(
            tmp_path / "a" / f"seed{s}",
            {t: [v] for t, v in zip(TASKS, vs, strict=True)},
            seed=s,
            name="A",
        )
    for s, vs in enumerate(seeds_b):
        _run(
            tmp_path / "b" / f"seed{s}",
            {t: [v] for t, v in zip(TASKS, vs, strict=True)},
            seed=s,
            name="B",
        )
    r = compare_paths(tmp_path / "a", tmp_path / "b", n_resamples=300)
    assert r["a"]["n_seeds"] == 2 and r["b"]["n_seeds"] == 2
    import numpy as np

    xa, xb = np.array(seeds_a, dtype=float).T, np.array(seeds_b, dtype=float).T
    assert r["test"]["name"] == "sign_flip_exact"
    assert r["test"]["p_value"] == pytest.approx(sign_flip_exact(xa, xb).p_value)
    assert r["mcnemar"] is None and r["assessment"]["seeds"] == 2
    assert r["differ"][0] == {"id": "t0", "a": 1.0, "b": 0.5}


def test_degenerate_cases_are_reported_and_exit_zero(tmp_path: Path, capsys) -> None:
    a = _run(tmp_path / "a", {t: [True] for t in TASKS})
    same = _run(tmp_path / "same", {t: [True] for t in TASKS})
    other = _run(tmp_path / "other", {"x": [True], "y": [False]})
    one = _run(tmp_path / "one", {"t0": [False]})
    capsys.readouterr()
    assert cli_main(["compare", str(a), str(same), "--format", "json", "--resamples", "100"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["mcnemar"]["p_value"] == 1.0 and any("no discordant task" in n for n in r["notes"])
    assert r["assessment"]["detectable_difference"] is None
    assert cli_main(["compare", str(a), str(other), "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["n_common"] == 0 and r["mcnemar"] is None and "no task in common" in r["notes"][0]
    assert cli_main(["compare", str(a), str(one), "--resamples", "100"]) == 0
    assert "one common task" in capsys.readouterr().out


def test_unreadable_sides_are_one_line_errors(tmp_path: Path, capsys) -> None:
    a = _run(tmp_path / "a", {t: [True] for t in TASKS})
    _run(tmp_path / "two" / "x", {"t0": [True]}, seed=0, name="X")
    _run(tmp_path / "two" / "y", {"t0": [True]}, seed=0, name="Y")
    capsys.readouterr()
    for args, message in [
        ([str(a), str(tmp_path / "nope")], "error: B: "),
        ([str(tmp_path / "two"), str(a)], "error: A: "),
        ([str(a), str(a), "--equivalence-margin", "0"], "error: --equivalence-margin"),
    ]:
        assert cli_main(["compare", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err
    assert cli_main(["compare", str(tmp_path / "two"), str(a)]) == 2
    assert "holds 2 configurations" in capsys.readouterr().err


def test_the_papers_own_logs_compare(shared_data: Path, tmp_path: Path, capsys) -> None:
    """Two of the paper's HumanEval-py logs (Reflexion and the one-attempt baseline),
    imported and re-scored (first 12 problems), pair on their task ids."""
    root = shared_data / "reflexion-original-repo" / "programming_runs" / "root"
    logs = {
        "reflexion": root
        / "reflexion_humaneval_py_pass_at_1"
        / "reflexion_humaneval_py_pass_at_1.jsonl",
        "simple": next((root / "simple_human_eval_py_logging").glob("*.jsonl")),
    }
    for name, src in logs.items():
        args = ["import-reflexion-logs", str(src), "--out", str(tmp_path / name), "--limit", "12"]
        assert cli_main([*args, "--benchmark", "humaneval"]) == 0
    capsys.readouterr()
    a, b = tmp_path / "reflexion", tmp_path / "simple"
    assert cli_main(["compare", str(a), str(b), "--format", "json", "--resamples", "200"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["n_common"] == 12 and r["a"]["source"] == "noahshinn/reflexion programming"
    from reflexion_bench.analysis.runs import load_groups
    from reflexion_bench.analysis.seeds import final_verdicts

    (ga,), (gb,) = load_groups([a]), load_groups([b])
    fa, fb = final_verdicts(ga), final_verdicts(gb)
    assert (
        r["mcnemar"]
        == mcnemar_exact([bool(fa[t]) for t in fa], [bool(fb[t]) for t in fa]).to_dict()
    )


def test_compare_names_the_runs_final_and_the_common_tasks_final_apart(tmp_path: Path) -> None:
    # A has 4 tasks (2 pass: final 50%); B only 2 of them, both failing. On the 2 common
    # tasks A passes both (100%): two quantities, and the output names them apart.
    a = _run(tmp_path / "a", {"t0": [True], "t1": [True], "t2": [False], "t3": [False]})
    b = _run(tmp_path / "b", {"t0": [False], "t1": [False]})
    r = compare_paths(a, b, n_resamples=200)
    from reflexion_bench.analysis.report import load_summary

    headline = load_summary(a)["final"]
    assert r["a"]["final"] == headline == 0.5  # the run's own final, as `report` prints it
    assert r["final_a"] == 1.0  # over the common tasks only
    md = render(r, "md")
    header = md.splitlines()[2]
    assert "| final (pass@1) % |" in header and "pass@1 %" not in header.replace("(pass@1) %", "")
    assert "| final on common tasks A / B % | 100.0 / 0.0 |" in md
    assert "docs/reports.md#metrics" in md and "docs/reports.md#metrics" in render(r, "latex")
    # Every name compare prints is defined in the glossary it points to.
    glossary = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text()
    section = glossary.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    for name in ("first try", "final", "final on common tasks", "fixes / breaks"):
        assert f"**{name}**" in section, name
