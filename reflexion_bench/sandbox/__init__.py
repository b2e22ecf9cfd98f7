"""Sandbox role: run untrusted generated code.

Backends (built from ``configs/sandbox/*.yaml``; heavy ones import lazily):
``reflexion_bench.sandbox.local.LocalSandbox`` (namespaces + dedicated uid + rlimits),
``reflexion_bench.sandbox.docker.DockerSandbox`` (warm pool of locked-down containers),
``reflexion_bench.sandbox.auto.auto_sandbox`` (Docker when available, else local).
"""

from reflexion_bench.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox, StopReason

__all__ = ["ExecRequest", "ExecResult", "Limits", "Sandbox", "StopReason"]
