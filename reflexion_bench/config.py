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
from reflexion_bench.core.shards import shard_dir, sweep_subdir

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"

MASK = "***"

# Key names whose values are secrets, wherever they sit (config nodes, `key=value`
# overrides, headers, query strings, environment variables). Anchored at the end so
# that `api_key_env` (which names a variable) and `max_tokens` stay readable.
_KEY_WORDS = (
    r"api[_-]?key|apikey|x[_-]api[_-]key|secret|secret[_-]?key|client[_-]?secret|token"
    r"|access[_-]?token|auth[_-]?token|password|passwd|cookie|authorization"
    r"|credentials?|private[_-]?key|access[_-]?key|session[_-]?id|leetcode[_-]?session"
)
_SECRET_KEY = re.compile(rf"({_KEY_WORDS})$", re.I)
# Shapes of credentials issued by common providers, recognised under any key name.
_SECRET_VALUE = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"  # OpenAI, Anthropic
    r"|gsk_[A-Za-z0-9]{8,}"  # Groq
    r"|hf_[A-Za-z0-9]{8,}"  # Hugging Face
    r"|xai-[A-Za-z0-9]{8,}"  # xAI
    r"|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}"  # GitHub
    r"|AIza[0-9A-Za-z_\-]{20,}"  # Google
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|xox[abprs]-[A-Za-z0-9\-]{8,}"  # Slack
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"  # JWT
)
# `Authorization: Bearer <token>` and friends: the scheme stays, the credential goes.
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+)[A-Za-z0-9._~+/=\-]{6,}", re.I)
# user:password@ (or a lone token@) in a URL.
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@?#]+@")
# key=value / key: value / "key": "value" with a secret key name (command lines,
# Hydra overrides, query strings, JSON or YAML text, environment dumps).
_SECRET_PAIR = re.compile(
    rf"((?:[A-Za-z0-9_.\-]*?)(?:{_KEY_WORDS})[\"']?\s*[=:]\s*[\"']?)(?!\*\*\*|\$\{{)([^\s\"',&}}\]#]+)",
    re.I,
)
# Query parameters that carry credentials under short names (`?key=`, `?sig=`).
_SECRET_QUERY = re.compile(r"([?&;](?:key|sig|signature|auth|code)=)[^&#\s\"']+", re.I)
# An interpolation (`${oc.env:OPENAI_API_KEY}`) names where a secret comes from: keep it.
_INTERPOLATION = re.compile(r"^\$\{[^}]*\}$")


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
    """A copy of a plain container with secret-looking keys and values masked.

    Values under a secret key name are masked whole (whatever their shape); every
    other string goes through :func:`redact_text` (credential shapes, URLs with
    credentials, ``key=value`` pairs).
    """
    if isinstance(obj, DictConfig | ListConfig):
        obj = OmegaConf.to_container(obj, resolve=False)
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str) and _SECRET_KEY.search(k) and v not in (None, ""):
                keep = isinstance(v, str) and _INTERPOLATION.match(v)
                out[k] = v if keep else MASK
            else:
                out[k] = redact(v)
        return out
    if isinstance(obj, list | tuple):
        return [redact(v) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj)
    return obj


def redact_text(text: str) -> str:
    """Mask secrets in free text: credential shapes (``sk-...``, ``gsk_...``,
    ``Bearer ...``), credentials in URLs (``https://user:KEY@host``, ``?api_key=``),
    values of secret-named ``key=value`` pairs, and the values of this process's
    secret-named environment variables."""
    import os

    text = _SECRET_VALUE.sub(MASK, text)
    text = _AUTH_SCHEME.sub(rf"\1\2{MASK}", text)
    text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
    text = _SECRET_QUERY.sub(rf"\1{MASK}", text)
    text = _SECRET_PAIR.sub(rf"\1{MASK}", text)
    # A key of any shape set in the environment (a self-hosted server's token) is
    # still recognised by its value.
    for var, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.search(var) and value in text:
            text = text.replace(value, MASK)
    return text


_SECRET_ENV = re.compile(rf"({_KEY_WORDS})$|^(LEETCODE_SESSION|WANDB_API_KEY)$", re.I)


def redact_override(arg: str) -> str:
    """One command-line argument or Hydra override (``model.api_key=VALUE``) with its
    value masked whole when the key names a secret, else as :func:`redact_text`.

    Whole-value masking matters for quoted values with spaces (``'x=my pass phrase'``)
    that the text patterns would only partly cover.
    """
    key, sep, value = arg.partition("=")
    name = key.lstrip("+~").rsplit(".", 1)[-1].strip("'\"")
    if sep and value and _SECRET_KEY.search(name) and not _INTERPOLATION.match(value):
        return f"{key}={MASK}"
    return redact_text(arg)


#: Overrides that change where results are shown, not what they are: left out of a
#: sweep job's folder name, so adding `logger=wandb` resumes the sweep instead of
#: re-running it (Hydra's exclude_keys match whole keys only, not `logger.mode=...`).
OUTPUT_ONLY_KEYS = ("logger", "progress")


def _output_only(part: str) -> bool:
    key = part.lstrip("+~").split("=", 1)[0] if "=" in part else ""
    return any(key == k or key.startswith(k + ".") for k in OUTPUT_ONLY_KEYS)


def redact_dirname(text: str) -> str:
    """``text`` (a Hydra ``override_dirname``) with secrets masked, safe as a folder
    name: sweep job folders are named from their overrides and must not hold a key.
    Output-only overrides (:data:`OUTPUT_ONLY_KEYS`) are left out."""
    parts = [redact_override(p) for p in str(text).split(",") if not _output_only(p)]
    return sweep_subdir(",".join(parts).replace(MASK, "REDACTED"))


#: The project's folder (the one holding configs/): where relative data paths fall back to.
PROJECT_ROOT = CONFIG_DIR.parent


def project_path(path: str) -> str:
    """``path`` made absolute: as given if absolute; a relative one against the working
    directory when it exists there, else against the project's folder (so a run
    started from another directory still finds ``../shared/data``)."""
    p = Path(str(path)).expanduser()
    if p.is_absolute():
        return str(p)
    here = (Path.cwd() / p).resolve()
    if here.exists():
        return str(here)
    return str((PROJECT_ROOT / p).resolve())


def register_resolvers() -> None:
    """OmegaConf resolvers of this project (``${redact_dirname:...}``,
    ``${project_path:...}``); idempotent."""
    if not OmegaConf.has_resolver("redact_dirname"):
        OmegaConf.register_new_resolver("redact_dirname", redact_dirname)
    if not OmegaConf.has_resolver("shard_dir"):
        OmegaConf.register_new_resolver("shard_dir", shard_dir)
    if not OmegaConf.has_resolver("project_path"):
        OmegaConf.register_new_resolver("project_path", project_path)


def config_text(cfg: DictConfig) -> str:
    """The resolved, redacted config as YAML (what ``config.yaml`` holds)."""
    container = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    return OmegaConf.to_yaml(OmegaConf.create(redact(container)))


def save_config(cfg: DictConfig, path: Path) -> None:
    """Write the resolved, redacted config (what the run actually used)."""
    path.write_text(config_text(cfg), encoding="utf-8")


# --------------------------------------------------------------------------- results
# Which keys of a saved config change results: the resume check refuses to mix runs
# that differ in them (runner/resume_guard.py), and analysis groups the seeds of one
# configuration by them (analysis/runs.py).

FORCE_KEY = "resume_force"

#: Top-level keys (and everything under them) that may change between sessions.
FREE_KEYS = (
    "max_concurrent_tasks",
    "fail_on_error",
    "resume",
    FORCE_KEY,
    "retry_errored",
    "progress",
    "run_dir",
    "sweep_name",
    "name",
    "paths",
    "logger",
    "generate.timeout_s",
)
#: Leaf names that may change wherever they sit (model layer, sandbox, caches): they
#: set how fast, how often and how long, not what is asked or how it is judged.
FREE_LEAVES = frozenset(
    {
        "max_connections",
        "rpm",
        "tpm",
        "rate_window_s",
        "shared_rpm",
        "shared_limit_key",
        "shared_limit_path",
        "retries",
        "timeout_s",
        "init_timeout_s",
        "max_cost_usd",
        "max_tokens_budget",
        "cache",
        "cache_path",
        "cache_dir",
        "hf_cache_dir",
        "jobs",
        "recycle_after",
        # llama.cpp threads change speed only (EmbeddedModel.identity); the context per
        # slot reaches results only through n_ctx, which is compared (resolved).
        "n_threads",
        "ctx_per_slot",
        "slots_per_core",  # reaches results only through n_parallel, which is compared
        "poll",
    }
)


def flat_config(node: Any, prefix: str = "") -> dict[str, Any]:
    """A saved config as ``{"dotted.key": leaf}``."""
    if isinstance(node, dict) and node:
        out: dict[str, Any] = {}
        for k, v in node.items():
            out.update(flat_config(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: node}


def is_free_key(key: str) -> bool:
    """Whether ``key`` may change between sessions of one run (:data:`FREE_KEYS`,
    :data:`FREE_LEAVES`)."""
    if any(key == k or key.startswith(k + ".") for k in FREE_KEYS):
        return True
    return key.rsplit(".", 1)[-1] in FREE_LEAVES


def result_config(config: dict[str, Any]) -> dict[str, Any]:
    """The keys of a saved config that change results (flattened, the free ones left
    out): what two runs must share to be the same experiment."""
    return {k: v for k, v in flat_config(config).items() if not is_free_key(k)}


# Registered at import: Hydra resolves `hydra.sweep.subdir` in every job's process
# (joblib/submitit/ray workers too), and each of them imports this module first.
register_resolvers()
