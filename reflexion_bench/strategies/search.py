"""``lats``: tree search over candidates (LATS, Zhou et al. 2024) in the one shared loop.

One trial = one expansion. The tree's nodes are the trials; trial 1 (the run's ordinary
greedy first attempt) is the first child of a virtual root (the bare task). After a
trial fails its self-tests:

1. *value*: the share of the task's self-generated tests it passes (the paper's
   internal-test reward), backed up to its ancestors (visit counts and value sums);
2. *reflection* on the failed leaf (the run's reflector, as Reflexion writes it),
   kept on the node;
3. *selection*: UCT (mean value + ``exploration`` * sqrt(ln N / n)) over every node with
   fewer than ``width`` children, the root included (a fresh sample of the task). Any
   node may win, not only the newest: that is the backtracking;
4. *expansion*: the next trial's actor is shown the selected node's implementation,
   its self-test results and its reflection (memory holds exactly that node), sampled
   at ``retry_temperature`` with its own sample index.

A self-test pass ends the task (that candidate is submitted). At the budget or K the
task ends on its last expansion, which is what is scored (the report's rule for every
strategy); the best-valued node is logged (``extra.lats_best_trial``), not submitted.

Only the self-tests are read. ``lats_oracle`` (``oracle: true``) is the published
LATS code's protocol: the hidden tests are run on every candidate inside the search and
a hidden pass stops it. Every such read is counted (``answer_key_uses``,
``strategy.hidden_tests``), so its runs are labelled answer-in-loop and never compared
as clean numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from reflexion_bench.core.answer_key import note_answer_key_use
from reflexion_bench.core.errors import ConfigError, StrategyStopped
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Feedback
from reflexion_bench.memory.base import MemoryEntry, WindowMemory
from reflexion_bench.reflectors.base import Reflector
from reflexion_bench.scorers.base import Scorer
from reflexion_bench.strategies.base import Strategy, note_trial_extra

TREE_KEY = "lats_tree"
#: The answer-key read site of ``lats_oracle``.
STRATEGY_HIDDEN_TESTS = "strategy.hidden_tests"


def self_test_value(feedback: Feedback) -> float:
    """Share of the self-tests passed (0 when none could run)."""
    n = int(feedback.details.get("n_tests") or 0)
    if n <= 0 or "n_passed" not in feedback.details:
        return 1.0 if feedback.passed else 0.0
    return float(feedback.details["n_passed"]) / n


@dataclass
class LatsStrategy(Strategy):
    """Args:
    width: Children a node may get (the root's count fresh samples).
    exploration: UCT exploration constant.
    oracle: Read the hidden tests inside the search (``lats_oracle``: answer-in-loop).
    scorer: The benchmark's scorer (needed by ``oracle`` only).
    """

    name: str = "lats"
    memory_content: str = "reflection"
    retry_temperature: float | None = 0.8
    width: int = 2
    exploration: float = 1.0
    oracle: bool = False
    scorer: Scorer | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.self_test:
            raise ConfigError(
                "strategy.self_test", self.self_test, "true (lats values by self-tests)"
            )
        if isinstance(self.width, bool) or not isinstance(self.width, int) or self.width < 1:
            raise ConfigError("strategy.width", self.width, "an integer >= 1")
        if self.oracle and self.scorer is None:
            raise ConfigError("strategy.scorer", None, "the benchmark's scorer (oracle: true)")
        if self.oracle:
            # The published code stops on the hidden tests, not on a self-test pass.
            self.stop_on_pass = False

    def _tree(self, state: TaskState) -> dict[int, dict[str, Any]]:
        tree: dict[int, dict[str, Any]] = state.scratch.setdefault(
            TREE_KEY, {0: {"parent": None, "visits": 0, "total": 0.0, "children": 1}}
        )
        return tree

    def _select(self, tree: dict[int, dict[str, Any]]) -> int:
        n_all = max(1, tree[0]["visits"])
        best, best_score = 0, -math.inf
        for node_id in sorted(tree):
            node = tree[node_id]
            if node["children"] >= self.width:
                continue
            visits = max(1, node["visits"])
            score = node["total"] / visits + self.exploration * math.sqrt(
                math.log(n_all + 1) / visits
            )
            # Ties go to the newer node: refine the latest candidate before restarting.
            if score >= best_score - 1e-12:
                best, best_score = node_id, score
        return best

    async def after_failure(
        self, state: TaskState, attempt: Attempt, feedback: Feedback, reflector: Reflector
    ) -> tuple[str | None, list[MemoryEntry]]:
        k = state.trial_index
        tree = self._tree(state)
        value = self_test_value(feedback)
        if self.oracle:
            assert self.scorer is not None
            note_answer_key_use(state, STRATEGY_HIDDEN_TESTS)
            hidden = await self.scorer.score(state, attempt)
            if hidden.passed:
                note_trial_extra(state, lats_node=k, lats_value=value)
                raise StrategyStopped("oracle_hidden_pass", "the hidden tests pass (lats_oracle)")
        parent = int(state.scratch.get("lats_parent", 0))
        reflection = await reflector.reflect(state, attempt, feedback)
        tree[k] = {
            "parent": parent,
            "visits": 1,
            "total": value,
            "children": 0,
            "value": value,
            "reflection": reflection,
        }
        up: int | None = parent
        while up is not None:
            tree[up]["visits"] += 1
            tree[up]["total"] += value
            up = tree[up]["parent"]
        chosen = self._select(tree)
        tree[chosen]["children"] += 1
        state.scratch["lats_parent"] = chosen
        best = max((n for n in tree if n), key=lambda n: (tree[n]["value"], n))
        note_trial_extra(
            state,
            lats_node=k,
            lats_parent=parent,
            lats_value=value,
            lats_next_parent=chosen,
            lats_best_trial=best,
        )
        # Memory holds exactly the node to expand (none for a fresh sample of the task):
        # the actor shows its implementation, its self-test results and its reflection.
        state.memory = WindowMemory(window=1)
        if chosen:
            state.memory.add(MemoryEntry("reflection", tree[chosen]["reflection"], chosen))
        return reflection, []
