"""Fuzzing the second round's classes: Parquet dictionary bombs, pool-set JSONL lines,
strings where lists belong, repeated JSON keys, control and bidirectional characters in
messages, and a CLI whose reader closes the pipe."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fuzzing import check_error, hostile_text, hostile_values, pool_dicts, time_limit
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import adagres
from adagres.errors import AdagresError, PoolError, one_line
from adagres.pools.formats import jsonfile, parquet
from adagres.pools.formats.duplicates import DuplicateKeyError
from adagres.pools.load_limits import Limits
from adagres.pools.pool import Chunk, Pool
from adagres.poolsets import summaries as poolsets

pytestmark = time_limit(3.0)
ROOT = Path(__file__).resolve().parents[2]
ONE_FOLDER = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
_ESCAPED = {"Cc", "Cf", "Zl", "Zp", "Cs"}


# --------------------------------------------------------------------------- Parquet


@given(
    rows=st.integers(min_value=1, max_value=3000),
    width=st.integers(min_value=0, max_value=4000),
    distinct=st.integers(min_value=1, max_value=4),
    limit=st.integers(min_value=1000, max_value=4_000_000),
)
def test_a_dictionary_column_is_bounded_before_it_decodes(rows, width, distinct, limit):
    """Whatever the dictionary's shape, a file refused for its decoded size is refused before
    a single dictionary is decoded, and a file that loads decodes within the limit."""
    entries = pa.array([f"{n}" + "x" * width for n in range(distinct)])
    indices = pa.array([n % distinct for n in range(rows)], pa.int32())
    column = pa.DictionaryArray.from_arrays(indices, entries)
    table = pa.table({"query": pa.array(["q"] * rows), "text": column})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    decoded = sum(len(value) for value in column.to_pylist()) + 8 * rows
    limits = Limits(max_decoded_bytes=limit, max_text_chars=10_000, max_values=10**7)
    with mock.patch.object(parquet, "_json_column", wraps=parquet._json_column) as decode:
        try:
            pools = adagres.load_pools(buffer.getvalue(), name="t.parquet", limits=limits)
        except AdagresError as error:
            message = check_error(error, "t.parquet")
            if "decodes to" in message:  # from the metadata's sizes or the rows' count
                assert not decode.called, message
            return
    assert decoded <= limit and sum(len(pool) for pool in pools) == rows


# --------------------------------------------------------------------------- pool-set lines


@ONE_FOLDER
@given(
    lines=st.lists(
        st.one_of(
            pool_dicts(embedded=True).map(lambda p: json.dumps(p).encode()),
            hostile_values.map(lambda v: json.dumps(v).encode("utf-8", "surrogatepass")),
            st.binary(max_size=40).filter(lambda b: b"\n" not in b),
            st.sampled_from([b"", b"   ", b"\r", b"{}", b"[]", b"\xef\xbb\xbf{}"]),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_a_pool_set_summarises_every_line_or_names_the_bad_one(tmp_path, lines):
    """The rule: one bad line refuses the set, naming the file and that line; a set whose
    lines are all pools gives one row per pool."""
    path = tmp_path / "set.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    filled = [n for n, line in enumerate(lines, start=1) if line.strip()]
    try:
        pool_set = poolsets.load_pool_set(path)
        assert [unit.line for unit in pool_set.units] == filled
        rows = poolsets.summarize(pool_set, adagres.Settings(), 50, workers=1)
    except AdagresError as error:
        message = check_error(error)
        note(message)
        if filled:
            assert any(message.startswith(f"set.jsonl, line {n}") for n in filled), message
        else:
            assert "holds no pool" in message
        return
    assert [row["unit"] for row in rows] == list(range(len(filled)))


# --------------------------------------------------------------------------- strings as lists


@given(text=hostile_text)
def test_a_string_is_refused_where_a_list_of_strings_belongs(text):
    chunk = (Chunk("a", "some text"),)
    for build in (
        lambda: Pool("q", chunk, answers=text),
        lambda: adagres.pool_from_retrieval("q", ["some text"], answers=text),
    ):
        with pytest.raises(PoolError) as refused:
            build()
        assert "must be a list of strings, got a string" in check_error(refused.value)
    for field in ("answers", "gold"):
        spec = {"uri": "x.db", "collection": "c", "queries": [{"query": "q", field: text}]}
        with pytest.raises(AdagresError) as refused_spec:
            poolsets.load_pool_set(spec)
        assert f"queries[0].{field}: must be a list of strings" in check_error(refused_spec.value)


# --------------------------------------------------------------------------- repeated keys


@st.composite
def texts_with_a_repeated_key(draw):
    """A JSON text of an object nested in lists and objects, one of whose keys is written
    twice; and that key."""
    inner = draw(st.dictionaries(st.text(max_size=6), hostile_values, min_size=1, max_size=4))
    key = draw(st.sampled_from(sorted(inner)))
    body = ", ".join(json.dumps(k) + ": " + json.dumps(v) for k, v in inner.items())
    again = json.dumps(key) + ": " + json.dumps(draw(hostile_values))
    text = "{" + body + ", " + again + "}"
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        text = draw(st.sampled_from(["[{}]", '{{"k": {}}}', '[1, {}, "s"]'])).format(text)
    return text, key


@given(case=texts_with_a_repeated_key(), fast=st.booleans())
def test_a_repeated_key_is_found_by_either_parser(case, fast):
    text, key = case
    limit = jsonfile.FAST_PARSE_MAX_BYTES if fast else 0
    with mock.patch.object(jsonfile, "FAST_PARSE_MAX_BYTES", limit):
        try:
            jsonfile.parse_json(text.encode("utf-8", "surrogatepass"))
        except DuplicateKeyError as error:
            assert error.key == key
        except ValueError:
            pass  # a value the standard parser refuses first (a lone surrogate's bytes)
        else:
            pytest.fail(f"the repeated key {key!r} was not found")
        with pytest.raises(DuplicateKeyError):
            jsonfile.parse_json(text)


# --------------------------------------------------------------------------- messages


@given(text=st.text(st.characters(), max_size=60))
def test_messages_hold_no_control_or_bidirectional_character(text):
    escaped = one_line(text)
    assert not any(unicodedata.category(char) in _ESCAPED for char in escaped), repr(escaped)
    assert one_line(escaped) == escaped
    try:
        adagres.load_pool(b"[", name=f"{text}.json")
    except AdagresError as error:
        message = check_error(error)
        assert not any(unicodedata.category(char) in _ESCAPED for char in message)


# --------------------------------------------------------------------------- closed pipes


@pytest.mark.parametrize("read", [0, 1, 300])
def test_the_cli_stops_quietly_when_its_reader_leaves(read):
    """The reader takes ``read`` bytes and closes the pipe: the command ends with status 0
    (all of its output fit in the pipe) or 141, and never writes a traceback."""
    command = [
        sys.executable,
        "-m",
        "adagres",
        "select",
        "data/distinct_topics.json",
        "--budget",
        "800",
        "--json",
        "--explain",
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    if read:
        process.stdout.read(read)
    process.stdout.close()
    errors = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait() in (0, 141) and errors == "", errors
