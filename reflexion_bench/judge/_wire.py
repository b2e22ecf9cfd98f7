# mypy: disable-error-code="no-any-return"
"""The plain-data wire between the trusted judge and the candidate process.

Standard library only: this source is inlined into both sandbox programs (the judge
and the candidate runner) as well as imported on the host for tests.

Only plain values cross: None, bool, int (any size), float (bit-exact: NaN, -0.0,
infinities), complex, str, bytes, list, tuple, dict (any hashable keys), set and
frozenset, nested. Each value is turned into JSON with a one-key object as the tag of
every non-JSON type (``{"t": [...]}`` a tuple, ``{"d": [[k, v], ...]}`` a dict...), so a
JSON object is *always* a tag and decoding is unambiguous. Decoding builds exact
builtin types only: whatever the candidate sends, the judge never holds an object
whose ``__eq__``, ``__hash__`` or ``__bool__`` the candidate wrote.

The candidate side converts instances of *subclasses* of these types to their base
type (a ``Counter`` becomes a dict, an ``IntEnum`` an int, a namedtuple a tuple),
using the base type's own methods so that an override cannot change the value sent.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

MAX_FRAME = 512 * 1024 * 1024
_LEN = struct.Struct(">I")


class WireError(Exception):
    """A value that cannot cross, or a malformed frame."""


class WireClosed(WireError):
    """The other side closed the pipe (exited, crashed, was killed)."""


class WireTimeout(WireError):
    """No complete frame before the deadline."""


_EXACT_SCALARS = frozenset({type(None), bool, int, float, str})


def to_wire(x: Any, _depth: int = 0) -> Any:
    """``x`` as a JSON-ready structure; subclass instances as their base type.

    Raises :class:`WireError` for anything that is not plain data.
    """
    t = type(x)
    if t in _EXACT_SCALARS:
        return x
    if _depth > 20000:
        raise WireError("value nested too deeply")
    d = _depth + 1
    if t is list:
        # Fast path: a flat list of exact scalars is already JSON (LeetcodeHard sends
        # single calls of up to 3 MB).
        for e in x:
            if type(e) not in _EXACT_SCALARS:
                return [to_wire(e, d) for e in x]
        return x
    if t is tuple:
        return {"t": [to_wire(e, d) for e in x]}
    if t is dict:
        return {"d": [[to_wire(k, d), to_wire(v, d)] for k, v in x.items()]}
    if t is set:
        return {"s": [to_wire(e, d) for e in x]}
    if t is frozenset:
        return {"f": [to_wire(e, d) for e in x]}
    if t is bytes:
        return {"b": x.hex()}
    if t is complex:
        return {"c": [x.real, x.imag]}
    # Subclasses (and bytearray): the base type's own methods, never the subclass's.
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return int.__index__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, (bytes, bytearray)):
        return {"b": bytes(memoryview(x)).hex()}
    if isinstance(x, complex):
        return {"c": [complex.__getattribute__(x, "real"), complex.__getattribute__(x, "imag")]}
    if isinstance(x, dict):
        return {"d": [[to_wire(k, d), to_wire(v, d)] for k, v in dict.items(x)]}
    if isinstance(x, tuple):
        return {"t": [to_wire(e, d) for e in tuple.__iter__(x)]}
    if isinstance(x, list):
        return [to_wire(e, d) for e in list.__iter__(x)]
    if isinstance(x, frozenset):
        return {"f": [to_wire(e, d) for e in frozenset.__iter__(x)]}
    if isinstance(x, set):
        return {"s": [to_wire(e, d) for e in set.__iter__(x)]}
    raise WireError(f"cannot send a value of type {type(x).__name__!r} (plain data only)")


def _tag(obj: dict[str, Any]) -> Any:
    if len(obj) != 1:
        raise WireError("malformed value (an object with more than one key)")
    ((key, val),) = obj.items()
    if key == "t" and type(val) is list:
        return tuple(val)
    if key == "d" and type(val) is list:
        out = {}
        for pair in val:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict item")
            out[pair[0]] = pair[1]
        return out
    if key == "s" and type(val) is list:
        return set(val)
    if key == "f" and type(val) is list:
        return frozenset(val)
    if key == "b" and type(val) is str:
        return bytes.fromhex(val)
    if key == "c" and type(val) is list and len(val) == 2:
        re_, im = val
        if type(re_) is not float or type(im) is not float:
            raise WireError("malformed complex")
        return complex(re_, im)
    raise WireError(f"malformed value (unknown tag {key!r})")


def dumps(x: Any) -> str:
    return json.dumps(to_wire(x), allow_nan=True, ensure_ascii=True)


def loads(text: str | bytes) -> Any:
    """Decode a value; every error (bad JSON, bad tag, unhashable key) is a WireError."""
    try:
        return json.loads(text, object_hook=_tag)
    except WireError:
        raise
    except (ValueError, TypeError, RecursionError) as exc:
        raise WireError(f"malformed value: {type(exc).__name__}: {str(exc)[:200]}") from None


# --------------------------------------------------------------------------- frames


def send_frame(fd: int, payload: bytes) -> None:
    data = _LEN.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks = []
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WireTimeout("no answer before the deadline")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise WireClosed("the other side closed the pipe")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int, deadline: float | None = None, limit: int = MAX_FRAME) -> bytes:
    (n,) = _LEN.unpack(_read_exact(fd, 4, deadline))
    if n > limit:
        raise WireError(f"frame of {n} bytes is over the limit ({limit})")
    return _read_exact(fd, n, deadline)


def send_msg(fd: int, msg: dict[str, Any]) -> None:
    """A control message: a JSON object whose values are already wire-encoded."""
    send_frame(fd, json.dumps(msg, allow_nan=True, ensure_ascii=True).encode("ascii"))


def recv_msg(fd: int, deadline: float | None = None, limit: int = MAX_FRAME) -> dict[str, Any]:
    raw = recv_frame(fd, deadline, limit)
    try:
        msg = json.loads(raw)  # no object_hook: the envelope is a plain JSON object
    except (ValueError, RecursionError) as exc:
        raise WireError(f"malformed message: {str(exc)[:200]}") from None
    if type(msg) is not dict:
        raise WireError("malformed message (not an object)")
    return msg
