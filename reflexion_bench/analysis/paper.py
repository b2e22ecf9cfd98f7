"""Published figures of Shinn et al. (2023), *Reflexion*, as reference rows for reports.

These are the paper's numbers as printed (not recomputed here), labelled as such
wherever they appear. Benchmark and strategy names are this project's, so that a
reference row sits next to the runs it should be compared with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SOURCE = "published: Shinn et al. 2023"


@dataclass(frozen=True)
class Published:
    benchmark: str
    strategy: str
    model: str
    metric: str
    """``final`` (pass@1 / success), ``self_test_fp_rate``, ``self_test_fn_rate``,
    ``success_at_trial``."""
    value: float
    table: str
    note: str = ""
    trial: int | None = None


PUBLISHED: tuple[Published, ...] = (
    # Table 1: pass@1 of the base model ("simple") and of Reflexion.
    Published("humaneval", "simple", "gpt-4", "final", 0.801, "Table 1"),
    Published("humaneval", "reflexion", "gpt-4", "final", 0.910, "Table 1"),
    Published("humaneval_rs_hard50", "simple", "gpt-4", "final", 0.600, "Table 1", "hardest 50"),
    Published("humaneval_rs_hard50", "reflexion", "gpt-4", "final", 0.680, "Table 1", "hardest 50"),
    Published("mbpp", "simple", "gpt-4", "final", 0.801, "Table 1"),
    Published("mbpp", "reflexion", "gpt-4", "final", 0.771, "Table 1"),
    Published("mbpp_rs", "simple", "gpt-4", "final", 0.709, "Table 1"),
    Published("mbpp_rs", "reflexion", "gpt-4", "final", 0.754, "Table 1"),
    Published("leetcode_hard", "simple", "gpt-4", "final", 0.075, "Table 1", "40 problems"),
    Published("leetcode_hard", "reflexion", "gpt-4", "final", 0.150, "Table 1", "40 problems"),
    # Table 3: the code ablation on HumanEval-rs, hardest 50.
    Published(
        "humaneval_rs_hard50", "simple", "gpt-4", "final", 0.60, "Table 3", "hardest 50; base"
    ),
    Published(
        "humaneval_rs_hard50", "reflexion_no_tests", "gpt-4", "final", 0.52, "Table 3", "hardest 50"
    ),
    Published(
        "humaneval_rs_hard50",
        "tests_no_reflection",
        "gpt-4",
        "final",
        0.60,
        "Table 3",
        "hardest 50",
    ),
    Published("humaneval_rs_hard50", "reflexion", "gpt-4", "final", 0.68, "Table 3", "hardest 50"),
    # ALFWorld: 130 of 134 games solved after 12 trials (ReAct + Reflexion).
    Published(
        "alfworld",
        "reflexion",
        "text-davinci-003",
        "success_at_trial",
        130 / 134,
        "Figure 3",
        "130/134 after 12 trials",
        trial=12,
    ),
    # Table 2: the self-generated tests' verdicts against the hidden tests, as rates per
    # self-test verdict: FP per self-test pass (TP = 1 - FP), FN per self-test failure
    # (TN = 1 - FN). HumanEval's and MBPP's FP rates as the text gives them (1.4%,
    # 16.3%), the others as Table 2 prints them (two digits).
    Published("mbpp", "reflexion", "gpt-4", "self_test_fp_rate", 0.163, "Table 2"),
    Published("humaneval", "reflexion", "gpt-4", "self_test_fp_rate", 0.014, "Table 2"),
    Published("humaneval_rs_hard50", "reflexion", "gpt-4", "self_test_fp_rate", 0.13, "Table 2"),
    Published("mbpp_rs", "reflexion", "gpt-4", "self_test_fp_rate", 0.16, "Table 2"),
    Published("humaneval", "reflexion", "gpt-4", "self_test_fn_rate", 0.40, "Table 2"),
    Published("mbpp", "reflexion", "gpt-4", "self_test_fn_rate", 0.59, "Table 2"),
    Published("humaneval_rs_hard50", "reflexion", "gpt-4", "self_test_fn_rate", 0.37, "Table 2"),
    Published("mbpp_rs", "reflexion", "gpt-4", "self_test_fn_rate", 0.51, "Table 2"),
)

#: Other spellings of benchmark names that refer to the same published rows. The
#: paper's HumanEval-rs rows are its 50 hardest problems: this project's
#: ``humaneval_rs_hard50`` env, not ``humaneval_rs`` (all 156).
ALIASES = {
    "humaneval-py": "humaneval",
    "humaneval_py": "humaneval",
    "humaneval-rs": "humaneval_rs",
    "humaneval-rs-hard50": "humaneval_rs_hard50",
    "humaneval_rs_hardest50": "humaneval_rs_hard50",
    "humaneval-rs-hardest50": "humaneval_rs_hard50",
    "mbpp-py": "mbpp",
    "mbpp_py": "mbpp",
    "mbpp-rs": "mbpp_rs",
    "leetcode-hard": "leetcode_hard",
    "leetcode_hard_py": "leetcode_hard",
    "leetcodehard": "leetcode_hard",
    "alfworld_v211": "alfworld",  # the same games, in the older text the prompts were written for
}

#: Benchmarks (env names) the paper printed no figure for, and why: ``report --paper``
#: says so rather than show rows of other benchmarks.
NO_PUBLISHED_ROW = {
    "humaneval_rs": "the paper printed HumanEval-rs only for its 50 hardest problems "
    "(env humaneval_rs_hard50)",
    "hotpotqa": "Figure 4 only, no printed numbers (see results/paper-audit/claims.md)",
    "leetcode_hard_rs": "not in the paper's tables (its logs: results/paper-audit/claims.md)",
}


def unpublished_note(name: str | None) -> str | None:
    """Why a benchmark has no published row (None: it has rows, or is not one of ours)."""
    return NO_PUBLISHED_ROW.get(canonical_benchmark(name))


def canonical_benchmark(name: str | None) -> str:
    key = str(name or "").lower()
    return ALIASES.get(key, key)


#: Old strategy names a run log may still carry -> the one name used now. ``none`` and
#: ``retry`` were two configs of one baseline (retry with no memory); only ``retry`` is
#: left, and a log written under ``none`` is compared as ``retry``.
LEGACY_STRATEGIES = {"none": "retry"}


def canonical_strategy(name: Any) -> Any:
    """The current name of a strategy (``none`` -> ``retry``); anything else unchanged."""
    return LEGACY_STRATEGIES.get(name, name) if isinstance(name, str) else name


def with_canonical_strategies(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` with old strategy names replaced (copies only where one changes)."""
    return [
        {**r, "strategy": canonical_strategy(r["strategy"])}
        if r.get("strategy") in LEGACY_STRATEGIES
        else r
        for r in records
    ]


def published_for(benchmarks: set[str] | None = None, metric: str | None = None) -> list[Published]:
    """Published rows, optionally only those of ``benchmarks`` (any spelling) / ``metric``."""
    wanted = None if benchmarks is None else {canonical_benchmark(b) for b in benchmarks}
    return [
        p
        for p in PUBLISHED
        if (wanted is None or p.benchmark in wanted) and (metric is None or p.metric == metric)
    ]
