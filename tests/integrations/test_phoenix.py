"""A local Phoenix server: a real LangChain retriever instrumented with OpenInference sends
it spans over OTLP/HTTP; ``adagres traces http://...`` reads them back through Phoenix's
client and writes a pool set whose pools hold what the retriever returned."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from milvus_support import free_port
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from trace_support import HashEmbeddings

from adagres.cli import main
from adagres.errors import PoolError
from adagres.pools.io import load_pools
from adagres.traces.phoenix import fetch_spans

pytestmark = pytest.mark.slow

PROJECT = "adagres-traces"
STARTUP_SECONDS = 180  # a cold start imports FastAPI, SQLAlchemy and migrates its database


def _until(condition, seconds: float, what: str):
    """Ask ``condition`` again (each time a request to the server) until it gives
    something true, for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
    raise AssertionError(f"{what}: not within {seconds} s")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory) -> Iterator[str]:
    """A Phoenix server of this module's own (its database in a temporary folder), ready
    when its log says Uvicorn runs (read as it is written: no polling)."""
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    ready, lines = threading.Event(), []

    def follow() -> None:  # until the server closes its output (it stopped)
        assert server.stdout is not None
        for line in server.stdout:
            lines.append(line.decode(errors="replace"))
            if b"Uvicorn running on" in line:
                ready.set()
        ready.set()

    threading.Thread(target=follow, daemon=True).start()
    try:
        assert ready.wait(STARTUP_SECONDS), f"Phoenix not up within {STARTUP_SECONDS} s"
        assert server.poll() is None, f"Phoenix stopped: {''.join(lines)[-2000:]}"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(60)


def test_spans_sent_to_phoenix_come_back_as_pools(phoenix, demo, tmp_path):
    provider = TracerProvider(
        resource=Resource.create({"service.name": "rag", "openinference.project.name": PROJECT})
    )
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{phoenix}/v1/traces")))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        store = InMemoryVectorStore(HashEmbeddings())
        store.add_documents(
            [
                Document(page_content=text, metadata=meta, id=doc_id)
                for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
            ]
        )
        retriever = store.as_retriever(search_kwargs={"k": 8})
        queries = ["insulin and blood sugar", "kidney filtration"]
        returned = {query: retriever.invoke(query) for query in queries}
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = tmp_path / "spans.parquet"
    # the server stores what it received in the background: ask until both spans are there
    _until(lambda: _fetched(phoenix, spans) == len(queries), 60, "both spans stored by Phoenix")
    out = tmp_path / "pools.jsonl"
    assert main(["traces", phoenix, str(out), "--project", PROJECT]) == 0
    pools = load_pools(out)
    assert sorted(p.query for p in pools) == sorted(queries)
    for pool in pools:
        docs = returned[pool.query]
        assert list(pool.texts) == [d.page_content for d in docs]
        assert list(pool.ids) == [d.id for d in docs]
        assert [c.metadata for c in pool.chunks] == [d.metadata for d in docs]
    assert not list(tmp_path.glob(".*.parquet"))  # the fetched table is not left behind


def _fetched(url: str, target: Path) -> int:
    try:
        return fetch_spans(url, target, project=PROJECT)
    except PoolError:  # nothing stored yet
        return 0


def test_an_empty_project_is_named(phoenix, tmp_path):
    with pytest.raises(PoolError) as error:
        fetch_spans(phoenix, tmp_path / "x.parquet", project="no-such-project")
    assert str(error.value).startswith(f"Phoenix at {phoenix}, project 'no-such-project': ")
