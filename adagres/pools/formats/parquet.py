"""Parquet pool files: rows as JSON-ready values, within the limits, read on one thread.

pyarrow is imported only here, and only when a Parquet file is read. What this module
guarantees about the rows it returns:

- the work is bounded before anything is decompressed: the file's metadata declares its
  uncompressed size and its number of values, and both are checked against
  ``Limits.max_decoded_bytes`` and ``Limits.max_values``;
- the metadata's size is that of the pages as stored, and a dictionary-encoded page holds
  each distinct string once (1 KB of file can stand for 300 MB of text): so every text
  column is read *as a dictionary* (``read_dictionary``), batch by batch, and the bytes it
  will decode to (each row's dictionary entry, counted from the entries' lengths and the
  indices, without building a string) are added to a running total that stops at the first
  batch over ``max_decoded_bytes``; only then are the dictionaries decoded;
- reading is single-threaded (``use_threads=False``): pyarrow's thread pool made about 7 %
  of short command-line runs abort at exit;
- every value is a JSON value: dates, times and timestamps become ISO-8601 strings,
  decimals their exact decimal string, durations their whole number of the column's unit;
  binary, map, interval, union and extension columns are refused naming the column (JSON
  has no bytes, and a map would not read back as the same value);
- strings are valid UTF-8 (checked in pyarrow, naming the column).
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from typing import Any

from adagres.core.validate import limit_hint
from adagres.errors import PoolError, one_line, require
from adagres.pools.load_limits import Limits, too_many_chunks, too_many_values

__all__ = ["check_column_names", "decoded_bytes", "parquet_rows"]

_BATCH_ROWS = 1024


def parquet_rows(data: bytes, label: str, limits: Limits) -> list[dict[str, Any]]:
    """The rows of a Parquet file's bytes, as dicts of JSON values."""
    pa = require("pyarrow", "tables", purpose=f"{label}: reading Parquet")
    pq = require("pyarrow.parquet", "tables", purpose=f"{label}: reading Parquet")
    try:
        metadata = pq.ParquetFile(io.BytesIO(data)).metadata
        _check_declared(metadata, label, limits)
        texts = [
            metadata.schema.column(i).path
            for i in range(metadata.num_columns)
            if metadata.schema.column(i).physical_type in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
        ]
        parquet = pq.ParquetFile(io.BytesIO(data), read_dictionary=texts)
        schema = parquet.schema_arrow
        check_column_names(schema.names, label)
        targets = [_json_type(pa, field.type, field.name, label) for field in schema]
        batches = []
        decoded = 0
        for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, use_threads=False):
            decoded += sum(decoded_bytes(pa, column) for column in batch.columns)
            if decoded > limits.max_decoded_bytes:
                raise _too_large(label, decoded, limits, "or more ")
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=schema)
    except PoolError:
        raise
    except Exception as error:  # pyarrow raises many types for a corrupt file
        raise PoolError(
            f"{label}: not a readable parquet file ({one_line(error, max_chars=300)})"
        ) from None
    columns = {}
    for position, (field, target) in enumerate(zip(schema, targets, strict=True)):
        columns[field.name] = _json_column(pa, table.column(position), target, label, field.name)
    if table.num_rows > limits.max_file_chunks:  # metadata that understated it
        raise too_many_chunks(label, table.num_rows, limits)
    count = sum(_count_values(pa, column) for column in columns.values())
    if count > limits.max_values:
        raise too_many_values(label, count, limits)
    return pa.table(columns).to_pylist() if columns else []


def decoded_bytes(pa: Any, array: Any) -> int:
    """The bytes ``array`` takes once its dictionaries are decoded, counted without decoding:
    a dictionary-encoded row costs its entry's bytes (and an offset), however small the
    dictionary; lists and structs add up their children."""
    import numpy as np

    kind = array.type
    if pa.types.is_dictionary(kind):
        values = array.dictionary
        try:
            return int(len(array) * max(values.type.bit_width // 8, 1))
        except ValueError:  # not a fixed-width type
            pass
        # Dictionaries of lists: an upper bound.
        if not _is(pa, values.type, "string", "large_string", *_BINARIES):
            return int(len(array) * max(values.nbytes, 1))
        import pyarrow.compute as pc

        lengths = np.asarray(pc.binary_length(values).fill_null(0), np.int64)
        if len(lengths) == 0:
            return 8 * len(array)
        indices = np.asarray(array.indices.fill_null(0), np.int64)
        return int(lengths[indices].sum()) + 8 * len(array)
    if _is(pa, kind, *_LISTS):
        return 8 * len(array) + decoded_bytes(pa, array.flatten())
    if pa.types.is_struct(kind):
        return 8 * len(array) + sum(decoded_bytes(pa, child) for child in array.flatten())
    return int(array.nbytes)


def _is(pa: Any, kind: Any, *names: str) -> bool:
    """Whether ``kind`` is one of the Arrow types ``pa.types.is_<name>`` names."""
    return any(getattr(pa.types, f"is_{name}")(kind) for name in names)


_LISTS = ("list", "large_list", "fixed_size_list")
_BINARIES = ("binary", "large_binary", "fixed_size_binary")


def check_column_names(names: Sequence[str], label: str) -> None:
    """Refuse a table (CSV or Parquet) with two columns of one name: a row keeps one."""
    twice = next((name for name, count in Counter(names).items() if count > 1), None)
    if twice is not None:
        shown = one_line(twice, max_chars=80)
        raise PoolError(f"{label}, column '{shown}': two columns have this name")


def _too_large(label: str, size: int, limits: Limits, qualifier: str = "") -> PoolError:
    return PoolError(
        f"{label}: the data decodes to {size:,} bytes {qualifier}(the file has fewer), over "
        f"the limit of {limits.max_decoded_bytes:,} ({limit_hint('max_decoded_bytes')})"
    )


def _check_declared(metadata: Any, label: str, limits: Limits) -> None:
    """Refuse a file whose metadata declares more data or values than the limits allow."""
    size = values = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            size += chunk.total_uncompressed_size
            values += chunk.num_values
    if metadata.num_rows > limits.max_file_chunks:
        raise too_many_chunks(label, metadata.num_rows, limits)
    if size > limits.max_decoded_bytes:
        raise _too_large(label, size, limits)
    if values > limits.max_values:
        raise too_many_values(label, values, limits)


def _json_type(pa: Any, kind: Any, name: str, label: str) -> Any:
    """The Arrow type whose Python values are JSON values for a column of type ``kind``."""
    types = pa.types
    if types.is_dictionary(kind):
        return _json_type(pa, kind.value_type, name, label)
    if _is(pa, kind, "null", "boolean", "integer", "floating", "string", "large_string"):
        return kind
    if hasattr(types, "is_string_view") and types.is_string_view(kind):
        return pa.string()
    if types.is_temporal(kind) and not types.is_duration(kind) and not types.is_interval(kind):
        return pa.string()  # ISO-8601 text; Python's datetime cannot hold every value
    if types.is_decimal(kind):
        return pa.string()  # exact, where a float would round
    if types.is_duration(kind):
        return pa.int64()
    if _is(pa, kind, *_LISTS):
        return pa.list_(_json_type(pa, kind.value_type, name, label))
    if types.is_struct(kind):
        return pa.struct(
            [
                pa.field(kind.field(i).name, _json_type(pa, kind.field(i).type, name, label))
                for i in range(kind.num_fields)
            ]
        )
    if _is(pa, kind, *_BINARIES):
        advice = "decode it to text or drop the column: a pool holds text, JSON has no bytes"
    elif types.is_map(kind):
        advice = "store it as a struct or as a JSON string: a map would not save and load back"
    else:
        advice = "store it as text, numbers, lists or structs"
    shown = one_line(name, max_chars=80)
    raise PoolError(f"{label}, column '{shown}': values of type {kind} are not supported; {advice}")


def _json_column(pa: Any, column: Any, target: Any, label: str, name: str) -> Any:
    """The column cast to ``target``, its strings checked to be UTF-8."""
    try:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if column.type != target:
            column = column.cast(target)
        column.validate(full=True)  # catches text that is not UTF-8
    except Exception as error:  # ArrowInvalid, ArrowNotImplementedError, ...
        shown = one_line(name, max_chars=80)
        raise PoolError(
            f"{label}, column '{shown}': cannot read its values ({one_line(error, max_chars=200)})"
        ) from None
    return column


def _count_values(pa: Any, array: Any) -> int:
    """Values a column holds once read: its rows plus the items of its lists and structs."""
    if isinstance(array, pa.ChunkedArray):
        return sum(_count_values(pa, chunk) for chunk in array.chunks)
    kind = array.type
    count = len(array)
    if _is(pa, kind, *_LISTS):
        count += _count_values(pa, array.flatten())
    elif pa.types.is_struct(kind):
        count += sum(_count_values(pa, array.field(i)) for i in range(kind.num_fields))
    return count
