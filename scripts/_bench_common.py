"""What every benchmark script records beside its figures: the command, the date, the
machine and the load average, and the text it printed.

Used by the ``scripts/bench_*.py`` scripts (run as ``python scripts/bench_x.py``, so this
folder is on ``sys.path``)::

    from _bench_common import BenchOutput

    with BenchOutput(args.json, "bench_x.py", argv) as out:  # tees stdout
        ...  # measure and print
        out.write({"figures": ...})  # JSON at args.json, the printed text beside it (.txt)

The JSON file holds ``command``, ``date`` (UTC), ``machine`` (CPU model, cores, the
cores this process may use, RAM, Python, OS), ``load_before`` / ``load_after`` (the 1-,
5- and 15-minute load averages at start and end), ``busy_before`` / ``busy_after``
(other test or CI processes running then, and whether the machine was quiet: none of
them and a 1-minute load below 1) and the script's own keys.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from reflexion_bench.runner.provenance import cpu_model, host


def _ram_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine() -> dict[str, Any]:
    """The machine a figure was measured on: a run log's ``host`` (the same function),
    plus the CPU model, RAM and Python a speed figure also depends on."""
    return {
        **host(),
        "cpu_model": cpu_model(),
        "ram_gb": _ram_gb(),
        "python": platform.python_version(),
    }


def load() -> list[float]:
    """The 1-, 5- and 15-minute load averages, rounded to 2 decimals."""
    return [round(x, 2) for x in os.getloadavg()]


def _ancestors() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def busy() -> dict[str, Any]:
    """Other work on the machine now: pytest and CI (``.ci/run``) processes not of this
    process's own ancestry, the 1-minute load, and ``quiet`` (none of them, load < 1)."""
    mine = _ancestors()
    found = {"pytest": 0, "ci_run": 0}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if "pytest" in cmd:
            found["pytest"] += 1
        if "ci/run" in cmd:
            found["ci_run"] += 1
    load1 = round(os.getloadavg()[0], 2)
    return {
        "load_1min": load1,
        "pytest_processes": found["pytest"],
        "ci_run_processes": found["ci_run"],
        "quiet": load1 < 1.0 and not any(found.values()),
    }


def command(script: str, argv: Sequence[str] | None = None) -> str:
    """The command line that ran ``scripts/<script>`` (``argv``: default sys.argv[1:])."""
    args = list(sys.argv[1:] if argv is None else argv)
    return f"python scripts/{script}" + (" " + shlex.join(args) if args else "")


def provenance(script: str, argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``command``, ``date`` and ``machine``: what made a result file, when and where."""
    return {
        "command": command(script, argv),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
    }


def write_json(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


class _Tee(io.TextIOBase):
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.buf = io.StringIO()

    def write(self, s: str) -> int:
        self.out.write(s)
        self.buf.write(s)
        return len(s)

    def flush(self) -> None:
        self.out.flush()


class BenchOutput:
    """Tee stdout while the benchmark runs; ``write`` saves the JSON (provenance and load
    averages included) at ``path`` and the printed text at ``path`` with ``.txt``.
    With ``path`` None nothing is captured or written. The load before is read on
    entering, the load after when ``write`` is called."""

    def __init__(self, path: Path | None, script: str, argv: Sequence[str] | None = None):
        self.path = path
        self.meta = provenance(script, argv)
        self.load_before = load()
        self.busy_before = busy()
        self._tee: _Tee | None = None
        self._saved: TextIO | None = None

    def __enter__(self) -> BenchOutput:
        self.load_before = load()
        self.busy_before = busy()
        if self.path is not None:
            self._saved = sys.stdout
            self._tee = _Tee(sys.stdout)
            sys.stdout = self._tee
        state = "quiet" if self.busy_before["quiet"] else "NOT quiet"
        print(f"machine at start: {state} ({self.busy_before})", flush=True)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._saved is not None:
            sys.stdout = self._saved
            self._saved = None

    def write(self, figures: dict[str, Any]) -> dict[str, Any]:
        """Write the JSON and the text printed so far; returns the record."""
        after = busy()
        print(f"machine at end: {'quiet' if after['quiet'] else 'NOT quiet'} ({after})")
        record = {
            **self.meta,
            **figures,
            "load_before": self.load_before,
            "load_after": load(),
            "busy_before": self.busy_before,
            "busy_after": after,
        }
        if self.path is not None:
            write_json(self.path, record)
            if self._tee is not None:
                self.path.with_suffix(".txt").write_text(self._tee.buf.getvalue(), encoding="utf-8")
        return record
