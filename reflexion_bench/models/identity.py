"""What a model *is*, for the response cache key and for provenance.

A model name says little: ``model.model_path`` can serve another GGUF under the default
name, and two servers can answer to the same ``model.name``. The identity of a client
(:meth:`reflexion_bench.models.base.ModelClient.identity`) is therefore:

- for local weights: the SHA-256 of the file (plus the server settings that change
  outputs). Hashing 0.5-1.1 GB takes seconds, so :func:`file_sha256` keeps a small stamp
  file per weights file and reuses its digest while the file's size, mtime, ctime and
  inode are unchanged (ctime and inode catch a file replaced with its mtime restored);
- for servers: the base URL with credentials stripped (:func:`public_url`) and the
  served model id, plus request settings that change outputs.

Identities never hold credentials: they go into the cache database and ``provenance.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from reflexion_bench.config import redact, redact_text

_CHUNK = 8 * 1024 * 1024

# Query parameters that carry credentials (Azure's ``api-key``, signed URLs...): dropped.
_SECRET_PARAMS = ("key", "token", "secret", "sig", "signature", "password", "auth", "credential")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def public_url(url: str | None) -> str | None:
    """``url`` normalised, with user:password, credential query parameters and key-looking
    substrings removed, so two spellings of one endpoint key the same entries and no
    secret reaches a cache file or a provenance record."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc:
        return redact_text(url.strip().rstrip("/"))
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    default = port is None or _DEFAULT_PORTS.get(parts.scheme.lower()) == port
    netloc = host if default else f"{host}:{port}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not any(s in k.lower().replace("-", "").replace("_", "") for s in _SECRET_PARAMS)
    ]
    clean = urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), urlencode(query), ""))
    return redact_text(clean)


def public_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Request settings (e.g. ``extra_body``) with secret-looking keys and values masked."""
    out = redact(settings)
    assert isinstance(out, dict)
    return out


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def stamp_path(stamp_dir: Path, path: Path) -> Path:
    """Where the digest stamp of ``path`` lives (one per resolved path)."""
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return stamp_dir / "verified" / f"{path.name}.{key}.ok"


def _file_state(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {
        "path": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
    }


def read_stamp(path: Path, stamp_dir: Path) -> str | None:
    """The stamped digest of ``path`` if the file is unchanged since it was stamped."""
    stamp = stamp_path(stamp_dir, path)
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None  # no stamp, or an old/corrupt one: hash again
    if not isinstance(data, dict) or data.get("state") != _file_state(path):
        return None
    digest = data.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def write_stamp(
    path: Path, stamp_dir: Path, digest: str, state: dict[str, Any] | None = None
) -> None:
    """Record ``digest`` for ``path`` in ``state`` (default: as it is now), atomically;
    a failure only costs a re-hash next time."""
    stamp = stamp_path(stamp_dir, path)
    try:
        record = {"state": state or _file_state(path), "sha256": digest}
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record))
        os.replace(tmp, stamp)
    except OSError:
        pass  # only an optimisation


def file_sha256(path: Path, stamp_dir: Path) -> str:
    """The SHA-256 of ``path``, from its stamp while the file is unchanged, else hashed
    (and stamped)."""
    digest = read_stamp(path, stamp_dir)
    if digest is None:
        before = _file_state(path)
        digest = sha256_file(path)
        # A file rewritten while it was read gets no stamp: its digest may be of neither.
        if _file_state(path) == before:
            write_stamp(path, stamp_dir, digest, before)
    return digest


# Above this size a file's digest comes from its size+mtime stamp when unchanged.
_STAMP_MIN_BYTES = 16 * 1024 * 1024


def file_digest(path: Path, stamp_dir: Path | None) -> str:
    """SHA-256 of ``path``; large files reuse the size+mtime stamp of the model layer."""
    if stamp_dir is not None and path.stat().st_size >= _STAMP_MIN_BYTES:
        return file_sha256(path, stamp_dir)
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
