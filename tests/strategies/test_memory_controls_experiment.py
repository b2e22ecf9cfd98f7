"""configs/experiment/memory_controls_humaneval.yaml end to end with the scripted model:
real config composition, the real code roles and sandbox, the frozen protocol across
variants run one after the other (as the sequential multirun does), then the report."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, open_dict

from reflexion_bench.analysis.report import build_comparison, write_comparison
from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.runner.run import run_experiment
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies import FrozenFirstAttemptActor, WrongReflectionStrategy

# One reply for every role: a wrong implementation (the actor's program), two asserts
# (the self-tests, one failing) and some text (the reflection).
REPLY = """The function should compare pairs.

```python
def has_close_elements(numbers, threshold):
    return False
```

assert has_close_elements([1.0, 2.0], 0.5) == False
assert has_close_elements([1.0, 1.1], 0.5) == True
"""

VARIANTS = ["reflexion", "retry", "wrong_reflection", "irrelevant_text"]


def compose_variant(strategy: str, results: Path) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=[
                "experiment=memory_controls_humaneval",
                f"strategy={strategy}",
                "model=mock",
                "model.cycle=true",
                "task_ids=[HumanEval/0]",
                "strategy.max_trials=2",
                f"paths.results_dir={results}",
                "progress=false",
            ],
            return_hydra_config=True,
        )
    with open_dict(cfg):
        cfg.model.responses = [REPLY]
    HydraConfig.instance().set_config(cfg)
    return cfg


def test_experiment_composes_the_frozen_wrappers(tmp_path: Path) -> None:
    cfg = compose_variant("wrong_reflection", tmp_path)
    source = tmp_path / "memory_controls" / "humaneval_mock" / "reflexion"
    assert Path(cfg.run_dir) == tmp_path / "memory_controls" / "humaneval_mock" / "wrong_reflection"
    actor = build(cfg.actor, "actor")
    assert isinstance(actor, FrozenFirstAttemptActor) and actor.source_run == source
    assert type(actor.inner).__name__ == "CodeActor"
    strategy = build(cfg.strategy, "strategy")
    assert isinstance(strategy, WrongReflectionStrategy)
    assert Path(str(strategy.source_run)) == source
    assert strategy.max_trials == 2
    # Without the experiment, wrong_reflection draws from its own run.
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        plain = compose(config_name="config", overrides=["strategy=wrong_reflection"])
    assert plain.strategy.source_run is None


@pytest.mark.slow  # four real runs through the sandbox (~10 s each on a busy machine)
def test_variants_share_trial_one_and_report(tmp_path: Path) -> None:
    run_dirs = {}
    for name in VARIANTS:  # reflexion first: it is the source the others replay
        cfg = compose_variant(name, tmp_path)
        run_dirs[name] = Path(cfg.run_dir)
        asyncio.run(run_experiment(cfg, run_dirs[name]))

    firsts = {}
    for name, d in run_dirs.items():
        recs = load_run_records(d)
        assert recs and all(not r["error"] for r in recs), [r["error"] for r in recs]
        first = recs[0]
        assert first["trial"] == 1
        assert first["extra"]["frozen"] is (name != "reflexion")
        firsts[name] = (
            first["candidate"],
            first["self_test"]["passed"],
            first["self_test"]["text"],
        )
        assert first["self_test"]["passed"] is False
    assert len(set(firsts.values())) == 1

    wrong = load_run_records(run_dirs["wrong_reflection"])
    irrelevant = load_run_records(run_dirs["irrelevant_text"])
    assert irrelevant[1]["extra"]["memory_kinds"] == ["irrelevant_text"]
    # One task only: no other task's reflection exists, so nothing wrong can be shown.
    assert wrong[1]["memory_shown"] == []

    report = build_comparison([tmp_path / "memory_controls"], n_resamples=200)
    ident = {g["strategy"]: g.get("trial1_identity") for g in report["groups"]}
    assert all(v == {"reference": "reflexion", "same": 1, "common": 1} for v in ident.values())
    written = write_comparison(report, tmp_path / "report")
    names = {p.name for p in written}
    assert {"report.md", "table_controls.csv", "fix_break_humaneval_mock.png"} <= names


@pytest.fixture(autouse=True)
def _clear_hydra() -> Iterator[None]:
    yield
    HydraConfig.instance().cfg = None  # type: ignore[assignment]
