"""A request of a trace export, opened from the Pool sets page, comes back by its address: a
session that never saw the export reads the request's pool from the export's path on the
server and the request's place in it (``set`` and ``setq``), with its query and its numbers.
An uploaded export cannot come back that way: the page that fails to open the link says
so, with the way to keep the pool, and the uploading session offers its download.

The export is recorded for real (:mod:`trace_export`): a LangChain retriever instrumented
with OpenInference, its spans from the OpenTelemetry SDK's in-memory exporter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest_support import context_ids, metric, no_error, recommended_selection
from streamlit.testing.v1 import AppTest
from trace_export import REQUESTS, TOP_K, append_retrieval, record_export

from adagres.poolsets import summaries as poolsets
from adagres.traces import read_pools, trace_pool_set

pytestmark = [pytest.mark.frameworks, pytest.mark.model]

APP = "../../app.py"
SETS = "app_pages/9_pool_sets.py"
SELECTION = "app_pages/2_selection.py"
POOL_PAGE = "app_pages/1_pool.py"
BUDGET = 900
#: The request opened: the second retrieval of trace A (the pool set keeps a trace's
#: retrievals together, so it is the set's second pool, although it ran third).
ASKED = REQUESTS[2][1]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recorded export, in a folder the server shares (set per test: ``shared``)."""
    folder = tmp_path_factory.mktemp("traces")
    record_export(folder / "spans.jsonl")
    return folder / "spans.jsonl"


@pytest.fixture
def shared(export: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ADAGRES_SERVER_PATHS", str(export.parent))
    return export


def opened_request(
    source: Path | None = None, upload: bytes | None = None, asked: str = ASKED
) -> AppTest:
    """The app on the Pool sets page with the export (a server path, or uploaded), the
    request ``asked`` opened with "Open in every page" (the page says, for an upload only,
    that a link to its queries opens nothing elsewhere), then the Selection page."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(pool="tiny", budget=str(BUDGET))
    at.switch_page(SETS).run()
    if upload is not None:
        at.file_uploader(key="ps_upload").set_value(("spans.jsonl", upload, "application/json"))
        at.run()
    else:
        at.text_input(key="ps_path").set_value(str(source)).run()
    no_error(at)
    shown = next(df.value for df in at.dataframe if "AdaGReS cos" in df.value.columns)
    assert shown["query"].tolist() == [REQUESTS[0][1], REQUESTS[2][1], REQUESTS[1][1]]
    number = int(shown.loc[shown["query"] == asked, "#"].iloc[0])
    at.selectbox(key="ps_query").set_value(number).run()
    at.button(key="ps_open").click().run()
    no_error(at)
    uploads_said = [c.value for c in at.caption if c.value.startswith("An uploaded file stays")]
    assert bool(uploads_said) == (upload is not None), uploads_said
    assert all("Download this pool" in line for line in uploads_said)
    at.switch_page(SELECTION).run()
    no_error(at)
    return at


def fresh(params: dict[str, str], path: str | None = None) -> AppTest:
    """A session that never saw the export, opened by an address on the page ``path``
    (the app's first page, Selection, without one)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(params)
    if path is None:
        at.run()  # kept on its page by later runs (a first switch_page is not)
    else:
        at.switch_page(path).run()
    no_error(at)
    return at


def place(source: Path, folder: Path, asked: str = ASKED) -> str:
    """``<piece>.<position>`` of the request ``asked`` in the export's pool set."""
    pool_set = trace_pool_set(source, folder)
    return next(
        f"{unit}.{position}"
        for unit, piece in enumerate(pool_set.units)
        for position, pool in enumerate(poolsets.load_unit(piece))
        if pool.query == asked
    )


def test_a_link_to_a_trace_request_restores_its_pool_in_another_session(shared, tmp_path):
    at = opened_request(shared)
    key = at.session_state["settings"].pool
    params = dict(at.query_params)  # the Selection page's address
    assert key.startswith("poolset-") and params["pool"] == key
    assert params["set"] == str(shared) and params["setq"] == place(shared, tmp_path)
    [recorded] = [p for p in read_pools(shared) if p.query == ASKED]
    expected = recommended_selection(poolsets.prepare_pool(recorded), BUDGET)

    # Another session: the address alone reads the request again, with its numbers.
    linked = fresh(params)
    assert not linked.warning, [w.value for w in linked.warning]
    assert linked.title[0].value == "Selection"
    assert linked.session_state["settings"].pool == key
    assert linked.selectbox(key="sb_pool").value == key
    assert context_ids(linked) == [recorded.ids[i] for i in expected.indices]
    assert context_ids(linked) == context_ids(at)
    assert metric(linked, "Chunks selected") == str(expected.size)
    assert metric(linked, "Tokens used") == f"{expected.tokens_used:,} / {BUDGET:,}"
    # Its Pool page shows the request's query and all the documents retrieved.
    shown = fresh(params, POOL_PAGE)
    assert ASKED in [t.value for t in shown.text]
    assert metric(shown, "Chunks") == str(len(recorded)) == str(TOP_K)


def test_a_link_finds_its_request_by_its_span_when_the_export_grew(export, tmp_path, monkeypatch):
    """The pipeline runs on after the link was made: a later retrieval of trace A is
    appended to the export, so trace B's request moves one place down the set. The link
    still opens trace B's request (by its span), and the address follows it."""
    monkeypatch.setenv("ADAGRES_SERVER_PATHS", str(tmp_path))
    grown = tmp_path / "spans.jsonl"
    grown.write_bytes(export.read_bytes())
    asked = REQUESTS[1][1]  # trace B's only request: the set's last pool
    at = opened_request(grown, asked=asked)
    params = dict(at.query_params)
    recorded = {p.query: p for p in read_pools(grown)}
    assert params["setspan"] == recorded[asked].extra["trace"]["span_id"]
    before = context_ids(at)
    trace_a = recorded[REQUESTS[0][1]].extra["trace"]["trace_id"]
    append_retrieval(grown, trace_a, "and what raises blood sugar again")
    moved = place(grown, tmp_path / "sets", asked)
    assert (params["setq"], moved) == ("2.0", "3.0")

    linked = fresh(params)
    assert not linked.warning, [w.value for w in linked.warning]
    assert linked.session_state["settings"].pool == params["pool"]
    assert context_ids(linked) == before
    assert linked.query_params["setq"] == moved


def test_an_uploaded_trace_request_says_a_link_cannot_bring_it_back(export):
    at = opened_request(upload=export.read_bytes())
    key = at.session_state["settings"].pool
    params = dict(at.query_params)
    assert key.startswith("poolset-") and "set" not in params  # an upload's path is not shared
    # The uploading session offers the pool's file, on the Pool page.
    at.switch_page(POOL_PAGE).run()
    no_error(at)
    assert "Download this pool" in [b.proto.label for b in at.get("download_button")]
    # Another browser: told in the page, with the way to keep such a pool.
    linked = fresh(params)
    said = " ".join(w.value for w in linked.main.warning).replace("\\", "")
    assert key in said and "not available in this session" in said
    assert "Download this pool" in said
