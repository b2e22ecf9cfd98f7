"""Scorer role: the final, hidden judge of each trial's candidate."""

from reflexion_bench.scorers.base import Scorer

__all__ = ["Scorer"]
