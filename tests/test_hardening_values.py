"""Nothing the user gave is lost or altered without a message: repeated JSON keys, table
columns that collide, framework fields, Parquet dictionaries bounded before they decode,
missing document paths, output a terminal or a pipe can trust, and saves that load back."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import adagres
from adagres.corpora.documents import read_documents
from adagres.errors import PoolError, one_line
from adagres.pools.formats import jsonfile, parquet
from adagres.pools.load_limits import Limits

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- repeated keys


@pytest.mark.parametrize("parser", ["fast", "standard"])
@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"query": "q", "chunks": [{"id": "a", "text": "x", "text": "y"}]}', "line 1, column 27"),
        (
            '{"query": "q",\n "chunks": [{"id": "a", "text": "x",\n'
            ' "metadata": {"k": 1, "k": 2}}]}',
            "line 3, column 14",
        ),
    ],
)
def test_a_repeated_key_is_refused_by_both_parsers(text, where, parser, monkeypatch):
    if parser == "standard":  # texts past this size go to the standard library's parser
        monkeypatch.setattr(jsonfile, "FAST_PARSE_MAX_BYTES", 0)
    key = "text" if '"text": "y"' in text else "k"
    expected = f'pool.json, {where}: the object has the key "{key}" twice'
    with pytest.raises(PoolError, match=f"^{expected}"):
        adagres.load_pool(text.encode(), name="pool.json")


def test_a_repeated_key_in_a_csv_cell_is_refused():
    table = 'query,text,metadata\nq,hello,"{""a"": 1, ""a"": 2}"\n'
    with pytest.raises(PoolError, match=r"^t\.csv, row 1, chunk 'row1', field 'metadata': not"):
        adagres.load_pool(table.encode(), name="t.csv")


# --------------------------------------------------------------------------- tables


def test_id_and_chunk_id_are_both_kept():
    pool = adagres.load_pool(b"query,id,chunk_id,text\nq,a,X1,hello\nq,b,X2,world\n", name="t.csv")
    assert pool.ids == ("a", "b")
    assert [c.metadata for c in pool.chunks] == [{"chunk_id": "X1"}, {"chunk_id": "X2"}]
    alone = adagres.load_pool(b"query,chunk_id,text\nq,X1,hello\n", name="t.csv")
    assert alone.ids == ("X1",) and alone.chunks[0].metadata is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'query,text,metadata,extra\nq,hello,"""s""",1\n',
            "field 'metadata': must be an object (the other columns join it), got a string",
        ),
        (
            'query,text,metadata,lang\nq,hello,"{""lang"": ""fr""}",en\n',
            "field 'metadata': key 'lang' is also a column; rename one of them",
        ),
    ],
)
def test_metadata_cells_that_would_lose_a_value_are_refused(table, message):
    with pytest.raises(PoolError) as refused:
        adagres.load_pool(table.encode(), name="t.csv")
    assert str(refused.value).startswith(f"t.csv, row 1, chunk 'row1', {message}")


def test_a_table_with_embeddings_loads_with_its_query_embedding(tmp_path):
    csv = (
        "query,id,text,embedding,query_embedding,embedding_model,answers\n"
        'q,a,hello,"[1, 0]","[1, 0.5]",m,"[""hello""]"\n'
        'q,b,world,"[0, 1]",,,\n'
    )
    pool = adagres.load_pool(csv.encode(), name="t.csv")
    assert pool.raw_query_embedding is not None and pool.raw_embeddings is not None
    assert pool.raw_query_embedding.tolist() == [1.0, 0.5] and pool.embedding_model == "m"
    assert pool.answers == ("hello",) and pool.raw_embeddings.tolist() == [[1, 0], [0, 1]]
    table = pa.table(
        {
            "query": ["q", "q"],
            "id": ["a", "b"],
            "text": ["hello", "world"],
            "embedding": [[1.0, 0.0], [0.0, 1.0]],
            "query_embedding": [[1.0, 0.5], [1.0, 0.5]],
        }
    )
    pq.write_table(table, tmp_path / "t.parquet")
    from_parquet = adagres.load_pool(tmp_path / "t.parquet")
    assert from_parquet.raw_query_embedding is not None
    assert from_parquet.raw_query_embedding.tolist() == [1.0, 0.5]
    assert from_parquet.raw_embeddings is not None
    assert np.array_equal(from_parquet.raw_embeddings, pool.raw_embeddings)
    differ = csv.replace('"[0, 1]",,,', '"[0, 1]","[1, 0.6]",,')
    with pytest.raises(PoolError) as refused:
        adagres.load_pool(differ.encode(), name="t.csv")
    assert str(refused.value).startswith(
        "t.csv, row 2, field 'query_embedding': differs from row 1 of the same query"
    )


# --------------------------------------------------------------------------- framework dumps


def round_trip(pool, tmp_path):
    again = adagres.load_pool(adagres.save_pool(pool, tmp_path / "saved.json"))
    assert again == pool and [c.extra for c in again.chunks] == [c.extra for c in pool.chunks]


def test_llamaindex_relationships_and_offsets_are_kept(tmp_path):
    related = {"node_id": "d1", "node_type": "4", "metadata": {}, "hash": "h"}
    node = {
        "id_": "n1",
        "text": "hello",
        "class_name": "TextNode",
        "start_char_idx": 3,
        "end_char_idx": 8,
        "relationships": {"1": related},
        "metadata": {"file": "a"},
        "embedding": None,
    }
    dump = {"query": "q", "source_nodes": [{"node": node, "score": 0.5}]}
    pool = adagres.load_pool(json.dumps(dump).encode(), name="d.json")
    (chunk,) = pool.chunks
    assert chunk.extra == {"start_char_idx": 3, "end_char_idx": 8, "relationships": {"1": related}}
    assert (chunk.id, chunk.score, chunk.metadata) == ("n1", 0.5, {"file": "a"})
    round_trip(pool, tmp_path)


def test_haystack_sparse_embedding_is_kept(tmp_path):
    sparse = {"indices": [1, 5], "values": [0.5, 0.25]}
    doc = {"id": "h1", "content": "hello", "meta": {"x": 1}, "sparse_embedding": sparse}
    pool = adagres.load_pool(json.dumps({"query": "q", "documents": [doc]}).encode(), name="d.json")
    assert pool.chunks[0].extra == {"sparse_embedding": sparse}
    round_trip(pool, tmp_path)


def test_a_langchain_numeric_title_stays_in_the_metadata():
    doc = {"page_content": "hello", "metadata": {"title": 5, "source": "s"}}
    pool = adagres.load_pool(json.dumps([doc]).encode(), name="d.json", query="q")
    (chunk,) = pool.chunks
    assert (chunk.title, chunk.source, chunk.metadata) == (None, "s", {"title": 5, "source": "s"})


# --------------------------------------------------------------------------- Parquet


def dictionary_table(rows: int, width: int) -> pa.Table:
    indices = pa.array([0] * rows, pa.int32())
    return pa.table(
        {
            "query": pa.DictionaryArray.from_arrays(indices, pa.array(["q"])),
            "text": pa.DictionaryArray.from_arrays(indices, pa.array(["x" * width])),
        }
    )


def test_a_dictionary_bomb_is_refused_before_it_decodes(monkeypatch):
    buffer = io.BytesIO()
    pq.write_table(dictionary_table(1000, 3000), buffer, compression="zstd")
    data = buffer.getvalue()
    assert len(data) < 20_000  # 3 MB of text once decoded
    monkeypatch.setattr(parquet, "_json_column", lambda *a: pytest.fail("decoded"))
    with pytest.raises(PoolError) as refused:
        adagres.load_pools(data, name="bomb.parquet", limits=Limits(max_decoded_bytes=2_000_000))
    assert str(refused.value).startswith(
        "bomb.parquet: the data decodes to 3,017,000 bytes or more (the file has fewer), over "
        "the limit of 2,000,000"
    )


def test_decoded_bytes_counts_dictionaries_as_decoded():
    rng = np.random.default_rng(5)
    words = pa.array(["", "a", "bb", "c" * 300, None])
    indices = pa.array(rng.integers(0, 5, 400).astype(np.int32))
    array = pa.DictionaryArray.from_arrays(indices, words)
    expected = sum(len(word or "") for word in array.to_pylist()) + 8 * len(array)
    assert parquet.decoded_bytes(pa, array) == expected
    nested = pa.ListArray.from_arrays(pa.array([0, 150, 400], pa.int32()), array)
    assert parquet.decoded_bytes(pa, nested) == expected + 8 * 2


# --------------------------------------------------------------------------- documents


def test_a_missing_document_path_is_refused_not_chunked(tmp_path):
    with pytest.raises(PoolError, match=r"^documents: 'notes\.md' names a file \(no such file"):
        read_documents("notes.md")
    with pytest.raises(PoolError, match=r"^documents: '.*gone\.txt' names a file"):
        read_documents(["a text", str(tmp_path / "gone.txt")])
    (tmp_path / "here.md").write_text("the text", encoding="utf-8")
    assert read_documents([str(tmp_path / "here.md")]) == {"here.md": "the text"}
    assert read_documents({"doc": "see notes.md"}) == {"doc": "see notes.md"}


@pytest.mark.parametrize(
    "given", ["~nosuchuser-7f3a/notes.md", ["a text", "~nosuchuser-7f3a/x.txt"]]
)
def test_a_home_folder_of_an_unknown_user_is_one_line_naming_the_user(given):
    with pytest.raises(PoolError) as error:
        read_documents(given)
    assert "names a file in the home folder of '~nosuchuser-7f3a'" in str(error.value)
    assert "\n" not in str(error.value)


# --------------------------------------------------------------------------- output


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200f", "\u061c", "\ufeff", "\U000e0001"])
def test_bidirectional_and_format_characters_are_escaped(char):
    escaped = one_line(f"report{char}txt.exe")
    assert char not in escaped and escaped.startswith("report\\") and escaped.endswith("txt.exe")
    assert one_line(escaped) == escaped


def cli(*args: str, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adagres", *args],
        cwd=ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_closed_pipe_ends_the_cli_quietly(json_flag):
    """The reader is gone before the first byte is written: no traceback, status 141."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = cli(
            "select", "data/distinct_topics.json", "--budget", "500", *json_flag, stdout=write
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_validate_escapes_the_file_name(tmp_path):
    path = tmp_path / "b\x1b[31m\u202ex.json"
    path.write_text('{"query": "q", "chunks": [{"id": "a", "text": "x"}]}')
    done = cli("validate", str(path), stdout=subprocess.PIPE)
    assert done.returncode == 0
    assert "b\\x1b[31m\\u202ex.json: 1 chunks" in done.stdout
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout


def test_a_long_file_name_is_one_line(tmp_path):
    name = "a" * 300 + ".json"
    done = cli("validate", name, stdout=subprocess.PIPE)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    pool = adagres.load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}', name="p.json")
    with pytest.raises(PoolError, match=r"cannot write the file \(File name too long\)"):
        adagres.save_pool(pool, tmp_path / name)


# --------------------------------------------------------------------------- depth


def nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize("depth", [97, 98, 99, 100])
def test_a_document_at_the_depth_limit_loads_and_saves_back_or_is_refused(depth, tmp_path):
    """A document per JSONL line sits two levels higher than its chunk in a saved pool: what
    loads must save within the same limit, so what would not is refused on load."""
    line = json.dumps({"page_content": "x", "metadata": nested(depth - 1)})
    try:
        pool = adagres.load_pool(line.encode(), name="docs.jsonl", query="q")
    except PoolError as error:
        assert depth >= 99 and str(error).startswith("docs.jsonl, line 1, chunk 'c0', field 'm")
        assert "levels deep in the pool file, over the limit of 100" in str(error)
        return
    assert depth <= 98
    round_trip(pool, tmp_path)
