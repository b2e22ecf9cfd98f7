"""Model role: chat model backends and the layer around them.

- :class:`ModelClient` (one abstract ``generate``) and the errors in :mod:`.base`;
- providers, one module each, SDKs imported only when chosen: :mod:`.openai` (OpenAI
  and any OpenAI-compatible server), :mod:`.anthropic`, :mod:`.embedded` (a GGUF from
  PyPI served by xllamacpp), :mod:`.mock` (scripted, for tests);
- :mod:`.layer`: concurrency limits, retries, timeouts, the response cache
  (:mod:`.cache`, doubling as replay), accounting and budgets around any client;
- :mod:`.formatting`: the one place that turns messages into each provider's request.
"""

from reflexion_bench.models.base import (
    BudgetExceeded,
    CacheMissError,
    MissingAPIKeyError,
    ModelClient,
    ModelError,
    TransientModelError,
)
from reflexion_bench.models.layer import ModelLayer, Usage, build_layered_model

__all__ = [
    "BudgetExceeded",
    "CacheMissError",
    "MissingAPIKeyError",
    "ModelClient",
    "ModelError",
    "ModelLayer",
    "TransientModelError",
    "Usage",
    "build_layered_model",
]
