"""Strategy role: the loop policy (simple, reflexion, ablations and controls).

Every strategy shares the one loop (:mod:`reflexion_bench.runner.loop`); they differ
in data (K, self-tests on/off, what a failure leaves in memory) and, for the
controls, in :meth:`Strategy.after_failure`. The frozen-first-attempt wrappers
(:mod:`reflexion_bench.strategies.frozen`) wrap the benchmark's actor and evaluator.
"""

from reflexion_bench.models.sampled import SampledClient
from reflexion_bench.strategies.base import (
    MEMORY_CONTENTS,
    TRIAL_EXTRA_KEY,
    Strategy,
    note_trial_extra,
    raw_log_text,
)
from reflexion_bench.strategies.best_of_n import BestOfNStrategy
from reflexion_bench.strategies.controls import (
    IrrelevantTextStrategy,
    WrongReflectionStrategy,
    seeded_derangement,
)
from reflexion_bench.strategies.escalate import RetryEscalateStrategy
from reflexion_bench.strategies.filler import count_tokens, irrelevant_text
from reflexion_bench.strategies.frozen import (
    FrozenFirstAttemptActor,
    FrozenFirstAttemptError,
    FrozenFirstFeedbackEvaluator,
)
from reflexion_bench.strategies.ldb import LdbStrategy
from reflexion_bench.strategies.refine import SelfRefineStrategy
from reflexion_bench.strategies.search import LatsStrategy

__all__ = [
    "MEMORY_CONTENTS",
    "TRIAL_EXTRA_KEY",
    "BestOfNStrategy",
    "FrozenFirstAttemptActor",
    "FrozenFirstAttemptError",
    "FrozenFirstFeedbackEvaluator",
    "IrrelevantTextStrategy",
    "LatsStrategy",
    "LdbStrategy",
    "RetryEscalateStrategy",
    "SampledClient",
    "SelfRefineStrategy",
    "Strategy",
    "WrongReflectionStrategy",
    "count_tokens",
    "irrelevant_text",
    "note_trial_extra",
    "raw_log_text",
    "seeded_derangement",
]
