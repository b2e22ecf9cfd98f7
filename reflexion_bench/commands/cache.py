"""``reflexion-bench cache``: carry the response cache from one machine to another.

reflexion-bench cache info   [--cache FILE]
reflexion-bench cache export OUT.jsonl [--greedy] [--model NAME] [--cache FILE]
reflexion-bench cache import IN.jsonl  [--cache FILE]

The cache is what makes trial 1 (greedy, the same request in every arm of a study) one
computation that every arm shares. It lives on one machine; a study that resumes on
another machine would compute trial 1 again for the tasks some arms have not reached,
and greedy decoding in several parallel slots of a llama.cpp server is not
bit-reproducible, so those arms could start from a different first program. An export
committed beside the study (``--greedy``: the calls every arm shares) and imported on
the next machine keeps one first program per task.

An imported entry is checked against its own request (its key is the request's
SHA-256, the key recipe is this version's) and never replaces a local entry.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path


def default_cache() -> Path:
    """Where ``model.cache_path`` points by default (``paths.cache_dir``)."""
    base = os.environ.get("REFLEXION_BENCH_CACHE") or str(Path.home() / ".cache/reflexion-bench")
    return Path(base).expanduser() / "model_cache.sqlite"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="reflexion-bench cache",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=["info", "export", "import"])
    p.add_argument("file", nargs="?", type=Path, help="export: the JSONL to write; import: to read")
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="the cache database (default: $REFLEXION_BENCH_CACHE or "
        "~/.cache/reflexion-bench, /model_cache.sqlite: what runs use)",
    )
    p.add_argument(
        "--greedy",
        action="store_true",
        help="export: temperature-0 calls only (what every arm of a study shares)",
    )
    p.add_argument("--model", default=None, help="export: this model name only")
    args = p.parse_args(argv)
    from reflexion_bench.models.cache import ResponseCache, export_entries, import_entries

    path = args.cache or default_cache()
    if args.action != "info" and args.file is None:
        print(f"error: `cache {args.action}` needs a FILE (a .jsonl)", file=sys.stderr)
        return 2
    if args.action == "import" and not args.file.is_file():
        print(f"error: no file {args.file} to import", file=sys.stderr)
        return 2
    if args.action != "import" and not path.is_file():
        print(f"error: no response cache at {path} (--cache names another)", file=sys.stderr)
        return 2
    cache = ResponseCache(path)
    try:
        if args.action == "info":
            rows = cache.entries()
            by_model = collections.Counter(r["model"] for r in rows)
            greedy = collections.Counter(
                r["model"] for r in rows if r["request"].get("temperature") == 0
            )
            print(f"{path}: {len(rows)} entries")
            for name, n in by_model.most_common():
                print(f"  {name}: {n} ({greedy[name]} greedy)")
        elif args.action == "export":
            n = export_entries(cache, args.file, greedy_only=args.greedy, model=args.model)
            print(f"exported {n} entries to {args.file}")
        else:
            counts = import_entries(cache, args.file)
            print(
                f"{args.file}: {counts['added']} added, {counts['present']} already present, "
                f"{counts['refused']} refused (into {path})"
            )
            for problem in counts["problems"]:
                print(f"  refused {problem}", file=sys.stderr)
            print(json.dumps({k: counts[k] for k in ("added", "present", "refused")}))
            return 1 if counts["refused"] else 0
    finally:
        cache.close()
    return 0
