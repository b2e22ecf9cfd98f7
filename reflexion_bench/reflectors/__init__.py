"""Reflector role: verbal self-reflection on a failed trial."""

from reflexion_bench.reflectors.base import Reflector

__all__ = ["Reflector"]
