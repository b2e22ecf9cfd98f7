"""Retrieval latency benchmark of the lifelong memory (same as `reflexion-bench bench memory`).

python scripts/bench_memory.py --n 4200
python scripts/bench_memory.py --n 100000 --store /tmp/bench-100k   # reuse the store later
python scripts/bench_memory.py --n 4200,100000 --json results/bench/memory.json

Every option is `reflexion-bench bench memory`'s, plus: ``--n`` takes a comma list (one
benchmark per size, in this order; with ``--store DIR`` each size keeps its store in
``DIR/n<N>``), and ``--json PATH`` writes every size's result with the command, date,
machine and load average (``scripts/_bench_common.py``) and the printed text beside it
(``.txt``). The README's latency table comes from ``results/bench/memory.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from _bench_common import BenchOutput

from reflexion_bench.commands.bench import main as bench_main


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--n", default=None)
    p.add_argument("--store", type=Path, default=None)
    p.add_argument("--json", type=Path, default=None)
    ours, rest = p.parse_known_args(argv)
    if ours.n is None:  # --help, or the error `bench memory` gives without --n
        return bench_main(["memory", *rest])
    sizes = [s.strip() for s in ours.n.split(",") if s.strip()]
    results: list[dict[str, Any]] = []
    with BenchOutput(ours.json, "bench_memory.py", argv) as out:
        for n in sizes:
            args = ["memory", "--n", n, *rest]
            if ours.store is not None:
                store = ours.store / f"n{n}" if len(sizes) > 1 else ours.store
                args += ["--store", str(store)]
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                code = bench_main(args)
            print(buf.getvalue(), end="", flush=True)
            if code != 0:
                return code
            results.append(json.loads(buf.getvalue()))
        out.write({"sizes": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
