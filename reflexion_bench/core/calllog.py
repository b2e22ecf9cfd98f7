"""Every model call's request as logged: in full, but each call written as what it adds
to the previous call of the same role in the trial.

An ALFWorld or HotpotQA actor sends its growing transcript at every step (some 50 calls
a trial, each repeating the steps before it): logged whole, a paper-size ALFWorld run
would write hundreds of megabytes of repeated prefixes. So a call whose request starts
with the previous same-role call's request logs ``messages_base`` = ``{"call": i,
"kept": k}`` (the first ``k`` messages of call ``i`` of the same trial, unchanged) and
only the rest in ``messages``; a first rest message marked ``"continues": true`` is the
text appended to message ``k`` of call ``i``. :func:`expand_messages` gives every call's
full request back. Calls with nothing in common are logged whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Logged = list[dict[str, Any]]


def delta(
    previous: Sequence[dict[str, str]] | None, current: Sequence[dict[str, str]]
) -> tuple[dict[str, int] | None, Logged]:
    """``(base, messages)`` for ``current`` given the same role's ``previous`` request
    (``base`` None: logged whole). ``base["call"]`` is filled in by the caller."""
    full: Logged = [dict(m) for m in current]
    if not previous:
        return None, full
    kept = 0
    while kept < min(len(previous), len(current)) and previous[kept] == current[kept]:
        kept += 1
    rest: Logged = [dict(m) for m in current[kept:]]
    if kept < len(previous) and rest:
        old, new = previous[kept], rest[0]
        if (
            old["role"] == new["role"]
            and old["content"]
            and new["content"].startswith(old["content"])
        ):
            rest[0] = {
                "role": new["role"],
                "content": new["content"][len(old["content"]) :],
                "continues": True,
            }
            return {"kept": kept}, rest
    if kept == 0:
        return None, full
    return {"kept": kept}, rest


def expand_messages(calls: Sequence[dict[str, Any]]) -> list[list[dict[str, str]] | None]:
    """Each call's full request (None where the log has none), from the calls of one
    trial in their logged order."""
    out: list[list[dict[str, str]] | None] = []
    for call in calls:
        logged = call.get("messages")
        if not isinstance(logged, list):
            out.append(None)
            continue
        base = call.get("messages_base")
        msgs: list[dict[str, str]] = []
        if isinstance(base, dict):
            i, kept = int(base.get("call", -1)), int(base.get("kept", 0))
            source = out[i] if 0 <= i < len(out) else None
            if source is None:
                out.append(None)  # a base the log does not hold: no request to show
                continue
            msgs = [dict(m) for m in source[:kept]]
            if logged and logged[0].get("continues") and kept < len(source):
                first = logged[0]
                msgs.append(
                    {
                        "role": str(first["role"]),
                        "content": source[kept]["content"] + str(first["content"]),
                    }
                )
                logged = logged[1:]
        msgs += [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in logged]
        out.append(msgs)
    return out
