"""``auto`` settings of a run, resolved in its config before anything reads it.

The embedded model's ``n_threads``/``n_parallel``/``n_ctx``/``max_connections`` (see
:mod:`reflexion_bench.models.resources`) and the run's ``max_concurrent_tasks``: the
embedded model's slots, so every slot has a request; 1 for other models (a remote API's
rate limits are the user's to set) and where the run must go one task at a time (an
environment or memory class with ``one_task_at_a_time`` set says why).

Resolving in the config (not in each object) means ``config.yaml``, the resume check,
``provenance.json`` and the response cache's key all see the numbers a run used.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, open_dict

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.models.resources import (
    AUTO,
    CTX_PER_SLOT,
    SLOTS_PER_CORE,
    is_auto,
    resolve_server,
)

EMBEDDED = "reflexion_bench.models.embedded.EmbeddedModel"


def _is_embedded(node: Any) -> bool:
    if not isinstance(node, DictConfig):
        return False
    target = node.get("client_target")
    if target == EMBEDDED:
        return True
    if not isinstance(target, str):
        return False
    from hydra.utils import get_class

    from reflexion_bench.models.embedded import EmbeddedModel

    try:
        cls = get_class(target)
    except Exception:  # the model builder names a bad target later
        return False
    return isinstance(cls, type) and issubclass(cls, EmbeddedModel)


def one_task_reason(cfg: DictConfig) -> str | None:
    """Why this run must take one task at a time (None: it need not)."""
    from hydra.utils import get_object

    for key in ("env", "memory"):
        node = cfg.get(key)
        target = node.get("_target_") if isinstance(node, DictConfig) else None
        if not isinstance(target, str):
            continue
        try:
            obj = get_object(target)
        except Exception:  # building the node reports a bad target with its key
            continue
        reason = getattr(obj, "one_task_at_a_time", None)
        if reason:
            return f"{key}: {reason}"
    return None


def resolve_auto(cfg: DictConfig) -> list[str]:
    """Replace every ``auto`` of ``cfg`` by its value (in place); returns what was chosen."""
    notes: list[str] = []
    slots: int | None = None
    nodes = [("model", cfg.get("model"))]
    nodes += [(f"role_models.{r}", n) for r, n in (cfg.get("role_models") or {}).items()]
    for key, node in nodes:
        if not isinstance(node, DictConfig):
            continue
        if _is_embedded(node):
            s = resolve_server(
                node.get("n_threads", AUTO),
                node.get("n_parallel", AUTO),
                node.get("n_ctx", AUTO),
                node.get("max_connections", AUTO),
                node.get("ctx_per_slot", CTX_PER_SLOT),
                slots_per_core=node.get("slots_per_core", SLOTS_PER_CORE),
            )
            with open_dict(node):
                node.n_threads = s.n_threads
                node.n_parallel = s.n_parallel
                node.n_ctx = s.n_ctx
                node.max_connections = s.max_connections
            if key == "model":
                slots = s.max_connections
            if s.why:
                notes.append(f"{key}: {s.why}")
        elif is_auto(node.get("max_connections")):
            raise ConfigError(
                f"{key}.max_connections", AUTO, "an integer (`auto` is for the embedded model)"
            )
    if is_auto(cfg.get("max_concurrent_tasks")):
        reason = one_task_reason(cfg)
        if reason is not None:
            tasks, why = 1, reason
        elif slots is not None:
            tasks, why = slots, "one per embedded server slot"
        else:
            tasks, why = 1, "not the embedded model: set it to what the provider allows"
        with open_dict(cfg):
            cfg.max_concurrent_tasks = tasks
        notes.append(f"max_concurrent_tasks={tasks} ({why})")
    return notes
