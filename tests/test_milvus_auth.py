"""Milvus authentication: a real standalone server with authorization enabled (started and
stopped by its handle through ``milvus_support``). In a file of its own: two standalone
servers at once (this one and ``test_milvus.py``'s, which lives for that module) do not
start side by side, and pytest runs one file's module fixtures after another's."""

from __future__ import annotations

import milvus_support
import pytest

from adagres.errors import PoolError
from adagres.stores import milvus

DOCS = {
    "cats.md": "Cats sleep most of the day. A cat purrs when it is content.",
    "dogs.md": "Dogs bark at strangers. A dog wags its tail when it is happy.",
}


@pytest.mark.slow
def test_wrong_credentials_are_an_authentication_failure_not_an_unreachable_server(
    tmp_path, fake_encoder
):
    """A real server with authorization enabled: wrong or missing credentials are named as
    such (pymilvus itself says "server unavailable"); the right ones index and retrieve."""
    user, password = milvus_support.ROOT_USER, milvus_support.ROOT_PASSWORD
    with milvus_support.milvus_server(tmp_path / "server", authorization_enabled=True) as uri:
        host = uri.removeprefix("http://")
        with pytest.raises(PoolError) as wrong:
            milvus.retrieve_pool(f"http://{user}:hunter2@{host}", "pets", "cats")
        with pytest.raises(PoolError) as missing:
            milvus.retrieve_pool(uri, "pets", "cats")
        good = f"http://{user}:{password}@{host}"
        milvus.index_documents(good, "pets", DOCS)
        pool = milvus.retrieve_pool(good, "pets", "cats purr", top_n=2)
    assert str(wrong.value).startswith(
        f"the Milvus server at http://***@{host} refused the credentials given: "
        f"authentication failed (auth check failure"
    )
    assert "hunter2" not in str(wrong.value) and "\n" not in str(wrong.value)
    assert str(missing.value).startswith(
        f"the Milvus server at {uri} refused no credentials: authentication failed ("
    )
    assert "unavailable" not in str(wrong.value) + str(missing.value)
    assert {(c.metadata or {}).get("doc_id") for c in pool.chunks} <= set(DOCS)
    assert (pool.chunks[0].metadata or {}).get("doc_id") == "cats.md"
