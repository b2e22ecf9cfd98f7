"""Strategy role: the loop policy (simple, reflexion, ablations and controls)."""

from reflexion_bench.strategies.base import MEMORY_CONTENTS, Strategy, raw_log_text

__all__ = ["MEMORY_CONTENTS", "Strategy", "raw_log_text"]
