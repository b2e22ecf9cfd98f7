"""Synthetic reflections and a labelled query set, for the retrieval benchmark.

A *topic* is a (failure kind, task domain) pair; each synthetic reflection is about
one topic, worded with random variation, and each query describes a task of one
topic in *other* words (the task-side phrasing), so lexical overlap is partial and a
dense encoder has something to add. The relevant reflections of a query are those of
its topic; reflections sharing only the failure kind or only the domain are the hard
distractors.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from reflexion_bench.memory.lifelong.record import Reflection

#: (how a lesson names the failure, how a task description hints at it)
FAILURES = [
    (
        "an off-by-one error excluded the last element of the range",
        "the final item must be included",
    ),
    (
        "the empty input was not handled and indexing crashed",
        "the input may contain nothing at all",
    ),
    (
        "a missing return statement made the function return None",
        "the function has to give back its result",
    ),
    (
        "integer division truncated the fractional part",
        "answers can be fractions, not only whole numbers",
    ),
    ("the input list was mutated in place", "the caller's argument must stay unchanged"),
    ("strings were compared case-sensitively", "upper and lower case letters count as equal"),
    (
        "the output was sorted ascending instead of descending",
        "order results from largest to smallest",
    ),
    ("negative numbers were not handled", "values below zero can appear"),
    ("duplicate values were counted twice", "repeated values should be counted once"),
    ("recursion exceeded the maximum depth on long inputs", "inputs can be very long"),
    ("the nested loop used the wrong index variable", "every pair of positions is compared"),
    ("significant whitespace was stripped", "spaces inside the text matter"),
    (
        "floats were compared with == instead of a tolerance",
        "decimal results are checked approximately",
    ),
    ("a list was returned where a tuple was expected", "the answer is a tuple"),
    (
        "a single-element input fell through every branch",
        "an input with exactly one item is allowed",
    ),
    ("the tie-breaking rule was ignored", "when two values are equal the earlier one wins"),
    ("characters were counted instead of words", "count whole words rather than letters"),
    ("the recursion had a wrong base case", "the smallest input returns immediately"),
    ("a greedy choice missed the optimal combination", "the best possible combination is required"),
    ("the loop stopped one iteration too early", "process every element up to the end"),
]
#: (how a lesson names the domain, how a task names it)
DOMAINS = [
    ("parsing a list of integers", "a list of whole numbers"),
    ("splitting a sentence into words", "a sentence of text"),
    ("updating a dictionary of counts", "a mapping from keys to frequencies"),
    ("testing numbers for primality", "prime numbers"),
    ("walking the rows and columns of a matrix", "a two-dimensional grid"),
    ("formatting a date string", "calendar dates"),
    ("summing the digits of a number", "the digits of an integer"),
    ("merging two sorted lists", "two ordered sequences"),
    ("checking whether a string is a palindrome", "text that reads the same backwards"),
    ("converting between number bases", "binary and hexadecimal representations"),
    ("searching for a substring", "occurrences of a pattern inside text"),
    ("tracking a running maximum", "the largest value seen so far"),
    ("validating nested brackets", "balanced parentheses"),
    ("generating Fibonacci numbers", "the Fibonacci sequence"),
    ("merging overlapping intervals", "time ranges that may overlap"),
]
_OPENERS = ["I", "The implementation", "My code", "The previous attempt", "The solution"]
_FIXES = [
    "Next time, check this case first and add a test for it.",
    "Write a unit test for this case before changing the logic.",
    "Handle it explicitly with a guard at the top of the function.",
    "Trace the failing example by hand before rewriting anything.",
    "Keep the fix minimal and re-run the failing test.",
]


def topics() -> list[tuple[int, int]]:
    return [(f, d) for f in range(len(FAILURES)) for d in range(len(DOMAINS))]


def synthetic_reflections(
    n: int, seed: int = 0, agent: str = "bench", start: datetime | None = None
) -> tuple[list[Reflection], dict[str, tuple[int, int]]]:
    """``n`` reflections spread over all topics, and each one's topic by id."""
    rng = random.Random(seed)
    start = start or datetime(2025, 1, 1, tzinfo=UTC)
    all_topics = topics()
    refs: list[Reflection] = []
    topic_of: dict[str, tuple[int, int]] = {}
    for i in range(n):
        f, d = all_topics[i % len(all_topics)] if i < len(all_topics) else rng.choice(all_topics)
        failure, domain = FAILURES[f][0], DOMAINS[d][0]
        # 5 openers x 5 fixes x 300 topics = 7,500 distinct texts: a 100k store has
        # 100k rows (and vectors) but costs at most 7,500 embeddings to build.
        text = f"{rng.choice(_OPENERS)} failed while {domain}: {failure}. {rng.choice(_FIXES)}"
        fname = f"solve_{d}"
        ref = Reflection(
            text=text,
            task_type=rng.choice(["humaneval", "mbpp"]),
            task_id=f"synthetic/{i}",
            outcome=rng.choice(["failure", "partial", "success"]),
            created=start + timedelta(minutes=i),
            model="synthetic",
            source_agent=agent,
            failure_signature=f"kind-{f}",
            task_excerpt=f"def {fname}(x):\n    '''Work on {DOMAINS[d][1]}.'''",
        )
        refs.append(ref)
        topic_of[ref.id] = (f, d)
    return refs, topic_of


def labelled_queries(
    topic_of: dict[str, tuple[int, int]], n_queries: int = 100, seed: int = 1
) -> list[dict[str, Any]]:
    """Queries phrased like new tasks, each with the ids of its topic's reflections."""
    rng = random.Random(seed)
    by_topic: dict[tuple[int, int], list[str]] = {}
    for rid, t in topic_of.items():
        by_topic.setdefault(t, []).append(rid)
    present = sorted(by_topic)
    out = []
    for _ in range(n_queries):
        f, d = rng.choice(present)
        query = f"Write a function that works on {DOMAINS[d][1]}. Note that {FAILURES[f][1]}."
        out.append({"query": query, "relevant": by_topic[(f, d)], "topic": [f, d]})
    return out
