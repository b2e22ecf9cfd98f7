"""Issue 48: the log records what a call sent, and sampled calls get seeds of their own.

- The judged run, by the real CLI: ``run model=mock env=humaneval limit=4 strategy=retry
  ++strategy.retry_temperature=0.8`` logs ``temperature_sent`` 0.8 on the actor calls of
  trials 2..K, and seeds 0 and 1 send disjoint sets of seeds on them; trial 1 is greedy
  and sends the run's seed as it always did.
- :func:`sample_seed` is one-to-one over a grid of run seeds x sample indices, where the
  former ``seed + index`` was not.
- The seeds warning reads what was sent, in the current and the older log forms.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.runs import Group, Run, SeedSet
from reflexion_bench.analysis.seeds import cannot_differ
from reflexion_bench.core.sampling import SEED_LIMIT, sample_seed
from reflexion_bench.core.state import Services, TaskState
from reflexion_bench.core.types import GenerateConfig, Message, Task, sent_temperature
from reflexion_bench.memory import WindowMemory
from reflexion_bench.models.cache import request_key
from reflexion_bench.models.mock import MockModel
from reflexion_bench.strategies.best_of_n import SampledClient

ROOT = Path(__file__).resolve().parents[2]


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("reflexion-bench")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "reflexion_bench.cli"]


def _retry_run(out: Path, seed: int) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [
            *_cli(),
            "run",
            "model=mock",
            "env=humaneval",
            "limit=4",
            "strategy=retry",
            "++strategy.retry_temperature=0.8",
            f"seed={seed}",
            f"run_dir={out}",
            "progress=false",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = (out / "log.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _actor_calls(records: list[dict[str, Any]], later: bool) -> list[dict[str, Any]]:
    return [
        c
        for r in records
        if (int(r["trial"]) > 1) == later
        for c in r.get("model_calls") or []
        if c["role"] == "actor"
    ]


def test_a_sampled_retry_logs_what_it_sent_and_seeds_send_disjoint_seeds(
    tmp_path: Path,
) -> None:
    sent_seeds: dict[int, set[int]] = {}
    for seed in (0, 1):
        records = _retry_run(tmp_path / f"seed{seed}", seed)
        later = _actor_calls(records, later=True)
        assert later, "the mock's retries never reached trial 2: nothing was sampled"
        assert all(c["temperature_sent"] == 0.8 for c in later), later[0]
        assert all(isinstance(c["seed_sent"], int) for c in later)
        sent_seeds[seed] = {int(c["seed_sent"]) for c in later}
        # Trial 1 stays the greedy attempt every strategy shares, with the run's seed.
        first = _actor_calls(records, later=False)
        assert first and all(c["temperature_sent"] == 0.0 for c in first)
        assert all(c["seed_sent"] == seed for c in first)
    assert sent_seeds[0].isdisjoint(sent_seeds[1]), sent_seeds


def test_sample_seeds_are_one_to_one_over_seeds_and_indices() -> None:
    seeds, indices = range(-100, 400), range(0, 100)
    derived = {sample_seed(s, i) for s in seeds for i in indices}
    assert len(derived) == len(seeds) * len(indices)
    assert all(0 <= x < SEED_LIMIT for x in derived)
    # The former derivation shared seeds: s at index k and s + 1 at index k - 1.
    former = {s + i for s in seeds for i in indices}
    assert len(former) < len(seeds) * len(indices)
    # Beyond the pairing's 31 bits the seed is hashed, still in range.
    assert 0 <= sample_seed(10**9, 3) < SEED_LIMIT


async def test_the_greedy_request_is_unchanged_and_only_samples_change() -> None:
    mock = MockModel(responder=lambda m, c: "ok")
    config = GenerateConfig(seed=7)
    await mock.generate([Message("user", "hi")], config)
    await SampledClient(mock, 0.8, 2).generate([Message("user", "hi")], config)
    (_, greedy), (_, sampled) = mock.calls
    assert greedy == config  # trial 1: the run's own config, not touched
    # The key of a greedy request, computed by the code before issue 48 (git cb9b4f8):
    # existing caches and committed studies keep their greedy entries.
    key, _ = request_key({"provider": "mock", "model": "mock"}, [Message("user", "hi")], greedy)
    assert key == GREEDY_KEY_BEFORE
    assert sampled.temperature == 0.8 and sampled.sample_index == 2
    assert sampled.seed == sample_seed(7, 2) != 7 + 2


#: ``request_key({"provider": "mock", "model": "mock"}, [Message("user", "hi")],
#: GenerateConfig(seed=7))[0]`` at commit cb9b4f8, before sample seeds changed.
GREEDY_KEY_BEFORE = "9c376b8728cc30d6f4dbff3b3a6e2d7e9eedac9e7c9835ff1034628f68fd2407"


async def test_a_call_logs_the_sampled_values_not_the_roles_config() -> None:
    mock = MockModel(responder=lambda m, c: "ok")
    state = TaskState(
        task=Task(id="t/0", prompt="p", benchmark="toy"),
        strategy="retry",
        max_trials=2,
        memory=WindowMemory(),
        services=Services(model=mock, generate_config=GenerateConfig(seed=3)),
    )
    await state.generate("actor", [Message("user", "hi")])
    state.services.models["actor"] = SampledClient(mock, 0.5, 1)
    await state.generate("actor", [Message("user", "hi")])

    class NoSeedNoTemperature(MockModel):
        unsent_params = ("temperature", "seed")

    state.services.models["actor"] = SampledClient(
        NoSeedNoTemperature(responder=mock.responder), 0.5, 1
    )
    await state.generate("actor", [Message("user", "hi")])
    greedy, sampled, unsent = state.pending_calls
    assert (greedy.temperature_sent, greedy.seed_sent) == (0.0, 3)
    assert (sampled.temperature_sent, sampled.seed_sent) == (0.5, sample_seed(3, 1))
    assert (unsent.temperature_sent, unsent.seed_sent) == (None, None)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"temperature": 0.0, "temperature_sent": 0.8, "seed_sent": 5}, 0.8),
        ({"temperature": 0.0, "temperature_sent": None, "seed_sent": None}, None),
        ({"temperature": 0.0, "temperature_sent": True}, 0.0),  # the older boolean form
        ({"temperature": 0.7, "temperature_sent": False}, None),
        ({"temperature": 0.2}, 0.2),  # older still: no such field
        ({}, None),
    ],
)
def test_every_log_form_of_the_sent_temperature_reads(
    call: dict[str, Any], expected: float | None
) -> None:
    assert sent_temperature(call) == expected


def _seed_set(calls_per_seed: list[list[dict[str, Any]]]) -> SeedSet:
    members = []
    for seed, calls in enumerate(calls_per_seed):
        records = [
            {
                "task_id": "t/0",
                "trial": trial,
                # Distinct candidates: the warning must come from the temperatures alone.
                "candidate": f"seed {seed} trial {trial}",
                "model_calls": [call],
            }
            for trial, call in enumerate(calls, start=1)
        ]
        run = Run(path=Path(f"run{seed}"), records=records, summary={}, config=None)
        members.append(Group("toy", "retry", "mock", runs=[run], records=records))
    return SeedSet("toy", "retry", "mock", members)


def test_the_seeds_warning_reads_what_was_sent() -> None:
    def calls(seed: int, sent: float) -> list[dict[str, Any]]:
        # Trial 1 greedy; trial 2 asked for 0.0 by the role's config, ``sent`` sent.
        return [
            {"role": "actor", "temperature": 0.0, "temperature_sent": 0.0, "seed_sent": seed},
            {"role": "actor", "temperature": 0.0, "temperature_sent": sent, "seed_sent": seed},
        ]

    assert cannot_differ(_seed_set([calls(0, 0.8), calls(1, 0.8)])) is None
    assert "greedy" in str(cannot_differ(_seed_set([calls(0, 0.0), calls(1, 0.0)])))
    # A committed log's older form: a boolean, and the temperature asked for.
    old = [{"role": "actor", "temperature": 0.0, "temperature_sent": True}] * 2
    assert "greedy" in str(cannot_differ(_seed_set([old, old])))
    old_unsent = [{"role": "actor", "temperature": 0.0, "temperature_sent": False}] * 2
    assert cannot_differ(_seed_set([old_unsent, old_unsent])) is None
