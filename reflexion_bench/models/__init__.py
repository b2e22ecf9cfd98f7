"""Model role: chat model backends. Heavy SDKs are imported only by the backend chosen."""

from reflexion_bench.models.base import ModelClient, ModelError

__all__ = ["ModelClient", "ModelError"]
