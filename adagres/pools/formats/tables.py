"""Table pool files, ``.csv`` and ``.parquet``: one row per chunk.

Columns: ``text`` (required; also ``page_content``, ``content``, ``chunk``, ``passage``),
``id`` (or ``chunk_id``; with both, ``id`` is the id and ``chunk_id`` is kept in the
metadata), ``query`` (or ``question``, or ``query=``), ``score``, ``tokens``, ``title``,
``source``, ``offset`` (where the text starts in its source, in characters: packing reads
it), ``gold``, ``embedding`` (a JSON list in CSV), ``metadata`` (a JSON object in CSV); other
columns go into the chunk's metadata (``doc_id`` with ``start``, ``start_index``, ``page``:
whole numbers in CSV too, so packing places the chunk) (a column and a ``metadata`` key of the
same name are refused, naming both). Several queries in the ``query`` column make several
pools. Pool fields, the same on every row of a query (rows that differ are refused; empty
cells are not values): ``query_embedding`` (a JSON list in CSV: what a table with an
``embedding`` column needs, or ``embedding_model``), ``embedding_model``, ``answers`` (a
JSON list of strings in CSV). Parquet is read by :mod:`adagres.pools.formats.parquet`.

CSV within the :class:`~adagres.pools.load_limits.Limits`: a field longer than
``max_field_chars`` stops the reader as soon as it is that long, every field counts
towards ``max_values`` as it is read, and a JSON cell (``embedding``, ``metadata``) is
checked for ``max_depth`` before it is parsed and its values counted after.
"""

from __future__ import annotations

import csv
import io
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from adagres.core.validate import limit_hint
from adagres.errors import PoolError, one_line
from adagres.pools.chunk_fields import (
    CHUNK_FIELDS,
    Location,
    RawPool,
    positions,
    show_id,
    type_name,
)
from adagres.pools.formats.jsonfile import parse_json
from adagres.pools.formats.parquet import check_column_names, parquet_rows
from adagres.pools.load_limits import (
    DEFAULT_LIMITS,
    Limits,
    check_json_depth,
    too_many_chunks,
    too_many_values,
)

__all__ = ["POOL_COLUMNS", "csv_rows", "parquet_rows", "table_pools"]

# csv.field_size_limit is one setting for the whole process: set it only while reading,
# one reader at a time, and put it back.
_FIELD_LIMIT_LOCK = threading.Lock()

#: Columns that place a chunk in its source (:mod:`adagres.pools.spans`): read from CSV as
#: whole numbers, as JSON and Parquet give them.
_PLACE_COLUMNS = ("start", "start_index", "split_idx_start", "start_char_idx", "page")
_TEXT_COLUMNS = ("text", "page_content", "content", "chunk", "passage")
_QUERY_COLUMNS = ("query", "question")


def csv_rows(text: str, label: str, limits: Limits = DEFAULT_LIMITS) -> list[dict[str, Any]]:
    """The rows of a CSV text as dicts of strings, keyed by the header."""
    with _FIELD_LIMIT_LOCK:
        previous = csv.field_size_limit(min(limits.max_field_chars, sys.maxsize))
        try:
            return _read_csv(text, label, limits)
        finally:
            csv.field_size_limit(previous)


def _read_csv(text: str, label: str, limits: Limits) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    records: Iterator[list[str]] = iter(reader)
    try:
        header = next(records, None)
        if header is None:
            raise PoolError(f"{label}: the CSV file is empty (no header row)")
        values = len(header)
        rows: list[dict[str, Any]] = []
        for record in records:
            if not record:
                continue  # a blank line, as csv.DictReader skips it
            number = len(rows) + 1
            if number > limits.max_file_chunks:
                raise too_many_chunks(label, number, limits)
            values += len(record)
            if values > limits.max_values:
                raise too_many_values(label, values, limits)
            if len(record) != len(header):
                raise PoolError(
                    f"{label}, row {number}: the row has {len(record)} fields, the header "
                    f"has {len(header)}"
                )
            rows.append(dict(zip(header, record, strict=True)))
    except csv.Error as error:
        if "field larger than field limit" in str(error):
            raise PoolError(
                f"{label}, line {reader.line_num}: a field is longer than the limit of "
                f"{limits.max_field_chars:,} characters ({limit_hint('max_field_chars')})"
            ) from None
        raise PoolError(f"{label}, line {reader.line_num}: malformed CSV ({error})") from None
    check_column_names(header, label)
    return rows


def table_pools(
    rows: list[dict[str, Any]],
    label: str,
    query: str | None,
    *,
    typed: bool,
    limits: Limits = DEFAULT_LIMITS,
) -> list[RawPool]:
    """Group rows into one pool per query; ``typed`` rows (parquet) need no parsing."""
    if not rows:
        raise PoolError(f"{label}: the table has no rows: the pool is empty")
    columns = list(rows[0])
    text_column = next((name for name in _TEXT_COLUMNS if name in columns), None)
    if text_column is None:
        raise PoolError(
            f"{label}: no text column; expected one of {', '.join(_TEXT_COLUMNS)}"
            f" (found {', '.join(map(str, columns))})"
        )
    query_column = next((name for name in _QUERY_COLUMNS if name in columns), None)
    if query_column is None and query is None:
        raise PoolError(f"{label}: no query column ({', '.join(_QUERY_COLUMNS)}); give query=")
    groups: dict[str, list[int]] = {}
    for number, row in enumerate(rows, start=1):
        row_query = query if query_column is None else row.get(query_column)
        if not isinstance(row_query, str) or not row_query.strip():
            raise PoolError(f"{label}, row {number}, field '{query_column}': the query is empty")
        groups.setdefault(row_query, []).append(number)
    pools = []
    cells = _JsonCells(label, limits)
    for group_query, numbers in groups.items():
        chunks = [
            _row_to_chunk(rows[n - 1], n, text_column, query_column, typed, cells) for n in numbers
        ]
        ctx = Location(label, chunk_position=positions("row", numbers))
        pool = {"query": group_query, "chunks": chunks}
        pool.update(_pool_fields(rows, numbers, typed, cells))
        pools.append((pool, ctx))
    return pools


#: Columns that hold a field of the pool (one value per query), not of each chunk.
POOL_COLUMNS = ("query_embedding", "embedding_model", "answers")


def _pool_fields(
    rows: list[dict[str, Any]], numbers: list[int], typed: bool, cells: _JsonCells
) -> dict[str, Any]:
    """The pool fields of one query's rows: each the one value its non-empty cells share."""
    out: dict[str, Any] = {}
    for key in POOL_COLUMNS:
        first: tuple[int, Any] | None = None
        for number in numbers:
            value = rows[number - 1].get(key)
            if value is None or value == "":
                continue
            if not typed and key != "embedding_model":
                value = cells.parse(value, f"{cells.label}, row {number}, field '{key}'")
            if first is None:
                first = (number, value)
            elif value != first[1]:
                raise PoolError(
                    f"{cells.label}, row {number}, field '{key}': differs from row {first[0]} of "
                    f"the same query; a pool has one {key}, give it on every row alike or on one"
                )
        if first is not None:
            out[key] = first[1]
    return out


def _place(value: Any) -> Any:
    """A place in a source as a whole number where a CSV cell holds only digits (CSV has no
    types); any other value is kept exactly as given, for the checks to name (a float, even
    a whole one, places nothing: write an integer column, e.g. pandas' ``Int64`` where it
    has gaps)."""
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit():
            return int(text)
    return value


def _row_to_chunk(
    row: dict[str, Any],
    number: int,
    text_column: str,
    query_column: str | None,
    typed: bool,
    cells: _JsonCells,
) -> dict[str, Any]:
    chunk: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    id_column = "id" if "id" in row else "chunk_id"
    for key, value in row.items():
        empty = value is None if typed else value == ""  # no value in this cell
        if key == query_column or key in POOL_COLUMNS:
            continue
        if key == text_column:
            chunk["text"] = value
        elif key == id_column:
            chunk["id"] = value if not typed or value is None else str(value)
        elif key == "offset":  # where the text starts in its source: a chunk field, as in JSON
            if not empty and value != "":
                chunk[key] = value if typed else _place(value)
        elif empty:
            continue
        elif key in CHUNK_FIELDS:
            chunk[key] = (
                value if typed else _csv_value(key, value, number, cells, row.get(id_column))
            )
        else:
            metadata[key] = _place(value) if key in _PLACE_COLUMNS and not typed else value
    if chunk.get("id") in (None, ""):
        chunk["id"] = f"row{number}"
    if metadata:
        base = chunk.get("metadata")
        where = f"{cells.label}, row {number}, chunk {show_id(str(chunk['id']))}, field 'metadata'"
        if base is not None and not isinstance(base, dict):
            raise PoolError(
                f"{where}: must be an object (the other columns join it), got {type_name(base)}"
            )
        both = sorted(set(metadata) & set(base or {}))
        if both:
            shown = one_line(both[0], max_chars=60)
            raise PoolError(
                f"{where}: key '{shown}' is also a column; rename one of them (neither is dropped)"
            )
        chunk["metadata"] = {**metadata, **(base or {})}
    return chunk


@dataclass
class _JsonCells:
    """Parses the JSON cells of one CSV file, with its depth limit and one values count."""

    label: str
    limits: Limits
    values: int = 0

    def parse(self, value: str, where: str) -> Any:
        check_json_depth(value, where, self.limits)
        try:
            parsed = parse_json(value)
        except RecursionError:  # only when max_depth was raised past Python's limit
            raise PoolError(f"{where}: JSON nested too deep for Python's recursion limit") from None
        except ValueError as error:
            raise PoolError(f"{where}: not valid JSON ({one_line(error, max_chars=200)})") from None
        self.values += _count(parsed)
        if self.values > self.limits.max_values:
            raise too_many_values(self.label, self.values, self.limits)
        return parsed


def _count(value: Any) -> int:
    """Values in a parsed JSON value (lists and objects count, and each item)."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        total += 1
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            total += len(item)  # the keys
            stack.extend(item.values())
    return total


def _csv_value(key: str, value: str, number: int, cells: _JsonCells, chunk_id: Any) -> Any:
    shown = show_id(chunk_id) if isinstance(chunk_id, str) and chunk_id else f"'row{number}'"
    where = f"{cells.label}, row {number}, chunk {shown}, field '{key}'"
    if key in ("embedding", "metadata"):
        return cells.parse(value, where)
    quoted = one_line(repr(value), max_chars=60)
    if key == "tokens":
        try:
            return int(value)
        except ValueError:
            raise PoolError(f"{where}: token count {quoted} is not an integer") from None
    if key == "score":
        try:
            return float(value)
        except ValueError:
            raise PoolError(f"{where}: score {quoted} is not a number") from None
    if key == "gold":
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise PoolError(f"{where}: {quoted} is not true or false")
    return value
