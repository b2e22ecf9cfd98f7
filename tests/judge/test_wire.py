"""The plain-data wire: what crosses from the candidate (its encoder, the judge's
decoder), exactly, and what cannot."""

from __future__ import annotations

import collections
import enum
import math
import struct
import sys
from collections.abc import Iterator

import pytest

from reflexion_bench.judge._candidate_main import encode
from reflexion_bench.judge._wire import WireError, loads


@pytest.fixture(autouse=True)
def _no_int_digit_limit() -> Iterator[None]:
    # The judge and the candidate lift Python's int<->str digit limit (big ints cross
    # exactly); do the same here, and restore it for the rest of the session.
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    yield
    sys.set_int_max_str_digits(before)


def _same(a: object, b: object) -> bool:
    """Equal *and* of the same exact types all the way down (== alone would let a
    tuple pass for a list, 1 for 1.0 or True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack(">d", a) == struct.pack(">d", b)  # type: ignore[arg-type]
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        pytest.param(-(10**5000), id="big-int"),  # past the default int<->str digit limit
        1.5,
        -0.0,
        math.inf,
        -math.inf,
        0.1 + 0.2,  # bit-exact, not rounded
        1e-320,  # subnormal
        "héllo \u2603 \ud800",  # non-ASCII and a lone surrogate
        b"\x00\xffbytes",
        3 + 4j,
        [1, [2, [3, (4, 5)]]],
        (1, [2, 3]),
        (),
        ((),),
        {1: "a", (2, 3): [4], None: {}, 1.5: frozenset({1})},
        {"t": [1, 2]},  # a dict whose key looks like a tag stays a dict
        {1, 2, (3, 4)},
        frozenset(),
        [True, 1, 1.0],  # not collapsed into one type
    ],
)
def test_round_trip_keeps_value_and_type(value: object) -> None:
    assert _same(loads(encode(value)), value)


def test_nan_crosses_as_nan() -> None:
    out = loads(encode([math.nan]))
    assert isinstance(out[0], float) and math.isnan(out[0])


class Colour(enum.IntEnum):
    RED = 3


class Liar(int):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __index__(self) -> int:
        return 999


class LyingStr(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __str__(self) -> str:
        return "something else"


class LyingList(list):  # type: ignore[type-arg]
    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([42])


Point = collections.namedtuple("Point", "x y")


def test_subclasses_cross_as_their_base_type_with_their_real_value() -> None:
    counter = collections.Counter("abca")
    out = loads(
        encode([counter, Colour.RED, Point(1, 2), Liar(5), LyingStr("x"), LyingList([1, 2])])
    )
    assert _same(out, [{"a": 2, "b": 1, "c": 1}, 3, (1, 2), 5, "x", [1, 2]])
    # The decoded values are plain builtins: the candidate's __eq__ is gone.
    assert out[3] != 6 and out[4] != "y"


@pytest.mark.parametrize(
    "value",
    [object(), lambda: 1, (x for x in []), [1, object()], {1: type}, Ellipsis, range(3)],
)
def test_anything_else_cannot_cross(value: object) -> None:
    with pytest.raises(TypeError, match="plain data only"):
        encode(value)


@pytest.mark.parametrize(
    "text",
    [
        '{"t": [1], "d": []}',  # two keys
        '{"x": 1}',  # unknown tag
        '{"t": 1}',  # tag of the wrong shape
        '{"d": [[[1, 2], 3]]}',  # a list as a dict key
        '{"s": [[1]]}',  # an unhashable set member
        '{"b": "zz"}',  # not hex
        '{"c": [1, 2]}',  # complex parts must be floats
        "[1, 2",  # truncated
        "[" * 100_000 + "]" * 100_000,  # nesting that would blow the decoder's stack
        "\xff",
        '{"u": "ff"}',  # not UTF-8
    ],
)
def test_malformed_answers_are_wire_errors(text: str) -> None:
    with pytest.raises(WireError):
        loads(text)
