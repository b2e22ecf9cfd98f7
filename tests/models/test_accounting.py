"""Per-role and per-trial model accounting from a hand-made run log."""

from __future__ import annotations

import pytest

from reflexion_bench.models.accounting import usage_summary


def call(role: str, pt: int, ct: int, cost: float = 0.0, **kw: object) -> dict[str, object]:
    return {
        "role": role,
        "prompt_tokens": pt,
        "completion_tokens": ct,
        "cost_usd": cost,
        "latency_s": 1.0,
        "retries": 0,
        "cached": False,
        "error": None,
        **kw,
    }


RECORDS = [
    {
        "task_id": "a",
        "trial": 1,
        "model_calls": [call("actor", 10, 5, 0.01), call("self_test", 8, 4, 0.02, retries=2)],
    },
    {
        "task_id": "a",
        "trial": 2,
        "model_calls": [call("reflector", 20, 3, 0.03), call("actor", 30, 6, 0.04)],
    },
    {
        "task_id": "b",
        "trial": 1,
        "model_calls": [
            call("actor", 10, 5, cached=True, latency_s=0.0),
            call("self_test", 0, 0, error="ModelError: gave up"),
        ],
    },
]


def test_usage_by_role_and_trial() -> None:
    u = usage_summary(RECORDS)
    assert u["total"]["calls"] == 6 and u["total"]["live_calls"] == 4
    assert u["total"]["cached_calls"] == 1 and u["total"]["failed_calls"] == 1
    assert u["total"]["tokens"] == 101 and u["total"]["retries"] == 2
    assert u["total"]["cost_usd"] == pytest.approx(0.10)
    actor = u["by_role"]["actor"]
    assert (actor["calls"], actor["prompt_tokens"], actor["completion_tokens"]) == (3, 50, 16)
    assert actor["cost_usd"] == pytest.approx(0.05) and actor["latency_s"] == 2.0
    assert u["by_role"]["self_test"]["failed_calls"] == 1
    assert list(u["by_trial"]) == [1, 2]
    assert u["by_trial"][2]["tokens"] == 59 and u["by_trial"][1]["calls"] == 4
    assert usage_summary([])["total"]["calls"] == 0


def test_paid_now_leaves_out_replays_that_count_as_run_live() -> None:
    records = [
        {
            "task_id": "a",
            "trial": 1,
            "model_calls": [
                call("actor", 10, 5, 0.01),
                # Replayed from the cache: what its live call spent, paid nothing now.
                call("actor", 20, 4, 0.02, cached=True),
            ],
        }
    ]
    total = usage_summary(records)["total"]
    assert total["tokens"] == 39 and total["cost_usd"] == pytest.approx(0.03)
    assert total["paid_tokens"] == 15 and total["paid_cost_usd"] == pytest.approx(0.01)
    assert (total["paid_prompt_tokens"], total["paid_completion_tokens"]) == (10, 5)
