"""The demo-data build script: embeddings, cl100k counts, deterministic output."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

from adagres.embed import models as embed
from adagres.pools.io import load_pool

SCRIPT = Path(__file__).parents[1] / "scripts" / "build_demo_data.py"


def _script():
    spec = importlib.util.spec_from_file_location("build_demo_data", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_writes_embedded_counted_pools_deterministically(tmp_path, monkeypatch):
    monkeypatch.setattr(
        embed,
        "_encode",
        lambda name, texts: np.array(
            [[len(t) / 3, 1.0, 0.123456789] for t in texts], dtype=np.float32
        ),
    )
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    pool = {
        "query": "hello world",
        "answers": ["x"],
        "theme": "demo",
        "chunks": [
            {"id": "a", "text": "hello world", "gold": True},
            {"id": "b", "text": "tiktoken is great!"},
        ],
    }
    (src / "tiny.json").write_text(json.dumps(pool), encoding="utf-8")
    main = _script().main
    assert main(["--src", str(src), "--out", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    first = (out / "tiny.json").read_bytes()
    built = load_pool(out / "tiny.json")
    assert built.token_counts is not None and built.raw_query_embedding is not None
    assert built.token_counts.tolist() == [2, 6] and built.tokenizer == "cl100k"
    assert built.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert built.raw_query_embedding.tolist() == [3.666667, 1.0, 0.123457]
    assert built.extra == {"theme": "demo"} and built.gold_ids == ("a",)
    assert main(["--src", str(src), "--out", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    assert (out / "tiny.json").read_bytes() == first


def test_build_refuses_an_empty_source_folder(tmp_path):
    assert _script().main(["--src", str(tmp_path), "--out", str(tmp_path)]) == 1
