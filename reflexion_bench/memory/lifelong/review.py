"""The review of a reflection store: most retrieved, near-duplicates, never retrieved."""

from __future__ import annotations

from typing import Any

import numpy as np

from reflexion_bench.memory.lifelong.encoders import Encoder
from reflexion_bench.memory.lifelong.retrieval import tokenize
from reflexion_bench.memory.lifelong.store import ReflectionStore


def review_store(
    store: ReflectionStore,
    top: int = 10,
    dup_threshold: float = 0.9,
    encoder: Encoder | None = None,
    max_pairs: int = 50,
) -> dict[str, Any]:
    """What a person should look at in a store.

    Args:
        store: The store (read-only is fine).
        top: How many most-retrieved reflections to list.
        dup_threshold: Similarity at or above which two reflections are near-duplicates
            (cosine of embeddings with an encoder, else Jaccard of word sets).
        encoder: Embeds the reflections (cached vectors are reused).
        max_pairs: Near-duplicate pairs listed at most.
    """
    refs = [r for r in store.all() if r.deprecated is None]
    most = sorted(refs, key=lambda r: (-r.retrieval_count, r.id))[:top]
    never = [r for r in refs if r.retrieval_count == 0]
    pairs: list[dict[str, Any]] = []
    if len(refs) > 1:
        texts = [r.text for r in refs]
        if encoder is not None:
            # Near-duplicates are about the lesson itself: embed the texts alone
            # (the cached vectors also cover the task excerpt).
            emb = encoder.encode(texts)
            method = f"cosine ({encoder.name})"
            sets: list[set[str]] = []
        else:
            emb = np.zeros((0, 0), dtype=np.float32)
            sets = [set(t) for t in tokenize(texts)]
            method = "jaccard of word sets"

        def sims_of(i: int) -> np.ndarray:
            if encoder is not None:
                return np.asarray(emb[i + 1 :] @ emb[i])
            a = sets[i]
            return np.asarray([len(a & b) / max(1, len(a | b)) for b in sets[i + 1 :]])

        for i in range(len(refs) - 1):
            sims = sims_of(i)
            for j in np.nonzero(sims >= dup_threshold)[0]:
                other = refs[i + 1 + int(j)]
                pairs.append(
                    {"a": refs[i].id, "b": other.id, "similarity": round(float(sims[j]), 4)}
                )
        pairs.sort(key=lambda p: -p["similarity"])
    else:
        method = "n/a"
    return {
        "store": str(store.root),
        "size": len(store),
        "active": store.count(active_only=True),
        "deprecated": len(store) - len(refs),
        "most_retrieved": [
            {
                "id": r.id,
                "retrieval_count": r.retrieval_count,
                "outcome": r.outcome,
                "task_id": r.task_id,
                "text": _short(r.text),
            }
            for r in most
            if r.retrieval_count > 0
        ],
        "never_retrieved": {
            "count": len(never),
            "oldest": [
                {"id": r.id, "created": r.created.isoformat(), "task_id": r.task_id}
                for r in sorted(never, key=lambda r: r.created)[:top]
            ],
        },
        "near_duplicates": {
            "method": method,
            "threshold": dup_threshold,
            "pairs": pairs[:max_pairs],
            "count": len(pairs),
        },
    }


def _short(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def format_review(rev: dict[str, Any]) -> str:
    lines = [
        f"store {rev['store']}: {rev['size']} reflections, {rev['active']} active, "
        f"{rev['deprecated']} deprecated",
        "",
        "most retrieved:",
    ]
    lines += [
        f"  {r['retrieval_count']:>4}x {r['id']} [{r['outcome']}] {r['text']}"
        for r in rev["most_retrieved"]
    ] or ["  (none retrieved yet)"]
    nd = rev["near_duplicates"]
    lines += ["", f"near-duplicates ({nd['method']} >= {nd['threshold']}): {nd['count']}"]
    lines += [f"  {p['similarity']:.3f} {p['a']} ~ {p['b']}" for p in nd["pairs"]]
    nr = rev["never_retrieved"]
    lines += ["", f"never retrieved: {nr['count']} (oldest first)"]
    lines += [f"  {r['id']} created {r['created']} for {r['task_id']}" for r in nr["oldest"]]
    return "\n".join(lines)
