"""The limits of :mod:`adagres.pools.load_limits` as a whole: a pool at each limit loads within
the documented memory bound, one past it is refused before the expensive step; the scan,
the batching of tokenizers and embedders, and the save→load round trip of odd values."""

from __future__ import annotations

import io
import json
import re
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from adagres.embed.models import embed_texts
from adagres.embed.tokens import BATCH_CHARS, MAX_CHARS, count_tokens
from adagres.errors import InputError, PoolError
from adagres.pools.io import load_pool, load_pools, pool_from_dict, save_pool
from adagres.pools.load_limits import Limits, scan_json


def error_of(data: bytes, name: str, **options) -> str:
    with pytest.raises(PoolError) as caught:
        load_pool(data, name=name, **options)
    return str(caught.value)


def round_trips(pool, tmp_path) -> bool:
    return load_pool(save_pool(pool, tmp_path / "copy.json")) == pool


def test_scan_ignores_brackets_inside_strings_and_counts_values():
    text = json.dumps({"t": "[[[[" * 50, "q": '\\"]]', "list": [1, [2, {"x": None}]]})
    shape = scan_json(text, max_depth=10)
    assert (
        shape.depth == 4
        and shape.values == len(re.findall(r'"t"|"q"|"list"|"x"|\d|null', text)) + 6
    )
    assert json.loads(text)  # the text is valid JSON, and the scan measured it exactly


def test_embedding_batches_are_bounded_in_characters(fake_encoder, tmp_path):
    texts = [f"{i} " + "w" * (BATCH_CHARS // 3) for i in range(7)] + ["tiny"] * 100
    embed_texts(texts, cache_dir=tmp_path)
    assert sum(map(len, fake_encoder.calls)) == len(set(texts))
    for batch in fake_encoder.calls:
        assert len(batch) <= 64 and (len(batch) == 1 or sum(map(len, batch)) <= BATCH_CHARS)


def test_file_chunk_limit_stops_a_csv_while_it_is_read():
    data = b"text,query\n" + b"".join(b"x,q%d\n" % i for i in range(1001))
    message = error_of(data, "t.csv", limits=Limits(max_file_chunks=1000))
    assert message.startswith("t.csv: the file holds 1,001 chunks or more, over the limit of 1,000")
    assert len(load_pools(data, name="t.csv", limits=Limits(max_file_chunks=1001))) == 1001


def test_limits_must_be_positive_whole_numbers():
    with pytest.raises(InputError, match=r"Limits.max_depth: must be a whole number >= 1"):
        Limits(max_depth=0)
    with pytest.raises(InputError, match=r"Limits.max_values"):
        Limits(max_values=True)


def test_token_counts_are_the_same_whatever_the_batching():
    texts = ["alpha beta, gamma!"] * 3 + ["word " * (BATCH_CHARS // 5 - 1), "x y", "ünïcode ☕"]
    counts = count_tokens(texts, "words").tolist()
    assert counts == [len(re.findall(r"\w+|[^\w\s]", text)) for text in texts]
    assert count_tokens(texts, "cl100k").tolist() == [
        count_tokens([text], "cl100k")[0] for text in texts
    ]


def test_token_counting_refuses_what_tokenizers_cannot_take():
    with pytest.raises(InputError, match=r"texts\[0\]: has 1,000,000 characters"):
        count_tokens(["w" * MAX_CHARS], "words")
    with pytest.raises(InputError, match=r"texts\[1\]: expected a string, got bytes"):
        count_tokens(["ok", b"bytes"], "words")  # type: ignore[list-item]
    with pytest.raises(InputError, match=r"texts: expected a list of texts, got one string"):
        count_tokens("abc", "words")


def test_jsonl_lines_end_at_newlines_only():
    line = json.dumps(
        {"query": "q", "chunks": [{"id": "a", "text": "x\u2028y\x85z"}]}, ensure_ascii=False
    )
    (pool,) = load_pools((line + "\n").encode(), name="r.jsonl")
    assert pool.texts == ("x\u2028y\x85z",)


def test_pools_from_code_that_load_also_save_and_load_back(tmp_path):
    pool = pool_from_dict(
        {
            "query": "q",
            "tags": {"nested": [1, "two", None, {"deep": [True]}]},
            "chunks": [{"id": "a", "text": "x", "metadata": {"n": 2**300}, "z": [[], {}]}],
        }
    )
    assert round_trips(pool, tmp_path)
    with pytest.raises(PoolError, match=r"field 'metadata.n': an integer of 16,610 bits"):
        pool_from_dict(
            {"query": "q", "chunks": [{"id": "a", "text": "x", "metadata": {"n": 10**5000}}]}
        )


# --------------------------------------------------------------------------- memory at the limits

#: The bound docs/POOL_FORMAT.md states: peak memory while loading is at most
#: 4 × the decoded bytes + 80 bytes per value + 1.7 KB per chunk + 16 MB.
SMALL = Limits(
    max_bytes=3_000_000,
    max_decoded_bytes=3_000_000,
    max_values=200_000,
    max_depth=100,
    max_field_chars=100_000,
    max_text_chars=10_000,
    max_chunks=5_000,
    max_file_chunks=5_000,
)


def bound(decoded: int, values: int, chunks: int) -> float:
    return 4 * decoded + 80 * values + 1700 * chunks + 16_000_000


def parquet_of(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def at_each_limit() -> dict[str, tuple[bytes, str, int]]:
    """A file at each limit of SMALL (bytes, name, values it holds), built to be costly."""
    head = '{"query": "q", "chunks": [{"id": "a", "text": "x", "m": ['
    lists = (head + ",".join(["[]"] * (SMALL.max_values - 12)) + "]}]}").encode()
    floats = (head + ",".join(["0.125"] * (SMALL.max_values - 12)) + "]}]}").encode()
    chunk = {"id": "c", "text": "t" * SMALL.max_text_chars, "m": "s" * SMALL.max_field_chars}
    count = SMALL.max_bytes // 110_100
    strings = json.dumps({"query": "q", "chunks": [{**chunk, "id": f"c{i}"} for i in range(count)]})
    nested = "[" * (SMALL.max_depth - 4) + "]" * (SMALL.max_depth - 4)
    deep = f'{{"query": "q", "chunks": [{{"id": "a", "text": "x", "m": {{"k": {nested}}}}}]}}'
    rows = SMALL.max_file_chunks
    csv_text = "text,query,a,b\n" + "".join(f"x,q{i // 1000},{i},y\n" for i in range(rows))
    jsonl = "".join(
        json.dumps({"query": f"q{i}", "chunks": [{"id": "a", "text": "x"}]}) + "\n"
        for i in range(rows)
    )
    table = pa.table({"text": ["t" * 500] * rows, "query": [f"q{i // 1000}" for i in range(rows)]})
    return {
        "values (empty lists)": (lists, "lists.json", SMALL.max_values),
        "values (numbers)": (floats, "floats.json", SMALL.max_values),
        "bytes, text and field length": (strings.encode(), "strings.json", 5 * count + 3),
        "depth": (deep.encode(), "deep.json", 200),
        "file chunks (csv)": (csv_text.encode(), "rows.csv", 4 * rows + 4),
        "file chunks (jsonl)": (jsonl.encode(), "pools.jsonl", 9 * rows),
        "decoded bytes (parquet)": (parquet_of(table), "rows.parquet", 2 * rows),
    }


@pytest.mark.slow
@pytest.mark.parametrize("case", list(at_each_limit()))
def test_a_pool_at_each_limit_loads_within_the_memory_bound(case):
    data, name, values = at_each_limit()[case]
    decoded = len(data) if not name.endswith(".parquet") else SMALL.max_decoded_bytes
    tracemalloc.start()
    try:
        pools = load_pools(data, name=name, limits=SMALL)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    chunks = sum(len(pool) for pool in pools)
    assert len(data) <= SMALL.max_bytes and chunks <= SMALL.max_file_chunks
    assert peak <= bound(decoded, values, chunks), f"{case}: {peak:,} bytes"


def past(limit: str) -> tuple[bytes, str]:
    """A small file just over one limit of SMALL."""
    if limit == "max_values":
        return b"[" + b"1," * SMALL.max_values + b"1]", "p.json"
    if limit == "max_depth":
        return b"[" * 101 + b"]" * 101, "p.json"
    if limit == "max_field_chars":
        return b"text,query\nx,q" + b"q" * SMALL.max_field_chars + b"\n", "p.csv"
    if limit == "max_text_chars":
        text = "t" * (SMALL.max_text_chars + 1)
        return json.dumps({"query": "q", "chunks": [{"id": "a", "text": text}]}).encode(), "p.json"
    if limit == "max_file_chunks":
        return b"text,query\n" + b"x,q\n" * (SMALL.max_file_chunks + 1), "p.csv"
    if limit == "max_decoded_bytes":
        table = pa.table({"text": ["t" * (SMALL.max_decoded_bytes + 1)], "query": ["q"]})
        return parquet_of(table), "p.parquet"
    raise AssertionError(limit)


@pytest.mark.parametrize(
    "limit",
    [
        "max_values",
        "max_depth",
        "max_field_chars",
        "max_text_chars",
        "max_file_chunks",
        "max_decoded_bytes",
    ],
)
def test_one_past_each_limit_is_refused_naming_it(limit):
    data, name = past(limit)
    with pytest.raises(PoolError) as caught:
        load_pool(data, name=name, limits=SMALL, query="q")
    message = str(caught.value)
    assert message.startswith(name) and "\n" not in message
    assert f"limits=Limits({limit}=...)" in message
