"""Table pool files, ``.csv`` and ``.parquet``: one row per chunk.

Columns: ``text`` (required; also ``page_content``, ``content``, ``chunk``, ``passage``),
``id``, ``query`` (or ``question``, or ``query=``), ``score``, ``tokens``, ``title``,
``source``, ``gold``, ``embedding`` (a JSON list in CSV), ``metadata`` (a JSON object in
CSV); other columns go into the chunk's metadata. Several queries in the ``query`` column
make several pools. Parquet is read with pyarrow, imported only when needed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from adagres.errors import PoolError
from adagres.pools.fields import CHUNK_FIELDS, Location, RawPool, row_positions
from adagres.pools.jsonfile import parse_json

__all__ = ["csv_rows", "parquet_rows", "table_pools"]

_TEXT_COLUMNS = ("text", "page_content", "content", "chunk", "passage")
_QUERY_COLUMNS = ("query", "question")


def csv_rows(text: str, label: str) -> list[dict[str, Any]]:
    """The rows of a CSV text as dicts of strings, keyed by the header."""
    csv.field_size_limit(2**31 - 1)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = [dict(row) for row in reader]
    except csv.Error as error:
        raise PoolError(f"{label}: malformed CSV ({error})") from None
    if reader.fieldnames is None:
        raise PoolError(f"{label}: the CSV file is empty (no header row)")
    for number, row in enumerate(rows, start=1):
        if None in row or any(value is None for value in row.values()):
            raise PoolError(
                f"{label}, row {number}: the row has a different number of "
                f"fields than the header ({len(reader.fieldnames)})"
            )
    return rows


def parquet_rows(data: bytes, label: str) -> list[dict[str, Any]]:
    """The rows of a parquet file's bytes as dicts of typed values."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a core requirement
        raise PoolError(f"{label}: reading parquet needs pyarrow (pip install pyarrow)") from None
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as error:  # pyarrow raises several types for a corrupt file
        raise PoolError(f"{label}: not a readable parquet file ({error})") from None
    return table.to_pylist()


def table_pools(
    rows: list[dict[str, Any]], label: str, query: str | None, *, typed: bool
) -> list[RawPool]:
    """Group rows into one pool per query; ``typed`` rows (parquet) need no parsing."""
    if not rows:
        raise PoolError(f"{label}: the table has no rows: the pool is empty")
    columns = list(rows[0])
    text_column = _column(columns, _TEXT_COLUMNS)
    if text_column is None:
        raise PoolError(
            f"{label}: no text column; expected one of {', '.join(_TEXT_COLUMNS)}"
            f" (found {', '.join(map(str, columns))})"
        )
    query_column = _column(columns, _QUERY_COLUMNS)
    if query_column is None and query is None:
        raise PoolError(f"{label}: no query column ({', '.join(_QUERY_COLUMNS)}); give query=")
    groups: dict[str, list[int]] = {}
    for number, row in enumerate(rows, start=1):
        row_query = query if query_column is None else row.get(query_column)
        if not isinstance(row_query, str) or not row_query.strip():
            raise PoolError(f"{label}, row {number}, field '{query_column}': the query is empty")
        groups.setdefault(row_query, []).append(number)
    pools = []
    for group_query, numbers in groups.items():
        chunks = [
            _row_to_chunk(rows[n - 1], n, label, text_column, query_column, typed) for n in numbers
        ]
        ctx = Location(label, chunk_position=row_positions(numbers))
        pools.append(({"query": group_query, "chunks": chunks}, ctx))
    return pools


def _column(columns: Iterable[str], choices: Sequence[str]) -> str | None:
    present = list(columns)
    return next((name for name in choices if name in present), None)


def _row_to_chunk(
    row: dict[str, Any],
    number: int,
    label: str,
    text_column: str,
    query_column: str | None,
    typed: bool,
) -> dict[str, Any]:
    chunk: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in row.items():
        if key == query_column:
            continue
        if key == text_column:
            chunk["text"] = value
        elif key in ("id", "chunk_id"):
            chunk["id"] = value if not typed or value is None else str(value)
        elif key in CHUNK_FIELDS:
            if typed:
                if value is not None:
                    chunk[key] = value
            elif value != "":
                chunk[key] = _csv_value(key, value, number, label, row.get("id"))
        elif not (typed and value is None) and not (not typed and value == ""):
            metadata[key] = value
    chunk.setdefault("id", f"row{number}")
    if chunk.get("id") in (None, ""):
        chunk["id"] = f"row{number}"
    if metadata:
        base = chunk.get("metadata")
        chunk["metadata"] = {**metadata, **base} if isinstance(base, dict) else metadata
    return chunk


def _csv_value(key: str, value: str, number: int, label: str, chunk_id: Any) -> Any:
    where = f"{label}, row {number}, chunk '{chunk_id or f'row{number}'}', field '{key}'"
    if key in ("embedding", "metadata"):
        try:
            return parse_json(value)
        except ValueError as error:
            raise PoolError(f"{where}: not valid JSON ({error})") from None
    if key == "tokens":
        try:
            return int(value)
        except ValueError:
            raise PoolError(f"{where}: token count {value!r} is not an integer") from None
    if key == "score":
        try:
            return float(value)
        except ValueError:
            raise PoolError(f"{where}: score {value!r} is not a number") from None
    if key == "gold":
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise PoolError(f"{where}: {value!r} is not true or false")
    return value
