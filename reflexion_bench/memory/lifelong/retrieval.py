"""Retrieval of stored reflections for a new task: BM25, dense, hybrid, rerank, MMR, salience.

Modes:
- ``bm25``: bm25s over the reflection text and its task excerpt.
- ``dense``: cosine similarity of sentence embeddings (stored embeddings are cached
  in the store's index, so a query embeds only the query text).
- ``hybrid``: fusion of the two, reciprocal rank fusion (default) or a weighted sum
  of min-max normalised scores.
- ``hybrid_rerank``: hybrid candidates reordered by a cross-encoder (needs one
  available offline; fails at start otherwise).

Every score is multiplied by the salience multiplier of the reflection (archived
x0.3, promoted x1.5 by default) before the final ordering; MMR (optional) then picks
the k results trading relevance for diversity. Deprecated reflections are never
returned. Several stores can be searched at once (an agent's own, plus others'
read-only).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.memory.lifelong.encoders import CrossEncoderReranker, Encoder
from reflexion_bench.memory.lifelong.store import ReflectionStore

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "hybrid", "hybrid_rerank")
FUSIONS = ("rrf", "weighted")
_EMBED_CHUNK = 1024


@dataclass
class Salience:
    """Score multipliers by salience state."""

    archived: float = 0.3
    promoted: float = 1.5

    def multiplier(self, archived: bool, promoted: bool) -> float:
        if promoted:
            return self.promoted
        if archived:
            return self.archived
        return 1.0


@dataclass
class RetrievalConfig:
    """Args:
    mode: One of ``MODES``.
    k: Reflections returned per query.
    candidates: Candidates taken from each ranker before fusion / rerank / MMR.
    fusion: ``rrf`` or ``weighted`` (hybrid modes).
    rrf_k: The RRF constant (score = sum of 1/(rrf_k + rank)).
    weight_dense: Weight of the dense score in ``weighted`` fusion (BM25 gets the rest).
    mmr_lambda: Relevance weight of MMR in [0, 1]; None disables MMR.
    min_score: Drop results scoring below this (after salience), 0 keeps all > 0.
    min_similarity: Modes with dense scores: drop reflections whose cosine similarity
        to the query is below this (None: no gate).
    exclude_same_task: Never return reflections written for the query's own task.
    rerank_model: Cross-encoder for ``hybrid_rerank`` (local folder or package:NAME).
    """

    mode: str = "hybrid"
    k: int = 3
    candidates: int = 50
    fusion: str = "rrf"
    rrf_k: int = 60
    weight_dense: float = 0.5
    mmr_lambda: float | None = None
    min_score: float = 0.0
    min_similarity: float | None = None
    exclude_same_task: bool = True
    rerank_model: str | None = None
    salience: Salience = field(default_factory=Salience)

    def __post_init__(self) -> None:
        if isinstance(self.salience, dict):
            self.salience = Salience(**self.salience)
        if self.mode not in MODES:
            raise ConfigError("memory.retrieval.mode", self.mode, MODES)
        if self.fusion not in FUSIONS:
            raise ConfigError("memory.retrieval.fusion", self.fusion, FUSIONS)
        if self.k < 1:
            raise ConfigError("memory.retrieval.k", self.k, "an integer >= 1")
        if self.mmr_lambda is not None and not 0.0 <= self.mmr_lambda <= 1.0:
            raise ConfigError("memory.retrieval.mmr_lambda", self.mmr_lambda, "null or 0..1")

    @property
    def needs_encoder(self) -> bool:
        return self.mode != "bm25"


@dataclass
class Hit:
    """One retrieved reflection."""

    id: str
    score: float
    text: str
    task_id: str
    task_type: str
    outcome: str
    agent: str
    store: str
    failure_signature: str
    parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": round(self.score, 5),
            "agent": self.agent,
            "task_id": self.task_id,
            "outcome": self.outcome,
            "parts": {k: round(v, 5) for k, v in self.parts.items()},
        }


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    out = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    return [list(t) for t in out]


class Retriever:
    """Searches one or more stores.

    Args:
        stores: The agent's own store first, then stores shared read-only.
        config: Retrieval settings.
        encoder: Needed for every mode but ``bm25`` (and used by MMR when present).
        reranker: Needed for ``hybrid_rerank``.
    """

    def __init__(
        self,
        stores: Sequence[ReflectionStore],
        config: RetrievalConfig | None = None,
        encoder: Encoder | None = None,
        reranker: CrossEncoderReranker | None = None,
    ) -> None:
        self.stores = list(stores)
        self.config = config or RetrievalConfig()
        self.encoder = encoder
        self.reranker = reranker
        if self.config.needs_encoder and encoder is None:
            raise ConfigError(
                "memory.encoder", None, f"an encoder for retrieval mode `{self.config.mode}`"
            )
        if self.config.mode == "hybrid_rerank" and reranker is None:
            # Build it now so a missing cross-encoder is reported at start.
            self.reranker = CrossEncoderReranker(self.config.rerank_model)
        if encoder is not None:
            _limit_blas_threads()
        self._generations: list[int] = []
        self._loaded = False
        self.last_refresh_s = 0.0
        self.last_embedded = 0

    # ------------------------------------------------------------------ corpus
    def refresh(self, force: bool = False) -> bool:
        """Reload the corpus if any store changed since the last load; return whether it did."""
        gens = [s.generation() for s in self.stores]
        if self._loaded and not force and gens == self._generations:
            return False
        started = time.perf_counter()
        rows: list[dict[str, Any]] = []
        owners: list[int] = []
        for i, store in enumerate(self.stores):
            for row in store.index_rows():
                rows.append(row)
                owners.append(i)
        bodies = [json.loads(r["body"]) for r in rows]
        self.ids = [r["id"] for r in rows]
        self.owner = np.asarray(owners, dtype=np.int32)
        self.task_ids = np.asarray([r["task_id"] for r in rows], dtype=object)
        self.meta = rows
        self.texts = [f"{b['text']}\n{b.get('task_excerpt', '')}".strip() for b in bodies]
        self.display = [b["text"] for b in bodies]
        sal = self.config.salience
        self.salience = np.asarray(
            [sal.multiplier(bool(r["archived"]), bool(r["promoted"])) for r in rows],
            dtype=np.float32,
        )
        self.usable = np.asarray([not r["deprecated"] for r in rows], dtype=bool)
        by_task: dict[str, list[int]] = {}
        for i, t in enumerate(self.task_ids):
            by_task.setdefault(str(t), []).append(i)
        self._by_task = {t: np.asarray(v, dtype=np.int64) for t, v in by_task.items()}
        self._bm25: Any = None
        if rows:
            import bm25s

            self._bm25 = bm25s.BM25()
            self._bm25.index(tokenize(self.texts), show_progress=False)
        self.emb = self._embeddings(rows) if self.encoder is not None else None
        self._generations = gens
        self._loaded = True
        self.last_refresh_s = time.perf_counter() - started
        return True

    def _embeddings(self, rows: list[dict[str, Any]]) -> np.ndarray:
        """Stored vectors from each store's cache; embed (in batches) and cache the rest."""
        assert self.encoder is not None
        model = self.encoder.name
        found: dict[str, np.ndarray] = {}
        for i, store in enumerate(self.stores):
            hashes = [r["text_hash"] for r, o in zip(rows, self.owner, strict=True) if o == i]
            found.update(store.cached_embeddings(model, hashes))
        # One row per distinct text to embed; the owner store of its first row caches it.
        missing: dict[str, int] = {}
        for j, r in enumerate(rows):
            if r["text_hash"] not in found:
                missing.setdefault(r["text_hash"], j)
        self.last_embedded = len(missing)
        todo = list(missing.items())
        # Chunks are cached as they are done, so an interrupted load resumes.
        for start in range(0, len(todo), _EMBED_CHUNK):
            chunk = todo[start : start + _EMBED_CHUNK]
            vecs = self.encoder.encode([self.texts[j] for _, j in chunk])
            new: dict[int, dict[str, np.ndarray]] = {}
            for (h, j), v in zip(chunk, vecs, strict=True):
                found[h] = v
                new.setdefault(int(self.owner[j]), {})[h] = v
            for i, vectors in new.items():
                self.stores[i].cache_embeddings(model, vectors)
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([found[r["text_hash"]] for r in rows]).astype(np.float32)

    def __len__(self) -> int:
        return len(self.ids) if self._loaded else 0

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        k: int | None = None,
        exclude_task_id: str | None = None,
        mode: str | None = None,
    ) -> list[Hit]:
        """The top-k reflections for ``query`` (refreshes the corpus first if stale)."""
        self.refresh()
        cfg = self.config
        mode = mode or cfg.mode
        k = k or cfg.k
        n = len(self.ids)
        if n == 0:
            return []
        mask = self.usable.copy()
        if cfg.exclude_same_task and exclude_task_id is not None:
            same = self._by_task.get(exclude_task_id)
            if same is not None:
                mask[same] = False
        if not mask.any():
            return []
        parts: dict[str, np.ndarray] = {}
        qvec: np.ndarray | None = None
        if mode in ("bm25", "hybrid", "hybrid_rerank"):
            parts["bm25"] = np.asarray(self._bm25.get_scores(tokenize([query])[0]), np.float32)
        if mode in ("dense", "hybrid", "hybrid_rerank"):
            if self.encoder is None or self.emb is None:
                raise ConfigError("memory.encoder", None, f"an encoder for mode `{mode}`")
            qvec = self.encoder.encode([query])[0]
            cosine = self.emb @ qvec
            if cfg.min_similarity is not None:
                # An absolute relevance gate: rank fusion alone would hand the top k of
                # a small store to any task, however unrelated.
                mask &= cosine >= cfg.min_similarity
                if not mask.any():
                    return []
            # Cosine in [-1, 1] -> [0, 1], so that salience multipliers keep their meaning.
            parts["dense"] = (cosine + 1.0) / 2.0
        c = min(cfg.candidates, int(mask.sum()))
        if mode == "bm25":
            base = parts["bm25"]
        elif mode == "dense":
            base = parts["dense"]
        else:
            base = self._fuse(parts["bm25"], parts["dense"], mask, c)
        score = np.where(mask, base * self.salience, -np.inf)
        if mode == "bm25":
            # BM25 scores 0 for documents sharing no term: not a match at all.
            score = np.where(parts["bm25"] > 0, score, -np.inf)
        cand = _top(score, c)
        cand = cand[np.isfinite(score[cand])]
        cand_scores = score[cand]
        if mode == "hybrid_rerank" and self.reranker is not None and len(cand):
            rel = self.reranker.score(query, [self.texts[i] for i in cand])
            parts["rerank"] = np.zeros(n, np.float32)
            parts["rerank"][cand] = rel
            cand_scores = rel * self.salience[cand]
            order = np.argsort(-cand_scores, kind="stable")
            cand, cand_scores = cand[order], cand_scores[order]
        if cfg.min_score > 0:
            keep = cand_scores >= cfg.min_score
            cand, cand_scores = cand[keep], cand_scores[keep]
        if cfg.mmr_lambda is not None and len(cand) > k:
            picked = self._mmr(cand, cand_scores, k, cfg.mmr_lambda)
        else:
            picked = list(range(min(k, len(cand))))
        hits = []
        for p in picked:
            i = int(cand[p])
            row = self.meta[i]
            hits.append(
                Hit(
                    id=self.ids[i],
                    score=float(cand_scores[p]),
                    text=self.display[i],
                    task_id=str(row["task_id"]),
                    task_type=str(row["task_type"]),
                    outcome=str(row["outcome"]),
                    agent=str(row["source_agent"]),
                    store=str(self.stores[int(self.owner[i])].root),
                    failure_signature=str(row["failure_signature"]),
                    parts={name: float(v[i]) for name, v in parts.items()}
                    | {"salience": float(self.salience[i])},
                )
            )
        return hits

    def _fuse(self, bm25: np.ndarray, dense: np.ndarray, mask: np.ndarray, c: int) -> np.ndarray:
        cfg = self.config
        out = np.zeros_like(dense)
        if cfg.fusion == "rrf":
            for scores in (np.where(bm25 > 0, bm25, -np.inf), dense):
                s = np.where(mask, scores, -np.inf)
                top = _top(s, c)
                top = top[np.isfinite(s[top])]
                out[top] += 1.0 / (cfg.rrf_k + 1.0 + np.arange(len(top)))
            # Scale so that rank 1 in both lists scores 1.0 (readable in the log).
            return out * (cfg.rrf_k + 1.0) / 2.0
        w = cfg.weight_dense
        return (1 - w) * _minmax(bm25, mask) + w * _minmax(dense, mask)

    def _mmr(self, cand: np.ndarray, scores: np.ndarray, k: int, lam: float) -> list[int]:
        rel = scores / (scores.max() if scores.max() > 0 else 1.0)
        if self.emb is not None:
            vecs = self.emb[cand]
            sim = vecs @ vecs.T
        else:
            sets = [set(t) for t in tokenize([self.texts[i] for i in cand])]
            sim = np.asarray(
                [[len(a & b) / max(1, len(a | b)) for b in sets] for a in sets], np.float32
            )
        picked = [0]
        rest = list(range(1, len(cand)))
        while rest and len(picked) < k:
            best = max(
                rest, key=lambda j: lam * rel[j] - (1 - lam) * max(sim[j, p] for p in picked)
            )
            picked.append(best)
            rest.remove(best)
        return picked


def _limit_blas_threads() -> None:
    """One BLAS thread for the similarity products: beside torch on a 2-core machine,
    OpenBLAS's second thread made a 4,200 x 384 product ~4-20x slower (measured here)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only a speed matter
        return
    threadpool_limits(1, user_api="blas")


def _top(scores: np.ndarray, c: int) -> np.ndarray:
    """Indices of the c largest scores, best first (ties by index, for determinism)."""
    if c <= 0:
        return np.zeros(0, dtype=np.int64)
    if c >= len(scores):
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, c - 1)[:c]
    return part[np.lexsort((part, -scores[part]))]


def _minmax(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    if not mask.any():
        return np.zeros_like(v)
    lo, hi = float(v[mask].min()), float(v[mask].max())
    if hi <= lo:
        return np.zeros_like(v)
    return np.asarray((v - lo) / (hi - lo), dtype=np.float32)
