"""Sandbox role: run untrusted generated code."""

from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox

__all__ = ["ExecRequest", "ExecResult", "Limits", "Sandbox"]
