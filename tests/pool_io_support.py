"""The pool the pool-loader tests start from, and two helpers that write it and read the error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adagres.errors import PoolError
from adagres.pools.io import load_pool


def canonical(**extra) -> dict:
    """A small canonical pool with every optional field and some unknown keys."""
    pool = {
        "query": "Which city is the capital of France?",
        "query_embedding": [1.0, 0.0, 0.0],
        "embedding_model": "toy-model",
        "answers": ["Paris"],
        "run": {"retriever": "bm25", "k": 3},
        "chunks": [
            {
                "id": "c1",
                "text": "Paris is the capital of France.\n",
                "embedding": [3.0, 4.0, 0.0],
                "tokens": 8,
                "score": 0.91,
                "title": "Paris",
                "source": "wiki/Paris",
                "gold": True,
                "metadata": {"page": 1, "tags": ["city"]},
                "lang": "en",
            },
            {
                "id": "c2",
                "text": "Lyon — a city in France, naïve café ☕.",
                "embedding": [0.1, 0.2, 0.3],
                "tokens": 12,
                "score": 0.5,
                "metadata": {},
            },
            {
                "id": "c3",
                "text": "  leading and trailing spaces  ",
                "embedding": [0.0, 0.0, 1e-3],
                "tokens": 0,
                "gold": False,
            },
        ],
    }
    pool.update(extra)
    return pool


def write(tmp_path: Path, obj, name: str = "pool.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def load_error(tmp_path: Path, obj, name: str = "pool.json", **kwargs) -> str:
    path = write(tmp_path, obj, name)
    with pytest.raises(PoolError) as caught:
        load_pool(path, **kwargs)
    return str(caught.value)
