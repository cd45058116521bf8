"""Trace exports read as pools: what a bad export gets (one-line errors naming the line,
the span and the document), what is kept (unknown attributes), and the promises of the
pool set they become: every trace's retrievals together and in start order, memory that
does not grow with the export. Real spans from real frameworks: tests/integrations."""

from __future__ import annotations

import base64
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adagres.cli import main
from adagres.errors import PoolError
from adagres.pools.io import load_pools
from adagres.traces import detect, exports, read_pools, write_pool_set


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # 64-bit integers as decimal texts, as OTLP/JSON allows
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": v}


def span(
    trace: str,
    span_id: str,
    attributes: dict[str, Any],
    *,
    start: int = 1_700_000_000_000_000_000,
) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span_id,
        "name": "retrieve",
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }


def retriever(query: str, texts: list[str], **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
    for n, text in enumerate(texts):
        out[f"retrieval.documents.{n}.document.content"] = text
        out[f"retrieval.documents.{n}.document.id"] = f"doc-{text}"
        out[f"retrieval.documents.{n}.document.score"] = 1.0 - n / 10
    out.update(more)
    return out


def request(*spans: dict[str, Any], service: str = "svc") -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": list(spans)}]}]}


def lines(path: Path, *objects: Any) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


T1, T2 = "a" * 32, "b" * 32


def test_a_retriever_span_becomes_a_pool_with_its_trace(tmp_path):
    export = lines(
        tmp_path / "x.jsonl",
        request(
            span(T1, "1" * 16, retriever("why?", ["p", "q"], **{"my.flag": True})),
            span(T1, "2" * 16, {"openinference.span.kind": "LLM", "input.value": "hi"}),
        ),
    )
    assert detect(export) == "otlp"
    [pool] = list(read_pools(export))
    assert pool.query == "why?"
    assert pool.ids == ("doc-p", "doc-q")
    assert pool.texts == ("p", "q")
    assert pool.scores is not None and pool.scores.tolist() == [1.0, 0.9]
    assert pool.extra["trace"] == {
        "format": "openinference",
        "trace_id": T1,
        "span_id": "1" * 16,
        "name": "retrieve",
        "service": "svc",
        "start": "2023-11-14T22:13:20.000000Z",
        "end": "2023-11-14T22:13:20.000001Z",
        "attributes": {"my.flag": True},  # an attribute nobody reads is kept
    }


def test_protobuf_json_ids_and_enum_names_read_as_otlp_json(tmp_path):
    raw = span(T1, "1" * 16, retriever("q", ["p"]))
    raw["traceId"] = base64.b64encode(bytes.fromhex(T1)).decode()
    raw["spanId"] = base64.b64encode(bytes.fromhex("1" * 16)).decode()
    raw["kind"] = "SPAN_KIND_INTERNAL"
    [pool] = list(read_pools(lines(tmp_path / "x.jsonl", request(raw))))
    assert (pool.extra["trace"]["trace_id"], pool.extra["trace"]["span_id"]) == (T1, "1" * 16)


@pytest.mark.parametrize("field", ["instrumentationLibrarySpans", "instrumentation_library_spans"])
def test_an_export_of_the_older_otlp_names_its_scopes_instrumentation_library_spans(
    tmp_path, field
):
    """OTLP before 0.15 wrote a resource's spans under instrumentationLibrarySpans (protobuf:
    instrumentation_library_spans); such an export reads as the scopeSpans of today."""
    old = request(span(T1, "1" * 16, retriever("q", ["p", "r"])))
    old["resourceSpans"][0][field] = old["resourceSpans"][0].pop("scopeSpans")
    [pool] = list(read_pools(lines(tmp_path / "x.jsonl", old)))
    assert (pool.query, pool.texts) == ("q", ("p", "r"))


def test_unknown_document_fields_and_repeated_ids_are_kept(tmp_path):
    attributes = retriever(
        "q",
        ["p", "q"],
        **{
            "retrieval.documents.0.document.rerank_hint": "x",
            "retrieval.documents.1.document.id": "doc-p",  # the same id twice
            "retrieval.documents.0.document.metadata": '{"source": "f.txt", "start_index": 4}',
            "retrieval.documents.1.document.metadata": "not json",
        },
    )
    export = lines(tmp_path / "x.jsonl", request(span(T1, "1" * 16, attributes)))
    [pool] = list(read_pools(export))
    assert pool.ids == ("c0", "c1")
    assert [c.extra["document_id"] for c in pool.chunks] == ["doc-p", "doc-p"]
    assert pool.chunks[0].extra["attributes"] == {"rerank_hint": "x"}
    assert pool.chunks[0].metadata == {"source": "f.txt", "start_index": 4}
    assert pool.chunks[1].metadata == {"value": "not json"}


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        (
            [
                request(
                    span(T1, "1" * 16, {"openinference.span.kind": "RETRIEVER", "input.value": "q"})
                )
            ],
            "x.jsonl: 1 retriever span(s), none with documents (retrieval.documents); 1 spans read",
        ),
        (
            [request(span(T1, "1" * 16, {"openinference.span.kind": "LLM"}))] * 2,
            "x.jsonl: no retriever span among 2 spans (kinds: LLM 2)",
        ),
        (
            [
                request(
                    span(
                        T1,
                        "1" * 16,
                        {
                            **retriever("q", ["p"]),
                            "retrieval.documents.1.document.id": "d2",
                        },
                    )
                )
            ],
            "x.jsonl, line 1, span 1111111111111111: retrieval.documents.1: a document without "
            "content (document.content)",
        ),
        (
            [request(span(T1, "1" * 16, {**retriever("q", ["p"]), "input.value": ""}))],
            "x.jsonl, line 1, span 1111111111111111: a retriever span without a query "
            "(input.value), got ''",
        ),
        (
            [
                request(
                    span(
                        T1,
                        "1" * 16,
                        {**retriever("q", ["p"]), "retrieval.documents.0.document.score": "high"},
                    )
                )
            ],
            "x.jsonl, line 1, span 1111111111111111: retrieval.documents.0: document.score "
            "must be a finite number, got 'high'",
        ),
        (
            [request(span("zz", "1" * 16, retriever("q", ["p"])))],
            "x.jsonl, line 1, span 1111111111111111: traceId is neither hex nor base64: 'zz'",
        ),
    ],
)
def test_bad_exports_get_one_line_errors(tmp_path, objects, message):
    export = lines(tmp_path / "x.jsonl", *objects)
    with pytest.raises(PoolError) as error:
        write_pool_set(export, tmp_path / "out.jsonl")
    assert str(error.value) == message
    assert not (tmp_path / "out.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]  # no scratch left


def test_a_malformed_line_is_named(tmp_path):
    export = tmp_path / "x.jsonl"
    export.write_text(json.dumps(request()) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(PoolError, match=r"^x\.jsonl, line 2: not JSON \(Expecting"):
        list(read_pools(export))


def test_a_pool_set_is_no_trace_export(tmp_path):
    pools = lines(tmp_path / "p.jsonl", {"query": "q", "chunks": [{"id": "a", "text": "x"}]})
    assert detect(pools) is None
    with pytest.raises(PoolError, match="not a trace export"):
        write_pool_set(pools, tmp_path / "out.jsonl")


def test_one_json_document_is_read_whole_within_a_bound(tmp_path, monkeypatch):
    document = tmp_path / "x.json"
    document.write_text(json.dumps(request(span(T1, "1" * 16, retriever("q", ["p"]))), indent=1))
    assert [p.query for p in read_pools(document)] == ["q"]
    monkeypatch.setattr(exports, "MAX_DOCUMENT_BYTES", 100)
    size = document.stat().st_size
    with pytest.raises(PoolError) as error:
        list(read_pools(document))
    assert str(error.value) == (
        f"x.json: one JSON document of {size:,} bytes, over the 100 read whole; export JSON "
        f"lines (one request, span or run per line), which are read a line at a time"
    )


starts = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 50)), min_size=1, max_size=12
)  # (trace, start) per retrieval, in export order


@settings(max_examples=40, deadline=None)
@given(starts)
def test_the_retrievals_of_a_trace_stay_together_in_start_order(tmp_path_factory, found):
    folder = tmp_path_factory.mktemp("grouped")
    objects = [
        request(span(f"{trace:032x}", f"{n + 1:016x}", retriever(f"q{n}", [f"t{n}"]), start=start))
        for n, (trace, start) in enumerate(found)
    ]
    done = write_pool_set(lines(folder / "x.jsonl", *objects), folder / "out.jsonl")
    pools = load_pools(folder / "out.jsonl")
    assert (done.pools, done.traces) == (len(found), len({t for t, _ in found}))
    got = [found[int(p.query[1:])] for p in pools]
    # traces in the order they first appear, each one contiguous, starts ascending
    first_seen = list(dict.fromkeys(t for t, _ in found))
    assert [t for t, _ in got] == sorted((t for t, _ in found), key=first_seen.index)
    for trace in first_seen:
        mine = [s for t, s in got if t == trace]
        assert mine == sorted(mine)
    # equal starts keep the export's order
    keyed = [(first_seen.index(t), s, n) for n, (t, s) in enumerate(found)]
    assert [int(p.query[1:]) for p in pools] == [n for _, _, n in sorted(keyed)]


def test_memory_does_not_grow_with_the_export(tmp_path):
    """20,000 spans (2 MB a line at a time): the peak of Python's allocations stays far below
    the file's size, and below what a few hundred spans' pools take."""
    export = tmp_path / "big.jsonl"
    text = "lorem ipsum " * 40
    with export.open("w", encoding="utf-8") as handle:
        for n in range(20_000):
            attributes = (
                retriever(f"q{n}", [text + str(n), text])
                if n % 10 == 0
                else {"openinference.span.kind": "LLM", "input.value": text}
            )
            trace = f"{n // 7:032x}"
            handle.write(json.dumps(request(span(trace, f"{n + 1:016x}", attributes))) + "\n")
    size = export.stat().st_size
    tracemalloc.start()
    try:
        done = write_pool_set(export, tmp_path / "out.jsonl")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (done.spans, done.pools) == (20_000, 2_000)
    assert peak < size / 10, (peak, size)


def langsmith_run(run_id: str, run_type: str, **more: Any) -> dict[str, Any]:
    return {
        "id": run_id,
        "trace_id": "trace-1",
        "name": "Retriever",
        "run_type": run_type,
        "start_time": "2026-01-02T03:04:05.000006",
        "session_id": "project-7",
        **more,
    }


def test_langsmith_runs_as_a_json_list(tmp_path):
    runs = [
        langsmith_run("r0", "chain", inputs={"question": "x"}),
        langsmith_run(
            "r1",
            "retriever",
            inputs={"query": "what?"},
            outputs={
                "documents": [
                    {"page_content": "A", "metadata": {"score": 0.5}, "type": "Document"},
                    {"lc": 1, "kwargs": {"page_content": "B", "id": "b"}},
                ]
            },
        ),
        langsmith_run("r2", "retriever", inputs={"query": "none"}, outputs={"documents": []}),
    ]
    export = tmp_path / "runs.json"
    export.write_text(json.dumps(runs), encoding="utf-8")
    assert detect(export) == "langsmith"
    done = write_pool_set(export, tmp_path / "out.jsonl")
    assert done.summary() == (
        "1 pools from 1 traces (3 runs read, langsmith export); 1 retriever runs without "
        "documents left out"
    )
    [pool] = load_pools(tmp_path / "out.jsonl")
    assert (pool.query, pool.texts, pool.ids) == ("what?", ("A", "B"), ("c0", "c1"))
    assert pool.chunks[1].extra["document_id"] == "b"
    assert pool.chunks[0].score == 0.5
    assert pool.extra["trace"]["start"] == "2026-01-02T03:04:05.000006Z"
    assert pool.extra["trace"]["attributes"] == {"session_id": "project-7"}


def test_phoenix_rows_with_nested_attributes(tmp_path):
    row = {
        "name": "retrieve",
        "span_kind": "RETRIEVER",
        "context": {"trace_id": T1, "span_id": "s1"},
        "start_time": 1_700_000_000_000,  # milliseconds, as pandas writes times to JSON
        "status_code": "OK",
        "attributes": {
            "input": {"value": "q"},
            "retrieval": {"documents": [{"document": {"content": "x", "metadata": {"a": 1}}}]},
        },
    }
    export = lines(tmp_path / "spans.jsonl", row)
    assert detect(export) == "phoenix"
    [pool] = list(read_pools(export))
    assert (pool.query, pool.texts, pool.chunks[0].metadata) == ("q", ("x",), {"a": 1})
    assert pool.extra["trace"]["start"] == "2023-11-14T22:13:20.000000Z"
    assert pool.extra["trace"]["attributes"] == {"phoenix.status_code": "OK"}


def test_cli_writes_the_pool_set_and_names_bad_input(tmp_path, capsys):
    export = lines(tmp_path / "x.jsonl", request(span(T1, "1" * 16, retriever("q", ["p"]))))
    assert main(["traces", str(export), str(tmp_path / "pools.jsonl"), "--tokenizer", "words"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 pools from 1 traces (1 spans read, otlp export)\n")
    [pool] = load_pools(tmp_path / "pools.jsonl")
    assert pool.token_counts is not None
    assert (pool.tokenizer, pool.token_counts.tolist()) == ("words", [1])
    assert main(["traces", str(tmp_path / "pools.jsonl"), str(tmp_path / "again.jsonl")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("adagres: error: pools.jsonl: not a trace export") and err.count("\n") == 1
    )


_KEYS = [
    "resourceSpans",
    "resource",
    "attributes",
    "scopeSpans",
    "spans",
    "key",
    "value",
    "stringValue",
    "intValue",
    "doubleValue",
    "arrayValue",
    "kvlistValue",
    "values",
    "bytesValue",
    "traceId",
    "spanId",
    "startTimeUnixNano",
    "name",
    "scope",
    "status",
    "openinference.span.kind",
    "input.value",
    "retrieval.documents.0.document.content",
    "retrieval.documents.0.document.score",
    "retrieval.documents.0.document.metadata",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.sampled_from(["RETRIEVER", "q", "aaaa", "1" * 16, "", "{}", "nan", "x" * 32]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
    ),
    max_leaves=25,
)


def _or_junk(strategy):
    return st.one_of(strategy, strategy, strategy, json_values)


any_values = _or_junk(
    st.dictionaries(
        st.sampled_from(
            [
                "stringValue",
                "intValue",
                "doubleValue",
                "boolValue",
                "arrayValue",
                "kvlistValue",
                "bytesValue",
            ]
        ),
        json_values,
        min_size=1,
        max_size=1,
    )
)
attributes = _or_junk(
    st.lists(
        st.fixed_dictionaries({"key": _or_junk(st.sampled_from(_KEYS[-5:])), "value": any_values}),
        max_size=5,
    )
)
otlp_spans = _or_junk(
    st.fixed_dictionaries(
        {"attributes": attributes},
        optional={
            "traceId": json_values,
            "spanId": json_values,
            "startTimeUnixNano": json_values,
            "name": json_values,
            "status": json_values,
        },
    )
)
bodies = _or_junk(
    st.lists(
        _or_junk(
            st.fixed_dictionaries(
                {
                    "scopeSpans": _or_junk(
                        st.lists(
                            _or_junk(
                                st.fixed_dictionaries(
                                    {"spans": _or_junk(st.lists(otlp_spans, max_size=3))},
                                    optional={"scope": json_values},
                                )
                            ),
                            max_size=2,
                        )
                    )
                },
                optional={"resource": _or_junk(st.fixed_dictionaries({"attributes": attributes}))},
            )
        ),
        max_size=2,
    )
)


@settings(max_examples=300, deadline=None)
@given(bodies)
def test_any_malformed_otlp_line_gets_a_one_line_error(tmp_path_factory, body):
    """Whatever a line holds under resourceSpans, reading it either gives pools or raises
    the project's one-line error; never another exception."""
    folder = tmp_path_factory.mktemp("fuzz")
    export = lines(folder / "x.jsonl", {"resourceSpans": body})
    try:
        write_pool_set(export, folder / "out.jsonl")
    except PoolError as error:
        assert "\n" not in str(error) and str(error).startswith("x.jsonl")
