"""The reflection store: Markdown files in dated folders, and a rebuildable SQLite index.

Layout of a store folder::

    STORE/
      reflections/2025/03/14/r20250314-1a2b3c4d5e.md   # the truth, one file per reflection
      index.sqlite                                    # derived; delete it and it is rebuilt
      .lock                                           # serialises writers (several processes)

Reflections are never deleted: deprecation is a flag with a reason, and archiving is
a salience state. Metadata updates (retrieval counts, salience) rewrite a file's
front matter atomically (write + rename). The index also caches the embedding of
each reflection per encoder model, keyed by a hash of the indexed text, so retrieval
embeds only the query.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

from reflexion_bench.memory.lifelong.record import (
    Clock,
    Reflection,
    StoreFormatError,
    iso,
    parse_ts,
    utcnow,
)

INDEX_NAME = "index.sqlite"
FILES_DIR = "reflections"
_SCHEMA = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS reflections (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    relpath TEXT NOT NULL,
    task_type TEXT NOT NULL,
    task_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    failure_signature TEXT NOT NULL,
    archived INTEGER NOT NULL,
    promoted INTEGER NOT NULL,
    deprecated INTEGER NOT NULL,
    retrieval_count INTEGER NOT NULL,
    last_retrieved TEXT,
    text_hash TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reflections_type ON reflections(task_type);
CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vec BLOB NOT NULL);
"""


class ReadOnlyStoreError(PermissionError):
    """A write was attempted on a store opened read-only (e.g. another agent's)."""


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class ReflectionStore:
    """A folder of reflection files with a SQLite index over them.

    Args:
        root: The store folder (created unless read-only).
        read_only: Refuse every write (used for other agents' stores). A read-only
            store whose index is missing builds it in memory from the files.
        clock: Returns "now" (injectable for tests).
        agent: The agent owning this store (stamped on reflections it adds).
    """

    def __init__(
        self,
        root: str | Path,
        read_only: bool = False,
        clock: Clock | None = None,
        agent: str = "default",
    ) -> None:
        self.root = Path(root).expanduser()
        self.read_only = read_only
        self.clock: Clock = clock or utcnow
        self.agent = agent
        if read_only:
            if not self.root.is_dir():
                raise FileNotFoundError(
                    f"shared reflection store {self.root} does not exist (check memory.share_from)"
                )
        else:
            (self.root / FILES_DIR).mkdir(parents=True, exist_ok=True)
        self._lock = None if read_only else FileLock(str(self.root / ".lock"))
        self._db = self._open_db()

    # ------------------------------------------------------------------ plumbing
    @property
    def files_dir(self) -> Path:
        return self.root / FILES_DIR

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    def _open_db(self) -> sqlite3.Connection:
        path = self.index_path
        if self.read_only:
            if path.exists():
                return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            db = sqlite3.connect(":memory:", check_same_thread=False)
            db.executescript(_DDL)
            self._fill_index(db)
            return db
        fresh = not path.exists()
        db = sqlite3.connect(path, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_DDL)
        if fresh:
            with self._write_lock():
                self._fill_index(db)
                db.commit()
        return db

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ReflectionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        if self.read_only or self._lock is None:
            raise ReadOnlyStoreError(f"reflection store {self.root} is read-only")
        with self._lock:
            yield

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(f"reflection store {self.root} is read-only")

    # ------------------------------------------------------------------ index
    def _row(self, ref: Reflection) -> tuple[Any, ...]:
        body = json.dumps(
            {**ref.front_matter(), "text": ref.text, "task_excerpt": ref.task_excerpt}
        )
        return (
            ref.id,
            ref.relpath.as_posix(),
            ref.task_type,
            ref.task_id,
            ref.outcome,
            iso(ref.created),
            ref.source_agent,
            ref.failure_signature,
            int(ref.archived),
            int(ref.promoted),
            int(ref.deprecated is not None),
            ref.retrieval_count,
            iso(ref.last_retrieved) if ref.last_retrieved else None,
            text_hash(ref.index_text()),
            body,
        )

    _UPSERT = (
        "INSERT INTO reflections (id, relpath, task_type, task_id, outcome, created, source_agent,"
        " failure_signature, archived, promoted, deprecated, retrieval_count, last_retrieved,"
        " text_hash, body) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(id) DO UPDATE SET relpath=excluded.relpath, task_type=excluded.task_type,"
        " task_id=excluded.task_id, outcome=excluded.outcome, created=excluded.created,"
        " source_agent=excluded.source_agent, failure_signature=excluded.failure_signature,"
        " archived=excluded.archived, promoted=excluded.promoted, deprecated=excluded.deprecated,"
        " retrieval_count=excluded.retrieval_count, last_retrieved=excluded.last_retrieved,"
        " text_hash=excluded.text_hash, body=excluded.body"
    )

    def _bump(self, db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
        )

    def _fill_index(self, db: sqlite3.Connection) -> int:
        """Index every file under ``reflections/`` (sorted, so row order is reproducible)."""
        db.execute("DELETE FROM reflections")
        n = 0
        batch: list[tuple[Any, ...]] = []
        for path in self._files():
            ref = self._read_file(path)
            expected = self.files_dir / ref.relpath
            if path != expected:
                raise StoreFormatError(
                    f"{path}: a reflection with id {ref.id} created {iso(ref.created)} belongs at "
                    f"{expected} (move the file or fix its front matter)"
                )
            batch.append(self._row(ref))
            n += 1
            if len(batch) >= 2000:
                db.executemany(self._UPSERT, batch)
                batch.clear()
        db.executemany(self._UPSERT, batch)
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE"
            " SET value=excluded.value",
            (str(_SCHEMA),),
        )
        self._bump(db)
        return n

    def rebuild_index(self) -> int:
        """Recreate the index from the files (embeddings cache kept); return the count."""
        with self._write_lock():
            n = self._fill_index(self._db)
            self._db.commit()
        return n

    def _files(self) -> list[Path]:
        if not self.files_dir.is_dir():
            return []
        # Order by creation folder, then id: the order reflections were added in a day
        # is not recorded in the path, but created (in the file) breaks ties below.
        return sorted(self.files_dir.rglob("*.md"))

    @staticmethod
    def _read_file(path: Path) -> Reflection:
        return Reflection.from_markdown(path.read_text(encoding="utf-8"), where=str(path))

    def generation(self) -> int:
        """A counter bumped by every write; readers reload caches when it changes."""
        row = self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    # ------------------------------------------------------------------ writes
    def _write_file(self, ref: Reflection) -> None:
        path = self.files_dir / ref.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(ref.to_markdown())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def add(self, ref: Reflection) -> Reflection:
        """Write a new reflection (file, then index). Adding the same id twice is a no-op."""
        return self.add_many([ref])[0]

    def add_many(self, refs: Sequence[Reflection]) -> list[Reflection]:
        """Write several reflections in one index transaction."""
        with self._write_lock():
            existing = (
                {
                    r[0]
                    for r in self._db.execute(
                        f"SELECT id FROM reflections WHERE id IN ({','.join('?' * len(refs))})",
                        [r.id for r in refs],
                    )
                }
                if refs
                else set()
            )
            rows = []
            for ref in refs:
                if ref.id in existing:
                    continue
                self._write_file(ref)
                rows.append(self._row(ref))
            self._db.executemany(self._UPSERT, rows)
            self._bump(self._db)
            self._db.commit()
        return list(refs)

    def update(self, refs: Iterable[Reflection]) -> None:
        """Rewrite the files and index rows of existing reflections."""
        refs = list(refs)
        if not refs:
            return
        with self._write_lock():
            for ref in refs:
                self._write_file(ref)
            self._db.executemany(self._UPSERT, [self._row(r) for r in refs])
            self._bump(self._db)
            self._db.commit()

    def deprecate(self, ref_id: str, reason: str) -> Reflection:
        """Mark a reflection deprecated (never retrieved again); the file stays."""
        self._check_writable()
        if not reason.strip():
            raise ValueError("a deprecation needs a reason (--reason)")
        ref = self.get(ref_id)
        ref.deprecated = {"reason": reason.strip(), "at": iso(self.clock())}
        self.update([ref])
        return ref

    def record_retrievals(self, ids: Sequence[str], when: datetime | None = None) -> None:
        """Count one retrieval for each id (front matter and index)."""
        self._check_writable()
        when = when or self.clock()
        refs: dict[str, Reflection] = {}
        for i in ids:  # an id listed twice counts twice
            ref = refs.setdefault(i, self.get(i))
            ref.mark_retrieved(when)
        self.update(refs.values())

    # ------------------------------------------------------------------ reads
    def path_of(self, ref_id: str) -> Path:
        row = self._db.execute("SELECT relpath FROM reflections WHERE id=?", (ref_id,)).fetchone()
        if row is None:
            raise KeyError(f"no reflection {ref_id!r} in store {self.root}")
        return self.files_dir / str(row[0])

    def get(self, ref_id: str) -> Reflection:
        """Read one reflection from its file (the truth)."""
        return self._read_file(self.path_of(ref_id))

    def all(self) -> list[Reflection]:
        """Every reflection, from the index (in insertion order)."""
        rows = self._db.execute("SELECT body FROM reflections ORDER BY rowid").fetchall()
        return [_from_body(r[0]) for r in rows]

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM reflections").fetchone()[0])

    def count(self, task_type: str | None = None, active_only: bool = False) -> int:
        sql = "SELECT COUNT(*) FROM reflections WHERE 1=1"
        args: list[Any] = []
        if task_type is not None:
            sql += " AND task_type=?"
            args.append(task_type)
        if active_only:
            sql += " AND archived=0 AND deprecated=0"
        return int(self._db.execute(sql, args).fetchone()[0])

    def index_rows(self) -> list[dict[str, Any]]:
        """The index as plain rows (what the retriever loads), in insertion order."""
        cur = self._db.execute(
            "SELECT id, task_type, task_id, outcome, source_agent, failure_signature, archived,"
            " promoted, deprecated, text_hash, body FROM reflections ORDER BY rowid"
        )
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur]

    def snapshot(self) -> list[tuple[str, str]]:
        """(id, canonical content) of every reflection: equal snapshots mean equal state."""
        return sorted((r.id, r.to_markdown()) for r in self.all())

    # ------------------------------------------------------------------ embeddings cache
    def cached_embeddings(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``model`` for the given text hashes (missing ones left out)."""
        by_key = {f"{model}:{h}": h for h in hashes}
        keys = list(by_key)
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 900):  # SQLite's bound-parameter limit
            chunk = keys[start : start + 900]
            for key, blob in self._db.execute(
                f"SELECT key, vec FROM embeddings WHERE key IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[by_key[key]] = np.frombuffer(blob, dtype=np.float32)
        return out

    def cache_embeddings(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store embeddings (skipped silently on read-only stores: they are a cache)."""
        if self.read_only or not vectors:
            return
        with self._write_lock():
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings(key, vec) VALUES (?, ?)",
                [
                    (f"{model}:{h}", np.asarray(v, dtype=np.float32).tobytes())
                    for h, v in vectors.items()
                ],
            )
            self._db.commit()


def _from_body(body: str) -> Reflection:
    data = json.loads(body)
    data["created"] = parse_ts(data["created"])
    data["last_retrieved"] = parse_ts(data.get("last_retrieved"))
    return Reflection(**data)
