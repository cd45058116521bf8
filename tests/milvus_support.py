"""A standalone Milvus server for tests: PyPI ``milvus``'s ``MilvusServer``, started and
stopped by its handle, with every setting given actually applied.

``MilvusServer(**settings)`` stores keyword settings but applies only the ports and
``data_dir`` to the configuration it writes: ``authorization_enabled=True`` is silently
ignored. :func:`start_server` sets each one through the configuration's own setter, refuses
a name the configuration does not have, and checks the written ``milvus.yaml``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: The superuser a server with authorization enabled starts with.
ROOT_USER, ROOT_PASSWORD = "root", "Milvus"
_PASSED_THROUGH = {"data_dir", "debug", "template"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def configure(server: Any, settings: dict[str, Any]) -> None:
    """Apply ``settings`` to the server's configuration, or raise naming the unknown one."""
    items = server.config.configurable_items
    for name, value in settings.items():
        if name in _PASSED_THROUGH or name.endswith("_port"):
            continue  # the server applies these itself
        if name not in items:
            raise ValueError(f"the Milvus server has no setting {name!r}")
        kind = items[name][0]
        if not isinstance(value, kind):
            raise TypeError(f"setting {name!r} needs a {kind.__name__}, got {value!r}")
        server.config.set(name, value)


@contextmanager
def milvus_server(data_dir: Path, **settings: Any) -> Iterator[str]:
    """A running server's address (``http://127.0.0.1:PORT``); stopped on exit."""
    from milvus import MilvusServer

    settings.setdefault("proxy_port", free_port())
    server = MilvusServer(data_dir=str(data_dir), **settings)
    configure(server, settings)
    try:
        server.start()
    except Exception as error:
        server.stop()
        log = data_dir / "logs" / "milvus-stderr.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
        pytest.fail(f"the Milvus server did not start: {error}\n{tail}")
    try:
        written = (data_dir / "configs" / "milvus.yaml").read_text(encoding="utf-8")
        if "authorization_enabled" in settings:
            wanted = str(settings["authorization_enabled"]).lower()
            assert f"authorizationEnabled: {wanted}" in written
        yield f"http://127.0.0.1:{server.listen_port}"
    finally:
        process = server.server_proc
        server.stop()
        assert process is not None and process.poll() is not None  # the process is gone
