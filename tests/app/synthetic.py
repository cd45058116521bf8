"""Synthetic pools for the app's tests and benchmark: topics, near-duplicates, varied lengths.

Written as canonical pool JSON (embeddings and token counts included), so the app loads them
like bundled pools, with no model and no tokenizer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

INJECTION = "<script>alert(1)</script> **bold**"


def synthetic_pool(n: int, *, seed: int = 0, dim: int = 32, injection: bool = False) -> dict:
    """A canonical pool dict of ``n`` chunks around 6 topics; the query leans to topic 0.

    Every fifth chunk is a near-copy of the chunk before it (cosine ≈ 0.99). Chunks are in
    descending relevance order, as a retriever would return them.
    """
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(6, dim))
    query = topics[0] + 0.3 * rng.normal(size=dim)
    vectors: list[np.ndarray] = []
    for i in range(n):
        if i % 5 == 4:
            vectors.append(vectors[-1] + 0.05 * rng.normal(size=dim))
        else:
            topic = 0 if rng.random() < 0.4 else int(rng.integers(1, 6))
            vectors.append(topics[topic] + 0.8 * rng.normal(size=dim))
    matrix = np.array(vectors)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    relevance = unit @ (query / np.linalg.norm(query))
    order = np.argsort(-relevance, kind="stable")
    chunks = []
    for rank, i in enumerate(order):
        text = f"Chunk {rank} about topic words " + " ".join(f"w{j}" for j in range(int(i) % 7))
        if injection and rank == 0:
            text = INJECTION
        chunks.append(
            {
                "id": f"c{rank:04d}",
                "text": text,
                "title": f"Title {rank}",
                "tokens": int(30 + (int(i) * 37) % 170),
                "embedding": [round(float(x), 6) for x in matrix[i]],
            }
        )
    return {
        "query": "a synthetic question",
        "query_embedding": [round(float(x), 6) for x in query],
        "chunks": chunks,
    }


def write_pools(folder: Path) -> Path:
    """Write ``tiny`` (10 chunks, with a script-injection text), ``medium`` (200) and
    ``large`` (2000) into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, n, injection in (("tiny", 10, True), ("medium", 200, False), ("large", 2000, False)):
        pool = synthetic_pool(n, seed=n, injection=injection)
        (folder / f"{name}.json").write_text(json.dumps(pool), encoding="utf-8")
    return folder
