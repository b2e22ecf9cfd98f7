"""Uses of the answer key inside the loop: counted where they happen, logged per trial.

The *answer key* is whatever decides the benchmark's verdict: the gold answer
(HotpotQA), the environment's own success signal (ALFWorld's ``won``), the hidden
tests, or the scorer's verdict. The paper's HotpotQA and ALFWorld protocols feed it
back into the loop on purpose (the in-loop evaluator *is* the answer key there); the
code benchmarks do not (self-generated tests). A number from a loop that saw the
answer key is not comparable with one from a loop that did not, so every read of the
answer key by a loop role (evaluator, reflector, strategy, memory) calls
:func:`note_answer_key_use` at the read site, and the trial loop moves the counts of a
trial into its record's ``answer_key_uses`` field (``{source: count}``; ``{}`` = none).
Reports label a run from those logged counts (see
:mod:`reflexion_bench.analysis.answer_key`), never from the config.

The final scorer reading the answer key is not a use: it judges the trial for the
report, and its verdict never reaches the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reflexion_bench.core.state import TaskState

#: Key of ``TaskState.scratch`` holding the current trial's uses until the trial ends.
SCRATCH_KEY = "answer_key_uses"

# The read sites (the ``source`` names that appear in logs and reports).
#: HotpotQA's paper evaluator: exact match against the gold answer.
EVALUATOR_GOLD_ANSWER = "evaluator.gold_answer"
#: ALFWorld's paper evaluator: the game's own ``won`` flag.
EVALUATOR_ENV_SUCCESS = "evaluator.env_success"
#: ALFWorld's reflector told "won"/"not won" when no evaluator feedback exists.
REFLECTOR_ENV_SUCCESS = "reflector.env_success"
#: ``evaluator=oracle``: the hidden tests' verdict with the first failing test's message.
EVALUATOR_HIDDEN_TESTS = "evaluator.hidden_tests"
#: ``evaluator=oracle_verdict``: the hidden tests' pass/fail, nothing else.
EVALUATOR_HIDDEN_VERDICT = "evaluator.hidden_verdict"
#: ``evaluator=noisy_oracle``: the hidden pass/fail, flipped at configured rates (still a
#: read of the answer key: the flip is noise on it, not independence from it).
EVALUATOR_NOISY_HIDDEN_VERDICT = "evaluator.noisy_hidden_verdict"
#: Lifelong memory labelling a task's outcome from the scorer (``memory.label_from_hidden``).
MEMORY_HIDDEN_VERDICT = "memory.hidden_verdict"

#: Run labels (see :mod:`reflexion_bench.analysis.answer_key`).
CLEAN = "clean"
ANSWER_IN_LOOP = "answer-in-loop"


def note_answer_key_use(state: TaskState, source: str, n: int = 1) -> None:
    """Count ``n`` reads of the answer key by ``source`` in the trial in progress."""
    uses: dict[str, int] = state.scratch.setdefault(SCRATCH_KEY, {})
    uses[source] = uses.get(source, 0) + n


def take_answer_key_uses(state: TaskState) -> dict[str, int]:
    """The uses counted since the last call (the trial loop calls it as a trial ends)."""
    uses: dict[str, int] = state.scratch.pop(SCRATCH_KEY, None) or {}
    return dict(uses)
