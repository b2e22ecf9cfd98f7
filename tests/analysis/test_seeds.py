"""Seeds as an axis (issue 29): runs differing only in ``seed`` are one configuration.

- The judged sweep, by the real CLI (``mock_seed_sweep``): ``report --format json``
  has 2 configurations with ``"n_seeds": 3``, one paired comparison over the 3 seeds,
  per-seed rows kept, and the deterministic mock's seeds flagged as unable to differ.
- A sampling mock (replies drawn from the call's seed at temperature 0.8): the spread
  across seeds is measured, equal to the one computed here from the logs directly,
  and no warning; a run with another config is never pooled with the seeds.
- :func:`sign_flip_exact` against brute-force enumeration of sign assignments, and
  against McNemar's exact test at one seed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reflexion_bench.analysis import power as pw
from reflexion_bench.analysis.report import build_comparison
from reflexion_bench.analysis.runs import configuration_group, load_groups, seed_sets
from reflexion_bench.analysis.stats import mcnemar_exact, sign_flip_exact
from reflexion_bench.core.budget import TaskBudget
from reflexion_bench.core.state import Services
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.memory.base import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies.base import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer

_WORD = re.compile(r"Say the word (\w+)\.")


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("reflexion-bench")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "reflexion_bench.cli"]


# ----------------------------------------------------------------- the judged sweep


def test_mock_sweep_is_two_configurations_of_three_seeds(mock_seed_sweep: Path) -> None:
    proc = subprocess.run(
        [*_cli(), "report", str(mock_seed_sweep), "--format", "json", "--no-write"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"n_seeds": 3' in proc.stdout
    report = json.loads(proc.stdout)
    rows = {r["strategy"]: r for r in report["seeds"]}
    assert sorted(rows) == ["reflexion", "simple"]
    groups = report["groups"]
    assert len(groups) == 6  # the per-seed rows stay
    for name, row in rows.items():
        assert row["n_seeds"] == 3 and row["seeds"] == [0, 1, 2]
        assert row["n_tasks"] == 6
        per_seed = sorted(
            (g["seed"], g["final"]["estimate"]) for g in groups if g["strategy"] == name
        )
        assert [s for s, _ in per_seed] == [0, 1, 2]
        finals = [f for _, f in per_seed]
        assert row["pass1_mean"] == pytest.approx(statistics.mean(finals))
        assert row["pass1_sd"] == pytest.approx(statistics.stdev(finals))
        for key in ("pass1", "pass_hat_k", "pass_at_k"):
            assert {"estimate", "low", "high"} <= set(row[key])
        # The deterministic mock answers the same whatever the seed.
        assert row["cannot_differ"]
    assert len(report["seed_warnings"]) == 2
    assert "cannot differ" in proc.stderr
    # One comparison, paired by task over the 3 seeds of each side.
    (pair,) = report["paired"]
    assert {pair["a"], pair["b"]} == {"reflexion", "simple"}
    assert pair["seeds_a"] == pair["seeds_b"] == 3 and pair["n_common"] == 6
    assert pair["test"]["name"] == "sign_flip_exact"
    assert pair["assessment"]["verdict"] in ("different", "equivalent", "inconclusive")
    # The controls table compares each seed with the reference of the same seed.
    for g in groups:
        ref = g["trial1_identity"]["reference"]
        assert f"seed={g['seed']}," in ref, (g["label"], ref)

    text = subprocess.run(
        [*_cli(), "report", str(mock_seed_sweep), "--table", "seeds", "--no-write"],
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert "Configurations over seeds" in text and "pass^k" in text and "cannot differ" in text


def test_each_seed_of_a_sweep_is_in_its_configurations_wandb_group(mock_seed_sweep: Path) -> None:
    import yaml

    groups: dict[str, set[str]] = {}
    for cfg_path in sorted(mock_seed_sweep.glob("*/config.yaml")):
        cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
        groups.setdefault(cfg["strategy"]["name"], set()).add(configuration_group(cfg))
    assert set(groups) == {"reflexion", "simple"}
    assert all(len(g) == 1 for g in groups.values())  # the 3 seeds share one group
    assert groups["reflexion"] != groups["simple"]


# ----------------------------------------------------------------- a sampling mock


class SeededSampler:
    """The actor's reply drawn from the call's seed and the task: right with
    probability 1/2, otherwise a wrong word; every call records temperature 0.8."""

    def __call__(self, messages: Sequence[Message], config: GenerateConfig) -> str:
        text = messages[-1].content
        if text.startswith("Reflect:"):
            return "lesson: the answer must be another word."
        m = _WORD.search(text)
        assert m, text
        rng = random.Random(f"{config.seed}/{m.group(1)}/{text.count('lesson')}")
        return m.group(1) if rng.random() < 0.5 else f"wrong{rng.randrange(1000)}"


WORDS = [f"w{i}" for i in range(16)]


def _sampled_run(run_dir: Path, seed: int, max_trials: int = 2) -> None:
    env = ToyEnvironment(WORDS)
    roles = Roles(
        actor=ToyActor(),
        evaluator=ToyEvaluator(),
        reflector=ToyReflector(),
        scorer=ToyScorer(),
        strategy=Strategy(name="reflexion", max_trials=max_trials),
    )
    ctx = RunContext(
        tasks=env.load_tasks(),
        roles=roles,
        services=Services(
            model=MockModel(responder=SeededSampler()),
            generate_config=GenerateConfig(temperature=0.8, seed=seed),
            seed=seed,
            budget=TaskBudget(),
        ),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="toy",
        run_dir=run_dir,
        max_concurrent_tasks=1,
        show_progress=False,
    )
    asyncio.run(execute(ctx))
    # The config the runner saves, reduced to what tells these runs apart.
    config = {
        "strategy": {"name": "reflexion", "max_trials": max_trials},
        "generate": {"temperature": 0.8},
        "seed": seed,
        "name": "toy_reflexion",
        "run_dir": str(run_dir),
    }
    (run_dir / "config.yaml").write_text(json.dumps(config), encoding="utf-8")


def _final(records: list[dict[str, Any]]) -> float:
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["task_id"] not in last or r["trial"] > last[r["task_id"]]["trial"]:
            last[r["task_id"]] = r
    return statistics.mean(float(r["hidden"]["passed"]) for r in last.values())


def test_a_sampling_model_has_a_measured_spread(tmp_path: Path) -> None:
    for s in (0, 1, 2):
        _sampled_run(tmp_path / f"seed{s}", s)
    _sampled_run(tmp_path / "other_k", 0, max_trials=1)  # another configuration
    finals = [_final(load_run_records(tmp_path / f"seed{s}")) for s in (0, 1, 2)]
    assert len(set(finals)) > 1, "the sampler should make the seeds differ"

    report = build_comparison([tmp_path], n_resamples=2000)
    by_n = sorted(report["seeds"], key=lambda r: r["n_seeds"])
    assert [r["n_seeds"] for r in by_n] == [1, 3]
    one, three = by_n
    assert three["seeds"] == [0, 1, 2]
    assert three["pass1_mean"] == pytest.approx(statistics.mean(finals))
    assert three["pass1_sd"] == pytest.approx(statistics.stdev(finals)) and three["pass1_sd"] > 0
    assert three["cannot_differ"] is None and report["seed_warnings"] == []
    assert one["pass1_sd"] is None
    # pass^k <= pass@1 mean <= pass@k, as shares of the same tasks.
    assert three["pass_hat_k"]["estimate"] <= three["pass1"]["estimate"]
    assert three["pass1"]["estimate"] <= three["pass_at_k"]["estimate"]
    assert three["pass1"]["low"] <= three["pass1"]["estimate"] <= three["pass1"]["high"]
    (pair,) = report["paired"]
    assert sorted([pair["seeds_a"], pair["seeds_b"]]) == [1, 3]
    assert pair["n_common"] == len(WORDS)


def test_seed_sets_never_pool_other_configs_or_repeated_seeds(tmp_path: Path) -> None:
    _sampled_run(tmp_path / "a0", 0)
    _sampled_run(tmp_path / "a1", 1)
    _sampled_run(tmp_path / "b0", 0)  # the same config and seed again: a replicate
    _sampled_run(tmp_path / "c", 5)
    (tmp_path / "c" / "config.yaml").unlink()  # no config: cannot be shown equal
    sets = seed_sets(load_groups([tmp_path]))
    shapes = sorted(str(st.seeds) for st in sets)
    # The toy loop records no seed in its records: without config.yaml it is unknown.
    assert shapes == ["[0, 1]", "[0]", "[None]"]


def test_planner_seeds_enter_through_the_measured_correlation() -> None:
    rng = np.random.default_rng(3)
    base_a = rng.random((40, 1)) < 0.6
    base_b = rng.random((40, 1)) < 0.5
    # Three seeds that repeat one another: nothing gained over one seed (by Connor's
    # approximation, the planner of several seeds; one seed gets the exact test's own
    # figure, a little larger: the exact test is conservative).
    same = pw.assess(np.repeat(base_a, 3, 1), np.repeat(base_b, 3, 1), p_value=1.0)
    single = pw.assess(base_a[:, 0], base_b[:, 0], p_value=1.0)
    psi = single["discordance"]
    assert same["detectable_difference"] == pytest.approx(pw.detectable_difference(40, psi))
    assert single["detectable_difference"] == pytest.approx(pw.exact_detectable_difference(40, psi))
    assert single["detectable_difference"] >= same["detectable_difference"]
    # Independent seeds: a smaller detectable difference.
    ind = pw.assess(rng.random((40, 3)) < 0.6, rng.random((40, 3)) < 0.5, p_value=1.0)
    assert ind["seed_correlation"] is not None and ind["seed_correlation"] < 0.5
    assert ind["detectable_difference"] < single["detectable_difference"]


# ----------------------------------------------------------------- the exact test


def _enumerated_p(a: np.ndarray, b: np.ndarray) -> float:
    """Brute force: every sign assignment of the per-task mean differences."""
    d = a.mean(axis=1) - b.mean(axis=1)
    obs = abs(d.sum())
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= obs - 1e-9
        for signs in itertools.product((1, -1), repeat=d.size)
    )
    return hits / 2**d.size


@pytest.mark.parametrize("seeds_a,seeds_b", [(3, 3), (3, 2), (1, 4)])
def test_sign_flip_exact_equals_enumeration(seeds_a: int, seeds_b: int) -> None:
    rng = np.random.default_rng(seeds_a * 10 + seeds_b)
    for _ in range(5):
        a = (rng.random((11, seeds_a)) < 0.6).astype(float)
        b = (rng.random((11, seeds_b)) < 0.4).astype(float)
        assert sign_flip_exact(a, b).p_value == pytest.approx(_enumerated_p(a, b), abs=1e-12)


def test_sign_flip_at_one_seed_is_mcnemar() -> None:
    rng = np.random.default_rng(7)
    for _ in range(100):
        n = int(rng.integers(1, 80))
        a, b = rng.random(n) < 0.7, rng.random(n) < 0.5
        assert sign_flip_exact(a, b).p_value == pytest.approx(mcnemar_exact(a, b).p_value)
    no_diff = sign_flip_exact(np.ones((5, 2)), np.ones((5, 2)))
    assert no_diff.p_value == 1.0 and no_diff.nonzero == 0
