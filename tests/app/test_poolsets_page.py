"""AppTest tests of the Pool sets page: the table's numbers against the library's rows, the
filters and sorting, opening a query's pool, errors, and one summary per file content."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import adagres
from adagres.poolsets import summaries as poolsets
from ui import pools
from ui import poolsets as ps
from ui.text import escape_md

PAGE = "../../app_pages/9_pool_sets.py"
TIMEOUT = 120
BUDGET = 700
#: The sidebar's settings of a session that opens on ``?pool=tiny``: the default preset's.
SIDEBAR = adagres.PRESETS["recommended"].settings


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_page(path: str | None = None, budget: int = BUDGET) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["pool"] = "tiny"
    at.run()
    if path is not None:
        at.text_input(key="ps_path").set_value(str(path)).run()
    at.number_input(key="ps_budget").set_value(budget).run()
    return at


def table(at: AppTest):
    return next(df.value for df in at.dataframe if "AdaGReS cos" in df.value.columns)


def test_the_table_holds_the_library_rows(pools_dir):
    at = open_page()
    no_error(at)
    expected = poolsets.summarize(poolsets.load_pool_set(pools_dir), SIDEBAR, BUDGET, workers=1)
    shown = table(at)
    assert len(shown) == len(expected) == 3  # tiny, medium, large
    for column, heading in ps.COLUMNS.items():
        want = [row[column] for row in expected]
        if column.endswith("_repeated"):  # shares, shown in percent with one decimal
            want = [round(100 * v, 1) for v in want]
        assert shown[heading].tolist() == want, heading
    assert len(at.get("plotly_chart")) == 2  # the two distributions


def test_filters_and_sorting(pools_dir):
    at = open_page()
    found = poolsets.summarize(poolsets.load_pool_set(pools_dir), SIDEBAR, BUDGET, workers=1)
    at.selectbox(key="ps_sort").set_value("dropped").run()
    at.toggle(key="ps_descending").set_value(True).run()
    order = sorted(found, key=lambda r: (-r["dropped"], r["query_id"]))
    assert table(at)["#"].tolist() == [r["query_id"] for r in order]
    most = max(r["dropped"] for r in found)
    at.number_input(key="ps_min_dropped").set_value(most).run()
    assert table(at)["#"].tolist() == [r["query_id"] for r in order if r["dropped"] >= most]
    at.number_input(key="ps_min_dropped").set_value(0).run()
    at.text_input(key="ps_filter").set_value("no such words").run()
    no_error(at)
    assert table(at).empty and not at.get("plotly_chart")


def test_open_a_query_in_every_page(pools_dir):
    at = open_page()
    at.selectbox(key="ps_query").set_value(1).run()
    at.button(key="ps_open").click().run()
    no_error(at)
    key = at.session_state["settings"].pool
    assert key.startswith("poolset-") and at.selectbox(key="sb_pool").value == key
    set_ = poolsets.load_pool_set(pools_dir)
    row = poolsets.summarize(set_, SIDEBAR, BUDGET, workers=1)[1]
    expected = poolsets.load_unit(set_.units[row["unit"]])[row["position"]]
    assert pools.registered(key) == expected and at.query_params["pool"] == key


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch):
    """``tmp_path`` as a folder this server shares with its browser users."""
    monkeypatch.setenv("ADAGRES_SERVER_PATHS", str(tmp_path))
    return tmp_path


def test_a_broken_line_is_named(pools_dir, shared_tmp):
    tmp_path = shared_tmp
    text = (pools_dir / "tiny.json").read_text()
    path = tmp_path / "set.jsonl"
    path.write_text(text.replace("\n", " ") + "\n" + '{"query": "q", "chunks": [}' + "\n")
    at = open_page(path)
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert message.startswith(escape_md("set.jsonl, line 2, column"))


def test_one_summary_per_content_and_settings(pools_dir, shared_tmp, monkeypatch):
    tmp_path = shared_tmp
    calls = []
    original = poolsets.summarize

    def counting(*args, **kwargs):
        calls.append(args[2])
        return original(*args, **kwargs)

    monkeypatch.setattr(poolsets, "summarize", counting)
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "tiny.json").write_text((pools_dir / "tiny.json").read_text())
    at = open_page(folder, budget=333)
    assert calls[-1] == 333
    calls.clear()
    at.text_input(key="ps_filter").set_value("synthetic").run()  # reruns: no new summary
    at.toggle(key="ps_descending").set_value(True).run()
    assert calls == []
    at.number_input(key="ps_budget").set_value(444).run()
    at.number_input(key="ps_budget").set_value(333).run()  # computed before: from the cache
    assert calls == [444]
    (folder / "tiny.json").write_text((pools_dir / "medium.json").read_text())  # new content
    at.run()
    no_error(at)
    assert calls == [444, 333] and len(table(at)) == 1
    # A new server process finds the rows on disk: no summary, the same table.
    before = table(at)
    ps._rows.clear()
    at.run()
    assert calls == [444, 333] and table(at).equals(before)


@pytest.mark.parametrize("name", ["absent.jsonl", "empty", "a" * 300 + ".jsonl"])
def test_bad_paths(shared_tmp, name):
    tmp_path = shared_tmp
    (tmp_path / "empty").mkdir(exist_ok=True)
    at = open_page(tmp_path / name)
    assert not at.exception
    (message,) = [e.value for e in at.error]
    expected = {"absent.jsonl": "no such pool set", "empty": "holds no pool"}
    assert escape_md(expected.get(name, "cannot read the pool set (File name too long)")) in message


@pytest.mark.parametrize("where", ["outside", "dotdot"])
def test_paths_outside_the_shared_folders_are_not_opened(pools_dir, tmp_path, where):
    """A typed path outside the data folder and $ADAGRES_SERVER_PATHS is refused before it is
    looked at: an existing pool set gets the same message as a missing one would."""
    path = tmp_path / "set.jsonl"
    path.write_text((pools_dir / "tiny.json").read_text().replace("\n", " ") + "\n")
    typed = str(path)
    if where == "dotdot":  # from inside the data folder up to the root, then down to the set
        typed = str(pools.data_dir()) + "/.." * len(pools.data_dir().parts) + str(path)
    at = open_page(typed)
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert "is outside the folders this server shares" in message
    assert not any("AdaGReS cos" in df.value.columns for df in at.dataframe)


def test_an_uploaded_set_opens_only_in_its_session(pools_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    content = ((pools_dir / "tiny.json").read_text().replace("\n", " ") + "\n").encode()
    mine = open_page()
    mine.file_uploader(key="ps_upload").set_value(("mine.jsonl", content, "application/json"))
    mine.run()
    no_error(mine)
    saved = mine.text_input(key="ps_path").value
    assert saved is not None and saved.endswith("-mine.jsonl") and len(table(mine)) == 1
    theirs = open_page(saved)  # another session types the upload's path
    assert not theirs.exception
    (message,) = [e.value for e in theirs.error]
    assert "is outside the folders this server shares" in message
    assert not any("AdaGReS cos" in df.value.columns for df in theirs.dataframe)


def test_an_upload_is_named_by_its_file_and_starts_at_its_first_query(
    pools_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    lines = [(pools_dir / name).read_text().replace("\n", " ") for name in ("tiny.json",) * 2]
    content = ("\n".join(lines) + "\n").encode()
    at = open_page()
    at.selectbox(key="ps_query").set_value(2).run()  # a query of the bundled set
    at.file_uploader(key="ps_upload").set_value(("runs.jsonl", content, "application/json"))
    at.run()
    no_error(at)
    assert len(table(at)) == 2
    assert at.selectbox(key="ps_query").value == 0  # not the previous set's #2
    said = [t.value for t in at.text]
    assert "runs.jsonl (uploaded): 2 queries" in said
    assert not any("cache" in line for line in said)  # not the path it is kept at
    at.button(key="ps_open").click().run()
    labels = at.selectbox(key="sb_pool").options  # the sidebar names the pool by the file
    assert any(label.startswith("runs.jsonl (uploaded) #0: ") for label in labels), labels


def test_an_upload_is_kept_in_its_session_only_and_released(pools_dir, tmp_path, monkeypatch):
    """An uploaded set lives in its session's state (not in the server-wide cache), one at a
    time: opening a shared set releases it; a session may open only its latest uploads."""
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    line = (pools_dir / "tiny.json").read_text().replace("\n", " ") + "\n"
    ps._open.clear()
    at = open_page()
    uploads = []
    for number in range(ps.MAX_SESSION_UPLOADS + 1):
        content = (line * (number + 1)).encode()  # a new content each time
        at.file_uploader(key="ps_upload").set_value((f"u{number}.jsonl", content, "text/plain"))
        at.run()
        no_error(at)
        uploads.append(at.text_input(key="ps_path").value)
        path, _stamp, kept = at.session_state["ps_opened_upload"]
        assert path == uploads[-1] and len(kept) == number + 1 and len(table(at)) == number + 1
        key, found = at.session_state["ps_upload_rows"]  # its rows: in the session too
        assert key[0] == kept.fingerprint and len(found) == number + 1
    assert at.session_state["ps_own_uploads"] == uploads[1:]  # the oldest one is released
    at.text_input(key="ps_path").set_value(uploads[0]).run()
    (message,) = [e.value for e in at.error]
    assert "is outside the folders this server shares" in message
    at.text_input(key="ps_path").set_value(str(pools_dir)).run()  # a shared set
    no_error(at)
    assert "ps_opened_upload" not in at.session_state
    assert "ps_upload_rows" not in at.session_state


def test_one_bad_line_refuses_the_set_naming_file_line_and_problem(pools_dir, shared_tmp):
    """The rule of the library, the CLI and the page alike: one bad line refuses the set, and
    the message names the file, the line and what is wrong with it."""
    line = (pools_dir / "tiny.json").read_text().replace("\n", " ")
    path = shared_tmp / "set.jsonl"
    path.write_text(f"{line}\n\n{line}\n" + '[{"page_content": "a document"}]\n')
    at = open_page(path)
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert message == escape_md(
        "set.jsonl, line 4: each line of a pool set must be a pool "
        '{"query": ..., "chunks": [...]}, got a list'
    )


def _pick_row(path: str, shown: list, index: int) -> None:
    """A page run in which the table reports a click on row ``index`` (what the browser
    sends; AppTest cannot click a table row) and the table's callback runs."""
    from types import SimpleNamespace

    import streamlit as st

    from ui import poolsets as ps
    from ui.sidebar import sidebar

    sidebar()
    st.session_state["ps_table"] = SimpleNamespace(selection=SimpleNamespace(rows=[index]))
    ps.pick_from_table(ps.open_set(path), shown)()


def test_a_row_click_opens_its_pool_and_moves_the_query_box(pools_dir):
    set_ = poolsets.load_pool_set(pools_dir)
    shown = poolsets.summarize(set_, SIDEBAR, BUDGET, workers=1)
    at = AppTest.from_function(_pick_row, args=(str(pools_dir), shown, 2), default_timeout=TIMEOUT)
    at.query_params["pool"] = "tiny"
    at.run()
    no_error(at)
    row = shown[2]
    assert at.session_state["ps_query"] == row["query_id"] != shown[0]["query_id"]
    key = at.session_state["settings"].pool
    expected = poolsets.load_unit(set_.units[row["unit"]])[row["position"]]
    assert key.startswith("poolset-") and pools.registered(key) == expected


def _otlp_export(pools_dir) -> tuple[bytes, list[str]]:
    """An OTLP/JSON export (one request per line) of three retrievals over the tiny pool's
    chunks: two in one trace, written around a third of another trace; and their queries
    in the order of the pool set (grouped by trace)."""
    import json

    tiny = adagres.load_pool(pools_dir / "tiny.json")
    queries = ["first of trace A", "only one of trace B", "second of trace A"]
    lines = []
    for n, (query, trace) in enumerate(zip(queries, ("a", "b", "a"), strict=True)):
        attributes = {"openinference.span.kind": "RETRIEVER", "input.value": query}
        for rank, chunk in enumerate(tiny.chunks[n : n + 6]):
            prefix = f"retrieval.documents.{rank}.document"
            attributes |= {f"{prefix}.content": chunk.text, f"{prefix}.id": chunk.id}
        span = {
            "traceId": trace * 32,
            "spanId": f"{n + 1:016x}",
            "name": "retrieve",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        }
        lines.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return ("\n".join(lines) + "\n").encode(), [queries[0], queries[2], queries[1]]


def test_a_trace_export_opens_as_a_pool_set(pools_dir, shared_tmp, monkeypatch):
    """An OTLP export, uploaded or on a shared path, opens as the pool set of its
    retrievals (a request's together); a row opens that retrieval's pool in every page."""
    from adagres.traces import read_pools

    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(shared_tmp / "cache"))
    content, queries = _otlp_export(pools_dir)
    at = open_page()
    at.file_uploader(key="ps_upload").set_value(("spans.jsonl", content, "application/json"))
    at.run()
    no_error(at)
    assert table(at)["query"].tolist() == queries
    assert "spans.jsonl (uploaded): 3 queries" in [t.value for t in at.text]
    at.selectbox(key="ps_query").set_value(1).run()
    at.button(key="ps_open").click().run()
    no_error(at)
    key = at.session_state["settings"].pool
    opened = pools.registered(key)
    export = shared_tmp / "spans.jsonl"
    export.write_bytes(content)
    [want] = [p for p in read_pools(export) if p.query == queries[1]]
    assert opened is not None
    assert (opened.query, opened.ids, opened.texts) == (want.query, want.ids, want.texts)
    assert opened.extra["trace"] == want.extra["trace"]
    # the same export typed as a path on the server, then a Phoenix table as Parquet
    at.text_input(key="ps_path").set_value(str(export)).run()
    no_error(at)
    assert table(at)["query"].tolist() == queries
    import pandas as pd

    rows = [
        {
            "context.trace_id": p.extra["trace"]["trace_id"],
            "context.span_id": p.extra["trace"]["span_id"],
            "span_kind": "RETRIEVER",
            "attributes.input.value": p.query,
            "attributes.retrieval.documents": [
                {"document.content": c.text, "document.id": c.id} for c in p.chunks
            ],
        }
        for p in read_pools(export)
    ]
    pd.DataFrame(rows).to_parquet(shared_tmp / "spans.parquet")
    at.text_input(key="ps_path").set_value(str(shared_tmp / "spans.parquet")).run()
    no_error(at)
    assert table(at)["query"].tolist() == queries
