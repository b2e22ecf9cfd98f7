"""``reflexion-bench audit-paper``: the paper's published numbers vs its own logs.

    reflexion-bench audit-paper REPO_DIR --out DIR
        [--rescore claims|all|none|subset:N|GROUP=MODE,...] [--data DIR]
        [--repair-rust-braces] [--jobs N] [--sandbox local] [--reuse]
    reflexion-bench audit-paper --render-only --out DIR

REPO_DIR is a checkout of noahshinn/reflexion (or ../shared/data/reflexion-original-repo,
laid out the same way). Every log is imported into DIR/runs/, the programming logs
behind a published number are re-scored (``--rescore all``: every log; groups
``python``, ``rust``, ``leetcode``, e.g. ``--rescore rust=subset:20,leetcode=none``),
and DIR/claims.json + claims.md hold one row per published number (paper, logged,
re-scored, n) and the paired tests of each Reflexion/baseline pair (exact McNemar,
paired bootstrap CI). See :mod:`reflexion_bench.analysis.audit`.

``--render-only`` writes DIR/claims.md again from DIR/claims.json alone (no import, no
re-scoring): the committed audit's table gains a column a newer version renders (the
power columns) without its 50 minutes of re-scoring or the imported logs under runs/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench audit-paper",
        description="Published numbers vs the paper's own logs vs re-scoring, with paired tests.",
    )
    p.add_argument("repo", type=Path, nargs="?", help="a checkout of noahshinn/reflexion")
    p.add_argument(
        "--out", required=True, type=Path, help="folder for claims.json, claims.md, runs/"
    )
    p.add_argument(
        "--rescore",
        default="claims",
        help="all | claims | none | subset:N, or GROUP=MODE,... for the groups python, rust, "
        "leetcode (default: claims: the logs a published number comes from)",
    )
    p.add_argument(
        "--data",
        type=Path,
        help="benchmark data folder (LeetcodeHard's offline hidden tests; default: "
        "REFLEXION_BENCH_DATA or ../shared/data)",
    )
    p.add_argument(
        "--repair-rust-braces",
        action="store_true",
        help="append missing closing braces to Rust solutions (the original did not)",
    )
    p.add_argument("--jobs", type=int, default=2, help="programs scored at once")
    p.add_argument("--sandbox", default="local", help="sandbox config for re-scoring")
    p.add_argument(
        "--no-plus",
        action="store_true",
        help="skip the stronger (plus) hidden tests (rescore_plus): rescored_plus stays null",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep runs already imported in DIR/runs (skips their re-scoring)",
    )
    p.add_argument(
        "--render-only",
        action="store_true",
        help="write DIR/claims.md from DIR/claims.json only (no import, no re-scoring)",
    )
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.analysis.audit import (
        _eprint,
        audit_paper,
        command_line,
        parse_rescore,
        rescore_plus,
    )
    from reflexion_bench.analysis.imports import ImportError_, default_data_dir

    args = _parser().parse_args(argv)
    if args.render_only:
        return _render_only(args.out)
    if args.repo is None:
        print(
            "error: give REPO_DIR (a checkout of noahshinn/reflexion, e.g. "
            "../shared/data/reflexion-original-repo), or --render-only",
            file=sys.stderr,
        )
        return 2
    try:
        plan = parse_rescore(args.rescore)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        result = audit_paper(
            args.repo,
            args.out,
            rescore=plan,
            data_dir=args.data or default_data_dir(),
            jobs=args.jobs,
            sandbox=args.sandbox,
            repair_rust_braces=args.repair_rust_braces,
            reuse=args.reuse,
            plus=(lambda _run: None) if args.no_plus else rescore_plus,
            command=command_line(argv),
            progress=_eprint,
        )
    except (ImportError_, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    both = sum(1 for c in result["claims"] if c["paper"] is not None and c["logged"] is not None)
    print((args.out / "claims.md").read_text(encoding="utf-8"))
    print(
        f"{len(result['claims'])} claims ({both} with a paper and a logged value), "
        f"{len(result['pairs'])} pairs, {len(result['logs'])} logs -> {args.out}"
    )
    return 0


def _render_only(out: Path) -> int:
    import json

    from reflexion_bench.analysis.audit import render_markdown

    path = out / "claims.json"
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {path} ({exc}): run the audit first", file=sys.stderr)
        return 2
    (out / "claims.md").write_text(render_markdown(result), encoding="utf-8")
    print(f"rendered {out / 'claims.md'} from {path}")
    return 0
