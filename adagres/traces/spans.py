"""One retriever span (OpenInference) or retriever run (LangSmith), as a pool dict.

A span's attributes arrive flat (``retrieval.documents.0.document.content``, what OTLP
carries), nested (``{"retrieval": {"documents": [{"document": {...}}]}}``, what Phoenix
stores) or in between (a list of ``{"document.content": ...}``); :func:`flat_attributes`
makes them all flat, keeping each ``metadata`` value whole. :func:`span_pool` turns a
:class:`Span` into a canonical pool object (``adagres.pools`` checks it):

- the query: ``input.value``; when it is a JSON object (``input.mime_type`` JSON, as
  Haystack and LlamaIndex record their inputs), its ``query`` / ``query_str`` text;
- one chunk per ``retrieval.documents.N.document.*``, in the order of N: ``content`` is
  the text, ``id``, ``score`` and ``metadata`` (a JSON text, parsed; a text that is no JSON
  object is kept as ``{"value": text}``); any other document field is kept in the chunk's
  ``attributes``. Without a distinct id for every document (LangChain records none), the
  ids come from the span's ``output.value`` when it lists the same documents with ids
  (LangChain's does), else they are ``c0, c1, ...``, each given id kept as ``document_id``;
- the pool's ``trace`` object: format, trace and span ids, parent, name, service, start
  and end (ISO 8601, UTC), and every attribute not read above (``attributes``), so nothing
  the export held is dropped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from adagres.errors import PoolError, one_line

__all__ = [
    "RETRIEVER",
    "Span",
    "flat_attributes",
    "iso_time",
    "nanoseconds",
    "run_span",
    "span_pool",
    "text_or_none",
]

#: The OpenInference span kind read as a pool.
RETRIEVER = "RETRIEVER"
KIND_KEY = "openinference.span.kind"
_DOCUMENT = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(.+)$")
_READ = frozenset({KIND_KEY, "input.value", "input.mime_type"})


@dataclass(frozen=True)
class Span:
    """One span of an export: its flat attributes and where it sits.

    ``where`` names it in messages (file, line or row, span id); ``start_ns`` orders the
    retrievals of a trace; times in nanoseconds since 1970 (None when unknown)."""

    attributes: dict[str, Any]
    where: str
    trace_id: str | None = None
    span_id: str | None = None
    parent_id: str | None = None
    name: str | None = None
    service: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    kind: str | None = None
    resource: dict[str, Any] = field(default_factory=dict)
    #: The pool's ``trace.format``: ``openinference``, or ``langsmith`` for a run.
    format: str = "openinference"

    @property
    def span_kind(self) -> str | None:
        """The OpenInference kind: the attribute, else the export's own column, in upper
        case; a LangSmith run's ``run_type`` as written."""
        value = self.attributes.get(KIND_KEY, self.kind)
        if not isinstance(value, str):
            return None
        return value if self.format == "langsmith" else value.upper()

    @property
    def is_retriever(self) -> bool:
        """A retriever span (OpenInference ``RETRIEVER``) or run (LangSmith ``retriever``)."""
        return self.span_kind == ("retriever" if self.format == "langsmith" else RETRIEVER)


def flat_attributes(value: Any, prefix: str = "") -> dict[str, Any]:
    """Attributes nested or flat, as one flat mapping of dotted keys (lists of objects get
    their position as a key part; a ``metadata`` value stays whole).

    >>> flat = flat_attributes({"retrieval": {"documents": [{"document": {"content": "x",
    ...     "metadata": {"a": 1}}}]}})
    >>> flat == {"retrieval.documents.0.document.content": "x",
    ...          "retrieval.documents.0.document.metadata": {"a": 1}}
    True
    """
    out: dict[str, Any] = {}
    _flatten(value, prefix, out)
    return out


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    keep_whole = prefix == "metadata" or prefix.endswith(".metadata")
    if isinstance(value, Mapping) and value and not keep_whole:
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif (
        isinstance(value, list | tuple)
        and value
        and not keep_whole
        and all(isinstance(item, Mapping) for item in value)
    ):
        for position, item in enumerate(value):
            _flatten(item, f"{prefix}.{position}", out)
    elif prefix and not _missing(value):
        out[prefix] = value


def _missing(value: Any) -> bool:
    """None, or a float NaN (an empty cell of a pandas table)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def nanoseconds(value: Any) -> int | None:
    """A time as integer nanoseconds since 1970 (UTC): OTLP's ``startTimeUnixNano`` (an
    integer or its decimal text), a ``datetime``, pandas' ``Timestamp``, an ISO 8601 text,
    or a number of seconds, milliseconds or microseconds since 1970 (told apart by size)."""
    if _missing(value) or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return nanoseconds(int(text))
        try:
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        return nanoseconds(moment)
    if hasattr(value, "value") and hasattr(value, "tz_localize"):  # pandas Timestamp
        return int(value.value) if value.tzinfo is None else int(value.tz_convert(None).value)
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    if isinstance(value, int | float) and math.isfinite(value):
        number = float(value)
        for scale, bound in ((1, 1e17), (10**3, 1e14), (10**6, 1e11)):
            if abs(number) >= bound:
                return int(value) * scale if isinstance(value, int) else int(number * scale)
        return int(number * 10**9)
    return None


def iso_time(ns: int | None) -> str | None:
    """Nanoseconds since 1970 as ISO 8601 UTC with microseconds.

    >>> iso_time(1_700_000_000_123_456_789)
    '2023-11-14T22:13:20.123456Z'
    """
    if ns is None:
        return None
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=ns // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _query(attributes: Mapping[str, Any], where: str) -> str:
    value = attributes.get("input.value")
    if not isinstance(value, str) or not value.strip():
        shown = "nothing" if value is None else one_line(repr(value), max_chars=60)
        raise PoolError(f"{where}: a retriever span without a query (input.value), got {shown}")
    mime = attributes.get("input.mime_type")
    recorded = mime == "application/json" or value.lstrip().startswith("{")  # inputs as JSON
    return (_query_in_json(value) if recorded else None) or value


def _query_in_json(text: str) -> str | None:
    """The query text of a retriever's recorded inputs (Haystack ``{"query": ...}``,
    LlamaIndex ``{"query_bundle": {"query_str": ...}}``), or None."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    for _ in range(3):
        if not isinstance(obj, dict):
            return None
        for key in ("query", "query_str", "question", "input"):
            if isinstance(obj.get(key), str) and obj[key].strip():
                return str(obj[key])
        obj = obj.get("query_bundle", obj.get("query"))
    return None


def _metadata(value: Any) -> dict[str, Any] | None:
    if _missing(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            if isinstance(parsed := json.loads(value), dict):
                return parsed
    return {"value": value}


def _score(value: Any, where: str) -> float | None:
    if _missing(value):
        return None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        shown = one_line(repr(value), max_chars=40)
        raise PoolError(f"{where}: document.score must be a finite number, got {shown}")
    return float(value)


def _output_ids(attributes: Mapping[str, Any], texts: list[str]) -> list[str] | None:
    """The ids LangChain's instrumentation leaves in ``output.value`` (``{"documents":
    [{"id", "page_content", ...}]}``), when they name these texts in this order."""
    value = attributes.get("output.value")
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return None
    try:
        listed = json.loads(value).get("documents")
    except (ValueError, AttributeError):
        return None
    if not isinstance(listed, list) or len(listed) != len(texts):
        return None
    ids = []
    for item, text in zip(listed, texts, strict=True):
        if not isinstance(item, dict):
            return None
        content = item.get("page_content", item.get("kwargs", {}).get("page_content"))
        item_id = item.get("id", item.get("kwargs", {}).get("id"))
        if content != text or not isinstance(item_id, str | int) or item_id == "":
            return None
        ids.append(str(item_id))
    return ids


def _chunks(span: Span) -> tuple[list[dict[str, Any]], set[str]]:
    """The span's chunks in the order of N, and the attribute keys they used. Ids: the
    documents' own when distinct, else those of ``output.value``, else ``cN``."""
    found: dict[int, dict[str, Any]] = {}
    used = set()
    for key, value in span.attributes.items():
        match = _DOCUMENT.match(key)
        if match is not None:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
            used.add(key)
    chunks: list[dict[str, Any]] = []
    given: list[str | None] = []
    for number in sorted(found):
        fields = found[number]
        label = f"{span.where}: retrieval.documents.{number}"
        content = fields.pop("content", None)
        if _missing(content):
            raise PoolError(f"{label}: a document without content (document.content)")
        if not isinstance(content, str):
            kind = type(content).__name__
            raise PoolError(f"{label}: document.content must be a text, got {kind}")
        given_id = fields.pop("id", None)
        given.append(None if _missing(given_id) else str(given_id))
        score = _score(fields.pop("score", None), label)
        metadata = _metadata(fields.pop("metadata", None))
        chunks.append(
            {"text": content, "score": score, "metadata": metadata, "attributes": fields or None}
        )
    distinct = None not in given and len(set(given)) == len(given)
    ids = given if distinct else _output_ids(span.attributes, [c["text"] for c in chunks])
    for position, chunk in enumerate(chunks):
        named = {"id": ids[position] if ids else f"c{position}", "text": chunk.pop("text")}
        if ids is None and given[position] is not None:
            named["document_id"] = given[position]
        chunks[position] = {**named, **{k: v for k, v in chunk.items() if v is not None}}
    return chunks, used


def has_documents(span: Span) -> bool:
    """True when the span records at least one ``retrieval.documents.N.document.*``."""
    return any(_DOCUMENT.match(key) for key in span.attributes)


def span_pool(span: Span) -> dict[str, Any]:
    """The canonical pool object of one OpenInference retriever span (see the module)."""
    chunks, used = _chunks(span)
    if not chunks:
        raise PoolError(
            f"{span.where}: a retriever span without documents (retrieval.documents.N.document.*)"
        )
    query = _query(span.attributes, span.where)
    rest = {k: v for k, v in span.attributes.items() if k not in used and k not in _READ}
    values = {key: getattr(span, key) for key in ("trace_id", "span_id", "parent_id", "name")}
    values.update(service=span.service, start=iso_time(span.start_ns), end=iso_time(span.end_ns))
    values.update(resource=span.resource or None, attributes=rest or None)
    trace = {key: value for key, value in values.items() if value is not None}
    return {
        "query": query,
        "chunks": chunks,
        "trace": {"format": span.format, **trace},
    }


# --------------------------------------------------------------------------- LangSmith

#: Fields of a LangSmith run that the pool reads (the rest is kept in ``trace.attributes``).
_RUN_READ = frozenset(
    {"id", "trace_id", "parent_run_id", "name", "run_type", "start_time", "end_time"}
)


def run_span(run: Any, where: str) -> Span:
    """One LangSmith run as the span it records, whose kind is its ``run_type``. A run of
    type ``retriever`` with documents carries them as :func:`span_pool` reads them: the query
    from ``inputs.query``, one ``retrieval.documents.N.document.*`` per ``outputs.documents``
    item (LangChain's ``page_content``, ``metadata`` and ``id``, also in ``dumpd`` form),
    and every other field of the run (kept in the pool's ``trace.attributes``)."""
    if not isinstance(run, Mapping) or "run_type" not in run:
        raise PoolError(f"{where}: not a LangSmith run (no run_type)")
    span = Span(
        {},
        where,
        trace_id=text_or_none(run.get("trace_id")),
        span_id=text_or_none(run.get("id")),
        parent_id=text_or_none(run.get("parent_run_id")),
        name=text_or_none(run.get("name")),
        start_ns=nanoseconds(run.get("start_time")),
        end_ns=nanoseconds(run.get("end_time")),
        kind=str(run["run_type"]),
        format="langsmith",
    )
    outputs = _mapping(run.get("outputs"))
    if span.kind != "retriever" or not outputs.get("documents"):
        return span  # counted, and left out
    label = f"{where}, run {one_line(run.get('id'), max_chars=40)}"
    inputs = _mapping(run.get("inputs"))
    query = inputs.get("query")
    if query is None:
        texts = [v for v in inputs.values() if isinstance(v, str) and v.strip()]
        query = texts[0] if len(texts) == 1 else None
    if not isinstance(query, str) or not query.strip():
        raise PoolError(f"{label}: a retriever run without a query (inputs.query)")
    listed = outputs.get("documents")
    if not isinstance(listed, list) or not listed:
        raise PoolError(f"{label}: a retriever run without documents (outputs.documents)")
    attributes: dict[str, Any] = {"input.value": query}
    for position, item in enumerate(listed):
        doc = _mapping(item.get("kwargs", item) if isinstance(item, Mapping) else None)
        at = f"{label}: outputs.documents[{position}]"
        if not isinstance(doc.get("page_content"), str):
            raise PoolError(f"{at}: a document without content (page_content)")
        metadata = _metadata(doc.get("metadata"))
        score = metadata.get("score") if metadata is not None else None
        key = f"retrieval.documents.{position}.document."
        attributes[key + "content"] = doc["page_content"]
        attributes[key + "id"] = None if doc.get("id") == "" else doc.get("id")
        attributes[key + "score"] = _score(score, at)
        attributes[key + "metadata"] = metadata
    rest = {k: v for k, v in run.items() if k not in _RUN_READ}
    rest["inputs"] = {k: v for k, v in inputs.items() if k != "query"}
    rest["outputs"] = {k: v for k, v in outputs.items() if k != "documents"}
    attributes.update({k: v for k, v in rest.items() if v not in ({}, None)})
    return dataclasses.replace(span, attributes=attributes)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def text_or_none(value: Any) -> str | None:
    """``value`` as text; None for None and NaN (an empty cell of a pandas table)."""
    return None if _missing(value) else str(value)
