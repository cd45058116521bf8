"""Regressions of the loader hardening: every input the fuzzing probe found mishandled is
kept here, with the error (or the value) it must now give."""

from __future__ import annotations

import csv
import datetime
import decimal
import io
import json
import pickle
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from adagres.core.validate import MAX_TOKENS
from adagres.embed.models import embed_texts
from adagres.embed.tokens import count_tokens
from adagres.errors import InputError, PoolError, one_line
from adagres.pools.formats import jsonfile, parquet
from adagres.pools.io import load_pool, save_pool
from adagres.pools.load_limits import Limits, scan_json
from adagres.pools.pool import Chunk, Pool
from adagres.pools.ready import ensure_embeddings

LIMIT_HINT = re.compile(
    r"\(raise it with limits=Limits\((\w+)=\.\.\.\) or the CLI's --limit \1=\.\.\.\)$"
)


def hint(message: str) -> str:
    """The limit a refusal's message says to raise."""
    found = LIMIT_HINT.search(message)
    assert found is not None, message
    return found.group(1)


def pool_json(**chunk_fields) -> bytes:
    chunk = {"id": "a", "text": "x", **chunk_fields}
    return json.dumps({"query": "q", "chunks": [chunk]}, allow_nan=True).encode()


def error_of(data: bytes, name: str, **options) -> str:
    with pytest.raises(PoolError) as caught:
        load_pool(data, name=name, **options)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message
    return message


def parquet_bytes(table: pa.Table, **options) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **options)
    return buffer.getvalue()


def round_trips(pool: Pool, tmp_path) -> bool:
    return load_pool(save_pool(pool, tmp_path / "copy.json")) == pool


# --------------------------------------------------------------------------- one line


def test_one_line_escapes_control_characters_separators_and_surrogates():
    assert one_line("a\nb\r\tc\x1b[0m\x00") == "a\\nb\\r\\tc\\x1b[0m\\x00"
    assert one_line("x\u2028y\u2029z\x85") == "x\\u2028y\\u2029z\\x85"
    assert one_line("id-\ud800-\udfff") == "id-\\ud800-\\udfff"
    assert one_line("café ☕ \\n") == "café ☕ \\n"  # printable text and backslashes kept
    for text in ("a\nb", "\ud800\x7f", "plain"):
        assert one_line(one_line(text)) == one_line(text)  # idempotent
    assert one_line("abcdef", max_chars=4) == "abc…" and one_line("abc", max_chars=4) == "abc"
    one_line("\ud800\n" * 3).encode("utf-8")  # printable and encodable


def test_every_adagres_error_message_is_one_line_and_pickles():
    error = PoolError("pool.json: chunk 'a\nb': bad\x1b")
    assert str(error) == "pool.json: chunk 'a\\nb': bad\\x1b"
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


def test_ids_with_newlines_are_escaped_and_long_ids_cut_in_messages():
    message = error_of(pool_json(id="line1\nline2", tokens=-1), "p.json")
    assert "chunk 'line1\\nline2', field 'tokens'" in message
    long_id = "x" * 5000
    message = error_of(pool_json(id=long_id, tokens=-1), "p.json")
    assert len(message) < 300 and "…" in message


def test_pyarrow_multi_line_errors_become_one_line():
    data = parquet_bytes(pa.table({"text": ["a"], "query": ["q"]}))
    corrupt = data[:200] + b"\n\x00garbage\n" * 4 + data[260:]
    message = error_of(corrupt, "p.parquet")
    assert message.startswith("p.parquet: not a readable parquet file (")


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [990, 5000])
def test_deep_json_is_refused_before_parsing(depth, monkeypatch):
    nested = "[" * depth + "]" * depth
    data = f'{{"query": "q", "chunks": [{{"id": "a", "text": "x", "m": {nested}}}]}}'.encode()
    monkeypatch.setattr(jsonfile, "parse_json", lambda text: pytest.fail("parsed"))
    message = error_of(data, "p.json")
    assert message.startswith("p.json, line 1: JSON nested more than 100 levels deep")
    assert hint(message) == "max_depth"


def test_deep_json_names_the_line_in_jsonl_and_the_cell_in_csv():
    good = json.dumps({"query": "q", "chunks": [{"id": "a", "text": "x"}]})
    deep = '{"query": "q", "chunks": [{"id": "a", "text": "x", "m": %s}]}' % ("[" * 999 + "]" * 999)
    assert error_of(f"{good}\n{good}\n{deep}\n".encode(), "r.jsonl").startswith(
        "r.jsonl, line 3: JSON nested more than 100"
    )
    cell = '"{""a"": ' + "[" * 2000 + "]" * 2000 + '}"'
    message = error_of(f"text,query,metadata\nx,q,{cell}\n".encode(), "t.csv")
    assert message.startswith("t.csv, row 1, chunk 'row1', field 'metadata': JSON nested more")


def test_depth_at_the_limit_loads_and_the_limit_can_be_raised():
    def with_depth(levels):  # the pool object, chunks and a chunk take 3 levels
        inner = "[" * (levels - 4) + "]" * (levels - 4)
        return (
            b'{"query": "q", "chunks": [{"id": "a", "text": "x", "m": {"k": %s}}]}' % inner.encode()
        )

    assert scan_json(with_depth(100), 1000).depth == 100
    assert load_pool(with_depth(100), name="p.json").chunks[0].extra["m"]
    assert "nested more than 100" in error_of(with_depth(101), "p.json")
    assert load_pool(with_depth(150), name="p.json", limits=Limits(max_depth=150))
    # raised past Python's recursion limit: still a PoolError, never a RecursionError
    message = error_of(with_depth(20_000), "p.json", limits=Limits(max_depth=50_000))
    assert "recursion" in message


def test_a_document_list_at_the_depth_limit_is_refused_naming_the_field(tmp_path):
    # [doc{metadata{...}}] is one level shallower than the canonical pool it becomes, so
    # the loader refuses it rather than load a pool whose saved file it would refuse.
    inner = json.loads("[" * 97 + "]" * 97)
    data = json.dumps([{"page_content": "x", "metadata": {"k": inner}}]).encode()
    assert scan_json(data, 1000).depth == 100
    message = error_of(data, "docs.json", query="q")
    assert "chunk 'c0', field 'metadata.k" in message and "101 levels deep" in message


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("count", [2**63, 2**64 + 5, 10**40, MAX_TOKENS + 1])
def test_huge_token_counts_are_refused_in_json_csv_and_parquet(count):
    expected = "field 'tokens': token count"
    assert expected in error_of(pool_json(tokens=count), "p.json")
    assert expected in error_of(f"text,query,tokens\nx,q,{count}\n".encode(), "p.csv")
    if count < 2**64:
        table = pa.table({"text": ["x"], "query": ["q"], "tokens": pa.array([count], pa.uint64())})
        message = error_of(parquet_bytes(table), "p.parquet")
        assert expected in message and f"limit of {MAX_TOKENS:,}" in message


def test_the_largest_token_count_loads():
    counts = load_pool(pool_json(tokens=MAX_TOKENS), name="p.json").token_counts
    assert counts is not None and counts[0] == MAX_TOKENS


def test_overflowing_number_in_an_unknown_key_is_refused_naming_chunk_and_field(tmp_path):
    data = b'{"query": "q", "chunks": [{"id": "a", "text": "x", "u": 1e400}]}'
    message = error_of(data, "p.json")
    assert message.startswith("p.json, line 1, chunk 'a', field 'u': inf is not a finite number")
    data = b'{"query": "q", "extra": {"n": -1e999}, "chunks": [{"id": "a", "text": "x"}]}'
    assert "field 'extra.n'" in error_of(data, "p.json")


def test_nan_from_json_dumps_names_chunk_and_field():
    data = json.dumps(
        {
            "query": "q",
            "query_embedding": [1.0, 0.0],
            "chunks": [
                {"id": "a", "text": "x", "embedding": [1.0, 0.0]},
                {"id": "b", "text": "y", "embedding": [float("nan"), 1.0]},
            ],
        }
    ).encode()
    assert "NaN" in data.decode()
    message = error_of(data, "p.json")
    assert message.startswith("p.json, line 1, chunk 'b', field 'embedding': value 0 is nan")
    message = error_of(pool_json(score=float("-inf")), "p.json")
    assert "chunk 'a', field 'score': score -inf is not finite" in message
    assert "field 'meta.x'" in error_of(pool_json(meta={"x": float("nan")}), "p.json")


def test_a_pool_built_in_code_with_a_non_finite_value_does_not_save(tmp_path):
    pool = Pool("q", (Chunk("a", "x", metadata={"scores": [1.0, float("inf")]}),))
    with pytest.raises(PoolError, match=r"chunk 'a', field 'metadata.scores\[1\]': inf is not"):
        save_pool(pool, tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()
    pool = Pool("q", (Chunk("a", "x", extra={"span": (1, 2), "n": np.float32(1)}),))
    with pytest.raises(PoolError, match=r"field 'span': a value of type tuple is not a JSON"):
        save_pool(pool, tmp_path / "p.json")


# --------------------------------------------------------------------------- surrogates


@pytest.mark.parametrize(
    ("where", "field"),
    [
        ({"text": "x\ud800"}, "field 'text'"),
        ({"id": "a\udfff"}, "field 'id'"),
        ({"title": "\ud83d"}, "field 'title'"),
        ({"metadata": {"k": ["ok", "\udc00"]}}, "field 'metadata.k[1]'"),
        ({"metadata": {"k\ud800": 1}}, "field 'metadata'"),
        ({"note": "\ud800"}, "field 'note'"),
    ],
)
def test_lone_surrogates_are_refused_at_load_naming_chunk_and_field(where, field):
    message = error_of(pool_json(**where), "p.json")
    assert field in message and "lone surrogate" in message
    assert "chunk '" in message or "chunks[0]" in message


def test_lone_surrogates_in_query_answers_csv_and_code_built_pools():
    query = json.dumps({"query": "q\ud800", "chunks": [{"id": "a", "text": "x"}]}).encode()
    assert "field 'query': holds a lone surrogate" in error_of(query, "p.json")
    answers = json.dumps(
        {"query": "q", "answers": ["\udead"], "chunks": [{"id": "a", "text": "x"}]}
    )
    assert "field 'answers[0]'" in error_of(answers.encode(), "p.json")
    with pytest.raises(PoolError, match=r"chunk 'a': text: holds a lone surrogate at character 1"):
        Pool("q", (Chunk("a", "x\ud800"),))
    with pytest.raises(PoolError, match=r"query: holds a lone surrogate"):
        Pool("\ud800", (Chunk("a", "x"),))


def test_consumers_refuse_surrogates_with_an_input_error(fake_encoder):
    with pytest.raises(InputError, match=r"texts\[1\]: holds a lone surrogate"):
        count_tokens(["fine", "bad\ud800"], "minilm")
    with pytest.raises(InputError, match=r"texts\[0\]: holds a lone surrogate"):
        embed_texts(["\ud800"])
    pool = load_pool(pool_json(text="héllo wörld ☕"), name="p.json")
    assert len(pool.fingerprint) == 64  # a pool that loads hashes, counts and embeds
    assert count_tokens(pool.texts, "words").tolist() == [3]
    embedded = ensure_embeddings(pool).embeddings
    assert embedded is not None and embedded.shape == (1, 64)


# --------------------------------------------------------------------------- embedding cache


def test_a_wrong_dimension_cache_entry_is_a_miss_and_is_overwritten(fake_encoder, tmp_path):
    first = embed_texts(["a cat", "a dog"], cache_dir=tmp_path)
    entry = next(p for p in tmp_path.rglob("*.npy") if np.load(p).tolist() == first[0].tolist())
    np.save(entry, np.ones(3, np.float32))  # another model's vector, or a corrupt write
    fake_encoder.calls.clear()
    again = embed_texts(["a cat", "a dog", "a bird"], cache_dir=tmp_path)
    np.testing.assert_array_equal(again[:2], first)
    assert sorted(fake_encoder.calls[0]) == ["a bird"] and fake_encoder.calls[1] == ["a cat"]
    assert np.load(entry).shape == (64,)  # overwritten with the model's vector


def test_every_cached_but_inconsistent_entries_are_repaired(fake_encoder, tmp_path):
    first = embed_texts(["one", "two"], cache_dir=tmp_path)
    entries = sorted(tmp_path.rglob("*.npy"))
    np.save(entries[0], np.ones(5, np.float32))
    fake_encoder.calls.clear()
    np.testing.assert_array_equal(embed_texts(["one", "two"], cache_dir=tmp_path), first)
    assert len(fake_encoder.calls) == 2  # one text to learn the dimension, then the bad one


@pytest.mark.parametrize(
    "bad",
    [
        np.full(64, np.nan, np.float32),
        np.zeros(64, np.float32),
        np.ones(64, np.float64),
        np.ones((8, 8), np.float32),
        np.array([], np.float32),
    ],
)
def test_unusable_cache_entries_are_misses(bad, fake_encoder, tmp_path):
    first = embed_texts(["one"], cache_dir=tmp_path)
    (entry,) = tmp_path.rglob("*.npy")
    np.save(entry, bad)
    np.testing.assert_array_equal(embed_texts(["one"], cache_dir=tmp_path), first)
    entry.write_bytes(b"\x93NUMPY garbage")
    np.testing.assert_array_equal(embed_texts(["one"], cache_dir=tmp_path), first)


# --------------------------------------------------------------------------- parquet


def test_parquet_dates_times_decimals_durations_become_json_values(tmp_path):
    table = pa.table(
        {
            "text": ["x", "y"],
            "query": ["q", "q"],
            "day": pa.array([3_000_000, 0], pa.date32()),  # past year 9999
            "stamp": pa.array([2**62, 0], pa.timestamp("ns")),
            "when": pa.array([datetime.time(1, 2, 3), None]),
            "price": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-0.01")]),
            "wait": pa.array([2**62, 1], pa.duration("s")),
            "half": pa.array([1.5, 2.5], pa.float16()),
            "cat": pa.array(["a", "b"]).dictionary_encode(),
            "tags": pa.array([[datetime.date(2020, 1, 2)], []]),
        }
    )
    pool = load_pool(parquet_bytes(table), name="p.parquet")
    assert pool.chunks[0].metadata == {
        "day": "10183-09-21",
        "stamp": "2116-02-20 23:53:38.427387904",
        "when": "01:02:03.000000",
        "price": "1.50",
        "wait": 2**62,
        "half": 1.5,
        "cat": "a",
        "tags": ["2020-01-02"],
    }
    assert round_trips(pool, tmp_path)


@pytest.mark.parametrize(
    ("column", "advice"),
    [
        (pa.array([b"\x00\xff", b"a"]), "decode it to text or drop the column"),
        (pa.array([[("a", 1)], []], pa.map_(pa.string(), pa.int64())), "store it as a struct"),
    ],
)
def test_parquet_binary_and_map_columns_are_refused_naming_the_column(column, advice):
    table = pa.table({"text": ["x", "y"], "query": ["q", "q"], "blob": column})
    message = error_of(parquet_bytes(table), "p.parquet")
    assert message.startswith("p.parquet, column 'blob': values of type") and advice in message


def test_parquet_text_that_is_not_utf8_names_the_column():
    data = parquet_bytes(pa.table({"text": ["x", "y"], "query": ["q", "q"], "id": ["ZZZZab", "b"]}))
    message = error_of(data.replace(b"ZZZZ", b"\xff\xfe\xfa\xfb"), "p.parquet")
    assert (
        message.startswith("p.parquet, column 'id': cannot read its values") and "UTF8" in message
    )


def test_parquet_is_read_on_one_thread(monkeypatch):
    seen = []
    original = pq.ParquetFile.iter_batches

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("use_threads"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: pytest.fail("threaded reader"))
    load_pool(parquet_bytes(pa.table({"text": ["x"], "query": ["q"]})), name="p.parquet")
    assert seen == [False]


def test_a_parquet_bomb_is_refused_from_its_metadata_before_decompressing(monkeypatch):
    table = pa.table({"text": ["a" * 50_000_000, "b"], "query": ["q", "q"]})
    data = parquet_bytes(table, compression="zstd")
    assert len(data) < 10_000  # a tiny file that decodes to 50 MB
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", lambda *a, **k: pytest.fail("read"))
    message = error_of(data, "p.parquet", limits=Limits(max_decoded_bytes=10_000_000))
    assert message.startswith("p.parquet: the data decodes to 50,0")
    assert hint(message) == "max_decoded_bytes"


def test_parquet_data_over_the_decoded_limit_is_stopped_while_reading(monkeypatch):
    table = pa.table(
        {"text": [f"row {i} " + "a" * 1000 for i in range(5000)], "query": ["q"] * 5000}
    )
    data = parquet_bytes(table, row_group_size=5000)
    monkeypatch.setattr(parquet, "_check_declared", lambda *args: None)  # metadata that lies
    message = error_of(data, "p.parquet", limits=Limits(max_decoded_bytes=2_000_000))
    assert "decodes to" in message and "or more" in message


# --------------------------------------------------------------------------- other limits


def test_values_limit_refuses_a_file_of_empty_lists_before_parsing(monkeypatch):
    data = (
        b'{"query": "q", "chunks": [{"id": "a", "text": "x", "m": [' + b"[]," * 50_000 + b"[]]}]}"
    )
    monkeypatch.setattr(jsonfile, "parse_json", lambda text: pytest.fail("parsed"))
    message = error_of(data, "p.json", limits=Limits(max_values=50_000))
    assert message.startswith(
        "p.json: the file holds 50,013 values or more, over the limit of 50,000"
    )
    assert hint(message) == "max_values"


def test_a_long_csv_field_stops_the_reader_and_the_tokenizer_never_sees_it(monkeypatch):
    from adagres.embed import tokens

    monkeypatch.setattr(tokens, "_minilm", lambda: pytest.fail("tokenized"))
    before = csv.field_size_limit()
    data = b"text,query\n" + b"w" * 2_000_001 + b",q\n"
    message = error_of(data, "big.csv")
    assert message.startswith("big.csv, line 2: a field is longer than the limit of 1,000,000")
    assert hint(message) == "max_field_chars"
    assert csv.field_size_limit() == before  # the process-wide setting is put back


def test_a_long_text_is_refused_at_load():
    message = error_of(pool_json(text="w" * 100_001), "p.json")
    assert "chunk 'a', field 'text': has 100,001 characters, over the limit of 100,000" in message
    assert load_pool(pool_json(text="w" * 100_000), name="p.json")
