"""Build the bundled demo pools: data/src/<name>.json -> data/<name>.json, ready to open.

Each source pool (canonical format, texts only) gets MiniLM embeddings for its chunks and
its query (rounded to 6 decimals, ``embedding_model`` set) and cl100k token counts, so the
app opens it without loading a model. The chunks are put in the order a dense retriever
with that model returns them (cosine to the query, highest first; ties keep the source
order) and each chunk's ``score`` is that cosine, so the pool's order is a real retriever's
rank order rather than a hand-set one. Deterministic and safe to rerun: the same sources
give byte-identical files.

    .venv/bin/python scripts/build_demo_data.py [--src data/src] [--out data]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import jsonschema
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from adagres.pools.io import SCHEMA_PATH, load_pool, save_pool  # noqa: E402
from adagres.pools.ready import ensure_embeddings, ensure_token_counts  # noqa: E402

DECIMALS = 6


def build(source: Path, out_dir: Path, cache_dir: Path | None = None) -> Path:
    """Embed and count one source pool and write it to ``out_dir/<same name>``."""
    pool = load_pool(source)
    pool = ensure_token_counts(pool, "cl100k", recount=True)
    bare = (
        dataclasses.replace(
            pool, raw_embeddings=None, raw_query_embedding=None, embedding_model=None
        )
        if pool.raw_embeddings is not None
        else pool
    )
    pool = ensure_embeddings(bare, cache_dir=cache_dir)
    pool = _retriever_order(pool)
    target = save_pool(pool, out_dir / source.name, float_decimals=DECIMALS)
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(target.read_text(encoding="utf-8")), schema)
    load_pool(target)  # the written file must load back
    return target


def _retriever_order(pool):
    """Reorder the chunks by cosine to the query, as the retriever would, and record it."""
    scores = pool.embeddings.astype(np.float64) @ pool.query_embedding.astype(np.float64)
    order = sorted(range(len(pool)), key=lambda i: (-round(float(scores[i]), 6), i))
    chunks = tuple(
        dataclasses.replace(pool.chunks[i], score=round(float(scores[i]), 6)) for i in order
    )
    return dataclasses.replace(pool, chunks=chunks, raw_embeddings=pool.raw_embeddings[order])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "data" / "src")
    parser.add_argument("--out", type=Path, default=ROOT / "data")
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    sources = sorted(args.src.glob("*.json"))
    if not sources:
        print(f"no source pools in {args.src}", file=sys.stderr)
        return 1
    for source in sources:
        target = build(source, args.out, args.cache_dir)
        print(f"{source.name} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
