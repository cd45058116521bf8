"""Each adapter reports its selection (λ, stop reason, tokens, budget, picked and dropped
ids, strategy, preset) to its framework's tracing, read back with that framework's own
in-memory handler (LangSmith's ``LangChainTracer`` with a client that keeps runs in memory),
and to OpenTelemetry (InMemorySpanExporter)."""

from __future__ import annotations

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported

import contextlib
from collections.abc import Iterator
from typing import Any, cast

import pytest
from adapter_checks import BUDGET, TOP_K, expected
from haystack import Document as HaystackDocument
from haystack import Pipeline, tracing
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.tracers import LangChainTracer
from langchain_core.vectorstores import InMemoryVectorStore
from langsmith import Client
from lc_checks import doc_id
from llama_index.core import VectorStoreIndex
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import Field

from adagres import embed_texts
from adagres.core.result import Selection
from adagres.integrations.haystack import AdagresSelector
from adagres.integrations.langchain import AdagresCompressor, AdagresRetriever, PackagedMiniLM
from adagres.integrations.llamaindex import (
    AdagresPostprocessor,
    AdagresSelectionEvent,
    PackagedMiniLMEmbedding,
)

pytestmark = pytest.mark.model

_EXPORTER = InMemorySpanExporter()
_ATTACHED = False


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    """OpenTelemetry's global provider (set once per process, maybe by another test
    module), exporting to memory here too."""
    global _ATTACHED
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    if not _ATTACHED and isinstance(provider, TracerProvider):
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        _ATTACHED = True
    _EXPORTER.clear()
    yield _EXPORTER


def reported(want: Selection, pool_ids: list[str], preset: str) -> dict[str, Any]:
    """What every tracer must read: the expected selection's values, by hand."""
    picked = [pool_ids[i] for i in want.indices]
    return {
        "adagres.strategy": want.strategy,
        "adagres.preset": preset,
        "adagres.budget": BUDGET,
        "adagres.tokens_used": want.tokens_used,
        "adagres.lambda": pytest.approx(want.lam, abs=1e-12),
        "adagres.stop_reason": want.stop_reason.value,
        "adagres.pool_size": len(pool_ids),
        "adagres.picked_ids": picked,
        "adagres.dropped_ids": [i for i in pool_ids if i not in picked],
        "adagres.tokenizer": "cl100k",
        "adagres.merges": len(want.merges),
        "adagres.tokens_saved": want.tokens_saved,
    }


def check_otel(exporter: InMemorySpanExporter, values: dict[str, Any], framework: str) -> None:
    [span] = [s for s in exporter.get_finished_spans() if s.name == "adagres.selection"]
    attributes = {k: v for k, v in (span.attributes or {}).items() if k.startswith("adagres.")}
    assert attributes.pop("adagres.framework") == framework
    left_out = attributes.pop("adagres.documents_left_out")
    assert isinstance(left_out, int) and left_out >= 0  # test_trace_pools checks it
    assert {k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items()} == values
    exporter.clear()


class Collect(BaseCallbackHandler):
    """LangChain: every custom event and chain run a handler is told of."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.starts: list[dict[str, Any]] = []
        self.ends: list[Any] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        self.events.append((name, data))

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.starts.append({"name": kwargs.get("name"), "metadata": kwargs.get("metadata")})

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self.ends.append(outputs)


@pytest.fixture(scope="module")
def lc_store(demo) -> InMemoryVectorStore:
    store = InMemoryVectorStore(PackagedMiniLM())
    store.add_documents(
        [
            Document(page_content=text, metadata=meta, id=doc_id)
            for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
        ]
    )
    return store


def lc_expected(store: InMemoryVectorStore, query: str, preset: str = "recommended"):
    documents = store.as_retriever(search_kwargs={"k": TOP_K}).invoke(query)
    vectors = [store.store[doc_id(doc)]["vector"] for doc in documents]
    texts = [doc.page_content for doc in documents]
    kwargs: dict[str, Any] = (
        {
            "strategy": "adagres",
            "settings": AdagresCompressor(embeddings=store.embeddings, budget=1, preset="paper")
            .options()
            .settings,
        }
        if preset == "paper"
        else {}
    )
    want = expected(store.embeddings.embed_query(query), vectors, texts, **kwargs)
    return reported(want, [doc_id(doc) for doc in documents], preset)


def test_langchain_retriever_reports_to_any_callback_handler(lc_store, demo, spans):
    values = lc_expected(lc_store, demo.query)
    retriever = AdagresRetriever(
        base_retriever=lc_store.as_retriever(search_kwargs={"k": TOP_K}), budget=BUDGET
    )
    for call in ("invoke", "select_for"):  # select_for goes through the same run
        handler = Collect()
        getattr(retriever, call)(demo.query, {"callbacks": [handler]})
        assert handler.events == [("adagres.selection", values)]
        [start] = [s for s in handler.starts if s["name"] == "adagres.selection"]
        assert {k: v for k, v in start["metadata"].items() if k.startswith("adagres.")} == {
            "adagres.budget": BUDGET,
            "adagres.strategy": "topk_budget",
            "adagres.preset": "recommended",
            "adagres.tokenizer": "cl100k",
        }
        assert values in handler.ends
        check_otel(spans, values, "langchain")


def test_langchain_compressor_reports_inside_the_compression_run(lc_store, demo, spans):
    values = lc_expected(lc_store, demo.query, preset="paper")
    compressor = AdagresCompressor(embeddings=lc_store.embeddings, budget=BUDGET, preset="paper")
    retriever = ContextualCompressionRetriever(
        base_compressor=compressor,
        base_retriever=lc_store.as_retriever(search_kwargs={"k": TOP_K}),
    )
    handler = Collect()
    retriever.invoke(demo.query, {"callbacks": [handler]})
    assert handler.events == [("adagres.selection", values)]
    check_otel(spans, values, "langchain")


class RunStore:
    """LangSmith's client as ``LangChainTracer`` uses it, keeping the runs in memory: no
    endpoint, no network."""

    def __init__(self) -> None:
        self.created: dict[str, dict[str, Any]] = {}
        self.updated: dict[str, dict[str, Any]] = {}

    def create_run(self, **run: Any) -> None:
        self.created[str(run["id"])] = run

    def update_run(self, run_id: Any, **run: Any) -> None:
        self.updated[str(run_id)] = run

    def flush(self) -> None:
        pass


def test_langsmith_tracer_receives_the_selection_under_the_retriever_run(lc_store, demo, spans):
    values = lc_expected(lc_store, demo.query)
    retriever = AdagresRetriever(
        base_retriever=lc_store.as_retriever(search_kwargs={"k": TOP_K}), budget=BUDGET
    )
    client = RunStore()
    # The in-memory stand-in has the client's methods the tracer calls, not its type.
    tracer = LangChainTracer(client=cast(Client, client), project_name="adagres-tests")
    docs = retriever.invoke(demo.query, {"callbacks": [tracer]})
    tracer.wait_for_futures()
    by_name = {run["name"]: run for run in client.created.values()}
    top, selection = by_name["AdagresRetriever"], by_name["adagres.selection"]
    assert top["run_type"] == "retriever" and top.get("parent_run_id") is None
    assert selection["parent_run_id"] == top["id"]
    metadata = selection["extra"]["metadata"]
    assert {k: v for k, v in metadata.items() if k.startswith("adagres.")} == {
        "adagres.budget": BUDGET,
        "adagres.strategy": "topk_budget",
        "adagres.preset": "recommended",
        "adagres.tokenizer": "cl100k",
    }
    assert client.updated[str(selection["id"])]["outputs"] == values
    returned = client.updated[str(top["id"])]["outputs"]["documents"]
    assert [doc.id for doc in returned] == values["adagres.picked_ids"] == [d.id for d in docs]
    check_otel(spans, values, "langchain")


class Events(BaseEventHandler):
    """LlamaIndex: the AdaGReS events the dispatcher hands to its handlers."""

    seen: list[AdagresSelectionEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Events"

    def handle(self, event: Any, **kwargs: Any) -> None:
        if isinstance(event, AdagresSelectionEvent):
            self.seen.append(event)


def test_llamaindex_dispatches_an_event_with_the_selection(demo, spans):
    nodes = [
        TextNode(id_=node_id, text=text, metadata=meta)
        for node_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]
    index = VectorStoreIndex(nodes=nodes, embed_model=PackagedMiniLMEmbedding())
    postprocessor = AdagresPostprocessor(
        budget=BUDGET, embed_model=PackagedMiniLMEmbedding(), vector_store=index.vector_store
    )
    engine = index.as_query_engine(
        llm=MockLLM(), similarity_top_k=TOP_K, node_postprocessors=[postprocessor]
    )
    handler = Events()
    root = get_dispatcher()
    root.add_event_handler(handler)
    try:
        engine.query(demo.query)
    finally:
        root.event_handlers.remove(handler)

    pool = index.as_retriever(similarity_top_k=TOP_K).retrieve(demo.query)
    store = index.vector_store
    assert isinstance(store, SimpleVectorStore)  # the index's default, in memory
    want = expected(
        PackagedMiniLMEmbedding().get_query_embedding(demo.query),
        [store.get(n.node.node_id) for n in pool],
        [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in pool],
    )
    values = reported(want, [n.node.node_id for n in pool], "recommended")
    [event] = handler.seen
    assert event.attributes == values
    assert (event.lam, event.stop_reason, event.tokens_used, event.budget) == (
        values["adagres.lambda"],
        want.stop_reason.value,
        want.tokens_used,
        BUDGET,
    )
    assert event.picked_ids == values["adagres.picked_ids"] and event.query == demo.query
    assert event.span_id is not None  # inside the postprocess_nodes span
    check_otel(spans, values, "llamaindex")


class Spans(tracing.Tracer):
    """Haystack: a tracer keeping each span's name and tags."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, dict[str, Any]]] = []

    @contextlib.contextmanager
    def trace(
        self, operation_name: str, tags: Any = None, parent_span: Any = None
    ) -> Iterator[Any]:
        span = Tagged(dict(tags or {}))
        yield span
        self.spans.append((operation_name, span.tags))

    def current_span(self) -> Any:
        return None


class Tagged(tracing.Span):
    def __init__(self, tags: dict[str, Any]) -> None:
        self.tags = tags

    def set_tag(self, key: str, value: Any) -> None:
        self.tags[key] = value


def test_haystack_tags_a_span_of_its_tracer(demo, spans):
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            HaystackDocument(id=i, content=t, meta=m, embedding=e.tolist())
            for i, t, m, e in zip(
                demo.ids, demo.texts, demo.metadatas, embed_texts(demo.texts), strict=True
            )
        ]
    )
    query_vector = embed_texts([demo.query])[0].tolist()
    retriever = InMemoryEmbeddingRetriever(store, top_k=TOP_K, return_embedding=True)
    pipe = Pipeline()
    pipe.add_component("retriever", retriever)
    pipe.add_component("adagres", AdagresSelector(budget=BUDGET))
    pipe.connect("retriever.documents", "adagres.documents")
    tracer = Spans()
    tracing.enable_tracing(tracer)
    try:
        pipe.run({"query_embedding": query_vector})
    finally:
        tracing.disable_tracing()

    pool = retriever.run(query_embedding=query_vector)["documents"]
    texts = [d.content for d in pool]
    assert all(text is not None for text in texts)
    want = expected(query_vector, [d.embedding for d in pool], [t for t in texts if t is not None])
    values = reported(want, [d.id for d in pool], "recommended")
    [tags] = [tags for name, tags in tracer.spans if name == "adagres.selection"]
    assert tags == values
    names = [name for name, _ in tracer.spans]
    assert names.index("adagres.selection") < names.index("haystack.pipeline.run")
    check_otel(spans, values, "haystack")
