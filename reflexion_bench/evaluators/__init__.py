"""Evaluator role: in-loop feedback for the reflector."""

from reflexion_bench.evaluators.base import Evaluator

__all__ = ["Evaluator"]
