"""A trace export recorded for real, for the page and browser tests of trace pools: a
LangChain retriever instrumented with OpenInference, its spans kept by the OpenTelemetry
SDK's in-memory exporter and written as OTLP/JSON (one export request per line, hex ids),
as an OTel collector's file exporter writes them.

Not a test module: the test files import it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "rag-under-test"
#: Three requests: trace A asks two questions, trace B one (recorded between them).
REQUESTS = (
    ("A", "how does insulin lower blood sugar"),
    ("B", "what do the kidneys filter"),
    ("A", "why do cells resist insulin"),
)
TOP_K = 12


@dataclass(frozen=True)
class Retrieval:
    """What the retriever returned for one request: its query and its documents in rank
    order."""

    query: str
    ids: list[str]
    texts: list[str]


def _otlp_line(spans: list[Any]) -> str:
    """An ExportTraceServiceRequest as one line of OTLP/JSON: protobuf's JSON mapping with
    integer enums, the ids turned from base64 (protobuf's rule for bytes) to hex (OTLP's)."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(request) + "\n"


def record_export(target: Path) -> list[Retrieval]:
    """Run the three requests through an instrumented LangChain retriever over the bundled
    demo's chunks, write every finished span to ``target`` (OTLP/JSON lines, in the order
    they finished) and return what the retriever returned, request by request."""
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    retriever = _retriever()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("trace-export")
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    found = []
    try:
        with tracer.start_as_current_span("request A"):
            first = retriever.invoke(REQUESTS[0][1])
            with tracer.start_as_current_span("request B", context=_root()):
                second = retriever.invoke(REQUESTS[1][1])
            third = retriever.invoke(REQUESTS[2][1])
        for (_, query), docs in zip(REQUESTS, (first, second, third), strict=True):
            found.append(Retrieval(query, [d.id for d in docs], [d.page_content for d in docs]))
    finally:
        instrumentor.uninstrument()
    target.write_text(
        "".join(_otlp_line([span]) for span in exporter.get_finished_spans()), "utf-8"
    )
    return found


def _retriever() -> Any:
    """A LangChain retriever (top :data:`TOP_K`) over the bundled demo's chunks, with a
    deterministic offline embedding."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    raw = json.loads((ROOT / "data" / "src" / "biomedical_redundant.json").read_text("utf-8"))
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(
        [
            Document(page_content=c["text"], metadata={"title": c["title"]}, id=c["id"])
            for c in raw["chunks"]
        ]
    )
    return store.as_retriever(search_kwargs={"k": TOP_K})


def append_retrieval(target: Path, trace_id: str, query: str) -> None:
    """Run one more retrieval inside the trace ``trace_id`` (hex) of the export ``target``,
    as a service continuing that request does (the trace's context arrives from outside),
    and append its spans to the export, as a collector's file exporter does."""
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    retriever = _retriever()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parent = SpanContext(
        int(trace_id, 16), 0x1234_5678_9ABC_DEF0, True, TraceFlags(TraceFlags.SAMPLED)
    )
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with trace.use_span(NonRecordingSpan(parent)):
            retriever.invoke(query)
    finally:
        instrumentor.uninstrument()
    with target.open("a", encoding="utf-8") as handle:
        handle.writelines(_otlp_line([span]) for span in exporter.get_finished_spans())


def _root() -> Any:
    """A context without a parent span: what starts a trace of its own."""
    from opentelemetry.context import Context

    return Context()
