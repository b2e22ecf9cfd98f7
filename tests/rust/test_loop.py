"""The Reflexion loop on HumanEval-rs with the scripted model and the real sandbox:
a compile error reaches the self-test feedback, the reflector's prompt and, through
memory, the next attempt; the fixed program passes the hidden tests."""

from __future__ import annotations

from pathlib import Path

from reflexion_bench.actors.code import CodeActor
from reflexion_bench.core.state import Services
from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.environments.multiple import MultiPLEEnvironment
from reflexion_bench.evaluators.self_tests import SelfTestEvaluator
from reflexion_bench.memory import WindowMemory
from reflexion_bench.models.mock import MockModel
from reflexion_bench.reflectors.code import CodeReflector
from reflexion_bench.runner.loop import Roles
from reflexion_bench.runner.run import RunContext, execute
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.sandbox.base import Sandbox
from reflexion_bench.scorers.code import CodeScorer
from reflexion_bench.strategies import Strategy

BROKEN = "```rust\nfn largest_divisor(n: isize) -> isize {\n    let d: usize = n;\n    d\n}\n```"
TESTS = "```rust\nassert_eq!(largest_divisor(15), 5);\nassert_eq!(largest_divisor(7), 1);\n```"
REFLECTION = (
    "The function mixes usize and isize; keep everything isize and search divisors downward."
)
FIXED = (
    "```rust\nfn largest_divisor(n: isize) -> isize {\n"
    "    (1..n).rev().find(|d| n % d == 0).unwrap_or(1)\n}\n```"
)


async def test_compile_error_drives_the_next_trial(
    tmp_path: Path, shared_data: Path, sandbox: Sandbox
) -> None:
    env = MultiPLEEnvironment(
        RustLanguage(compile_timeout_s=120),
        path=str(shared_data / "humaneval-rs.jsonl"),
        task_ids=["HumanEval_24_largest_divisor"],
        name="humaneval_rs",
    )
    tasks: list[Task] = env.load_tasks()
    model = MockModel(responses=[BROKEN, TESTS, REFLECTION, FIXED])
    ctx = RunContext(
        tasks=tasks,
        roles=Roles(
            actor=CodeActor(),
            evaluator=SelfTestEvaluator(n_tests=2, test_timeout_s=5),
            reflector=CodeReflector(),
            scorer=CodeScorer(),
            strategy=Strategy(max_trials=2),
        ),
        services=Services(model=model, sandbox=sandbox),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="humaneval_rs",
        run_dir=tmp_path,
        show_progress=False,
    )
    await execute(ctx)
    recs = load_run_records(tmp_path)
    assert [r["trial"] for r in recs] == [1, 2]
    first, second = recs
    # Trial 1: does not compile; the hidden verdict says so, and so does the feedback.
    assert first["hidden"]["status"] == "fail"  # its own failure, not the harness's
    assert "error[E0308]" in first["self_test"]["text"]
    assert first["self_test"]["passed"] is False
    # The reflector was shown the compiler's message (call 3 is the reflection).
    reflector_prompt = model.prompts[2]
    assert "error[E0308]: mismatched types" in reflector_prompt
    assert "Rust" in reflector_prompt and "did not compile" in reflector_prompt
    assert first["reflection"] == REFLECTION
    # Trial 2's actor saw the reflection and the failing implementation.
    assert REFLECTION in model.prompts[3] and "let d: usize = n;" in model.prompts[3]
    assert second["self_test"]["passed"] is True
    assert second["hidden"]["status"] == "pass"
    # The self-tests were written in Rust, from the project's Rust prompt.
    assert "assert_eq!" in model.prompts[1]


async def test_a_forging_model_scores_zero(
    tmp_path: Path, shared_data: Path, sandbox: Sandbox
) -> None:
    """A scripted model whose programs only try to forge verdicts (exit 0 before the
    asserts, a panic hook that exits 0) passes neither its self-tests nor the hidden
    tests, in the real loop."""
    from tests.rust.gaming_solutions import GAMING

    env = MultiPLEEnvironment(
        RustLanguage(compile_timeout_s=120),
        path=str(shared_data / "humaneval-rs.jsonl"),
        task_ids=["HumanEval_24_largest_divisor"],
        name="humaneval_rs",
    )
    forged = [f"```rust\n{GAMING[k]}```" for k in ("exit0_in_function", "exit0_in_panic_hook")]
    model = MockModel(responses=[forged[0], TESTS, REFLECTION, forged[1]])
    ctx = RunContext(
        tasks=env.load_tasks(),
        roles=Roles(
            actor=CodeActor(),
            evaluator=SelfTestEvaluator(n_tests=2, test_timeout_s=5),
            reflector=CodeReflector(),
            scorer=CodeScorer(),
            strategy=Strategy(max_trials=2),
        ),
        services=Services(model=model, sandbox=sandbox),
        memory_factory=WindowMemory,
        memory_window=1,
        benchmark="humaneval_rs",
        run_dir=tmp_path,
        show_progress=False,
    )
    await execute(ctx)
    recs = load_run_records(tmp_path)
    assert [r["trial"] for r in recs] == [1, 2]
    for rec in recs:
        assert rec["hidden"]["status"] == "fail", rec["hidden"]
        assert rec["self_test"]["passed"] is False
        assert not any(r["status"] == "pass" for r in rec["self_test"]["details"]["results"])
