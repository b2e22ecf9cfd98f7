"""Published figures of Shinn et al. (2023), *Reflexion*, as reference rows for reports.

These are the paper's numbers as printed (not recomputed here), labelled as such
wherever they appear. Benchmark and strategy names are this project's, so that a
reference row sits next to the runs it should be compared with.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "published: Shinn et al. 2023"


@dataclass(frozen=True)
class Published:
    benchmark: str
    strategy: str
    model: str
    metric: str
    """``final`` (pass@1 / success), ``self_test_fp_rate``, ``success_at_trial``."""
    value: float
    table: str
    note: str = ""
    trial: int | None = None


PUBLISHED: tuple[Published, ...] = (
    # Table 1: pass@1 of the base model ("simple") and of Reflexion.
    Published("humaneval", "simple", "gpt-4", "final", 0.801, "Table 1"),
    Published("humaneval", "reflexion", "gpt-4", "final", 0.910, "Table 1"),
    Published("humaneval_rs", "simple", "gpt-4", "final", 0.600, "Table 1", "hardest 50"),
    Published("humaneval_rs", "reflexion", "gpt-4", "final", 0.680, "Table 1", "hardest 50"),
    Published("mbpp", "simple", "gpt-4", "final", 0.801, "Table 1"),
    Published("mbpp", "reflexion", "gpt-4", "final", 0.771, "Table 1"),
    Published("mbpp_rs", "simple", "gpt-4", "final", 0.709, "Table 1"),
    Published("mbpp_rs", "reflexion", "gpt-4", "final", 0.754, "Table 1"),
    Published("leetcode_hard", "simple", "gpt-4", "final", 0.075, "Table 1", "40 problems"),
    Published("leetcode_hard", "reflexion", "gpt-4", "final", 0.150, "Table 1", "40 problems"),
    # Table 3: the code ablation on HumanEval-rs, hardest 50.
    Published("humaneval_rs", "simple", "gpt-4", "final", 0.60, "Table 3", "hardest 50; base"),
    Published(
        "humaneval_rs", "reflexion_no_tests", "gpt-4", "final", 0.52, "Table 3", "hardest 50"
    ),
    Published(
        "humaneval_rs", "tests_no_reflection", "gpt-4", "final", 0.60, "Table 3", "hardest 50"
    ),
    Published("humaneval_rs", "reflexion", "gpt-4", "final", 0.68, "Table 3", "hardest 50"),
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
    # Table 2: false-positive rate of the self-generated tests (per self-test pass).
    Published("mbpp", "reflexion", "gpt-4", "self_test_fp_rate", 0.163, "Table 2"),
    Published("humaneval", "reflexion", "gpt-4", "self_test_fp_rate", 0.014, "Table 2"),
)

#: Other spellings of benchmark names that refer to the same published rows.
ALIASES = {
    "humaneval-py": "humaneval",
    "humaneval_py": "humaneval",
    "humaneval-rs": "humaneval_rs",
    "humaneval_rs_hardest50": "humaneval_rs",
    "mbpp-py": "mbpp",
    "mbpp_py": "mbpp",
    "mbpp-rs": "mbpp_rs",
    "leetcode_hard_py": "leetcode_hard",
    "leetcodehard": "leetcode_hard",
}


def canonical_benchmark(name: str | None) -> str:
    key = str(name or "").lower()
    return ALIASES.get(key, key)


def published_for(benchmarks: set[str] | None = None, metric: str | None = None) -> list[Published]:
    """Published rows, optionally only those of ``benchmarks`` (any spelling) / ``metric``."""
    wanted = None if benchmarks is None else {canonical_benchmark(b) for b in benchmarks}
    return [
        p
        for p in PUBLISHED
        if (wanted is None or p.benchmark in wanted) and (metric is None or p.metric == metric)
    ]
