"""Checks of an output path (``--out``) made before a command does its work: finding out
afterwards that the result cannot be written loses the work (a report computed for
minutes, every sample judged, a log read in full), and Python's own error for it names
neither the option nor the fix.

Each check leaves the file system as it found it: folders it had to make to try a write
are removed again (the command makes them when it writes).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _why(exc: OSError) -> str:
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return "a file is in the way where a folder is needed"
    return exc.strerror or type(exc).__name__


@contextlib.contextmanager
def _parents_made_for_the_check(path: Path) -> Iterator[None]:
    # Deepest first: the order they are removed in.
    missing = [p for p in (path, *path.parents) if not p.exists() and not p.is_symlink()]
    try:
        yield
    finally:
        for folder in missing:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if still empty: never anything someone put there


def folder_problem(path: Path, option: str = "--out") -> str | None:
    """Why ``option path`` cannot be a folder this command writes into, or None."""
    if path.exists() and not path.is_dir():
        return f"{option} {path} is a file; give a folder (one this command may fill)"
    with _parents_made_for_the_check(path):
        try:
            path.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as exc:
            return f"cannot write {option} {path} ({_why(exc)}); choose a folder you can write"
    return None


def file_problem(path: Path, option: str = "--out", example: str = "out") -> str | None:
    """Why ``option path`` cannot be a file this command writes, or None (an existing
    file is opened for append, never truncated, by the check). ``example``: a file name
    the message suggests when ``path`` is a folder."""
    if path.is_dir():
        return f"{option} {path} is a folder; give a file name, e.g. {option} {path / example}"
    existed = path.exists()
    with _parents_made_for_the_check(path.parent):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            return f"cannot write {option} {path} ({_why(exc)}); choose a path you can write"
        if not existed:
            path.unlink()
    return None


def write_error(exc: OSError, out: Path, option: str = "--out") -> str:
    """The one line for an OSError met while a command read its input or wrote ``out``:
    ``option`` is named when the failed path is ``out`` or inside it."""
    if exc.filename is None:
        return f"{_why(exc)} (while reading the input or writing {option} {out})"
    failed = Path(str(exc.filename))
    if failed == out or out in failed.parents:
        return f"cannot write {option} {out} ({_why(exc)}); choose a path you can write"
    return f"cannot read or write {failed} ({_why(exc)})"
