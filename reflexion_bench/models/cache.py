"""SQLite response cache that doubles as a deterministic replay.

The key is a SHA-256 of the canonical JSON of everything that decides a response: the
model's identity (:meth:`~reflexion_bench.models.base.ModelClient.identity`: the weights'
SHA-256 for local files, the endpoint and served model id for servers, never a bare
name), messages, sampling parameters, seed and sample index (several samples at
temperature > 0 are distinct entries). ``read_only`` serves a recorded run offline; a
miss is then an error, never a silent live call.

An entry keeps what the live call spent (tokens, cost, latency) and per-call metadata
(served model id, ``system_fingerprint``), and a hit returns them with ``cached=True``:
a replayed call reports what a live run would have spent ("as run live"); what this
run paid is the calls that were not cached ("paid now").

Safe under concurrent writers from several processes (a sweep): WAL journal, a busy
timeout, and ``INSERT OR REPLACE`` of whole rows (two processes that race on the same
key write the same kind of value; the last one wins).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput

CacheMode = Literal["read_write", "read_only", "off"]
CACHE_MODES: tuple[str, ...] = ("read_write", "read_only", "off")

#: Bump when the key recipe changes, so old entries are not served for new meanings.
#: 2: keyed on the model identity instead of provider + name (1 let another GGUF served
#: under the default name, or another server behind one name, answer from the cache).
KEY_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def request_key(
    identity: Mapping[str, Any],
    messages: Sequence[Message],
    config: GenerateConfig,
    unsent: Sequence[str] = (),
) -> tuple[str, dict[str, Any]]:
    """The cache key of one call and the canonical request it hashes.

    Args:
        identity: The model's identity (``ModelClient.identity()``; no credentials: the
            request is stored beside the response). Its ``provider`` and ``model`` also
            fill the database's columns of those names.

    ``timeout_s`` is left out: it decides whether an answer arrives, not which one.
    ``unsent``: sampling fields the provider is not sent (e.g. Anthropic's
    ``temperature``), keyed as ``null``: the key records what was sent.
    """
    if "provider" not in identity or "model" not in identity:
        raise ValueError(f"a model identity needs `provider` and `model`: {dict(identity)}")
    request = {
        "v": KEY_VERSION,
        "identity": dict(identity),
        "provider": str(identity["provider"]),
        "model": str(identity["model"]),
        "messages": [m.to_dict() for m in messages],
        "max_tokens": config.max_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "stop": list(config.stop),
        "seed": config.seed,
        "sample_index": config.sample_index,
    }
    for name in unsent:
        if name in request:
            request[name] = None
    return canonical_key(request), request


def canonical_key(request: Mapping[str, Any]) -> str:
    """The SHA-256 of a canonical request's canonical JSON (what :func:`request_key`
    returns; also how an imported entry is checked against its own request)."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A SQLite file of responses keyed by :func:`request_key`.

    Args:
        path: Database file (created with its parent folders).
        busy_timeout_s: How long a writer waits for another process's lock.
    """

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                "model.cache_path", str(path), f"a writable location ({exc})"
            ) from None
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        # WAL lets readers and one writer proceed together across processes. Switching
        # the mode and creating the table need brief exclusive locks; SQLite can refuse
        # them at once (without the busy handler) when several processes open a new file
        # together, so these are retried until the busy timeout.
        deadline = time.monotonic() + busy_timeout_s
        for statement in ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", _SCHEMA):
            while True:
                try:
                    self._conn.execute(statement)
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

    def get(self, key: str) -> ModelOutput | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        # What the live call spent and took: a replay reports it ("as run live").
        return ModelOutput(
            text=data["text"],
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            finish_reason=str(data.get("finish_reason", "stop")),
            model=str(data.get("model", "")),
            latency_s=float(data.get("latency_s") or 0.0),
            cost_usd=float(data.get("cost_usd") or 0.0),
            cached=True,
            served_model=data.get("served_model"),
            system_fingerprint=data.get("system_fingerprint"),
        )

    def put(self, key: str, request: dict[str, Any], out: ModelOutput) -> None:
        response = {
            "text": out.text,
            "prompt_tokens": out.prompt_tokens,
            "completion_tokens": out.completion_tokens,
            "finish_reason": out.finish_reason,
            "model": out.model,
            # What the live call cost and took: replays report it.
            "cost_usd": out.cost_usd,
            "latency_s": out.latency_s,
            "served_model": out.served_model,
            "system_fingerprint": out.system_fingerprint,
        }
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    request["provider"],
                    request["model"],
                    json.dumps(request, ensure_ascii=False),
                    json.dumps(response, ensure_ascii=False),
                    time.time(),
                ),
            )

    async def aget(self, key: str) -> ModelOutput | None:
        # In a thread: a busy database (another process writing) must not block the loop.
        return await asyncio.to_thread(self.get, key)

    async def aput(self, key: str, request: dict[str, Any], out: ModelOutput) -> None:
        await asyncio.to_thread(self.put, key, request, out)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def entries(
        self,
        *,
        greedy_only: bool = False,
        model: str | None = None,
        where: Callable[[dict[str, Any]], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """Whole entries, oldest first (then by key, so that an export is reproducible):
        ``key``, ``provider``, ``model``, ``request``, ``response``, ``created``.

        ``greedy_only``: temperature 0 only: the calls that are the same request in every
        arm of a study (trial 1, the self-test writer), which a sampled call is not.
        ``model``: the identity's model name. ``where``: a test on the canonical request
        (e.g. on its ``identity``'s server settings)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, provider, model, request, response, created FROM responses"
                " ORDER BY created, key"
            ).fetchall()
        out = []
        for key, provider, name, request, response, created in rows:
            if model is not None and name != model:
                continue
            req = json.loads(request)
            if greedy_only and req.get("temperature") != 0:
                continue
            if where is not None and not where(req):
                continue
            out.append(
                {
                    "key": key,
                    "provider": provider,
                    "model": name,
                    "request": req,
                    "response": json.loads(response),
                    "created": created,
                }
            )
        return out

    def add_entry(self, entry: Mapping[str, Any]) -> bool:
        """Insert one exported entry unless its key is present (a local answer is never
        replaced). Returns whether it was added.

        Raises:
            ValueError: the entry is malformed, of another key recipe (``v``), or its key
                is not its request's (an edited or corrupted line must not answer for
                another request).
        """
        try:
            key = str(entry["key"])
            request = dict(entry["request"])
            response = dict(entry["response"])
            created = float(entry["created"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a cache entry ({type(exc).__name__}: {exc})") from None
        if request.get("v") != KEY_VERSION:
            raise ValueError(
                f"key recipe v={request.get('v')!r}, this version keys v={KEY_VERSION}"
            )
        if canonical_key(request) != key:
            raise ValueError("its key is not the SHA-256 of its request")
        if not isinstance(response.get("text"), str):
            raise ValueError("its response has no text")
        with self._lock:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    str(request["provider"]),
                    str(request["model"]),
                    json.dumps(request, ensure_ascii=False),
                    json.dumps(response, ensure_ascii=False),
                    created,
                ),
            )
            return bool(cur.rowcount)


def export_entries(
    cache: ResponseCache,
    path: str | Path,
    *,
    greedy_only: bool = False,
    model: str | None = None,
    where: Callable[[dict[str, Any]], bool] | None = None,
) -> int:
    """Write the cache's entries (filtered as :meth:`ResponseCache.entries`) to a JSONL
    file, one entry per line, oldest first: entries imported elsewhere keep their
    ``created``, so a file re-exported after more calls only grows at its end (a small
    diff when it is committed). Written whole, then renamed into place. Returns the count.
    """
    rows = cache.entries(greedy_only=greedy_only, model=model, where=where)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    tmp.replace(target)
    return len(rows)


def import_entries(cache: ResponseCache, path: str | Path) -> dict[str, Any]:
    """Add a JSONL export's entries to the cache (present keys are kept as they are).

    Returns counts (``added``, ``present``, ``refused``) and ``problems``: the first few
    refused lines, each with its line number and why. A refused line is skipped, never
    served: a bad line costs one live call, a wrong entry would cost a wrong answer."""
    counts: dict[str, Any] = {"added": 0, "present": 0, "refused": 0, "problems": []}
    with Path(path).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                added = cache.add_entry(json.loads(line))
            except (json.JSONDecodeError, ValueError, AttributeError) as exc:
                counts["refused"] += 1
                if len(counts["problems"]) < 5:
                    counts["problems"].append(f"line {number}: {exc}")
                continue
            counts["added" if added else "present"] += 1
    return counts
