"""Failure signatures: same cause -> same signature, regardless of values."""

from __future__ import annotations

from reflexion_bench.memory.lifelong import failure_signature


def test_self_test_feedback_same_pattern_different_values() -> None:
    a = "Tested passed:\nassert f(1) == 1\n\nTests failed:\nassert f([1, 2]) == [2, 1] # output: None"
    b = "Tested passed:\n\nTests failed:\nassert f([5]) == [5] # output: None"
    assert (
        failure_signature(a)
        == failure_signature(b)
        == "AssertionError [call == collection] got None"
    )


def test_different_output_kind_is_a_different_cause() -> None:
    a = "Tests failed:\nassert f(3) == 5 # output: 4"
    b = "Tests failed:\nassert f(3) == 5 # output: None"
    assert failure_signature(a) != failure_signature(b)


def test_exception_wins_over_the_assert_that_ran_it() -> None:
    fb = "Tests failed:\nassert f('a') == 2 # output: TypeError: can only concatenate str (not \"int\") to str"
    assert failure_signature(fb) == "TypeError: can only concatenate str (not S) to str"


def test_traceback_timeout_rust_and_empty() -> None:
    tb = 'Traceback (most recent call last):\n  File "x.py", line 3\nIndexError: list index out of range'
    assert failure_signature(tb) == "IndexError: list index out of range"
    assert failure_signature("timed out after 10.0s") == "timeout"
    assert failure_signature("error[E0308]: mismatched types") == "rust E0308"
    assert failure_signature("") == "unknown"
    assert failure_signature(None, "ValueError: bad") == "ValueError: bad"
