"""Pools from tables: CSV with and without a query column, and Parquet."""

from __future__ import annotations

import pytest

from adagres.errors import PoolError
from adagres.pools.io import load_pool, load_pools

# --------------------------------------------------------------------------- tables


def test_csv_table_with_query_column_makes_pools(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text(
        "query,id,text,score,tokens,gold,author\n"
        'q1,a,"Text, with a comma\nand a newline",0.9,7,true,Ann\n'
        "q1,b,second,0.5,3,false,\n"
        "q2,c,other query,0.1,2,0,Bob\n",
        encoding="utf-8",
    )
    pools = load_pools(path)
    assert [p.query for p in pools] == ["q1", "q2"]
    first = load_pool(path, query="q1")
    assert first.texts == ("Text, with a comma\nand a newline", "second")
    assert first.token_counts is not None and first.token_counts.tolist() == [7, 3]
    assert first.gold_ids == ("a",)
    assert first.chunks[0].metadata == {"author": "Ann"} and first.chunks[1].metadata is None


def test_csv_without_query_column_takes_query_argument(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("text\nalpha\nbeta\n", encoding="utf-8")
    pool = load_pool(path, query="letters")
    assert pool.ids == ("row1", "row2")
    with pytest.raises(PoolError, match=r"t.csv: no query column \(query, question\); give"):
        load_pool(path)


def test_csv_bad_token_count_names_row_chunk_and_field(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,text,tokens\na,alpha,3\nb,beta,2.5\n", encoding="utf-8")
    with pytest.raises(PoolError) as caught:
        load_pool(path, query="q")
    assert str(caught.value) == (
        "t.csv, row 2, chunk 'b', field 'tokens': token count '2.5' is not an integer"
    )


def test_parquet_table_with_list_embeddings(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "query": ["q", "q"],
            "id": ["a", "b"],
            "text": ["one", "two"],
            "embedding": [[1.0, 0.0], [0.5, 0.5]],
            "tokens": [1, 1],
            "extra_col": [1, None],
        }
    )
    pq.write_table(table, tmp_path / "p.parquet")
    data = (tmp_path / "p.parquet").read_bytes()
    with pytest.raises(PoolError, match=r"no query_embedding and no embedding_model"):
        load_pool(data, name="p.parquet")
    pq.write_table(table.drop(["embedding"]), tmp_path / "p.parquet")
    pool = load_pool(tmp_path / "p.parquet")
    assert pool.texts == ("one", "two") and pool.chunks[0].metadata == {"extra_col": 1}


def test_bad_parquet_bytes(tmp_path):
    with pytest.raises(PoolError, match=r"p.parquet: not a readable parquet file"):
        load_pool(b"PAR1 nonsense", name="p.parquet")
