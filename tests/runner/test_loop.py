"""The trial loop end to end with the scripted model: stopping, memory, errors, the log."""

from __future__ import annotations

import json
from pathlib import Path

from reflexion_bench.core.state import Services
from reflexion_bench.memory import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.strategies import Strategy
from tests.toy import ToyActor, ToyEnvironment, ToyEvaluator, ToyReflector, ToyScorer, toy_responder


def make_ctx(
    tmp_path: Path,
    model: MockModel,
    words: list[str],
    strategy: Strategy | None = None,
    window: int = 1,
    lenient: bool = False,
    concurrency: int = 1,
) -> RunContext:
    return RunContext(
        tasks=ToyEnvironment(words).load_tasks(),
        roles=Roles(
            actor=ToyActor(),
            evaluator=ToyEvaluator(lenient=lenient),
            reflector=ToyReflector(),
            scorer=ToyScorer(),
            strategy=strategy or Strategy(max_trials=4),
        ),
        services=Services(model=model),
        memory_factory=WindowMemory,
        memory_window=window,
        benchmark="toy",
        run_dir=tmp_path,
        max_concurrent_tasks=concurrency,
        show_progress=False,
    )


async def test_stops_on_success_and_reflection_reaches_next_prompt(tmp_path: Path) -> None:
    model = MockModel(responses=["ALPHA", "Use lower case.", "alpha"])
    await execute(make_ctx(tmp_path, model, ["alpha"]))
    recs = load_run_records(tmp_path)
    assert [r["trial"] for r in recs] == [1, 2]
    assert [r["final"] for r in recs] == [False, True]
    assert recs[0]["hidden"]["passed"] is False and recs[1]["hidden"]["passed"] is True
    assert recs[0]["reflection"] == "Use lower case."
    # The reflection is in the actor's second prompt, and was not in its first.
    assert "Use lower case." not in model.prompts[0]
    assert "Use lower case." in model.prompts[2]
    assert recs[1]["memory_shown"] == ["Use lower case."]
    # Every call is accounted to its role.
    assert [c["role"] for c in recs[0]["model_calls"]] == ["actor", "reflector"]
    assert len(model.calls) == 3  # no call after success


async def test_memory_window_keeps_only_last_reflections(tmp_path: Path) -> None:
    replies = []
    for k in range(1, 4):
        replies += [f"WRONG{k}", f"lesson-{k}"]
    replies.append("alpha")
    model = MockModel(responses=replies)
    await execute(make_ctx(tmp_path, model, ["alpha"], window=1))
    last_actor_prompt = model.prompts[-1]
    assert "lesson-3" in last_actor_prompt
    assert "lesson-1" not in last_actor_prompt and "lesson-2" not in last_actor_prompt

    model2 = MockModel(responses=replies)
    await execute(make_ctx(tmp_path / "w2", model2, ["alpha"], window=2))
    p = model2.prompts[-1]
    assert "lesson-2" in p and "lesson-3" in p and "lesson-1" not in p


async def test_max_trials_bounds_a_task_that_never_passes(tmp_path: Path) -> None:
    model = MockModel(responder=toy_responder)
    await execute(make_ctx(tmp_path, model, ["zeta"], strategy=Strategy(max_trials=3)))
    recs = load_run_records(tmp_path)
    assert [r["trial"] for r in recs] == [1, 2, 3]
    assert (
        recs[-1]["final"] and recs[-1]["reflection"] is None
    )  # no reflection after the last trial


async def test_simple_strategy_makes_one_attempt_without_feedback(tmp_path: Path) -> None:
    model = MockModel(responder=toy_responder)
    simple = Strategy(name="simple", max_trials=1, self_test=False, memory_content="none")
    await execute(make_ctx(tmp_path, model, ["alpha", "beta"], strategy=simple))
    recs = load_run_records(tmp_path)
    assert len(recs) == 2
    assert all(r["self_test"]["passed"] is None for r in recs)
    assert all(len(r["model_calls"]) == 1 for r in recs)


async def test_model_failure_errors_one_task_and_run_goes_on(tmp_path: Path) -> None:
    def flaky(messages, config):  # type: ignore[no-untyped-def]
        if "beta" in messages[-1].content:
            raise RuntimeError("connection reset by peer")
        return toy_responder(messages, config)

    model = MockModel(responder=flaky)
    counts = await execute(make_ctx(tmp_path, model, ["alpha", "beta", "gamma"]))
    assert counts["errored"] == 1
    recs = {r["task_id"]: r for r in load_run_records(tmp_path) if r["final"]}
    assert set(recs) == {"toy/0", "toy/1", "toy/2"}
    assert "connection reset" in recs["toy/1"]["error"]
    assert recs["toy/1"]["model_calls"][0]["error"].startswith("RuntimeError")
    assert recs["toy/0"]["hidden"]["passed"] and recs["toy/2"]["hidden"]["passed"]


async def test_self_test_false_positive_is_logged_beside_hidden_verdict(tmp_path: Path) -> None:
    # The lenient in-loop check accepts "apple" for "alpha": the task stops on a
    # wrong pass, and the log keeps both verdicts.
    model = MockModel(responses=["apple"])
    await execute(make_ctx(tmp_path, model, ["alpha"], lenient=True))
    (rec,) = load_run_records(tmp_path)
    assert rec["self_test"]["passed"] is True and rec["hidden"]["passed"] is False
    assert rec["final"]


async def test_concurrent_tasks_each_logged_once(tmp_path: Path) -> None:
    model = MockModel(responder=toy_responder, latency_s=0.01)
    words = [f"w{i}" for i in range(20)]
    await execute(make_ctx(tmp_path, model, words, concurrency=8))
    lines = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    finals = [r["task_id"] for r in lines if r["final"]]
    assert sorted(finals) == sorted(f"toy/{i}" for i in range(20))
    assert all(r["trial"] == 2 for r in lines if r["final"])


async def test_every_call_logs_its_request_and_reply_capped() -> None:
    from reflexion_bench.core.state import TaskState
    from reflexion_bench.core.types import GenerateConfig, Message, Task

    cfg = GenerateConfig(max_reply_chars=50)
    model = MockModel(responder=lambda msgs, c: "R" * 80)
    state = TaskState(
        task=Task(id="t/0", prompt="p", benchmark="toy"),
        strategy="reflexion",
        max_trials=1,
        memory=WindowMemory(),
        services=Services(model=model, generate_config=cfg),
    )
    long = "x" * 120
    msgs = [Message("system", "be brief"), Message("user", long)]
    await state.generate("reflector", msgs)
    (call,) = state.pending_calls
    assert call.role == "reflector"
    assert call.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "x" * 50},
    ]
    assert call.messages_chars == len("be brief") + 120  # what was cut, said
    assert call.reply == "R" * 50  # the reply as the role received it, capped
    await state.generate("actor", [Message("user", "short")])
    assert state.pending_calls[1].messages_chars is None  # nothing cut
