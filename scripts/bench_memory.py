"""Retrieval latency benchmark of the lifelong memory (same as `reflexion-bench bench memory`).

python scripts/bench_memory.py --n 4200
python scripts/bench_memory.py --n 100000 --store /tmp/bench-100k   # reuse the store later
"""

import sys

from reflexion_bench.commands.bench import main

if __name__ == "__main__":
    raise SystemExit(main(["memory", *sys.argv[1:]]))
