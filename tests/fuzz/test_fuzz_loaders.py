"""Fuzzing the loaders: any bytes in any format, valid pools with one field made hostile,
and the round trip of everything that loads."""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa
import pytest
from fuzzing import (
    OPTIONAL_FIELDS,
    all_finite,
    as_csv,
    as_json,
    as_parquet,
    characters,
    hostile_text,
    hostile_values,
    json_values,
    outcome,
    pool_dicts,
    time_limit,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from adagres.embed.tokens import count_tokens
from adagres.pools import load_limits as limits
from adagres.pools.io import load_pool, load_pools, pool_from_dict, save_pool, save_pools
from adagres.pools.load_limits import Limits, scan_json

pytestmark = time_limit(2.0)
FORMATS = {"json": "p.json", "jsonl": "p.jsonl", "csv": "p.csv", "parquet": "p.parquet"}
# tmp_path is one folder for all examples of a test: each example overwrites its files.
ONE_FOLDER = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def saved_and_loaded(pools, folder):
    """Save pools (one .json, or many as .jsonl) and load the file back."""
    if len(pools) == 1:
        return [load_pool(save_pool(pools[0], folder / "copy.json"))]
    return load_pools(save_pools(pools, folder / "copy.jsonl"))


def check_pool(pool) -> None:
    """What every loaded pool must allow: hash, save-ready dict, counting, finite arrays."""
    assert len(pool.fingerprint) == 64
    assert all_finite(pool.to_dict())
    assert count_tokens(pool.texts, "words").shape == (len(pool),)
    json.dumps(pool.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")


# --------------------------------------------------------------------------- any bytes


INSERTS = [
    b"[" * 2000,
    b"{",
    b'"',
    b"\\",
    b"\xff",
    b"\n",
    b"NaN",
    b"1e400",
    b"\x00",
    b"\xed\xa0\x80",
]


@st.composite
def mutated_files(draw):
    """A valid pool file in some format, then bytes flipped, cut, inserted or repeated."""
    fmt = draw(st.sampled_from(sorted(FORMATS)))
    pool = draw(pool_dicts())
    if fmt == "json":
        data = as_json(pool)
    elif fmt == "jsonl":
        data = b"\n".join(as_json(pool) for _ in range(draw(st.integers(1, 3))))
    elif fmt == "csv":
        data = as_csv(pool)
    else:
        rows = {
            "text": [c["text"] for c in pool["chunks"]],
            "query": [pool["query"]] * len(pool["chunks"]),
        }
        data = as_parquet(pa.table(rows))
    edited = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        at = draw(st.integers(0, max(len(edited) - 1, 0)))
        if action == "flip" and edited:
            edited[at] = draw(st.integers(0, 255))
        elif action == "cut":
            del edited[at : at + draw(st.integers(1, 64))]
        elif action == "insert":
            edited[at:at] = draw(st.sampled_from(INSERTS))
        else:
            edited[at:at] = edited[at : at + 32] * draw(st.integers(2, 50))
    return bytes(edited), FORMATS[fmt]


@given(mutated_files())
def test_any_bytes_load_or_raise_one_line_naming_the_file(case):
    data, name = case
    pools, _ = outcome(lambda: load_pools(data, name=name), name)
    for pool in pools or ():
        check_pool(pool)


@given(st.binary(max_size=400), st.sampled_from(sorted(FORMATS.values())))
def test_random_bytes(data, name):
    pools, _ = outcome(lambda: load_pools(data, name=name), name)
    for pool in pools or ():
        check_pool(pool)


# --------------------------------------------------------------------------- one hostile field

FIELDS = ["id", "text", "tokens", "embedding", *sorted(OPTIONAL_FIELDS)]
# Where a message may point when the field is checked across chunks.
ALSO = {"embedding": ("query_embedding",), "tokens": (), "id": ()}


@given(pool_dicts(), st.data())
def test_one_hostile_field_loads_or_is_named(pool, data):
    index = data.draw(st.integers(0, len(pool["chunks"]) - 1))
    field = data.draw(st.sampled_from(FIELDS))
    value = data.draw(hostile_values)
    chunk = pool["chunks"][index]
    chunk[field] = value
    name = data.draw(st.sampled_from(["p.json", "p.jsonl"]))
    raw = as_json(pool, ascii=data.draw(st.booleans()))
    loaded, message = outcome(lambda: load_pool(raw, name=name), name)
    if loaded is not None:
        check_pool(loaded)
        return
    assert message is not None  # outcome gives a message where it gives no pool
    if re.match(rf"{name}, line 1: bytes are not UTF-8 \(byte 0xed", message):
        return  # a raw surrogate written by surrogatepass: the file is not UTF-8
    named = [field, *ALSO.get(field, ())]
    assert any(f"field '{f}" in message for f in named), message


@given(
    pool_dicts(),
    st.sampled_from(["query", "query_embedding", "answers", "tokenizer", "embedding_model"]),
    hostile_values,
)
def test_one_hostile_pool_field_loads_or_is_named(pool, field, value):
    pool[field] = value
    loaded, message = outcome(lambda: pool_from_dict(pool, name="p"), "p")
    if loaded is not None:
        check_pool(loaded)
    else:
        assert message is not None and (f"field '{field}" in message or "chunk" in message)


@given(st.dictionaries(hostile_text, hostile_values, max_size=4), st.integers(0, 2))
def test_hostile_documents_from_code(metadata, shape):
    """pool_from_dict takes Python objects: tuples, non-string keys, NaN, surrogates."""
    doc = {"page_content": "text", "metadata": metadata}
    obj = (
        [doc] if shape == 0 else {"query": "q", "documents": [doc]} if shape == 1 else [[doc, 0.5]]
    )
    pool, _ = outcome(lambda: pool_from_dict(obj, query="q", name="docs"), "docs")
    if pool is not None:
        check_pool(pool)


# --------------------------------------------------------------------------- round trips


@ONE_FOLDER
@given(pools=st.lists(pool_dicts(), min_size=1, max_size=3))
def test_what_loads_saves_and_loads_back_equal(pools, tmp_path):
    loaded = [pool_from_dict(pool, name="p") for pool in pools]
    again = saved_and_loaded(loaded, tmp_path)
    assert again == loaded
    first = (tmp_path / ("copy.json" if len(pools) == 1 else "copy.jsonl")).read_bytes()
    assert saved_and_loaded(again, tmp_path) == loaded  # and saving is stable
    assert (tmp_path / ("copy.json" if len(pools) == 1 else "copy.jsonl")).read_bytes() == first


@ONE_FOLDER
@given(pool=pool_dicts(), fmt=st.sampled_from(["json", "jsonl", "csv"]))
def test_each_text_format_round_trips_through_json(pool, fmt, tmp_path):
    for chunk in pool["chunks"]:  # CSV has no place for unknown keys or embeddings
        if fmt == "csv":
            for key in ("extra", "embedding", "title", "source", "gold"):
                chunk.pop(key, None)
    if fmt == "csv":
        pool.pop("query_embedding", None)
        pool.pop("answers", None)
        pool.pop("run", None)
    data = as_csv(pool) if fmt == "csv" else as_json(pool)
    loaded, _ = outcome(lambda: load_pool(data, name=f"p.{fmt}"), f"p.{fmt}")
    assume(loaded is not None)  # a CSV cell may read back as another type: not a round trip
    assert saved_and_loaded([loaded], tmp_path) == [loaded]


PARQUET_COLUMNS = {
    "int": (st.integers(-(2**63), 2**63 - 1), pa.int64()),
    "uint": (st.integers(0, 2**64 - 1), pa.uint64()),
    "float": (st.floats(width=32), pa.float32()),
    # Parquet strings are UTF-8, which has no lone surrogates (pyarrow refuses to write one).
    "text": (st.text(st.characters(exclude_categories=["Cs"]), max_size=8), pa.string()),
    "day": (st.integers(-(2**31), 2**31 - 1), pa.date32()),
    "stamp": (st.integers(-(2**63), 2**63 - 1), pa.timestamp("ns")),
    "money": (st.decimals(-(10**6), 10**6, places=3, allow_nan=False), pa.decimal128(12, 3)),
    "wait": (st.integers(-(2**63), 2**63 - 1), pa.duration("ms")),
    "blob": (st.binary(max_size=4), pa.binary()),
    "list": (st.lists(st.floats(), max_size=3), pa.list_(pa.float64())),
    "struct": (st.fixed_dictionaries({"a": st.integers(-5, 5)}), pa.struct([("a", pa.int8())])),
}


@ONE_FOLDER
@given(
    data=st.data(),
    names=st.sets(st.sampled_from(sorted(PARQUET_COLUMNS)), max_size=4),
    rows=st.integers(1, 4),
)
def test_parquet_columns_of_every_type(data, names, rows, tmp_path):
    columns = {"text": pa.array([f"t{i}" for i in range(rows)]), "query": pa.array(["q"] * rows)}
    for name in sorted(names):  # a set's order changes with the hash seed: draw in one order
        values, kind = PARQUET_COLUMNS[name]
        drawn = data.draw(st.lists(st.none() | values, min_size=rows, max_size=rows))
        if name == "text":
            name = "note"
        columns[name] = pa.array(drawn, kind)
    pool, message = outcome(
        lambda: load_pool(as_parquet(pa.table(columns)), name="p.parquet"), "p.parquet"
    )
    if pool is None:
        assert message is not None and ("column '" in message or "field '" in message)
        return
    check_pool(pool)
    assert saved_and_loaded([pool], tmp_path) == [pool]


# --------------------------------------------------------------------------- the scan


def depth_and_values(value) -> tuple[int, int]:
    """Nesting depth and number of values (keys included) of a parsed JSON value."""
    if isinstance(value, list):
        inner = [depth_and_values(item) for item in value]
        return 1 + max((d for d, _ in inner), default=0), 1 + sum(n for _, n in inner)
    if isinstance(value, dict):
        inner = [depth_and_values(item) for item in value.values()]
        return 1 + max((d for d, _ in inner), default=0), 1 + len(value) + sum(n for _, n in inner)
    return 0, 1


@given(json_values, st.booleans())
def test_scan_measures_depth_and_values_exactly(value, indent):
    text = json.dumps(value, indent=1 if indent else None, ensure_ascii=False)
    shape = scan_json(text, max_depth=1000)
    assert (shape.depth, shape.values) == depth_and_values(value)


RISKY = re.compile(rb"NaN|Infinity|[eE]\+?[0-9]{2}|[0-9]{100}")


@ONE_FOLDER  # monkeypatch is set again by every example
@given(
    pieces=st.lists(
        st.sampled_from(
            ["1", "9" * 60, "e", "E", "+", "-", ".", ",", "[", "]", "NaN", "Inf", "inity", " "]
        ),
        max_size=30,
    ),
    block=st.integers(1, 9),
)
def test_scan_finds_every_number_that_needs_a_check(pieces, block, monkeypatch):
    """plain is False exactly where a number could overflow a float or be a huge integer
    (the rule written as a regular expression), across block boundaries of the scan."""
    monkeypatch.setattr(limits, "SCAN_BLOCK", block)
    text = "".join(pieces).encode()
    assert scan_json(text, max_depth=1000).plain == (RISKY.search(text) is None)


@given(st.text(st.sampled_from('[]{}",:\\ab1\n'), max_size=60))
def test_scan_never_fails_and_bounds_what_the_parser_reaches(text):
    shape = scan_json(text, max_depth=5)
    loaded, message = outcome(
        lambda: load_pools(text.encode(), name="p.json", limits=Limits(max_depth=5)), "p.json"
    )
    if shape.depth > 5:
        assert loaded is None and message is not None and "nested more than 5" in message


@given(st.lists(st.text(characters, min_size=1, max_size=30), min_size=1, max_size=5))
def test_ids_and_texts_of_any_real_characters_round_trip(texts):
    pool = pool_from_dict(
        {"query": "q", "chunks": [{"id": f"{t}#{i}", "text": f"x{t}"} for i, t in enumerate(texts)]}
    )
    assert load_pool(as_json(pool.to_dict()), name="p.json") == pool
    assert re.fullmatch(r"[0-9a-f]{64}", pool.fingerprint)


# --------------------------------------------------------------------------- found by fuzzing


@pytest.mark.parametrize("field", ["score", "embedding", "query_embedding"])
def test_integers_beyond_a_float_are_named_not_overflow_errors(field):
    """An integer of 401 digits is valid JSON; it raised OverflowError in float conversion."""
    pool: dict[str, Any] = {
        "query": "q",
        "query_embedding": [1, 1],
        "chunks": [{"id": "a", "text": "x", "embedding": [1, 1], "score": 0.5}],
    }
    if field == "query_embedding":
        pool[field] = ["HUGE", 1]
    else:
        pool["chunks"][0][field] = "HUGE" if field == "score" else ["HUGE", 1]
    data = json.dumps(pool).replace('"HUGE"', "1" + "0" * 400).encode()
    _, message = outcome(lambda: load_pool(data, name="p.json"), "p.json")
    assert message is not None
    assert f"field '{field}'" in message and "beyond a 64-bit float" in message
