"""Short, fixable error messages for what goes wrong before a run starts.

Hydra reports a misspelled key in 7 lines, an unknown group option with a 19-line
listing, and an unwritable run folder with a Python traceback. These helpers turn each
into one line that names the fix, with a "did you mean" where a near match exists.
``reflexion-bench run`` lets Hydra raise (``HYDRA_FULL_ERROR=1`` for the call, see
:func:`hydra_raises`) and formats what comes out here.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

#: Hydra's own command-line modes; it accepts only one per call.
_MODES = {
    "-m": "-m",
    "--multirun": "-m",
    "-c": "--cfg",
    "--cfg": "--cfg",
    "-i": "--info",
    "--info": "--info",
    "-r": "--run",
    "--run": "--run",
    "-sc": "--shell-completion",
    "--shell-completion": "--shell-completion",
}


def did_you_mean(word: str, candidates: Iterable[object]) -> str:
    """``" (did you mean `x`?)"`` for the closest candidates of ``word``, else ``""``."""
    names = [str(c) for c in candidates]
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(f"`{c}`" for c in close) + "?)"


def mode_conflict(argv: Iterable[str]) -> str | None:
    """The error for two of Hydra's modes in one command (``-m ... --cfg job``), which
    Hydra reports with a ``ValueError`` traceback; None when there is at most one."""
    modes: list[str] = []
    for arg in argv:
        mode = _MODES.get(arg.split("=", 1)[0])
        if mode is not None and mode not in modes:
            modes.append(mode)
    if len(modes) < 2:
        return None
    if "-m" in modes and ("--cfg" in modes or "--info" in modes):
        other = "--cfg" if "--cfg" in modes else "--info"
        return (
            f"error: `{other}` shows one run's config and cannot be combined with `-m`; drop "
            "`-m` and give one value per key (e.g. `strategy=simple`) to see that job's config"
        )
    return f"error: {' and '.join(f'`{m}`' for m in modes)} cannot be combined; keep one"


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _keys_of(node: Any) -> list[str]:
    try:
        return [str(k) for k in node]
    except TypeError:
        return []


def _options_with_key(key: str) -> list[str]:
    """The options of the config group ``key`` starts with whose file has the rest of
    ``key``: `model.base_urls` under `model=openai_compatible` is a key of
    `model=openai_pool`, not a misspelling of `base_url`, and the fix is the option."""
    from omegaconf import OmegaConf

    from reflexion_bench.config import CONFIG_DIR

    group, _, rest = key.partition(".")
    folder = CONFIG_DIR / group
    if not rest or not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            # A plain container: a key whose value is `???` must still count as present.
            node: Any = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        except Exception:  # a file that does not parse is reported where it is used
            continue
        parts = rest.split(".")
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and parts[-1] in node:
            found.append(path.stem)
    return found


def hydra_error_text(exc: BaseException) -> str | None:
    """One line for a Hydra composition error (unknown key, unknown group option, bad
    override syntax), or None for anything else."""
    from hydra.errors import (
        ConfigCompositionException,
        MissingConfigException,
        OverrideParseException,
    )

    if isinstance(exc, MissingConfigException):
        missing = str(exc.missing_cfg_file or "")
        group, _, option = missing.rpartition("/")
        options = list(exc.options or [])
        if group and options:
            hint = did_you_mean(option, options)
            listed = ", ".join(options) if not hint else ""
            return (
                f"error: `{group}={option}`: no such {group} option{hint}"
                + (f"; options: {listed}" if listed else "")
                + f" (configs/{group}/*.yaml)"
            )
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else missing
        return f"error: {first}"
    if isinstance(exc, OverrideParseException):
        first = str(exc.message).strip().splitlines()[0]
        return (
            f"error: cannot parse the override `{exc.override}`: {first} (quote values "
            "with spaces or brackets, e.g. 'task_ids=[\"HumanEval/0\"]')"
        )
    if isinstance(exc, ConfigCompositionException):
        text = str(exc)
        found = re.search(r"Could not override '([^']+)'", text)
        cause = exc.__cause__
        if found:
            key = found.group(1)
            inner = str(getattr(cause, "full_key", "") or "")
            if inner.startswith(key + "."):
                # `key` exists but is a mapping of free keys (extra_body, engine): Hydra
                # refuses keys it does not hold yet unless they are added on purpose.
                return (
                    f"error: `{key}` takes new keys only when added: "
                    f"`++{key}={{...}}` replaces it, `+{inner}=...` adds one key"
                )
            elsewhere = _options_with_key(key)
            if elsewhere:
                group = key.split(".", 1)[0]
                named = " or ".join(f"`{group}={o}`" for o in elsewhere[:3])
                more = " (and others)" if len(elsewhere) > 3 else ""
                return (
                    f"error: `{key}` is not a key of the chosen {group}; {named}{more} has it:"
                    f" choose it, e.g. `{group}={elsewhere[0]} {key}=...`"
                )
            parent = getattr(cause, "parent_node", None)
            hint = did_you_mean(_leaf(key), _keys_of(parent)) if parent is not None else ""
            return (
                f"error: `{key}` is not a config key{hint}; `reflexion-bench run --cfg job` "
                f"prints the config (to add a new key on purpose: `+{key}=...`)"
            )
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        extra = f" ({str(cause).splitlines()[0]})" if cause is not None and str(cause) else ""
        return f"error: {first}{extra}"
    return None


def missing_values_text(keys: Iterable[str], choices: Mapping[str, object]) -> str | None:
    """One line for config keys left at ``???`` (a value only the user can give, such as
    ``model.name`` of ``model=openai_compatible``), or None when there are none; the
    option that asks for them and each key's comment in its file say what goes there."""
    from reflexion_bench.config import CONFIG_DIR

    keys = sorted(keys)
    if not keys:
        return None
    option = ""
    described = []
    for key in keys:
        parts = key.split(".")
        # The longest config group the key is under (`model`, `role_models/reflector`).
        for depth in range(len(parts) - 1, 0, -1):
            group = "/".join(parts[:depth])
            choice = choices.get(group)
            if choice is not None:
                option = option or f"{group}={choice}"
                path = CONFIG_DIR / group / f"{choice}.yaml"
                comment = _comment_of(path, parts[depth]) if depth == len(parts) - 1 else ""
                described.append(f"`{key}`" + (f" ({comment})" if comment else ""))
                break
        else:
            described.append(f"`{key}`")
    who = option or "this run"
    sets = " ".join(f"{k}=..." for k in keys)
    return f"error: {who} needs {' and '.join(described)}: add {sets}"


def _comment_of(path: Path, leaf: str) -> str:
    """The end-of-line comment of ``leaf: ???`` in ``path``, else ""."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""
    found = re.search(rf"^{re.escape(leaf)}:\s*\?\?\?\s*#\s*(.+)$", text, re.M)
    return found.group(1).strip() if found else ""


def os_error_text(exc: OSError, multirun: bool) -> str:
    """The run (or sweep) folder could not be made or written: which path, why, and
    the key that chooses it."""
    where = exc.filename if exc.filename is not None else "the output folder"
    why = exc.strerror or type(exc).__name__
    if isinstance(exc, FileExistsError | NotADirectoryError):
        why = "a file is in the way (a folder is needed)"
    key = "paths.results_dir= (or sweep_name=)" if multirun else "run_dir="
    return f"error: cannot create or write {where}: {why}; set {key} to a folder you can write"


class _DropLines:
    """A text stream that passes everything through except lines starting with one of
    ``prefixes``."""

    def __init__(self, stream: IO[str], prefixes: tuple[str, ...]) -> None:
        self._stream = stream
        self._prefixes = prefixes

    def write(self, text: str) -> int:
        if text.startswith(self._prefixes):
            return len(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def hydra_raises() -> Iterator[bool]:
    """Hydra raises its errors instead of printing them (``HYDRA_FULL_ERROR=1`` for the
    call), and its "Error executing job with overrides" line (the job's own line already
    names them) is dropped. Yields whether the user asked for full errors themselves (then
    the caller re-raises, and the line is kept)."""
    user_full = os.environ.get("HYDRA_FULL_ERROR") == "1"
    before = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    stderr = sys.stderr
    if not user_full:
        sys.stderr = _DropLines(stderr, ("Error executing job with overrides:",))
    try:
        yield user_full
    finally:
        sys.stderr = stderr
        if before is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = before
