"""The score mapping (other harnesses' scores -> pass/fail): defaults, options, errors."""

from __future__ import annotations

import pytest

from reflexion_bench.interop import InteropError, VerdictMap, parse_verdict_options


def test_defaults_map_inspect_letters_words_booleans_and_full_credit() -> None:
    v = VerdictMap()
    assert [v.verdict("s", x) for x in ("C", "I", "P", "N")] == [True, False, False, False]
    assert [v.verdict("s", x) for x in ("Yes", "false", "CORRECT", "incorrect")] == [
        True,
        False,
        True,
        False,
    ]
    assert v.verdict("s", True) is True and v.verdict("s", False) is False
    assert [v.verdict("s", x) for x in (1, 1.0, 0.99, 0, "1.0", "0.5")] == [
        True,
        True,
        False,
        False,
        True,
        False,
    ]
    # Lower-case letters are not Inspect's: "c" is no verdict by default.
    with pytest.raises(InteropError, match=r"--map s:c=pass"):
        v.verdict("s", "c")


def test_options_are_per_scorer_and_override_the_defaults() -> None:
    v = parse_verdict_options(["P=pass", "judge:maybe=fail", "strict:C=fail"], ["f1=0.5", "0.9"])
    assert v.verdict("any", "P") is True
    assert v.verdict("judge", "maybe") is False
    with pytest.raises(InteropError, match="'other' gave the value 'maybe'"):
        v.verdict("other", "maybe")
    assert v.verdict("strict", "C") is False and v.verdict("loose", "C") is True
    assert v.verdict("f1", 0.6) is True and v.verdict("acc", 0.6) is False
    assert v.verdict("acc", 0.95) is True
    described = v.describe()
    assert described["values"]["judge:maybe"] is False
    assert described["numeric"]["threshold"] == {"*": 0.9, "f1": 0.5}


@pytest.mark.parametrize(
    ("maps", "thresholds", "message"),
    [
        (["P"], [], "expected [SCORER:]VALUE=pass"),
        (["P=maybe"], [], "expected [SCORER:]VALUE=pass"),
        ([], ["f1=high"], "expected [SCORER=]NUMBER"),
        ([], ["nan"], "not a number"),
    ],
)
def test_bad_options_name_the_option(maps: list[str], thresholds: list[str], message: str) -> None:
    with pytest.raises(InteropError, match=message.replace("[", r"\[")):
        parse_verdict_options(maps, thresholds)


def test_values_without_one_verdict_are_errors() -> None:
    v = VerdictMap()
    with pytest.raises(InteropError, match="gave a dict value"):
        v.verdict("multi", {"a": "C", "b": "I"})
    with pytest.raises(InteropError, match="gave no value"):
        v.verdict("s", None)
    with pytest.raises(InteropError, match="NaN"):
        v.verdict("s", float("nan"))
