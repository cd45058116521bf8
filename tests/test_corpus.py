"""Corpus mode: token-window chunking with overlap, and top-N retrieval by cosine."""

from __future__ import annotations

import numpy as np
import pytest

from adagres.corpora.documents import chunk_documents, pool_from_documents, read_documents
from adagres.embed import models as embed
from adagres.errors import InputError, PoolError
from adagres.pools.io import load_pool, save_pool

TEXT = "one two three four five six seven"


def test_windows_step_by_size_minus_overlap_and_keep_offsets():
    chunks = chunk_documents({"d": TEXT}, size=3, overlap=1, tokenizer="words")
    assert [c.text for c in chunks] == ["one two three", "three four five", "five six seven"]
    assert [c.id for c in chunks] == ["d#0", "d#1", "d#2"]
    assert [c.tokens for c in chunks] == [3, 3, 3]
    metas = [c.metadata for c in chunks]
    for chunk in chunks:
        meta = chunk.metadata
        assert meta is not None
        assert TEXT[meta["start"] : meta["end"]] == chunk.text and meta["doc_id"] == "d"
    assert [(m["token_start"], m["token_end"]) for m in metas if m is not None] == [
        (0, 3),
        (2, 5),
        (4, 7),
    ]


def test_no_overlap_and_a_short_last_window():
    chunks = chunk_documents(["a b c d e"], size=2, overlap=0, tokenizer="words")
    assert [c.text for c in chunks] == ["a b", "c d", "e"]
    assert (chunks[0].metadata or {}).get("doc_id") == "doc0"


def test_bpe_windows_concatenate_back_to_the_document_without_overlap():
    text = "Caf\u00e9 society, na\u00efve readers and \u65e5\u672c\u8a9e text. " * 5
    chunks = chunk_documents({"d": text}, size=7, overlap=0, tokenizer="cl100k")
    assert "".join(c.text for c in chunks) == text
    # A recount can differ by a merge at the edge.
    assert all(c.tokens is not None and c.tokens <= 8 for c in chunks)


def test_overlap_repeats_tokens_across_neighbours():
    chunks = chunk_documents({"d": TEXT}, size=4, overlap=2, tokenizer="words")
    assert chunks[0].text.split()[-2:] == chunks[1].text.split()[:2]


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (0, 0, "chunk size must be a positive number of tokens, got 0"),
        (5, 5, "overlap must be at least 0 and below the chunk size 5, got 5"),
        (5, -1, "overlap must be at least 0 and below the chunk size 5, got -1"),
    ],
)
def test_bad_chunking_parameters(size, overlap, message):
    with pytest.raises(InputError, match=message):
        chunk_documents({"d": TEXT}, size=size, overlap=overlap, tokenizer="words")


def test_documents_without_text_are_an_error():
    with pytest.raises(PoolError, match="the documents hold no text to chunk"):
        chunk_documents({"d": "   \n "}, size=3, overlap=0)


def test_read_documents_from_files_folder_and_table(tmp_path):
    (tmp_path / "a.md").write_text("# A\nalpha text", encoding="utf-8")
    (tmp_path / "b.txt").write_text("beta text", encoding="utf-8")
    (tmp_path / "skip.bin").write_bytes(b"\x00")
    assert read_documents(tmp_path) == {"a.md": "# A\nalpha text", "b.txt": "beta text"}
    assert read_documents([tmp_path / "b.txt", "inline"]) == {
        "b.txt": "beta text",
        "doc1": "inline",
    }
    (tmp_path / "docs.csv").write_text("id,text\nx,first\ny,second\n", encoding="utf-8")
    assert read_documents(tmp_path / "docs.csv") == {"x": "first", "y": "second"}
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9")
    with pytest.raises(PoolError, match=r"bad\.txt: bytes are not UTF-8"):
        read_documents([tmp_path / "bad.txt"])


@pytest.fixture
def axis_model(monkeypatch):
    """A fake model: texts mentioning 'cat' point along x, others along y."""

    def encode(name, texts):
        return np.array([[1.0, 0.1] if "cat" in t else [0.1, 1.0] for t in texts], np.float32)

    monkeypatch.setattr(embed, "_encode", encode)


def test_pool_from_documents_ranks_by_cosine_and_round_trips(tmp_path, axis_model):
    docs = {"pets": "the cat sleeps. dogs bark loudly. a cat purrs.", "other": "taxes are due."}
    pool = pool_from_documents(
        docs, "cat", size=3, overlap=0, top_n=3, tokenizer="words", cache_dir=tmp_path
    )
    assert pool.ids == ("pets#0", "pets#3", "pets#1")  # cat chunks first, ties in order
    assert pool.scores is not None and pool.token_counts is not None
    assert pool.scores.tolist() == [1.0, 1.0, pytest.approx(0.198, abs=1e-3)]
    assert pool.tokenizer == "words" and pool.token_counts.tolist() == [3, 3, 3]
    assert pool.extra["corpus"] == {
        "size": 3,
        "overlap": 0,
        "tokenizer": "words",
        "documents": 2,
        "chunks": 6,
    }
    again = load_pool(save_pool(pool, tmp_path / "corpus.json"))
    assert again == pool and (again.chunks[1].metadata or {}).get("doc_id") == "pets"


def test_pool_from_documents_argument_checks():
    with pytest.raises(InputError, match="top_n must be a positive integer, got 0"):
        pool_from_documents({"d": TEXT}, "q", top_n=0)
    with pytest.raises(InputError, match="the query must be a non-empty text"):
        pool_from_documents({"d": TEXT}, " ")


def test_tables_and_pool_files_with_their_own_queries_are_read_as_documents(tmp_path):
    """Every row's text is a document, whether or not the file names a query."""
    from adagres.corpora.documents import read_documents

    with_query = tmp_path / "runs.csv"
    with_query.write_text("query,title,text\nq1,A,alpha text\nq2,B,beta text\n")
    pool_file = tmp_path / "pool.json"
    pool_file.write_text('{"query": "q", "chunks": [{"id": "c", "title": "C", "text": "gamma"}]}')
    assert read_documents(with_query) == {"A": "alpha text", "B": "beta text"}
    assert read_documents(pool_file) == {"C": "gamma"}


def test_no_table_row_is_lost_to_a_repeated_title(tmp_path):
    """Two texts under one title are two documents; the same text retrieved for two
    queries is one."""
    reviews = tmp_path / "reviews.csv"
    reviews.write_text(
        "query,title,text\n"
        "q1,Drug X,works well\n"
        "q1,Drug X,made me dizzy\n"
        "q2,Drug X,works well\n"  # the first row again, for another query
        "q2,Drug X,no effect at all\n"
    )
    assert read_documents(reviews) == {
        "Drug X": "works well",
        "Drug X (2)": "made me dizzy",
        "Drug X (3)": "no effect at all",
    }
    chunks = chunk_documents(reviews, size=50, overlap=0, tokenizer="words")
    assert sorted(c.text for c in chunks) == ["made me dizzy", "no effect at all", "works well"]
