# mypy: disable-error-code="no-any-return"
"""The judge's side of the wire: frames, and the decoder of the candidate's answers.

Standard library only: this source is inlined into the judge program shipped into the
sandbox (and imported on the host for tests).

Only plain values cross from the candidate: None, bool, int (any size), float
(bit-exact: NaN, -0.0, infinities), complex, str, bytes, list, tuple, dict (any
hashable keys), set and frozenset, nested. The candidate (``_candidate_main.encode``)
writes them as JSON with a one-key object as the tag of every non-JSON type
(``{"t": [...]}`` a tuple, ``{"d": [[k, v], ...]}`` a dict, ``{"u": hex}`` a str...), so
a JSON object is *always* a tag and decoding is unambiguous. Decoding with the C JSON
parser builds exact builtin types only: whatever the candidate sends, the judge never
holds an object whose ``__eq__``, ``__hash__`` or ``__bool__`` the candidate wrote,
and no parser that is unsafe on hostile input (``marshal``, ``pickle``) ever reads it.
The other direction (judge -> candidate) is ``marshal``: the candidate may trust the
judge.
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
    if key == "u" and type(val) is str:
        try:
            return bytes.fromhex(val).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise WireError("malformed string (not UTF-8)") from None
    if key == "c" and type(val) is list and len(val) == 2:
        re_, im = val
        if type(re_) is not float or type(im) is not float:
            raise WireError("malformed complex")
        return complex(re_, im)
    raise WireError(f"malformed value (unknown tag {key!r})")


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
