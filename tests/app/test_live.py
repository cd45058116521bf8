"""AppTest tests of the Live page: retrieve a pool from a Milvus Lite store, the URL that
retrieves it again, the pool in every page, credentials kept out of the URL.

The store is the default one (``<data dir>/live.db``), indexed with the fake encoder, which
also embeds the page's queries (AppTest runs the page in this process).
"""

from __future__ import annotations

import socket

import pytest
from streamlit.testing.v1 import AppTest

from adagres.stores import milvus
from ui.text import escape_md

APP = "../../app.py"
LIVE = "../../app_pages/8_live.py"
TIMEOUT = 60
DOCS = {
    "cats.md": "Cats sleep most of the day. A cat purrs when it is content.",
    "dogs.md": "Dogs bark at strangers. A dog wags its tail when it is happy.",
    "fish.md": "Fish swim in schools. A goldfish remembers more than people think.",
}


@pytest.fixture
def fake_model(fake_encoder, monkeypatch, tmp_path):
    """The fake encoder, with its own embedding cache (its vectors stay out of others')."""
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    return fake_encoder


@pytest.fixture
def store(pools_dir, fake_model):
    """The default store, with collections 'pets' and 'more' (indexing again is a no-op)."""
    from milvus_lite.server_manager import server_manager_instance

    path = pools_dir / "live.db"
    milvus.index_documents(str(path), "pets", DOCS, size=8, overlap=2)
    milvus.index_documents(str(path), "more", {"x.md": "another collection"})
    yield path
    server_manager_instance.release_server(str(path))


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def live_table(at: AppTest):
    return next(df.value for df in at.dataframe if "score" in df.value.columns)


def retrieve(at: AppTest, collection: str, query: str, n: int) -> AppTest:
    at.selectbox(key="live_collection_box").set_value(collection)
    at.text_input(key="live_query_box").set_value(query)
    at.number_input(key="live_n_box").set_value(n).run()
    return at.button(key="live_retrieve").click().run()


def test_retrieve_opens_the_pool_in_every_page(store):
    at = AppTest.from_file(LIVE, default_timeout=TIMEOUT).run()
    no_error(at)
    assert at.selectbox(key="live_collection_box").options == ["more", "pets"]
    retrieve(at, "pets", "a dog wags its tail", 3)
    no_error(at)
    expected = milvus.retrieve_pool(str(store), "pets", "a dog wags its tail", top_n=3)
    table = live_table(at)
    assert table["chunk"].tolist() == list(expected.ids)
    assert expected.scores is not None
    assert table["score"].tolist() == pytest.approx(list(expected.scores), abs=1e-6)
    key = at.session_state["settings"].pool
    assert key.startswith("live-") and at.selectbox(key="sb_pool").value == key
    params = dict(at.query_params)
    assert params["pool"] == key and params["live_collection"] == "pets"
    assert params["live_query"] == "a dog wags its tail" and params["live_n"] == "3"
    assert "live_uri" not in params  # the default store needs no URI
    # The link opens the app on the Live page, which retrieves the pool; every page has it.
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params.update(params)
    app.switch_page("app_pages/8_live.py").run()
    no_error(app)
    assert app.title[0].value == "Live pool" and not app.warning
    assert app.selectbox(key="sb_pool").value == key
    for path, title in (
        ("app_pages/2_selection.py", "Selection"),
        ("app_pages/6_why.py", "Why dropped"),
    ):
        app.switch_page(path).run()
        no_error(app)
        assert app.title[0].value == title and app.selectbox(key="sb_pool").value == key


def test_a_reload_retrieves_the_same_pool(store):
    first = AppTest.from_file(LIVE, default_timeout=TIMEOUT).run()
    retrieve(first, "pets", "goldfish memory", 2)
    params = dict(first.query_params)
    again = AppTest.from_file(LIVE, default_timeout=TIMEOUT)
    again.query_params.update(params)
    again.run()
    no_error(again)
    assert not again.warning, [w.value for w in again.warning]  # the URL's pool is there
    assert again.session_state["settings"].pool == params["pool"]
    assert live_table(again)["chunk"].tolist() == live_table(first)["chunk"].tolist()
    assert again.text_input(key="live_query_box").value == "goldfish memory"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_credentials_stay_out_of_the_url(store):
    port = free_port()
    at = AppTest.from_file(LIVE, default_timeout=TIMEOUT).run()
    at.text_input(key="live_uri_box").set_value(f"http://admin:s3cret@127.0.0.1:{port}").run()
    assert not at.exception
    (message,) = [e.value for e in at.error]
    shown = f"cannot reach the Milvus store at http://***@127.0.0.1:{port}: "
    assert message.startswith(escape_md(shown))  # the page shows it literally
    assert "s3cret" not in message and "admin" not in message
    assert "live_uri" not in at.query_params
    assert all("s3cret" not in value for value in at.query_params.values())
    # Without credentials the typed address goes into the URL, so a reload uses it.
    at.text_input(key="live_uri_box").set_value(f"http://127.0.0.1:{port}").run()
    assert at.query_params["live_uri"] == f"http://127.0.0.1:{port}"
    at.text_input(key="live_uri_box").set_value("").run()  # back to the embedded store
    no_error(at)
    assert "live_uri" not in at.query_params


def test_no_store_yet(tmp_path, monkeypatch, pools_dir):
    monkeypatch.setenv("ADAGRES_DATA_DIR", str(tmp_path))  # no live.db there
    at = AppTest.from_file(LIVE, default_timeout=TIMEOUT).run()
    no_error(at)
    assert any("make live-data" in info.value for info in at.info)


def test_a_store_file_outside_the_shared_folders_is_not_opened(fake_model, tmp_path, monkeypatch):
    """Anyone who reaches the server can type a store path, or send a link naming one: a
    Milvus Lite file outside the data folder (and $ADAGRES_SERVER_PATHS) is refused before
    it is looked at, by the box and by a link alike; sharing its folder opens it."""
    from milvus_lite.server_manager import server_manager_instance

    outside = tmp_path / "elsewhere" / "other.db"  # a real store in a folder not shared
    milvus.index_documents(str(outside), "pets", DOCS, size=8, overlap=2)
    at = AppTest.from_file(LIVE, default_timeout=TIMEOUT).run()
    at.text_input(key="live_uri_box").set_value(str(outside)).run()
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert "is outside the folders this server shares" in message
    assert escape_md("$ADAGRES_SERVER_PATHS") in message
    assert all(box.key != "live_collection_box" for box in at.selectbox)
    link = AppTest.from_file(LIVE, default_timeout=TIMEOUT)
    link.query_params.update(live_uri=str(outside), live_collection="pets", live_query="cats")
    link.run()
    assert not link.exception
    assert any("is outside the folders" in e.value for e in link.error)
    assert not (link.session_state["settings"].pool or "").startswith("live-")
    monkeypatch.setenv("ADAGRES_SERVER_PATHS", str(outside.parent))
    try:
        at.run()
        assert not at.exception
        assert not any("outside the folders" in e.value for e in at.error)
        assert at.selectbox(key="live_collection_box").options == ["pets"]
    finally:
        server_manager_instance.release_server(str(outside))


def test_a_link_from_any_page_retrieves_the_live_pool_again(store):
    """The address of every page carries what retrieves the Live pool (collection, query,
    N), so a link to the Selection page opened in a fresh browser shows that pool."""
    first = AppTest.from_file(APP, default_timeout=TIMEOUT)
    first.switch_page("app_pages/8_live.py").run()
    retrieve(first, "more", "another", 1)  # the store's first collection
    key = first.session_state["settings"].pool
    first.switch_page("app_pages/2_selection.py").run()
    no_error(first)
    params = dict(first.query_params)
    assert params["pool"] == key and params["live_collection"] == "more"
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params.update(params)
    fresh.switch_page("app_pages/2_selection.py").run()
    no_error(fresh)
    assert not fresh.warning, [w.value for w in fresh.warning]
    assert fresh.title[0].value == "Selection"
    assert fresh.selectbox(key="sb_pool").value == key
