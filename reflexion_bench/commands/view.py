"""``reflexion-bench view RUN_OR_SWEEP_DIR... [--port N] [--host H] [--allowed-host H[:P]]...
[--export FILE.html]``.

Serves a local web viewer of run folders on 127.0.0.1 (a sweep folder is searched for
run folders, as ``report`` does), or with ``--export`` writes one self-contained HTML
file (every run, task and comparison embedded; no external assets) for a paper's
supplement or a pull request. Numbers are those of ``reflexion-bench report``.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench view",
        description="View run and sweep folders in a browser (local server or one HTML file).",
    )
    p.add_argument("paths", nargs="+", type=Path, help="run folders, sweep folders or log files")
    p.add_argument(
        "--port",
        type=int,
        default=8765,
        help="port to listen on (default: %(default)s; 0: any free)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: %(default)s; 0.0.0.0 exposes your runs to the network)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="also answer requests whose Host header is this (a forwarded port, e.g. "
        "localhost:9000 for ssh -L 9000:127.0.0.1:8765; HOST alone: any port; repeatable)",
    )
    p.add_argument("--export", type=Path, metavar="FILE.html", help="write one HTML file and exit")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    return p


def main(argv: list[str]) -> int:
    from reflexion_bench.view.data import Catalog

    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        # Else the socket refuses it with an OverflowError traceback, after the runs load.
        print(
            f"error: --port {args.port} is not a TCP port: give 1-65535 (0: any free port)",
            file=sys.stderr,
        )
        return 2
    try:
        catalog = Catalog(args.paths, n_resamples=args.resamples, seed=args.seed)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.export:
        from reflexion_bench.view.page import write_export

        try:
            out = write_export(catalog, args.export)
        except OSError as exc:
            print(f"error: cannot write {args.export}: {exc}", file=sys.stderr)
            return 2
        size = out.stat().st_size / 1e6
        print(f"wrote {out} ({len(catalog)} run(s), {size:.1f} MB)")
        return 0

    from reflexion_bench.view.server import ViewServer

    try:
        server = ViewServer(
            catalog, port=args.port, host=args.host, allowed_hosts=args.allowed_host
        )
    except OSError as exc:
        print(
            f"error: cannot listen on {args.host}:{args.port}: {exc} "
            "(pass --port N, or 0 for any; --host an address of this machine)",
            file=sys.stderr,
        )
        return 2
    # Load the runs and their intervals now, so the first page opened is ready.
    threading.Thread(target=catalog.warm, daemon=True).start()
    where = "127.0.0.1 only" if args.host == "127.0.0.1" else f"listening on {args.host}"
    print(
        f"serving {len(catalog)} run(s) at {server.url}  ({where}; answers Host "
        f"{', '.join(sorted(server.allowed))}; Ctrl-C stops)"
    )
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0
