"""Actor role. Implementations: :mod:`.code` (programs), and per-benchmark actors."""

from reflexion_bench.actors.base import Actor

__all__ = ["Actor"]
