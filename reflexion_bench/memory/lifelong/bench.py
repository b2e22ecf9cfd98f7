"""Retrieval latency benchmark: p50/p95 per mode at a given store size.

Builds (or reuses) a store of ``n`` synthetic reflections, embeds them once in
batches (cached in the store's index, as in real use), then times ``queries``
retrievals per mode end to end (query embedding included) and checks precision@k
on the synthetic labelled set. The baseline printed beside each p95 is the 100 ms
per-task budget of the issue (``p95_vs_budget`` < 1 means it fits), and the time of
embedding the query alone, measured in the same run (``p50_vs_encode_only``: how much
the index adds on top of the one step every query must pay).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from reflexion_bench.memory.lifelong.encoders import Encoder
from reflexion_bench.memory.lifelong.metrics import precision_at_k
from reflexion_bench.memory.lifelong.retrieval import RetrievalConfig, Retriever
from reflexion_bench.memory.lifelong.store import ReflectionStore
from reflexion_bench.memory.lifelong.synthetic import labelled_queries, synthetic_reflections

BUDGET_MS = 100.0


def _has(store: ReflectionStore, ref_id: str) -> bool:
    try:
        store.path_of(ref_id)
    except KeyError:
        return False
    return True


def _ids_of(retriever: Retriever) -> Callable[[str], list[str]]:
    def search(query: str) -> list[str]:
        return [h.id for h in retriever.search(query)]

    return search


def bench_memory(
    n: int,
    queries: int = 200,
    modes: tuple[str, ...] = ("bm25", "dense", "hybrid"),
    encoder: Encoder | None = None,
    store_dir: Path | None = None,
    k: int = 5,
    seed: int = 0,
) -> dict[str, Any]:
    """Run the benchmark; returns the JSON-friendly result.

    Args:
        n: Stored reflections.
        queries: Timed queries per mode.
        modes: Retrieval modes to time (``hybrid_rerank`` needs a cross-encoder).
        encoder: Needed for every mode but bm25.
        store_dir: Keep/reuse the store here (a store of the same size is reused,
            embeddings included); default: a temporary folder removed afterwards.
        k: Results per query (and the precision cut-off).
        seed: Seed of the synthetic data.
    """
    tmp = None
    if store_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
        store_dir = tmp
    result: dict[str, Any] = {"n": n, "queries": queries, "k": k, "budget_ms": BUDGET_MS}
    # Latency on a shared 2-core machine depends on what else runs: say so.
    result["load_avg_at_start"] = [round(x, 2) for x in os.getloadavg()]
    try:
        refs, topic_of = synthetic_reflections(n, seed=seed)
        labelled = labelled_queries(topic_of, n_queries=queries, seed=seed + 1)
        store = ReflectionStore(store_dir, agent="bench")
        t0 = time.perf_counter()
        reusable = len(store) == n and _has(store, refs[0].id) and _has(store, refs[-1].id)
        if not reusable:
            if len(store):
                raise ValueError(
                    f"{store_dir} holds another store ({len(store)} reflections); "
                    "give --store an empty or matching folder"
                )
            for i in range(0, n, 5000):
                store.add_many(refs[i : i + 5000])
            result["build_store_s"] = round(time.perf_counter() - t0, 2)
        else:
            result["build_store_s"] = 0.0
            result["store_reused"] = True
        result["store_files"] = len(store)
        result["distinct_texts"] = len({r.index_text() for r in refs})
        modes_out: dict[str, Any] = {}
        if encoder is not None:
            # Baseline measured in the same run: embedding the query alone, the part of
            # dense/hybrid latency no index can remove (and a gauge of machine load).
            encoder.encode([labelled[0]["query"]])
            enc_times = []
            for item in labelled:
                t3 = time.perf_counter()
                encoder.encode([item["query"]])
                enc_times.append((time.perf_counter() - t3) * 1000)
            result["query_encode_only"] = {
                "p50_ms": round(float(np.percentile(enc_times, 50)), 2),
                "p95_ms": round(float(np.percentile(enc_times, 95)), 2),
            }
        for mode in modes:
            cfg = RetrievalConfig(mode=mode, k=k, exclude_same_task=False)
            retriever = Retriever([store], cfg, encoder if mode != "bm25" else None)
            t1 = time.perf_counter()
            retriever.refresh()
            load_s = time.perf_counter() - t1
            entry: dict[str, Any] = {"load_s": round(load_s, 2)}
            if retriever.last_embedded:
                entry["embedded"] = retriever.last_embedded
                entry["embed_rate_per_s"] = round(retriever.last_embedded / max(load_s, 1e-9), 1)
            retriever.search(labelled[0]["query"])  # warm-up (lazy imports, caches)
            times = []
            for item in labelled:
                t2 = time.perf_counter()
                retriever.search(item["query"])
                times.append((time.perf_counter() - t2) * 1000)
            p95 = float(np.percentile(times, 95))
            entry.update(
                p50_ms=round(float(np.percentile(times, 50)), 2),
                p95_ms=round(p95, 2),
                mean_ms=round(float(np.mean(times)), 2),
                p95_vs_budget=round(p95 / BUDGET_MS, 3),
                fits_budget=p95 <= BUDGET_MS,
                precision_at_k=precision_at_k(_ids_of(retriever), labelled, k)["precision"],
            )
            if mode != "bm25" and "query_encode_only" in result:
                base = result["query_encode_only"]["p50_ms"]
                entry["p50_vs_encode_only"] = round(entry["p50_ms"] / base, 2) if base else None
            modes_out[mode] = entry
        result["modes"] = modes_out
        result["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
        store.close()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return result
