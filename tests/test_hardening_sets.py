"""Pool sets within their bounds, and their input checked: the lines and bytes a set may
hold, each line read on its own, one bad line refusing the set by file, line and problem,
collection specs checked field by field, and strings never taken for lists."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

import adagres
from adagres.errors import InputError, PoolError
from adagres.pools import load_limits as limits_module
from adagres.pools.kept_values import string_list_problem
from adagres.pools.load_limits import Limits
from adagres.pools.pool import Chunk, Pool
from adagres.poolsets import summaries as poolsets
from adagres.stores import milvus

LINE = json.dumps({"query": "q", "chunks": [{"id": "a", "text": "x", "tokens": 1}]})


def write_set(tmp_path, lines, name="set.jsonl"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- bounds


def test_a_set_over_max_set_pools_is_refused_while_it_is_read(tmp_path):
    path = write_set(tmp_path, ["{}"] * 11)
    with pytest.raises(PoolError) as refused:
        poolsets.load_pool_set(path, limits=Limits(max_set_pools=10))
    assert str(refused.value).startswith(
        "set.jsonl: the pool set holds more than 10 pools (lines and files), over the limit of "
        "10 (raise it with limits=Limits(max_set_pools=...)"
    )
    assert len(poolsets.load_pool_set(path, limits=Limits(max_set_pools=11))) == 11
    folder = tmp_path / "folder"
    folder.mkdir()
    for number in range(3):
        (folder / f"p{number}.json").write_text(LINE)
    with pytest.raises(PoolError, match=r"folder: the pool set holds more than 2 pools"):
        poolsets.load_pool_set(folder, limits=Limits(max_set_pools=2))
    (folder / "runs.jsonl").write_text(LINE + "\n" + LINE + "\n")
    with pytest.raises(PoolError, match=r"runs\.jsonl: the pool set holds more than 4 pools"):
        poolsets.load_pool_set(folder, limits=Limits(max_set_pools=4))


def test_a_file_over_max_bytes_is_refused_before_it_is_read(tmp_path):
    path = write_set(tmp_path, [LINE] * 3)
    size = path.stat().st_size
    with pytest.raises(PoolError, match=f"set.jsonl: the file has {size:,} bytes, over the limit"):
        poolsets.load_pool_set(path, limits=Limits(max_bytes=size - 1))
    assert len(poolsets.load_pool_set(path, limits=Limits(max_bytes=size))) == 3


def test_each_line_is_read_alone_whatever_its_number(tmp_path, monkeypatch):
    """The loader scans and parses a line's own bytes: reading line 2,000 costs what reading
    line 1 does (the set once padded each line with the newlines before it)."""
    lines = [LINE.replace('"q"', f'"q{n}"') for n in range(1, 2001)]
    pool_set = poolsets.load_pool_set(write_set(tmp_path, lines))
    scanned: list[int] = []
    original = limits_module.scan_json

    def scan(data: bytes | str, depth: int) -> limits_module.JsonShape:
        scanned.append(len(data))
        return original(data, depth)

    monkeypatch.setattr(limits_module, "scan_json", scan)
    for unit in (pool_set.units[0], pool_set.units[-1]):
        (pool,) = poolsets.load_unit(unit)
        assert pool.query == f"q{unit.line}"
    assert scanned == [len(lines[0]), len(lines[-1])]


def test_limits_reach_the_lines_of_a_set(tmp_path):
    deep = json.dumps(
        {"query": "q", "chunks": [{"id": "a", "text": "x", "metadata": {"a": {"b": 1}}}]}
    )
    pool_set = poolsets.load_pool_set(write_set(tmp_path, [LINE, deep]), limits=Limits(max_depth=4))
    with pytest.raises(PoolError, match=r"^set.jsonl, line 2: JSON nested more than 4 levels"):
        poolsets.load_unit(pool_set.units[1])


# --------------------------------------------------------------------------- one bad line


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ('{"query": "q", "chunks": [}', "line 3, column 27: malformed JSON (Expecting value)"),
        (
            "[1, 2]",
            'line 3: each line of a pool set must be a pool {"query": ..., "chunks": '
            "[...]}, got a list",
        ),
        (
            '{"page_content": "a document"}',
            "line 3: each line of a pool set must be a pool "
            '{"query": ..., "chunks": [...]}, got an object without ' + "'chunks'",
        ),
        (
            '{"query": "q", "chunks": [{"id": "a"}]}',
            "line 3, chunk 'a', field 'text': missing text",
        ),
        (
            '{"query": "q", "query": "r", "chunks": []}',
            "line 3, column 1: the object has the key "
            '"query" twice (a JSON reader keeps only one value); remove one of them',
        ),
    ],
)
@pytest.mark.parametrize("workers", [1, 2])
def test_one_bad_line_refuses_the_set_naming_file_line_and_problem(tmp_path, bad, problem, workers):
    path = write_set(tmp_path, [LINE, "", bad, LINE])
    pool_set = poolsets.load_pool_set(path)
    assert [unit.line for unit in pool_set.units] == [1, 3, 4]
    with pytest.raises(PoolError) as refused:
        poolsets.summarize(pool_set, adagres.Settings(), 10, workers=workers)
    assert str(refused.value) == f"set.jsonl, {problem}"


def test_a_long_file_name_is_one_line_error(tmp_path):
    with pytest.raises(PoolError, match=r"cannot read the pool set \(File name too long\)|no such"):
        poolsets.load_pool_set(tmp_path / ("a" * 300 + ".jsonl"))


# --------------------------------------------------------------------------- specs


SPEC = {"uri": "x.db", "collection": "c", "queries": ["a"]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"top_n": 2.9}, "field 'top_n' must be a whole number, got a number 2.9"),
        ({"top_n": "5"}, "field 'top_n' must be a whole number, got a string '5'"),
        ({"top_n": True}, "field 'top_n' must be a whole number, got a boolean True"),
        ({"uri": 5}, "field 'uri' must be a non-empty string, got an integer 5"),
        ({"collection": ["c"]}, "field 'collection' must be a non-empty string, got a list"),
        (
            {"queries": "what is x"},
            "field 'queries': must be a list of strings, got a string "
            "'what is x'; wrap a single item in a list: ['what is x']",
        ),
        ({"queries": {"query": "x"}}, "field 'queries': must be a list of strings, got an object"),
        (
            {"queries": [{"query": "x", "answers": "Paris"}]},
            "queries[0].answers: must be a list "
            "of strings, got a string 'Paris'; wrap a single item in a list: ['Paris']",
        ),
        (
            {"queries": [{"query": "x", "gold": "c1"}]},
            "queries[0].gold: must be a list of strings, got a string 'c1'",
        ),
        (
            {"queries": [{"query": "x", "gold": [1]}]},
            "queries[0].gold: must be a list of strings; item 0 is an integer 1",
        ),
        ({"queries": [7]}, "queries[0]: must be a query text or an object, got an integer 7"),
        ({"queries": [{"query": ""}]}, "queries[0].query: must be a non-empty text"),
        ({"queries": [{"query": "x", "answer": ["a"]}]}, "queries[0]: unknown field(s) 'answer'"),
        ({"topn": 5}, "unknown field(s) 'topn'; a spec has collection, queries, top_n, uri"),
    ],
)
def test_spec_fields_of_the_wrong_type_are_named(change, message, monkeypatch):
    monkeypatch.setattr(milvus, "retrieve_pools", lambda *a, **k: pytest.fail("retrieved"))
    with pytest.raises(InputError) as refused:
        poolsets.load_pool_set({**SPEC, **change})
    assert str(refused.value).startswith(f"pool set spec: {message}")


def test_a_whole_float_top_n_is_read_as_its_integer(monkeypatch):
    seen = {}

    def retrieve(uri, collection, queries, *, top_n):
        seen["top_n"] = top_n
        return [Pool(q, (Chunk("c1", "x"),)) for q in queries]

    monkeypatch.setattr(milvus, "retrieve_pools", retrieve)
    poolsets.load_pool_set({**SPEC, "top_n": 3.0})
    assert seen["top_n"] == 3 and type(seen["top_n"]) is int


def test_unknown_gold_ids_are_refused_by_name(monkeypatch):
    retrieved = (Chunk("c1", "x"), Chunk("c2", "y"))
    monkeypatch.setattr(
        milvus,
        "retrieve_pools",
        lambda uri, c, queries, top_n: [Pool(q, retrieved) for q in queries],
    )
    spec: dict[str, Any] = {
        **SPEC,
        "queries": [{"query": "a", "gold": ["c2", "c9", "c8"], "answers": ["y"]}],
    }
    with pytest.raises(InputError) as refused:
        poolsets.load_pool_set(spec)
    assert str(refused.value) == (
        "pool set spec: queries[0].gold: 2 id(s) not among the 2 chunks retrieved for this "
        "query: 'c9', 'c8' (raise top_n, or check the ids)"
    )
    spec["queries"][0]["gold"] = ["c2"]
    (unit,) = poolsets.load_pool_set(spec).units
    assert unit.pools is not None  # a spec's units carry their pools
    (pool,) = unit.pools
    assert [c.gold for c in pool.chunks] == [False, True] and pool.answers == ("y",)


def test_a_spec_file_with_a_repeated_key_is_not_read_as_a_spec(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text('{"uri": "x.db", "collection": "c", "queries": ["a"], "queries": ["b"]}')
    with pytest.raises(
        PoolError, match=r'^spec.json, line 1, column 1: the object has the key "queries" twice'
    ):
        poolsets.summarize(poolsets.load_pool_set(path), adagres.Settings(), 10, workers=1)


# --------------------------------------------------------------------------- strings as lists


@pytest.mark.parametrize("value", ["Paris", b"Paris"])
def test_a_string_is_never_split_into_characters(value):
    expected = "must be a list of strings, got a "
    problem = string_list_problem(value)
    assert problem is not None and problem.startswith(expected)
    with pytest.raises(PoolError, match=f"^answers: {expected}"):
        Pool("q", (Chunk("a", "Paris is the capital"),), answers=value)
    with pytest.raises(PoolError, match=f"^<retrieval>: answers: {expected}"):
        adagres.pool_from_retrieval("q", ["Paris is the capital"], answers=value)
    pool = Pool("q", (Chunk("a", "Paris is the capital"),), answers=("Paris",))
    with pytest.raises(PoolError, match="answers: must be a list of strings, got a string"):
        dataclasses.replace(pool, answers="Paris")  # type: ignore[arg-type]  # the mistake
    assert adagres.pool_from_retrieval("q", ["x"], answers=("Paris",)).answers == ("Paris",)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "must be a list of strings, got null"),
        (["a", None], "must be a list of strings; item 1 is null None"),
        ({"a": 1}, "must be a list of strings, got an object"),
        (("a", 2.5), "must be a list of strings; item 1 is a number 2.5"),
        ([], None),
        (("a", "b"), None),
    ],
)
def test_string_list_problem(value, problem):
    assert string_list_problem(value) == problem


@pytest.mark.parametrize(
    ("source", "kind"), [(5, "int"), (None, "NoneType"), (b"a.jsonl", "bytes")]
)
def test_a_source_that_is_neither_a_path_nor_a_spec_gets_one_line_naming_its_type(source, kind):
    with pytest.raises(InputError) as error:
        poolsets.load_pool_set(source)
    assert str(error.value) == f"pool set: expected a path or a spec mapping, got {kind}"
