"""Studies as data (results/<study>/study.yaml, read by scripts/equal_budget_study.py):
the definitions load, a bad one is refused in one line naming the key, an arm whose
config does not exist yet is refused before anything runs, the committed blocks are what
the driver writes, and the plan takes optional arms in priority order under the cap."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_equal_budget_study import ROOT, load

FEEDBACK = ROOT / "results" / "feedback-reliability"
EQUAL = ROOT / "results" / "reflection-at-equal-budget"


def definition(study: Path) -> dict[str, Any]:
    return yaml.safe_load((study / "study.yaml").read_text())


def test_the_equal_budget_definition_is_the_study_as_it_ran() -> None:
    s = load()
    spec = s.load_study(EQUAL)
    assert [a.id for a in spec.required] == [
        f"{b}/{a}"
        for b in ("humaneval", "mbpp")
        for a in ("retry", "reflexion", "wrong_reflection")
    ]
    assert [(b.name, b.tasks, b.cut_to, b.budget_tokens) for b in spec.benchmarks.values()] == [
        ("humaneval", 164, None, 3000),
        ("mbpp", 397, 200, 2500),
    ]
    assert spec.power_check is not None and spec.power_check.compare == ("reflexion", "retry")
    # Its command is the one it ran: no evaluator override where the arm names none.
    s.use(EQUAL)
    assert s.step_command("mbpp", "retry", 60)[4:8] == [
        "experiment=equal_budget_mbpp",
        "strategy=retry",
        "run_dir=results/reflection-at-equal-budget/mbpp/retry",
        "limit=60",
    ]
    s.check_configs(spec, "study.yaml")  # every config it names exists


def test_the_committed_plan_block_is_what_the_driver_renders() -> None:
    """`status --write` rewrites both generated blocks; on the finished study it must
    leave its README as committed (with the progress block, tested beside)."""
    s = load()
    readme = (EQUAL / "README.md").read_text()
    m = s.BLOCK.search(readme)
    assert m and m.group(0) == m.group(1) + s.render_plan(s.read_plan()) + "\n" + m.group(2)


def test_status_write_leaves_the_finished_study_as_committed(tmp_path: Path) -> None:
    """The whole README through the CLI, on a copy (the original is never written)."""
    s = load()
    copy_ = tmp_path / "study"
    shutil.copytree(EQUAL, copy_, ignore=shutil.ignore_patterns("report", "shared_calls.jsonl"))
    before = (copy_ / "README.md").read_text()
    assert s.main(["--study", str(copy_), "status", "--write"]) == 0
    assert (copy_ / "README.md").read_text() == before


def test_the_plan_from_the_committed_pilot_is_the_committed_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut rule as data gives what the script it replaced gave, from the same pilot
    (less the later power check and the optional arms' record, which it adds)."""
    s = load()
    monkeypatch.setattr(s, "STUDY", tmp_path)
    shutil.copy(EQUAL / "compute.jsonl", tmp_path / "compute.jsonl")
    plan = s.make_plan(None)
    committed = json.loads((EQUAL / "plan.json").read_text())
    committed.pop("reestimation")
    assert {k: v for k, v in plan.items() if k not in ("optional", "hours_planned")} == committed
    # raw_log (optional, timed as wrong_reflection) did not fit under 8 h.
    assert [o["planned"] for o in plan["optional"]] == [False]


def test_the_feedback_reliability_study_lists_its_six_required_runs() -> None:
    s = load()
    spec = s.load_study(FEEDBACK)
    s.use(FEEDBACK)
    runs = {
        a.id: (a.evaluator, a.strategy, spec.benchmarks[a.benchmark].tasks) for a in spec.required
    }
    assert runs == {
        "humaneval/visible_tests/retry": ("visible_tests", "retry", 164),
        "humaneval/visible_tests/reflexion": ("visible_tests", "reflexion", 164),
        "humaneval/oracle/retry": ("oracle", "retry", 164),
        "humaneval/oracle/reflexion": ("oracle", "reflexion", 164),
        "mbpp/oracle/retry": ("oracle", "retry", 200),
        "mbpp/oracle/reflexion": ("oracle", "reflexion", 200),
    }
    # The folders, and the budgets of reflection-at-equal-budget, in the commands.
    cmd = s.step_command("humaneval", "oracle/reflexion", 20)
    assert "run_dir=results/feedback-reliability/humaneval/oracle/reflexion" in cmd
    assert "evaluator=oracle" in cmd and "experiment=feedback_reliability_humaneval" in cmd
    equal = s.load_study(EQUAL)
    for name, bench in spec.benchmarks.items():
        assert bench.budget_tokens == equal.benchmarks[name].budget_tokens
        assert bench.cut_to is None
    assert spec.benchmarks["mbpp"].tasks == equal.benchmarks["mbpp"].cut_to == 200
    assert spec.hours_limit == 16 and spec.server == equal.server
    # Optional, in this order: fn 0.3, fn 0.6 (each with both strategies), wrong_reflection.
    groups = [(p, [(a.name, a.overrides) for a in g]) for p, g in spec.optional_groups]
    noisy = ("evaluator.fn_rate={}", "evaluator.fp_rate=0.0")
    assert groups == [
        (
            p,
            [
                (f"noisy_oracle_fn{r}/{st}", tuple(x.format(r) for x in noisy))
                for st in ("retry", "reflexion")
            ],
        )
        for p, r in ((1, 0.3), (2, 0.6))
    ] + [(3, [("oracle/wrong_reflection", ())])]
    assert "evaluator.fn_rate=0.3" in s.step_command("humaneval", "noisy_oracle_fn0.3/retry", 20)
    # The self_tests arms are read from the other study, every one finished there.
    assert {(r.benchmark, r.evaluator, r.strategy): r.path for r in spec.read} == {
        (b, "self_tests", st): f"results/reflection-at-equal-budget/{b}/{st}"
        for b in ("humaneval", "mbpp")
        for st in ("retry", "reflexion")
    }
    assert spec.import_calls == ("results/reflection-at-equal-budget/shared_calls.jsonl",)


def test_the_feedback_experiments_are_the_equal_budget_ones_but_for_the_name() -> None:
    """The self_tests arms read from the other study must differ only in the evaluator."""
    for bench in ("humaneval", "mbpp"):
        ours = yaml.safe_load(
            (ROOT / f"configs/experiment/feedback_reliability_{bench}.yaml").read_text()
        )
        theirs = yaml.safe_load(
            (ROOT / f"configs/experiment/equal_budget_{bench}.yaml").read_text()
        )
        assert ours.pop("name") != theirs.pop("name")
        assert ours == theirs


def test_the_feedback_readme_blocks_are_what_status_writes() -> None:
    s = load()
    s.use(FEEDBACK)
    readme = (FEEDBACK / "README.md").read_text()
    plan = s.read_plan()
    for block, body in ((s.BLOCK, s.render_plan(plan)), (s.PROGRESS, s.progress_block(plan))):
        m = block.search(readme)
        assert m and m.group(0) == m.group(1) + body + "\n" + m.group(2)
    # The plan block says there is no plan exactly when plan.json is absent.
    assert ("No runs yet" in readme) == (not plan)


def test_an_arm_whose_evaluator_config_is_missing_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before anything runs: the message names the file to add and exits non-zero."""
    s = load()
    configs = tmp_path / "configs"
    shutil.copytree(ROOT / "configs" / "experiment", configs / "experiment")
    shutil.copytree(ROOT / "configs" / "strategy", configs / "strategy")
    (configs / "evaluator").mkdir()
    (configs / "evaluator" / "oracle.yaml").write_text("_target_: x\nname: oracle\n")
    spec = s.load_study(FEEDBACK)
    with pytest.raises(SystemExit) as exc:
        s.check_configs(spec, "results/feedback-reliability/study.yaml", configs)
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("results/feedback-reliability/study.yaml: no such config yet: ")
    assert (
        "configs/evaluator/visible_tests.yaml (named by humaneval/visible_tests/retry and 1 more)"
        in message
    )
    assert "configs/evaluator/noisy_oracle.yaml" in message
    assert "configs/evaluator/oracle.yaml" not in message
    # With every file there, an override the evaluator does not have is named.
    (configs / "evaluator" / "visible_tests.yaml").write_text("_target_: x\n")
    (configs / "evaluator" / "noisy_oracle.yaml").write_text("_target_: x\nfp_rate: 0.0\n")
    with pytest.raises(
        SystemExit, match=r"noisy_oracle_fn0.3/retry: evaluator.fn_rate is not a key"
    ):
        s.check_configs(spec, "study.yaml", configs)
    (configs / "evaluator" / "noisy_oracle.yaml").write_text(
        "_target_: x\nfn_rate: 0.0\nfp_rate: 0.0\n"
    )
    s.check_configs(spec, "study.yaml", configs)
    # The CLI refuses at `pilot` before it runs or locks anything.
    ran: list[Any] = []
    monkeypatch.setattr(s, "run_step", lambda *a: ran.append(a))
    if not (ROOT / "configs" / "evaluator" / "visible_tests.yaml").is_file():
        with pytest.raises(SystemExit, match=r"configs/evaluator/visible_tests\.yaml"):
            s.main(["--study", str(FEEDBACK), "pilot"])
        assert ran == [] and not (FEEDBACK / ".driver.lock").exists()


def test_a_budget_the_experiment_does_not_set_is_refused(tmp_path: Path) -> None:
    s = load()
    data = definition(EQUAL)
    data["benchmarks"]["mbpp"]["budget_tokens"] = 3000
    with pytest.raises(
        SystemExit,
        match=r"benchmarks.mbpp.budget_tokens is 3000 but configs/experiment/equal_budget_mbpp.yaml sets budget.tokens 2500",
    ):
        s.check_configs(s.parse_study(data), "study.yaml")


def _bad(change: Any) -> str:
    s = load()
    data = copy.deepcopy(definition(FEEDBACK))
    change(data)
    with pytest.raises(SystemExit) as exc:
        s.parse_study(data, "study.yaml")
    assert "\n" not in str(exc.value)
    return str(exc.value)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(hours_limt=16), "study.yaml: unknown key 'hours_limt'"),
        (lambda d: d.pop("pilot"), "study.yaml: missing key 'pilot'"),
        (
            lambda d: d["arms"][0].update(benchmark="mbpp_plus"),
            "arms[0].benchmark: 'mbpp_plus' is not one of",
        ),
        (lambda d: d["arms"][0].update(evaluater="oracle"), "arms[0]: unknown key 'evaluater'"),
        (
            lambda d: d["arms"][1].update(evaluator="visible_tests"),
            "two arms run into humaneval/visible_tests/retry",
        ),
        (
            lambda d: [d["arms"][i].pop("as") for i in (3, 4)],
            "two arms run into humaneval/noisy_oracle/retry",
        ),
        (
            lambda d: d["arms"][3].pop("cost_as"),
            "arms[3]: an optional arm (priority) needs cost_as",
        ),
        (lambda d: d["arms"][0].update(cost_as="oracle"), "arms[0].cost_as: only an optional arm"),
        (
            lambda d: d["arms"][5].update(cost_as="visible_tests/reflexion", benchmark="mbpp"),
            "cost_as 'visible_tests/reflexion' is not a required arm of mbpp",
        ),
        (
            lambda d: d["arms"][0].pop("evaluator"),
            "arms[0]: the layout names the evaluator: set evaluator",
        ),
        (
            lambda d: d["benchmarks"]["mbpp"].update(tasks=0),
            "benchmarks.mbpp.tasks: expected a positive whole number",
        ),
        (
            lambda d: d["benchmarks"]["mbpp"].update(cut_to=300),
            "benchmarks.mbpp.cut_to: 300 is not below tasks (200)",
        ),
        (lambda d: d.update(layout="{strategy}"), "layout: '{strategy}' is neither"),
        (
            lambda d: d["read"][0].update(benchmark="leetcode"),
            "read[0].benchmark: 'leetcode' is not one of benchmarks",
        ),
        (
            lambda d: [a.update(priority=1, cost_as="oracle") for a in d["arms"]],
            "arms: no required arm",
        ),
        (
            lambda d: d.update(
                power_check={"compare": ["reflexion", "retry"], "target": 0.07, "grow": "mbpp"}
            ),
            "power_check.compare: two required arm names",  # here: oracle/reflexion...
        ),
    ],
)
def test_a_bad_definition_is_refused_naming_the_key(change: Any, said: str) -> None:
    assert said in _bad(change)


def test_a_read_arm_without_a_log_is_refused(tmp_path: Path) -> None:
    s = load()
    data = definition(FEEDBACK)
    data["read"][0]["path"] = "results/reflection-at-equal-budget/humaneval/raw_log"
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(
        SystemExit,
        match=r"read: humaneval/self_tests/retry has no run log at results/reflection-at-equal-budget/humaneval/raw_log/log.jsonl",
    ):
        s.load_study(tmp_path)


def _pilot_rows(study: Path, seconds: dict[str, float], pilot: int = 20) -> None:
    with (study / "compute.jsonl").open("w") as fh:
        for arm_id, per_task in seconds.items():
            bench, name = arm_id.split("/", 1)
            rec = {"benchmark": bench, "arm": name, "from_tasks": 0, "to_tasks": pilot}
            fh.write(json.dumps({**rec, "wall_s": per_task * pilot}) + "\n")


@pytest.mark.parametrize(
    ("seconds", "planned"),
    [
        # (4 x 164 + 2 x 200) tasks x 33 s = 9.7 h; fn 0.3 and fn 0.6 add 3.0 h each
        # (15.7 h), then wrong_reflection's 1.5 h would pass 16 h.
        (33.0, [True, True, False]),
        # At 20 s: 5.9 + 1.8 + 1.8 + 0.9 h: everything fits.
        (20.0, [True, True, True]),
        # At 60 s: 17.6 h, over the cap with the required runs alone.
        (60.0, [False, False, False]),
    ],
)
def test_the_plan_takes_optional_arms_in_priority_order_under_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds: float, planned: list[bool]
) -> None:
    s = load()
    s.use(FEEDBACK)
    monkeypatch.setattr(s, "STUDY", tmp_path)
    _pilot_rows(tmp_path, {a.id: seconds for a in s.SPEC.required})
    plan = s.make_plan(None)
    assert [o["planned"] for o in plan["optional"]] == planned
    assert plan["hours_required"] == pytest.approx((4 * 164 + 2 * 200) * seconds / 3600, abs=0.01)
    chosen = [a for o in plan["optional"] if o["planned"] for a in o["arms"]]
    assert plan["optional_arms"] == chosen
    assert plan["hours_planned"] <= 16 or not chosen
    # The arms run: the required first, then each chosen priority in turn.
    phases = [[a.id for a in p] for p in s._phases(plan)]
    assert phases[0] == [a.id for a in s.SPEC.required]
    assert [x for p in phases[1:] for x in p] == chosen
    text = s.render_plan(plan)
    assert ("over the cap already" in text) == (not any(planned))
    assert text.count(": planned.") == sum(planned)


def test_a_priority_that_does_not_fit_stops_the_later_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fn 0.6 borrows the oracle arms' time; make it the dearest so it alone would not fit
    while wrong_reflection would: wrong_reflection is still not planned."""
    s = load()
    s.use(FEEDBACK)
    monkeypatch.setattr(s, "STUDY", tmp_path)
    rates = {a.id: 10.0 for a in s.SPEC.required}
    rates["humaneval/oracle/retry"] = 130.0  # 164 x 130 s = 5.9 h per arm timed like it
    _pilot_rows(tmp_path, rates)
    plan = s.make_plan(None)
    hours = {o["priority"]: o["hours"] for o in plan["optional"]}
    assert plan["hours_required"] + hours[1] <= 16 < plan["hours_required"] + hours[1] + hours[2]
    assert plan["hours_required"] + hours[1] + hours[3] <= 16
    assert [o["planned"] for o in plan["optional"]] == [True, False, False]
