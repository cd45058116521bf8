"""Trace exports, read a record at a time: which format a file holds, and its spans.

Formats, told apart by content (never by the file's name):

- ``otlp``: OTLP/JSON, what an OpenTelemetry collector's file exporter writes: one
  ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) per line, or one whole
  request. Ids as hex (the OTLP/JSON rule) or base64 (protobuf's own JSON mapping), enums
  as integers or names, 64-bit integers as numbers or decimal texts, keys in lowerCamelCase
  or snake_case.
- ``phoenix``: the span table Phoenix's client exports (``get_spans_dataframe()``) saved
  as Parquet or JSON lines (or a JSON list): one row per span, the attributes as
  ``attributes.*`` columns or one ``attributes`` object, the ids as ``context.span_id`` and
  ``context.trace_id`` (or a ``context`` object).
- ``langsmith``: runs exported from LangSmith as JSON lines or a JSON list, one object per
  run (``run_type``, ``inputs``, ``outputs``); runs of type ``retriever`` are read.

Memory stays bounded on any number of spans: JSON lines and Parquet files are read a line
(a batch of rows) at a time, and one line may hold at most :data:`MAX_DOCUMENT_BYTES`. A
file that is one JSON document (not JSON lines) is parsed whole, so it is refused past
:data:`MAX_DOCUMENT_BYTES`, with a message that says to export JSON lines instead.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import functools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from adagres.errors import PoolError, one_line, require
from adagres.poolsets.files import is_file, reading
from adagres.traces.spans import (
    Span,
    flat_attributes,
    iso_time,
    nanoseconds,
    run_span,
    text_or_none,
)

__all__ = ["FORMATS", "MAX_DOCUMENT_BYTES", "Record", "detect", "records", "spans"]

#: The formats :func:`detect` names.
FORMATS = ("otlp", "phoenix", "langsmith")
#: The most bytes of one JSON document parsed whole: a line of a JSON-lines export, or a
#: file that is one JSON document (parsing takes about ten times as much memory).
MAX_DOCUMENT_BYTES = 64 * 2**20
_PARQUET = b"PAR1"
_BATCH_ROWS = 512


class Record(NamedTuple):
    """One object of an export (a request, a row, a run) and where it is ("line 4")."""

    obj: Any
    where: str


def _kind_of(obj: Any) -> str | None:
    if not isinstance(obj, Mapping):
        return None
    if "resourceSpans" in obj or "resource_spans" in obj:
        return "otlp"
    if "run_type" in obj:
        return "langsmith"
    nested = isinstance(obj.get("context"), Mapping) or isinstance(obj.get("attributes"), Mapping)
    return "phoenix" if nested or _span_columns(obj) else None


def _span_columns(names: Iterable[Any]) -> bool:
    """Whether the column names are those of Phoenix's span table."""
    return any(
        n in ("span_kind", "context.span_id") or str(n).startswith("attributes.") for n in names
    )


def _lines(path: Path, label: str) -> Iterator[bytes]:
    """The file's lines, one over :data:`MAX_DOCUMENT_BYTES` in parts."""
    with reading(label), path.open("rb") as handle:
        yield from iter(lambda: handle.readline(MAX_DOCUMENT_BYTES + 1), b"")


def _first_line(path: Path, label: str) -> bytes:
    return next((line for line in _lines(path, label) if line.strip()), b"")


def detect(path: str | Path) -> str | None:
    """The trace format of the file at ``path`` (one of :data:`FORMATS`), or None when it
    holds no trace export (a pool file, a pool set, anything else). Reads the first line
    (a Parquet file's schema; a whole JSON document when the first line is not one)."""
    path = Path(path)
    if not is_file(path):
        return None
    head = _first_line(path, one_line(path.name, max_chars=120))
    if head.startswith(_PARQUET):
        return "phoenix" if _parquet_has_spans(path) else None
    obj = _loads_or_none(head)
    if obj is None and head.lstrip()[:1] in (b"{", b"["):
        try:
            if path.stat().st_size > MAX_DOCUMENT_BYTES:
                return _marked(path)  # too large to parse here: its reader says so
            obj = _loads_or_none(path.read_bytes())
        except OSError:
            return None
    items = _listed(obj)  # the first object, as records reads them
    return _kind_of(items[0] if items else None)


_MARKERS = (
    (b'"resourceSpans"', "otlp"),
    (b'"resource_spans"', "otlp"),
    (b'"run_type"', "langsmith"),
    (b'"span_kind"', "phoenix"),
    (b'"context.span_id"', "phoenix"),
)


def _marked(path: Path) -> str | None:
    """The format a JSON document too large to parse here names in its first MiB."""
    with path.open("rb") as handle:
        head = handle.read(1 << 20)
    found = [(head.find(marker), kind) for marker, kind in _MARKERS if marker in head]
    return min(found)[1] if found else None


def _parquet_has_spans(path: Path) -> bool:
    pq = require("pyarrow.parquet", "tables", purpose="reading a Parquet span table")

    try:
        names = pq.ParquetFile(path).schema_arrow.names
    except Exception:  # not Parquet after all: no trace export
        return False
    return "attributes" in names or _span_columns(names)


def _loads_or_none(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def records(path: str | Path) -> Iterator[Record]:
    """Every object of the export at ``path``, a line (or a batch of Parquet rows) at a time.

    Raise PoolError naming the file and line for a line that is no JSON, a line over
    :data:`MAX_DOCUMENT_BYTES`, or a one-document file over that bound."""
    path = Path(path)
    label = one_line(path.name, max_chars=120)
    head = _first_line(path, label)
    if head.startswith(_PARQUET):
        yield from _parquet_records(path, label)
        return
    if not head.strip():
        raise PoolError(f"{label}: the file is empty")
    whole = _loads_or_none(head) is None  # not JSON lines: one document
    parts: Iterable[tuple[str, bytes]]
    if whole:
        with reading(label):
            size = path.stat().st_size
            if size > MAX_DOCUMENT_BYTES:
                raise PoolError(
                    f"{label}: one JSON document of {size:,} bytes, over the "
                    f"{MAX_DOCUMENT_BYTES:,} read whole; export JSON lines (one request, span "
                    f"or run per line), which are read a line at a time"
                )
            parts = [(label, path.read_bytes())]
    else:
        parts = ((f"{label}, line {n}", line) for n, line in enumerate(_lines(path, label), 1))
    for where, data in parts:
        if len(data) > MAX_DOCUMENT_BYTES and not data.endswith(b"\n"):
            raise PoolError(
                f"{where}: longer than {MAX_DOCUMENT_BYTES:,} bytes, the most one line of "
                f"an export may hold"
            )
        if not data.strip():
            continue
        try:
            obj = json.loads(data)
        except ValueError as error:
            raise PoolError(f"{where}: not JSON ({one_line(error, max_chars=80)})") from None
        items = _listed(obj)
        for position, item in enumerate(items):
            if whole:  # a document's items, or a line's list
                yield Record(item, where if len(items) == 1 else f"{where}, item {position}")
            else:
                yield Record(item, where if not isinstance(obj, list) else f"{where}[{position}]")


def _listed(obj: Any) -> list[Any]:
    if isinstance(obj, list):
        return obj
    if isinstance(obj, Mapping) and isinstance(obj.get("runs"), list):
        return obj["runs"]
    return [obj]


def _parquet_records(path: Path, label: str) -> Iterator[Record]:
    pq = require("pyarrow.parquet", "tables", purpose="reading a Parquet span table")

    with reading(label):
        try:
            batches = pq.ParquetFile(path).iter_batches(batch_size=_BATCH_ROWS)
            items = (item for batch in batches for item in batch.to_pylist())
            for row, item in enumerate(items, 1):
                yield Record(item, f"{label}, row {row}")
        except OSError:
            raise
        except Exception as error:  # pyarrow's own errors: a torn or foreign file
            raise PoolError(
                f"{label}: not a readable Parquet file ({one_line(error, max_chars=100)})"
            ) from None


# --------------------------------------------------------------------------- spans


def spans(path: str | Path, kind: str) -> Iterator[Span]:
    """The spans of an OpenInference export (``otlp``, ``phoenix``), or the runs of a
    LangSmith export (``langsmith``, as spans), in file order."""
    for record in records(path):
        if kind == "otlp":
            yield from otlp_spans(record)
        elif kind == "phoenix":
            yield phoenix_span(record)
        else:
            yield run_span(*record)


def _field(obj: Mapping[str, Any], camel: str) -> Any:
    """``obj[camel]``, else its protobuf field name (``camel`` in snake_case)."""
    found = obj.get(camel)
    return obj.get(_snake(camel)) if found is None else found


@functools.cache
def _snake(camel: str) -> str:
    """``startTimeUnixNano`` -> ``start_time_unix_nano`` (made once per name: every span
    reads its fields through :func:`_field`)."""
    return re.sub("([A-Z])", r"_\1", camel).lower()


def _hex_id(obj: Mapping[str, Any], what: str, where: str) -> str | None:
    """The id field ``what`` of ``obj`` as lowercase hex: hex as OTLP/JSON writes it, or
    base64 (protobuf's default JSON mapping of bytes)."""
    value = _field(obj, what)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PoolError(f"{where}: {what} must be a text, got {type(value).__name__}")
    text = value.strip()
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        shown = one_line(repr(value), max_chars=50)
        raise PoolError(f"{where}: {what} is neither hex nor base64: {shown}") from None


#: The fields of an OTLP ``AnyValue`` (a one-of), in the order they are looked for.
_ANY_FIELDS = ("string", "bool", "int", "double", "array", "kvlist", "bytes")


def any_value(value: Any, where: str) -> Any:
    """An OTLP ``AnyValue`` object as a plain value (arrays as lists, key-value lists as
    objects, 64-bit integers given as texts as integers, bytes as hex)."""
    if not isinstance(value, Mapping):
        return value
    kind = next((k for k in _ANY_FIELDS if f"{k}Value" in value or f"{k}_value" in value), None)
    if kind is None:
        return None  # an empty AnyValue
    inner = _field(value, f"{kind}Value")
    if kind == "int":
        try:
            return int(inner)
        except (TypeError, ValueError):
            raise PoolError(f"{where}: intValue {inner!r:.40} is not an integer") from None
    if kind == "double" and isinstance(inner, str):  # "NaN", "Infinity" as protobuf writes them
        try:
            return float(inner)
        except ValueError:
            raise PoolError(f"{where}: doubleValue {inner!r:.40} is not a number") from None
    if kind in ("array", "kvlist"):
        listed = _object(inner or {}, f"{where}: {kind}Value").get("values", [])
        if kind == "kvlist":
            return key_values(listed, where)
        return [any_value(item, where) for item in _list(listed, f"{where}: arrayValue.values")]
    if kind == "bytes":
        try:
            return base64.b64decode(inner).hex()
        except (binascii.Error, ValueError, TypeError):
            return inner
    return inner


def key_values(items: Any, where: str) -> dict[str, Any]:
    """OTLP's list of ``{"key", "value"}`` as one object (a later key wins, as in OTel)."""
    if not isinstance(items, list):
        raise PoolError(f"{where}: attributes must be a list of key-value objects")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise PoolError(f"{where}: an attribute without a key: {one_line(item, max_chars=60)}")
        out[item["key"]] = any_value(item.get("value"), f"{where}: attribute {item['key']!r}")
    return out


#: The status codes of a span that is neither OK nor an error (not recorded).
_UNSET = (None, 0, "STATUS_CODE_UNSET")


def otlp_spans(record: Record) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` object, with their resource's
    ``service.name``."""
    obj, where = record
    if not isinstance(obj, Mapping):
        raise PoolError(f"{where}: not an OTLP export (an object with resourceSpans)")
    resources = _field(obj, "resourceSpans")
    if not isinstance(resources, list):
        raise PoolError(f"{where}: not an OTLP export (resourceSpans must be a list)")
    for r, resource_spans in enumerate(resources):
        at = f"{where}: resourceSpans[{r}]"
        resource_spans = _object(resource_spans, at)
        resource = _object(resource_spans.get("resource") or {}, f"{at}.resource")
        resource_attrs = key_values(resource.get("attributes", []), f"{at}.resource")
        service = resource_attrs.pop("service.name", None)
        scopes = _field(resource_spans, "scopeSpans")
        if scopes is None:
            scopes = _field(resource_spans, "instrumentationLibrarySpans") or []
        for s, scope in enumerate(_list(scopes, f"{at}.scopeSpans")):
            scope = _object(scope, f"{at}.scopeSpans[{s}]")
            named = scope.get("scope")
            scope_name = named.get("name") if isinstance(named, Mapping) else None
            listed = _list(scope.get("spans", []), f"{at}.scopeSpans[{s}].spans")
            for n, span in enumerate(listed):
                span = _object(span, f"{at}.scopeSpans[{s}].spans[{n}]")
                span_id = _hex_id(span, "spanId", where)
                label = f"{where}, span {span_id}"
                attributes = key_values(span.get("attributes", []), label)
                if isinstance(scope_name, str):
                    attributes.setdefault("otel.scope.name", scope_name)
                status = span.get("status")
                if isinstance(status, Mapping) and status.get("code") not in _UNSET:
                    attributes.setdefault("otel.status_code", status.get("code"))
                    if status.get("message"):
                        attributes.setdefault("otel.status_description", status["message"])
                yield Span(
                    attributes,
                    label,
                    trace_id=_hex_id(span, "traceId", label),
                    span_id=span_id,
                    parent_id=_hex_id(span, "parentSpanId", label),
                    name=text_or_none(span.get("name")),
                    service=text_or_none(service),
                    start_ns=nanoseconds(_field(span, "startTimeUnixNano")),
                    end_ns=nanoseconds(_field(span, "endTimeUnixNano")),
                    resource={k: json_value(v) for k, v in resource_attrs.items()},
                )


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PoolError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise PoolError(f"{where}: expected a list, got {type(value).__name__}")
    return value


_ROW_READ = ("name", "span_kind", "parent_id", "start_time", "end_time", "attributes", "context")


def phoenix_span(record: Record) -> Span:
    """One row of Phoenix's span table as a :class:`Span`; columns other than the ids,
    name, kind, times and attributes go into the attributes, prefixed ``phoenix.``."""
    row, where = record
    if not isinstance(row, Mapping):
        raise PoolError(f"{where}: a span row must be an object, got {type(row).__name__}")
    context: Mapping[str, Any] = row["context"] if isinstance(row.get("context"), Mapping) else {}
    attributes: dict[str, Any] = {}
    if isinstance(row.get("attributes"), Mapping):
        attributes.update(flat_attributes(row["attributes"]))
    elif isinstance(row.get("attributes"), str):  # a JSON text column
        try:
            attributes.update(flat_attributes(json.loads(row["attributes"])))
        except ValueError:
            raise PoolError(f"{where}: attributes: not a JSON object") from None
    rest: dict[str, Any] = {}
    for key, value in row.items():
        key = str(key)
        if key.startswith("attributes."):
            attributes.update(flat_attributes(value, key.removeprefix("attributes.")))
        elif key.startswith("__index_level_"):
            continue  # pandas' own name for an index that repeats a column (Phoenix's span id)
        elif not key.startswith("context.") and key not in _ROW_READ and value is not None:
            rest[f"phoenix.{key}"] = value
    attributes = {k: json_value(v) for k, v in {**attributes, **rest}.items()}
    span_id = row.get("context.span_id", context.get("span_id"))
    label = f"{where}, span {one_line(span_id, max_chars=40)}" if span_id else where
    kind = row.get("span_kind")
    return Span(
        attributes,
        label,
        trace_id=text_or_none(row.get("context.trace_id", context.get("trace_id"))),
        span_id=text_or_none(span_id),
        parent_id=text_or_none(row.get("parent_id")),
        name=text_or_none(row.get("name")),
        start_ns=nanoseconds(row.get("start_time")),
        end_ns=nanoseconds(row.get("end_time")),
        kind=kind if isinstance(kind, str) else None,
    )


def json_value(value: Any) -> Any:
    """A value of an export as a JSON value: tuples and arrays as lists, times as ISO 8601
    texts, bytes as hex, NaN and infinities as None (JSON has none of them)."""
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy values and arrays
        return json_value(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dt.datetime):
        return iso_time(nanoseconds(value))
    if isinstance(value, dt.date | dt.time | dt.timedelta):
        return str(value)
    if hasattr(value, "isoformat"):  # pandas Timestamp
        return str(value.isoformat())
    return value
