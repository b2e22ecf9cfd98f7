"""Overrides that add a key (``+key=value``) nothing reads: a misspelling
(``+generate.temprature=0.5``) would otherwise be dropped in silence, so
``reflexion-bench run`` refuses them (:func:`error_text`).

A ``+key`` is read when its node, or a node above it, is built from a ``_target_`` (the
constructor takes it or the mapping holding it, or the build fails naming it), when the
config refers to it (``${key}``), when it is a per-call sampling setting
(``generate.*``, the fields of :class:`~reflexion_bench.core.types.GenerateConfig`), a
per-role model (``role_models.*``), or Hydra's own (``hydra.*``, a config group such as
``+experiment=...``). ``++key=value`` (Hydra's add-or-override) is never checked: it is
how a key only your own code reads is added on purpose.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping

from omegaconf import DictConfig, OmegaConf

from reflexion_bench.core.types import GenerateConfig

_READ_BY_PREFIX = ("hydra.", "role_models.")


def _added_key(override: str) -> str | None:
    if not override.startswith("+") or override.startswith("++"):
        return None
    key = override[1:].split("=", 1)[0].strip()
    return key.split("@", 1)[0] or None


def _refers_to(text: str, key: str) -> bool:
    # `${key}`, `${key.sub}`, `${oc.select:key,...}`: any interpolation naming the key.
    return re.search(r"\$\{[^}]*(?<![\w.])" + re.escape(key) + r"(?![\w])", text) is not None


def _built_from(cfg: DictConfig, parent: str) -> bool:
    """Whether ``parent`` or a node above it has a ``_target_``: its constructor gets the
    added key, or the mapping holding it whole (``+model.prices.my-model={...}`` reaches
    the model's ``prices``), and takes it or fails naming the argument it does not know."""
    parts = parent.split(".") if parent else []
    for depth in range(len(parts), 0, -1):
        node = OmegaConf.select(cfg, ".".join(parts[:depth]))
        if isinstance(node, DictConfig) and "_target_" in node:
            return True
    return False


def unread_additions(
    cfg: DictConfig, overrides: Iterable[str], groups: Mapping[str, object] = {}
) -> list[str]:
    """The ``+key=value`` overrides of ``overrides`` that no part of the run reads."""
    raw = OmegaConf.to_yaml(cfg, resolve=False)
    sampling = {f.name for f in dataclasses.fields(GenerateConfig)} | {"seed"}
    out: list[str] = []
    for override in overrides:
        key = _added_key(override)
        if key is None or key in groups or key.startswith(_READ_BY_PREFIX):
            continue
        parent, _, leaf = key.rpartition(".")
        if _built_from(cfg, parent):
            continue  # the constructor takes it, or its build fails naming it
        if parent == "generate" and leaf in sampling:
            continue
        if _refers_to(raw, key):
            continue
        out.append(override)
    return out


def error_text(unread: list[str], cfg: DictConfig | None = None) -> str:
    """The one-line refusal of ``unread`` (``+key=value`` overrides nothing reads), with a
    "did you mean" among the keys beside each one where a near match exists."""
    from reflexion_bench.runner.cli_errors import did_you_mean

    parts = []
    for override in unread:
        key = _added_key(override) or override
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent) if cfg is not None and parent else cfg
        siblings = [str(k) for k in node] if isinstance(node, DictConfig) else []
        if parent == "generate":
            siblings += [f.name for f in dataclasses.fields(GenerateConfig)]
        hint = did_you_mean(leaf, sorted(set(siblings) - {leaf}))
        parts.append(f"`{override}`{hint}")
    return (
        f"error: {', '.join(parts)} added a key that nothing in this run reads; drop the "
        "`+` to set an existing key (Hydra then checks it exists; `reflexion-bench run --cfg "
        "job` prints the config), or add it unchecked with `++`"
    )
