"""Resuming never mixes configs silently.

A run folder's ``log.jsonl`` holds results of the config saved beside it
(``config.yaml``). Resuming into the folder (``run_dir=...``, ``resume=latest``, a
re-run sweep) with another strategy, model, task selection, seed, prompt... would
add results of another experiment to the same log, and overwriting ``config.yaml``
would then hide it. :func:`check_resume` compares the folder's saved config with the
new one and refuses (:class:`ResumeConflict`, naming every differing key, old -> new)
unless ``resume_force=true``. Keys that do not change results (concurrency, rate
limits, retries, timeouts, budgets, caches, paths, the logger, progress display) may
differ; see :data:`FREE_KEYS` and :data:`FREE_LEAVES`. A key that a newer version of
the harness added with the value ``null`` (a feature that is off: ``budget.tokens``)
is not a difference either: the old run ran without that feature. A key added with any
other value is (the new default may change results), and needs ``resume_force=true``.

A larger task ``limit`` (or none) is not a difference either: tasks are selected as a
prefix of the benchmark's fixed order (``environments.base.select_tasks``), so the
tasks already logged are the first ones of the new selection, judged under the same
config; this is how a pilot grows into the full study in the same folder. A smaller
limit is a difference (the log would hold tasks outside the config's selection).

With ``resume_force=true`` the earlier config is kept as ``config.<n>.yaml`` and the
forced differences are returned (the runner records them in ``provenance.json``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig

# Which keys change results is a property of the config, read by analysis too (runs with
# equal result keys are seeds of one configuration): it lives in config.py, below both.
from reflexion_bench.config import FORCE_KEY as FORCE_KEY
from reflexion_bench.config import FREE_KEYS as FREE_KEYS
from reflexion_bench.config import FREE_LEAVES as FREE_LEAVES
from reflexion_bench.config import config_text, flat_config, is_free_key
from reflexion_bench.config import result_config as result_config
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.runfolder import CONFIG_NAME as CONFIG_NAME
from reflexion_bench.core.runfolder import LOG_NAME

log = logging.getLogger(__name__)


class ResumeConflict(ConfigError):
    """The run folder holds results of another config; names the differing keys."""

    def __init__(self, run_dir: Path, diffs: dict[str, tuple[Any, Any]]) -> None:
        lines = "; ".join(f"{k}: {_show(old)} -> {_show(new)}" for k, (old, new) in diffs.items())
        ValueError.__init__(
            self,
            f"{run_dir} already holds results of another config ({run_dir / CONFIG_NAME}); "
            f"resuming would mix them. Differing keys (old -> new): {lines}. "
            f"Use a new run folder (another `run_dir`, or no `resume=latest`), or pass "
            f"`{FORCE_KEY}=true` to resume with the new config on purpose (the old config "
            f"is kept as config.<n>.yaml and provenance.json records the change).",
        )
        self.key = FORCE_KEY
        self.diffs = diffs


def _show(value: Any) -> str:
    text = "(absent)" if value is _ABSENT else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_ABSENT = object()


def config_diffs(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Keys whose values differ between two saved configs, less the free ones."""
    a, b = flat_config(old), flat_config(new)
    out: dict[str, tuple[Any, Any]] = {}
    for key in sorted(set(a) | set(b)):
        if is_free_key(key):
            continue
        va, vb = a.get(key, _ABSENT), b.get(key, _ABSENT)
        if va is _ABSENT and vb is None:
            continue  # added since, and off: the saved run ran without it as well
        if va != vb:
            out[key] = (va, vb)
    return out


#: Keys whose value may grow on resume: the task selection's prefix length.
GROWING_KEYS = frozenset({"limit", "env.limit"})


def _grows(key: str, old: Any, new: Any) -> bool:
    """A task limit raised or lifted: the logged tasks stay a prefix of the selection."""
    if key not in GROWING_KEYS or isinstance(old, bool) or isinstance(new, bool):
        return False
    if not isinstance(old, int):
        return False
    return new is None or (isinstance(new, int) and new >= old)


def _has_results(run_dir: Path) -> bool:
    log_path = run_dir / LOG_NAME
    return log_path.is_file() and log_path.stat().st_size > 0


def check_resume(cfg: DictConfig, run_dir: Path) -> dict[str, tuple[Any, Any]]:
    """Refuse to resume ``run_dir`` under a config that changes results.

    Returns the differences accepted with ``resume_force=true`` (empty otherwise);
    raises :class:`ResumeConflict` when they are not forced.
    """
    saved = run_dir / CONFIG_NAME
    if not _has_results(run_dir):
        return {}
    if not saved.is_file():
        log.warning(
            "%s has a run log but no %s: cannot check that resuming keeps the same config",
            run_dir,
            CONFIG_NAME,
        )
        return {}
    try:
        old = yaml.safe_load(saved.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(
            FORCE_KEY,
            str(saved),
            f"a readable {CONFIG_NAME} to compare with ({type(exc).__name__}); "
            f"fix or remove the file, or pass {FORCE_KEY}=true",
        ) from None
    # The new config in the very form config.yaml is written (resolved, redacted), so
    # masked secrets compare equal and nothing but real differences remain.
    new = yaml.safe_load(config_text(cfg)) or {}
    diffs = {
        k: v
        for k, v in config_diffs(old if isinstance(old, dict) else {}, new).items()
        if not _grows(k, *v)
    }
    if not diffs:
        return {}
    force = cfg.get(FORCE_KEY, False)
    if str(force).lower() not in ("true", "false"):
        raise ConfigError(FORCE_KEY, force, "true or false")
    if str(force).lower() != "true":
        raise ResumeConflict(run_dir, diffs)
    n = 1
    while (run_dir / f"config.{n}.yaml").exists():
        n += 1
    saved.rename(run_dir / f"config.{n}.yaml")
    log.warning(
        "%s=true: resuming %s with a changed config (%s); the old one is config.%d.yaml",
        FORCE_KEY,
        run_dir,
        ", ".join(diffs),
        n,
    )
    return diffs
