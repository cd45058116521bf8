"""Real traces read back as pools: LangChain, LlamaIndex and Haystack retrievers
instrumented with OpenInference, their spans kept by the OpenTelemetry SDK's in-memory
exporter and written as OTLP/JSON (hex ids, integer enums) and as Phoenix's span table;
LangChain runs as LangSmith's tracer records them. Each pool's texts, ids, scores and
order equal what the retriever returned. And the adapters' selection span read by the
OpenInference conventions as a reranker."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported

import pandas as pd
import pytest
from adapter_checks import BUDGET, TOP_K
from google.protobuf import json_format
from haystack import Document as HaystackDocument
from haystack import Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from langchain_core.documents import Document
from langchain_core.tracers import LangChainTracer
from langchain_core.vectorstores import InMemoryVectorStore
from langsmith import Client
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode
from openinference.instrumentation.haystack import HaystackInstrumentor
from openinference.instrumentation.langchain import LangChainInstrumentor
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    RerankerAttributes,
    SpanAttributes,
)
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from trace_support import HashEmbeddings

from adagres.integrations.langchain import AdagresRetriever
from adagres.pools.io import load_pools
from adagres.pools.pool import Pool
from adagres.traces import detect, read_pools, write_pool_set

SERVICE = "rag-under-test"
QUERIES = ("insulin and blood sugar", "kidney filtration", "insulin resistance")


class Instrumentor(Protocol):
    """What the OpenInference instrumentors share (OpenTelemetry's BaseInstrumentor)."""

    def instrument(self, **kwargs: Any) -> Any: ...

    def uninstrument(self, **kwargs: Any) -> Any: ...


class HashLlamaEmbedding(BaseEmbedding):
    """The same vectors for LlamaIndex."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return HashEmbeddings().vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return HashEmbeddings().vector(text)


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """The three frameworks instrumented with OpenInference, exporting to memory (a provider
    of this module's own, not the global one); uninstrumented afterwards."""
    found = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(found))
    instrumentors: list[Instrumentor] = [
        LangChainInstrumentor(),
        LlamaIndexInstrumentor(),
        HaystackInstrumentor(),
    ]
    for instrumentor in instrumentors:
        instrumentor.instrument(tracer_provider=provider)
    yield found
    for instrumentor in instrumentors:
        instrumentor.uninstrument()


def otlp_request(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """An ExportTraceServiceRequest as OTLP/JSON: protobuf's JSON mapping with integer
    enums, and the ids turned from base64 (protobuf's rule for bytes) to hex (OTLP's)."""
    request = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return request


def write_lines(path: Path, objects: Sequence[Any]) -> Path:
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objects), encoding="utf-8")
    return path


def retriever_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [
        s
        for s in exporter.get_finished_spans()
        if (s.attributes or {}).get("openinference.span.kind") == "RETRIEVER"
    ]


def check_pool(pool: Pool, query: str, texts: list[str], ids: list[str], scores: Any) -> None:
    assert pool.query == query
    assert list(pool.texts) == texts
    assert list(pool.ids) == ids
    if scores is None:
        assert pool.scores is None
    else:
        assert pool.scores is not None and pool.scores.tolist() == scores
    assert pool.extra["trace"]["service"] == SERVICE


@pytest.fixture(scope="module")
def lc_store(demo) -> InMemoryVectorStore:
    store = InMemoryVectorStore(HashEmbeddings())
    store.add_documents(
        [
            Document(page_content=text, metadata=meta, id=doc_id)
            for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
        ]
    )
    return store


def test_langchain_retrievals_grouped_by_trace(exporter, lc_store, tmp_path):
    exporter.clear()
    retriever = lc_store.as_retriever(search_kwargs={"k": TOP_K})
    tracer = trace.get_tracer("test", tracer_provider=exporter_provider(exporter))
    returned = {}
    with tracer.start_as_current_span("request A"):
        returned[QUERIES[0]] = retriever.invoke(QUERIES[0])
        returned[QUERIES[2]] = retriever.invoke(QUERIES[2])
    returned[QUERIES[1]] = retriever.invoke(QUERIES[1])  # a trace of its own
    found = retriever_spans(exporter)
    assert len(found) == 3
    by_query = {(s.attributes or {}).get("input.value"): s for s in found}
    # one span per line, the second trace's span between the first trace's two
    lines = [otlp_request([by_query[q]]) for q in (QUERIES[0], QUERIES[1], QUERIES[2])]
    export = write_lines(tmp_path / "spans.jsonl", lines)
    assert detect(export) == "otlp"
    done = write_pool_set(export, tmp_path / "pools.jsonl")
    assert (done.pools, done.traces, done.spans, done.empty) == (3, 2, 3, 0)
    pools = load_pools(tmp_path / "pools.jsonl")
    # grouped: the two retrievals of request A first, in the order they ran
    assert [p.query for p in pools] == [QUERIES[0], QUERIES[2], QUERIES[1]]
    assert pools[0].extra["trace"]["trace_id"] == pools[1].extra["trace"]["trace_id"]
    assert pools[0].extra["trace"]["trace_id"] != pools[2].extra["trace"]["trace_id"]
    for pool in pools:
        docs = returned[pool.query]
        check_pool(pool, pool.query, [d.page_content for d in docs], [d.id for d in docs], None)
        assert [c.metadata for c in pool.chunks] == [d.metadata for d in docs]
        span = by_query[pool.query]
        assert pool.extra["trace"]["span_id"] == f"{span.context.span_id:016x}"
        assert pool.extra["trace"]["trace_id"] == f"{span.context.trace_id:032x}"
        # attributes the reader does not use are kept, not dropped
        assert json.loads(pool.extra["trace"]["attributes"]["metadata"])["ls_retriever_name"]


_PROVIDERS: dict[int, TracerProvider] = {}


def exporter_provider(exporter: InMemorySpanExporter) -> TracerProvider:
    """A provider writing to ``exporter`` too, for a parent span around retrievals."""
    if id(exporter) not in _PROVIDERS:
        provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        _PROVIDERS[id(exporter)] = provider
    return _PROVIDERS[id(exporter)]


def test_llamaindex_retrieval_read_back(exporter, demo, tmp_path):
    exporter.clear()
    nodes = [
        TextNode(text=text, id_=doc_id, metadata=meta)
        for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]
    index = VectorStoreIndex(nodes, embed_model=HashLlamaEmbedding())
    returned = index.as_retriever(similarity_top_k=TOP_K).retrieve(QUERIES[0])
    export = write_lines(tmp_path / "spans.jsonl", [otlp_request(exporter.get_finished_spans())])
    done = write_pool_set(export, tmp_path / "pools.jsonl")
    # LlamaIndex records an inner retriever span without documents: left out, counted
    assert (done.pools, done.empty) == (1, 1)
    [pool] = load_pools(tmp_path / "pools.jsonl")
    check_pool(
        pool,
        QUERIES[0],
        [n.node.get_content() for n in returned],
        [n.node.node_id for n in returned],
        [n.score for n in returned],
    )
    assert pool.scores is not None
    assert len(set(pool.scores.tolist())) > 1  # distinct scores, so the order is the test


def test_haystack_retrieval_read_back(exporter, demo, tmp_path):
    exporter.clear()
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            HaystackDocument(content=text, id=doc_id, meta=meta)
            for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
        ]
    )
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=TOP_K))
    returned = pipeline.run({"retriever": {"query": QUERIES[0]}})["retriever"]["documents"]
    request = otlp_request(exporter.get_finished_spans())
    export = tmp_path / "request.json"  # one whole request, not JSON lines
    export.write_text(json.dumps(request, indent=2), encoding="utf-8")
    assert detect(export) == "otlp"
    [pool] = list(read_pools(export))
    check_pool(
        pool,
        QUERIES[0],  # from the JSON input Haystack records
        [d.content for d in returned],
        [d.id for d in returned],
        [d.score for d in returned],
    )
    assert [c.metadata for c in pool.chunks] == [d.meta for d in returned]


def phoenix_rows(spans: Sequence[ReadableSpan], *, nested: bool) -> pd.DataFrame:
    """Spans as Phoenix's span table holds them: ids under ``context.*``, the kind, times,
    and the attributes as ``attributes.*`` columns (``retrieval.documents`` one column of
    document objects), or as one nested ``attributes`` object."""
    rows = []
    for span in spans:
        attributes = dict(span.attributes or {})
        documents: dict[int, dict[str, Any]] = {}
        for key in list(attributes):
            if key.startswith("retrieval.documents."):
                _, _, number, rest = key.split(".", 3)
                documents.setdefault(int(number), {})[rest] = attributes.pop(key)
        row: dict[str, Any] = {
            "name": span.name,
            "span_kind": attributes.get("openinference.span.kind"),
            "start_time": pd.Timestamp(span.start_time, unit="ns", tz="UTC"),
            "end_time": pd.Timestamp(span.end_time, unit="ns", tz="UTC"),
            "context.span_id": f"{span.context.span_id:016x}",
            "context.trace_id": f"{span.context.trace_id:032x}",
        }
        listed = [documents[n] for n in sorted(documents)]
        if nested:
            row["attributes"] = {
                "input": {"value": attributes.get("input.value")},
                "retrieval": {"documents": [_nested(d) for d in listed]},
            }
        else:
            row["attributes.input.value"] = attributes.get("input.value")
            row["attributes.retrieval.documents"] = listed
        rows.append(row)
    return pd.DataFrame(rows)


def _nested(document: dict[str, Any]) -> dict[str, Any]:
    return {"document": {k.removeprefix("document."): v for k, v in document.items()}}


def test_phoenix_span_table_parquet_and_json_lines(exporter, lc_store, tmp_path):
    exporter.clear()
    docs = lc_store.as_retriever(search_kwargs={"k": TOP_K}).invoke(QUERIES[1])
    spans = retriever_spans(exporter)
    parquet = tmp_path / "spans.parquet"
    phoenix_rows(spans, nested=False).to_parquet(parquet)
    lines = tmp_path / "spans.jsonl"
    phoenix_rows(spans, nested=True).to_json(lines, orient="records", lines=True, date_format="iso")
    for export in (parquet, lines):
        assert detect(export) == "phoenix"
        [pool] = list(read_pools(export))
        assert pool.query == QUERIES[1]
        assert list(pool.texts) == [d.page_content for d in docs]
        assert [c.metadata for c in pool.chunks] == [d.metadata for d in docs]
        assert pool.extra["trace"]["span_id"] == f"{spans[0].context.span_id:016x}"


class RunStore:
    """LangSmith's client as ``LangChainTracer`` uses it, keeping the runs in memory."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}

    def create_run(self, **run: Any) -> None:
        self.runs[str(run["id"])] = dict(run)

    def update_run(self, run_id: Any, **run: Any) -> None:
        self.runs[str(run_id)].update(run)

    def flush(self) -> None:
        pass


def _exported(value: Any) -> Any:
    """A run's value as LangSmith's export writes it (documents as dicts, ids as text)."""
    if isinstance(value, Document):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _exported(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exported(v) for v in value]
    return value


def test_langsmith_runs_read_back(lc_store, tmp_path):
    client = RunStore()
    # The in-memory stand-in has the client's methods the tracer calls, not its type.
    tracer = LangChainTracer(client=cast(Client, client), project_name="adagres-tests")
    retriever = lc_store.as_retriever(search_kwargs={"k": TOP_K})
    docs = retriever.invoke(QUERIES[2], {"callbacks": [tracer]})
    tracer.wait_for_futures()
    export = tmp_path / "runs.jsonl"
    export.write_text(
        "".join(json.dumps(_exported(run), default=str) + "\n" for run in client.runs.values()),
        encoding="utf-8",
    )
    assert detect(export) == "langsmith"
    done = write_pool_set(export, tmp_path / "pools.jsonl")
    assert (done.format, done.pools) == ("langsmith", 1)
    [pool] = load_pools(tmp_path / "pools.jsonl")
    assert pool.query == QUERIES[2]
    assert list(pool.texts) == [d.page_content for d in docs]
    assert list(pool.ids) == [d.id for d in docs]
    [run] = client.runs.values()
    assert pool.extra["trace"]["span_id"] == str(run["id"])
    assert pool.extra["trace"]["trace_id"] == str(run["trace_id"])


# --------------------------------------------------------------------------- selection out

_GLOBAL = InMemorySpanExporter()
_ATTACHED: list[bool] = []


@pytest.fixture(scope="module")
def global_spans() -> Iterator[InMemorySpanExporter]:
    """OpenTelemetry's global provider (the adapters' spans go there), exporting to memory
    here too; set once per process, maybe by another test module."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    if not _ATTACHED and isinstance(provider, TracerProvider):
        provider.add_span_processor(SimpleSpanProcessor(_GLOBAL))
        _ATTACHED.append(True)
    _GLOBAL.clear()
    yield _GLOBAL


def test_selection_span_reads_as_an_openinference_reranker(lc_store, global_spans):
    base = lc_store.as_retriever(search_kwargs={"k": TOP_K})
    retrieved = base.invoke(QUERIES[0])
    adapter = AdagresRetriever(base_retriever=base, budget=BUDGET)
    selection = adapter.select_for(QUERIES[0]).selection
    assert selection is not None
    [span] = [s for s in global_spans.get_finished_spans() if s.name == "adagres.selection"]
    a = dict(span.attributes or {})
    kind = OpenInferenceSpanKindValues.RERANKER.value
    assert a[SpanAttributes.OPENINFERENCE_SPAN_KIND] == kind
    assert a[RerankerAttributes.RERANKER_QUERY] == QUERIES[0]
    assert a[RerankerAttributes.RERANKER_TOP_K] == len(selection.indices)

    def documents(prefix: str, field: str) -> list[Any]:
        out, n = [], 0
        while f"{prefix}.{n}.{field}" in a:
            out.append(a[f"{prefix}.{n}.{field}"])
            n += 1
        return out

    inputs, outputs = (
        RerankerAttributes.RERANKER_INPUT_DOCUMENTS,
        RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS,
    )
    content, doc_id = DocumentAttributes.DOCUMENT_CONTENT, DocumentAttributes.DOCUMENT_ID
    # the documents the span keeps are whole, the picks first; a count tells the rest
    shown = len(documents(inputs, doc_id))
    picked = [retrieved[i] for i in selection.indices]
    assert shown + len(picked) + a["adagres.documents_left_out"] == len(retrieved) + len(picked)
    assert len(a) <= 128  # the SDK's limit: nothing was dropped by it
    assert documents(inputs, doc_id) == [d.id for d in retrieved][:shown]
    assert documents(inputs, content) == [d.page_content for d in retrieved][:shown]
    assert documents(outputs, doc_id) == [d.id for d in picked]
    assert documents(outputs, content) == [d.page_content for d in picked]
    meta = json.loads(a[f"{outputs}.0.{DocumentAttributes.DOCUMENT_METADATA}"])
    assert meta == picked[0].metadata
    gains = documents(outputs, DocumentAttributes.DOCUMENT_SCORE)
    assert gains == [step.gain for step in selection.steps if step.accepted]
    # λ, the stop reason, tokens used and saved, and the dropped ids beside them
    assert a["adagres.stop_reason"] == selection.stop_reason.value
    assert a["adagres.tokens_used"] == selection.tokens_used
    assert a["adagres.tokens_saved"] == selection.tokens_saved
    assert list(a["adagres.dropped_ids"]) == [
        d.id for i, d in enumerate(retrieved) if i not in set(selection.indices)
    ]
    assert a["adagres.lambda"] == pytest.approx(selection.lam)
