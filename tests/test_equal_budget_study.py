"""The study driver (scripts/equal_budget_study.py): step sizes, what counts as done, the
compute plan's cut rule and the README block it writes. (A run folder growing in place
with a larger limit: tests/runner/test_resume_guard.py.)"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The required arms of results/reflection-at-equal-budget (its study.yaml), per benchmark.
ARMS = ("retry", "reflexion", "wrong_reflection")


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "equal_budget_study", ROOT / "scripts" / "equal_budget_study.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would: its dataclasses look their module up.
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_steps_grow_from_the_pilot_to_the_full_size() -> None:
    s = load()
    assert s.steps(164) == [20, 60, 100, 140, 164]
    assert s.steps(200) == [20, 60, 100, 140, 180, 200]
    assert s.steps(20) == [20]


def test_finished_tasks_counts_final_records_and_skips_a_cut_line(tmp_path: Path) -> None:
    s = load()
    assert s.finished_tasks(tmp_path) == 0
    lines = [
        {"task_id": "a", "trial": 1, "final": False},
        {"task_id": "a", "trial": 2, "final": True},
        {"task_id": "b", "trial": 1, "final": True},
        {"task_id": "b", "trial": 1, "final": True},  # a resumed duplicate counts once
    ]
    text = "".join(json.dumps(x) + "\n" for x in lines) + '{"task_id": "c", "fin'
    (tmp_path / "log.jsonl").write_text(text)
    assert s.finished_tasks(tmp_path) == 2


def _pilot(study: Path, seconds: dict[str, float]) -> None:
    with (study / "compute.jsonl").open("w") as fh:
        for bench in ("humaneval", "mbpp"):
            for arm in ("retry", "reflexion", "wrong_reflection"):
                rec = {
                    "benchmark": bench,
                    "arm": arm,
                    "from_tasks": 0,
                    "to_tasks": 20,
                    "wall_s": seconds[bench] * 20,
                    "interrupted": False,
                }
                fh.write(json.dumps(rec) + "\n")


@pytest.mark.parametrize(
    ("per_task", "mbpp"),
    [
        ({"humaneval": 15.0, "mbpp": 15.0}, 397),  # 3 x 561 x 15 s = 7.0 h: all of MBPP
        ({"humaneval": 30.0, "mbpp": 20.0}, 200),
    ],  # 4.1 h + 6.6 h > 8 h: MBPP cut to 200
)
def test_the_plan_cuts_mbpp_only_past_eight_hours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_task: dict[str, float], mbpp: int
) -> None:
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    (tmp_path / "README.md").write_text("before\n<!-- plan -->\nold\n<!-- /plan -->\nafter\n")
    _pilot(tmp_path, per_task)
    plan = s.make_plan(None)
    full = 3 * (164 * per_task["humaneval"] + 397 * per_task["mbpp"]) / 3600
    assert plan["hours_full"] == pytest.approx(full, abs=0.01)
    assert plan["mbpp_tasks"] == mbpp
    assert s.targets(plan) == {"humaneval": 164, "mbpp": mbpp}
    assert json.loads((tmp_path / "plan.json").read_text()) == plan
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("before\n<!-- plan -->\nPilot:") and readme.endswith("after\n")
    assert "old" not in readme and f"{plan['hours_full']:.1f} h" in readme
    assert ("cut" in readme) == (mbpp < 397)


def test_a_pilot_step_run_over_two_sessions_counts_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    _pilot(tmp_path, {"humaneval": 10.0, "mbpp": 10.0})
    rows = [json.loads(x) for x in (tmp_path / "compute.jsonl").read_text().splitlines()]
    rows = [r for r in rows if (r["benchmark"], r["arm"]) != ("mbpp", "retry")]
    cut = {"benchmark": "mbpp", "arm": "retry", "interrupted": True}
    rows += [
        {**cut, "from_tasks": 0, "to_tasks": 14, "wall_s": 700.0},
        {**cut, "from_tasks": 14, "to_tasks": 20, "wall_s": 500.0, "interrupted": False},
    ]
    (tmp_path / "compute.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    per = s.estimate()
    assert per["mbpp"]["retry"] == pytest.approx((700 + 500) / 20)
    assert per["humaneval"]["retry"] == pytest.approx(10.0)
    # Only the first part: the arm has not reached the pilot's size.
    (tmp_path / "compute.jsonl").write_text(
        json.dumps({**cut, "from_tasks": 0, "to_tasks": 14, "wall_s": 700.0}) + "\n"
    )
    assert "mbpp" not in s.estimate()


def test_the_plan_refuses_an_incomplete_pilot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    with pytest.raises(SystemExit, match="mbpp/retry"):
        s.make_plan(None)


@pytest.mark.parametrize(
    ("experiment", "source"),
    [
        ("equal_budget_humaneval", "results/strategies-humaneval40/reflexion"),
        ("equal_budget_mbpp", "results/self-test-reliability/mbpp40_qwen0.5b_reflexion_k3"),
    ],
)
def test_the_study_budgets_follow_the_rule(experiment: str, source: str) -> None:
    """Each benchmark's budget is what `reflexion-bench plan --budget-from` prints for the
    Reflexion run the study README names, not a number typed in."""
    import yaml

    from reflexion_bench.analysis.equal_budget import budget_rule
    from reflexion_bench.analysis.runs import load_run

    cfg = yaml.safe_load((ROOT / "configs" / "experiment" / f"{experiment}.yaml").read_text())
    rule = budget_rule(load_run(ROOT / source).records)
    assert cfg["budget"]["tokens"] == rule["budget"]
    study = ROOT / "results" / "reflection-at-equal-budget"
    assert source in (study / "README.md").read_text()
    # The committed output is the command's, run from the project root.
    proc = subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "plan", "--budget-from", source],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    bench = experiment.removeprefix("equal_budget_")
    assert (study / f"budget_{bench}.txt").read_text() == proc.stdout


def _finished(folder: Path, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    recs = [{"task_id": f"t{i}", "trial": 1, "final": True} for i in range(n)]
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_progress_is_measured_from_every_step_and_written_into_the_readme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    _pilot(tmp_path, {"humaneval": 10.0, "mbpp": 30.0})
    # HumanEval retry grew on: 20 -> 60 in 400 s, then 60 -> 72 interrupted after 300 s.
    with (tmp_path / "compute.jsonl").open("a") as fh:
        for frm, to, wall in ((20, 60, 400.0), (60, 72, 300.0)):
            rec = {"benchmark": "humaneval", "arm": "retry", "from_tasks": frm}
            fh.write(json.dumps({**rec, "to_tasks": to, "wall_s": wall}) + "\n")
    for bench in ("humaneval", "mbpp"):
        for arm in ("retry", "reflexion", "wrong_reflection"):
            _finished(tmp_path / bench / arm, 72 if (bench, arm) == ("humaneval", "retry") else 20)
    plan = {"mbpp_tasks": 200, "optional_arms": []}
    rows = {(r["benchmark"], r["arm"]): r for r in s.progress(plan)}
    retry = rows[("humaneval", "retry")]
    assert (retry["finished"], retry["target"]) == (72, 164)
    assert retry["s_per_task"] == pytest.approx((200 + 400 + 300) / 72)
    assert retry["hours_left"] == pytest.approx((164 - 72) * 900 / 72 / 3600)
    assert rows[("mbpp", "reflexion")]["hours_left"] == pytest.approx(180 * 30 / 3600)
    (tmp_path / "README.md").write_text("a\n<!-- progress -->\nold\n<!-- /progress -->\nb\n")
    s.refresh_progress(plan)
    text = (tmp_path / "README.md").read_text()
    assert "old" not in text and "| humaneval | retry | 72 of 164 |" in text
    total = sum(r["hours_left"] for r in rows.values())
    assert f"Left: about {total:.1f} h" in text and text.endswith("<!-- /progress -->\nb\n")


def test_a_complete_study_says_so_instead_of_hours_left() -> None:
    s = load()
    row = {"benchmark": "mbpp", "arm": "retry", "target": 200, "wall_h": 2.0}
    grown = [{**row, "finished": 200, "s_per_task": 36.0, "hours_left": 0.0}]
    text = s.render_progress(grown)
    assert "Every arm has all its planned tasks" in text and "Left:" not in text
    short = [{**row, "finished": 180, "s_per_task": 36.0, "hours_left": 0.2}]
    assert "Left: about 0.2 h" in s.render_progress(grown + short)


def test_the_committed_progress_block_is_what_status_writes() -> None:
    """The study README's progress figures come from its logs and compute.jsonl (run
    `python scripts/equal_budget_study.py status --write` after merging new steps)."""
    s = load()
    readme = (s.STUDY / "README.md").read_text()
    m = s.PROGRESS.search(readme)
    assert m, "no <!-- progress --> block in the study README"
    assert m.group(0) == m.group(1) + s.progress_block(s.read_plan()) + "\n" + m.group(2)


def _first(task: str, program: str, passed: bool, cached: bool) -> dict[str, object]:
    call = {"role": "actor", "cached": cached, "temperature": 0.0}
    return {
        "task_id": task,
        "trial": 1,
        "candidate": program,
        "hidden": {"passed": passed},
        "model_calls": [call, {"role": "self_test", "cached": cached}],
    }


def test_trial1_agreement_counts_programs_verdicts_and_second_decodings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    arms = {
        # a: shared through the cache. b: decoded again by reflexion, another program and
        # verdict. c: another program served from the cache (not decoded twice).
        # d: only two arms ran it. e: reflexion's cut attempt differs, its redo agrees.
        "retry": [
            _first("a", "A", True, False),
            _first("b", "B", True, False),
            _first("c", "C", False, False),
            _first("d", "D", True, False),
            _first("e", "E", True, False),
        ],
        "reflexion": [
            _first("a", "A", True, True),
            _first("b", "B2", False, False),
            _first("c", "C2", False, True),
            _first("d", "D2", True, False),
            _first("e", "E-cut", True, False),
            _first("e", "E", True, True),
        ],
        "wrong_reflection": [
            _first("a", "A", True, True),
            _first("b", "B", True, True),
            _first("c", "C", False, True),
            _first("e", "E", True, True),
        ],
    }
    for arm, recs in arms.items():
        folder = tmp_path / "humaneval" / arm
        folder.mkdir(parents=True)
        (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    agree = s.trial1_agreement({})
    assert agree["humaneval"] == {
        "tasks": 4,
        "same": 2,
        "differ": 2,
        "verdict_differs": 1,
        "decoded_again": 1,
    }
    assert agree["mbpp"]["tasks"] == 0
    text = s.render_agreement(agree)
    assert "humaneval 2 of 4 (2 differ, 1 of them with another first verdict)" in text
    assert "On 1 of the 2 that differ, trial 1 was decoded more than once" in text
    assert "decoded more than once" not in s.render_agreement(
        {"humaneval": {**agree["humaneval"], "same": 4, "differ": 0}}
    )


def test_the_shared_calls_travel_to_another_machines_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
    from reflexion_bench.models.cache import ResponseCache, request_key

    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    monkeypatch.setattr(s, "SHARED_CALLS", tmp_path / "shared_calls.jsonl")
    monkeypatch.setenv("REFLEXION_BENCH_CACHE", str(tmp_path / "machine1"))
    pinned = {"n_ctx": s._server_setting("n_ctx"), "n_parallel": s._server_setting("n_parallel")}

    def identity(server: dict[str, int]) -> dict[str, object]:
        return {"provider": "embedded", "model": s.SPEC.model_name, "server": server}

    keys = {}
    cache = s._cache()
    for name, ident, temperature in (
        ("shared", identity(pinned), 0.0),
        ("sampled", identity(pinned), 0.8),
        ("other server", identity({**pinned, "n_parallel": 1}), 0.0),
    ):
        key, request = request_key(
            ident, [Message("user", name)], GenerateConfig(temperature=temperature)
        )
        cache.put(key, request, ModelOutput(text=f"reply to {name}"))
        keys[name] = key
    cache.close()
    s.export_shared_calls()
    lines = s.SHARED_CALLS.read_text().splitlines()
    assert [json.loads(x)["key"] for x in lines] == [keys["shared"]]

    monkeypatch.setenv("REFLEXION_BENCH_CACHE", str(tmp_path / "machine2"))
    s.import_shared_calls()
    there = ResponseCache(tmp_path / "machine2" / "model_cache.sqlite")
    hit = there.get(keys["shared"])
    assert hit is not None and hit.text == "reply to shared"
    assert len(there) == 1


def test_mbpp_grows_only_as_far_as_the_power_target_needs() -> None:
    """The rule: unchanged where the pooled comparison already detects 7 points; else
    the smallest MBPP size in steps of 40 whose projection at the same discordance does
    (the step before it would not); all of MBPP where no size does."""
    from reflexion_bench.analysis.power import detectable_difference

    s = load()
    he = 164
    assert s.size_needed(he + 200, 0.20, detectable_difference(he + 200, 0.20), 200) == 200
    psi = 0.25
    assert detectable_difference(he + 200, psi) > 0.07  # the case the rule is for
    grown = s.size_needed(he + 200, psi, detectable_difference(he + 200, psi), 200)
    assert 200 < grown <= 397 and (grown - 200) % 40 == 0
    assert detectable_difference(he + grown, psi) <= 0.07
    assert detectable_difference(he + grown - 40, psi) > 0.07
    assert s.size_needed(he + 200, 0.45, detectable_difference(he + 200, 0.45), 200) == 397
    # No power at any difference (None) counts as short of the target.
    assert s.size_needed(he + 200, psi, None, 200) == grown


def cut_plan() -> dict[str, Any]:
    """A plan as `plan` writes it when the pilot cut MBPP to 200 tasks."""
    return {
        "pilot_tasks": 20,
        "seconds_per_task": {"mbpp": {"retry": 100.0}},
        "hours_full": 59.3,
        "hours_limit": 8.0,
        "mbpp_tasks": 200,
        "hours_required": 38.6,
        "optional_arms": [],
    }


def test_the_power_check_grows_the_plan_and_the_answer_blocks_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    plan = cut_plan()
    (tmp_path / "README.md").write_text(
        "<!-- plan -->\nold\n<!-- /plan -->\n"
        "<!-- report:answer planned=humaneval:164,mbpp:200 -->\n<!-- /report -->\n"
    )
    monkeypatch.setattr(s, "pooled_discordance", lambda: (364, 0.25, 0.0732))
    assert s.reestimate(plan) is True
    grown = plan["mbpp_tasks"]
    assert grown > 200 and s.targets(plan)["mbpp"] == grown
    assert json.loads((tmp_path / "plan.json").read_text()) == plan
    readme = (tmp_path / "README.md").read_text()
    assert f"planned=humaneval:164,mbpp:{grown} -->" in readme
    assert "its first 200 tasks (cut)" in readme  # the pilot's choice stays stated
    assert "Power check at MBPP 200: 364 paired tasks" in readme
    assert f"7.3 points (target 7): MBPP grows to {grown} tasks." in readme
    # At the new size with enough power it stays, and a rerun does not check twice.
    monkeypatch.setattr(s, "pooled_discordance", lambda: (164 + grown, 0.25, 0.069))
    assert s.reestimate(plan) is False
    assert plan["mbpp_tasks"] == grown and len(plan["reestimation"]) == 2
    assert s.reestimate(plan) is False and len(plan["reestimation"]) == 2
    assert f"MBPP stays at {grown} tasks." in (tmp_path / "README.md").read_text()


async def test_pooled_discordance_reads_the_reports_pooled_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On real run folders (two toy benchmarks, retry and reflexion, real runner): the
    paired tasks and discordant share of the report's pooled reflexion-vs-retry row."""
    from reflexion_bench.analysis.report import build_comparison
    from tests.analysis.test_equal_budget import two_benchmark_report

    s = load()
    await two_benchmark_report(tmp_path)
    monkeypatch.setattr(s, "STUDY", tmp_path / "runs")
    n, psi, detectable = s.pooled_discordance()
    report = build_comparison([tmp_path / "runs"], n_resamples=50)
    row = next(r for r in report["strategies"]["pooled"] if r["strategy"] == "reflexion")
    cmp = row["vs_retry"]
    assert n == 9 == cmp["n_common"]
    assert psi == pytest.approx((cmp["only_this"] + cmp["only_ref"]) / 9)
    assert detectable == cmp["assessment"]["detectable_difference"]


def test_run_checks_power_when_complete_and_runs_the_grown_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver's loop: nothing to run until the power check grows MBPP; then every arm
    runs the new steps (arms in turn), the check runs again, and the driver stops."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    plan = cut_plan()
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    done = {(b, a): n for b, n in (("humaneval", 164), ("mbpp", 200)) for a in ARMS}
    ran: list[tuple[str, str, int]] = []

    def step(bench: str, arm: str, limit: int, deadline: Any, nice: bool) -> None:
        ran.append((bench, arm, limit))
        done[(bench, arm)] = limit

    monkeypatch.setattr(s, "run_step", step)
    monkeypatch.setattr(s, "finished_tasks", lambda folder: done[(folder.parent.name, folder.name)])
    monkeypatch.setattr(s, "import_shared_calls", lambda: None)
    checks = iter([(364, 0.25, 0.0732), (404, 0.25, 0.0699)])
    monkeypatch.setattr(s, "pooled_discordance", lambda: next(checks))
    s.run(argparse.Namespace(stop_at=None, no_nice=True, commit=False))
    # The step grid (20, 60, ..., 180, 220, ...) continues, arms in turn at each limit.
    assert ran == [("mbpp", a, n) for n in (220, 240) for a in ARMS]
    assert [
        c["mbpp_tasks"] for c in json.loads((tmp_path / "plan.json").read_text())["reestimation"]
    ] == [240, 240]


@pytest.mark.parametrize(
    ("why", "said"),
    [("at --stop-at", "stopped at --stop-at"), ("by a signal", "stopped by a signal")],
)
def test_a_stopped_driver_says_why_and_how_to_resume(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    why: str,
    said: str,
) -> None:
    """A stop is a clean exit (0) that names its cause: a session's operator who sent
    Ctrl-C must not read that a --stop-at they never gave was reached."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    monkeypatch.setattr(s, "_single_driver", lambda: None)

    def stopped(args: argparse.Namespace) -> None:
        raise s.Stopped(why)

    monkeypatch.setattr(s, "run", stopped)
    assert s.main(["run"]) == 0
    assert capsys.readouterr().out == f"{said}; run the same command again to resume\n"


def test_a_step_past_its_deadline_stops_naming_stop_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cause comes from the driver's own check, not from the caller: a step due after
    --stop-at raises Stopped("at --stop-at") before it starts any run."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    monkeypatch.setattr(s, "finished_tasks", lambda folder: 0)
    with pytest.raises(s.Stopped, match=r"^at --stop-at$"):
        s.run_step("mbpp", "retry", 20, deadline=0.0, nice=False)


def test_each_pilot_commit_carries_the_progress_block_status_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pilot --commit` commits after each arm: the README it commits must already show
    that arm's progress, as `run --commit` does (a stale block fails the study's README
    test on main)."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    (tmp_path / "README.md").write_text("a\n<!-- progress -->\nold\n<!-- /progress -->\nb\n")
    finished: dict[tuple[str, str], int] = {}

    def step(bench: str, arm: str, limit: int, deadline: Any, nice: bool) -> None:
        _finished(tmp_path / bench / arm, limit)
        finished[(bench, arm)] = limit

    committed: list[str] = []

    def commit(message: str) -> None:
        m = s.PROGRESS.search((tmp_path / "README.md").read_text())
        assert m, "the progress block went missing"
        assert m.group(0) == m.group(1) + s.progress_block(s.read_plan()) + "\n" + m.group(2)
        committed.append(message)

    monkeypatch.setattr(s, "run_step", step)
    monkeypatch.setattr(s, "import_shared_calls", lambda: None)
    monkeypatch.setattr(s, "export_shared_calls", lambda: None)
    monkeypatch.setattr(s, "write_report", lambda nice: None)
    monkeypatch.setattr(s, "commit", commit)
    s.pilot(argparse.Namespace(stop_at=None, no_nice=True, commit=True))
    assert len(committed) == len(s.SPEC.required) == len(finished)
    assert "old" not in (tmp_path / "README.md").read_text()


def test_a_resumed_pilot_skips_the_arms_it_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming the pilot steps only the arms short of its size: an arm finished in an
    earlier session gets no step, no report rebuild and no commit."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    (tmp_path / "README.md").write_text("a\n<!-- progress -->\nold\n<!-- /progress -->\nb\n")
    first, *rest = s.SPEC.required
    _finished(tmp_path / first.benchmark / first.name, s.SPEC.pilot)
    stepped: list[str] = []
    reports: list[bool] = []
    committed: list[str] = []

    def step(bench: str, arm: str, limit: int, deadline: Any, nice: bool) -> None:
        stepped.append(f"{bench}/{arm}")
        _finished(tmp_path / bench / arm, limit)

    monkeypatch.setattr(s, "run_step", step)
    monkeypatch.setattr(s, "import_shared_calls", lambda: None)
    monkeypatch.setattr(s, "export_shared_calls", lambda: None)
    monkeypatch.setattr(s, "write_report", reports.append)
    monkeypatch.setattr(s, "commit", committed.append)
    s.pilot(argparse.Namespace(stop_at=None, no_nice=True, commit=True))
    assert stepped == [f"{a.benchmark}/{a.name}" for a in rest]
    assert len(reports) == len(committed) == len(rest)


def test_plan_with_commit_commits_the_plan_and_its_readme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan --commit` commits plan.json with the README's plan and progress blocks (it
    wrote them and left them for the next step's commit)."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    (tmp_path / "README.md").write_text(
        "<!-- plan -->\nold\n<!-- /plan -->\n<!-- progress -->\nold\n<!-- /progress -->\n"
    )
    _pilot(tmp_path, {"humaneval": 15.0, "mbpp": 15.0})
    seen: list[tuple[str, str]] = []

    def commit(message: str) -> None:
        seen.append((message, (tmp_path / "README.md").read_text()))
        assert (tmp_path / "plan.json").is_file()

    monkeypatch.setattr(s, "commit", commit)
    plan = s.make_plan(argparse.Namespace(commit=True))
    assert len(seen) == 1 and seen[0][0].startswith("study: plan")
    m = s.PROGRESS.search(seen[0][1])
    assert m and m.group(0) == m.group(1) + s.progress_block(plan) + "\n" + m.group(2)
    assert "old" not in seen[0][1]
    seen.clear()
    s.make_plan(argparse.Namespace(commit=False))
    assert seen == []


@pytest.mark.parametrize("ran", [True, False])
def test_a_step_stopped_part_way_is_committed_before_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ran: bool
) -> None:
    """`run --commit` stopped mid-step (a signal, or --stop-at reached during the run)
    commits the tasks the stopped run finished, then stops; a stop before any run
    started has nothing new and commits nothing. Either way the stop reaches `main`."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    plan = cut_plan()
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "README.md").write_text("a\n<!-- progress -->\nold\n<!-- /progress -->\nb\n")
    first = s.SPEC.required[0]

    def step(bench: str, arm: str, limit: int, deadline: Any, nice: bool) -> None:
        if ran:
            _finished(tmp_path / bench / arm, 7)  # part of the step, then the signal
            raise s.Stopped("by a signal", ran=True)
        raise s.Stopped("at --stop-at")

    committed: list[str] = []
    monkeypatch.setattr(s, "run_step", step)
    monkeypatch.setattr(s, "import_shared_calls", lambda: None)
    monkeypatch.setattr(s, "export_shared_calls", lambda: None)
    monkeypatch.setattr(s, "write_report", lambda nice: None)
    monkeypatch.setattr(s, "commit", committed.append)
    with pytest.raises(s.Stopped):
        s.run(argparse.Namespace(stop_at=None, no_nice=True, commit=True))
    if ran:
        assert committed == [
            f"study: {first.id} stopped by a signal at 7 of {s.SPEC.pilot} tasks (resumable)"
        ]
        assert "old" not in (tmp_path / "README.md").read_text()  # progress refreshed
    else:
        assert committed == []


def test_a_signal_to_the_driver_stops_the_running_step_the_clean_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM (or Ctrl-C) to the driver does not kill it mid-step: the running step
    gets SIGINT, the driver waits for it, records the step and raises
    Stopped("by a signal", ran=True), so `run --commit` commits what finished."""
    import signal
    import threading

    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    monkeypatch.setattr(s, "finished_tasks", lambda folder: 0)
    marker = tmp_path / "got_sigint"
    child = (
        "import signal, sys, time\n"
        "def stop(*a):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    sys.exit(130)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        "time.sleep(60)\n"
    )
    monkeypatch.setattr(s, "step_command", lambda b, a, n: [sys.executable, "-c", child])
    monkeypatch.setitem(s._STOP, "signal", None)
    threading.Timer(1.0, s._ask_to_stop, (signal.SIGTERM, None)).start()
    with pytest.raises(s.Stopped, match=r"^by a signal$") as stop:
        s.run_step("mbpp", "retry", 20, deadline=None, nice=False)
    assert stop.value.ran
    assert marker.exists()  # the step itself was asked to stop, and it did
    (record,) = [json.loads(x) for x in (tmp_path / "compute.jsonl").read_text().splitlines()]
    assert record["interrupted"] and record["returncode"] == 130
    # Once asked, the driver starts no further step.
    with pytest.raises(s.Stopped, match=r"^by a signal$") as again:
        s.run_step("mbpp", "reflexion", 20, deadline=None, nice=False)
    assert not again.value.ran
