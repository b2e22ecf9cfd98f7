"""Programs shipped into the sandbox, as source: one copy of the box's rules in each.

A program that runs inside a sandbox (the supervisor, the judge, the candidate runner,
the Rust driver) imports ``reflexion_bench.sandbox._box`` between the lines
``# host only: begin`` and ``# host only: end``, so that it type-checks and its tests
can import it on the host; the shipped source has the text of ``_box.py`` there
instead, since the sandbox has no reflexion_bench package.
"""

from __future__ import annotations

from pathlib import Path

_BOX = Path(__file__).with_name("_box.py")
BEGIN = "# host only: begin"
END = "# host only: end\n"


def box_source() -> str:
    """The text of ``_box.py`` (standard library only, no ``from __future__``)."""
    return _BOX.read_text(encoding="utf-8")


def shipped(path: Path, replacement: str | None = None) -> str:
    """``path``'s source with its host-only block replaced by ``replacement`` (by
    default the box's source). A source without the block is returned as it is."""
    src = path.read_text(encoding="utf-8")
    if BEGIN not in src:
        return src
    head, _, rest = src.partition(BEGIN)
    _, _, tail = rest.partition(END)
    body = box_source() if replacement is None else replacement
    return head + body + "\n" + tail
