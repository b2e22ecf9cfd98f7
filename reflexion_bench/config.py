"""Config helpers: the one place that instantiates Hydra nodes, and secret redaction.

Hydra's ``_target_`` is the only registry: every object of a run is built from a
config node through :func:`build`, which turns instantiation failures into errors
that name the config key to fix.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, ListConfig, OmegaConf

from reflexion_bench.core.errors import ConfigError

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"

_SECRET_KEY = re.compile(r"(api_?key|secret|token|password|cookie|authorization)$", re.I)
_SECRET_VALUE = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,})")


def build(node: Any, key: str, **kwargs: Any) -> Any:
    """Instantiate ``node`` (a ``_target_`` config), naming ``key`` in any error."""
    if node is None:
        raise ConfigError(key, None, "a config node with a `_target_`")
    if isinstance(node, DictConfig) and "_target_" not in node:
        raise ConfigError(key, OmegaConf.to_container(node), "a config node with a `_target_`")
    try:
        return instantiate(node, **kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__ or exc
        if isinstance(cause, ConfigError):
            raise cause from None
        raise ConfigError(
            key, _target_of(node), f"a valid config ({redact_text(str(cause))})"
        ) from None


def _target_of(node: Any) -> Any:
    if isinstance(node, DictConfig):
        return node.get("_target_")
    return node


def redact(obj: Any) -> Any:
    """A copy of a plain container with secret-looking keys and values masked."""
    if isinstance(obj, DictConfig | ListConfig):
        obj = OmegaConf.to_container(obj, resolve=False)
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str) and _SECRET_KEY.search(k) and v not in (None, ""):
                out[k] = "***"
            else:
                out[k] = redact(v)
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj)
    return obj


def redact_text(text: str) -> str:
    """Mask API-key-looking substrings, and the values of key variables set in this process."""
    import os

    text = _SECRET_VALUE.sub("***", text)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LEETCODE_SESSION", "WANDB_API_KEY"):
        value = os.environ.get(var)
        if value and len(value) >= 6:
            text = text.replace(value, "***")
    return text


def save_config(cfg: DictConfig, path: Path) -> None:
    """Write the resolved, redacted config (what the run actually used)."""
    container = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    path.write_text(OmegaConf.to_yaml(OmegaConf.create(redact(container))), encoding="utf-8")
