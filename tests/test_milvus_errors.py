"""Milvus errors that need no store: an unreachable server, a refused login told apart from
it, and the test server helper that applies its settings or refuses them."""

from __future__ import annotations

import milvus_support
import pytest
from milvus_support import free_port

from adagres.errors import PoolError
from adagres.stores import milvus


def test_unreachable_server_is_one_line_with_credentials_redacted():
    port = free_port()  # nothing listens there once the probe socket is closed
    with pytest.raises(PoolError) as error:
        milvus.retrieve_pool(f"http://admin:hunter2@127.0.0.1:{port}", "c", "q")
    message = str(error.value)
    assert message.startswith(f"cannot reach the Milvus store at http://***@127.0.0.1:{port}: ")
    assert "hunter2" not in message and "admin" not in message and "\n" not in message


class _Status:
    def __init__(self, name):
        self.name = name


class _RpcError(Exception):
    """What grpc raises: ``code()`` gives a status whose ``name`` tells the kind."""

    def __init__(self, status, details):
        super().__init__(details)
        self._status, self._details = _Status(status), details

    def code(self):
        return self._status

    def details(self):
        return self._details


def _raised_from(inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except Exception as error:
            raise RuntimeError("illegal connection params or server unavailable") from error
    except RuntimeError as outer:
        return outer


def test_an_authentication_refusal_is_told_from_an_unreachable_server():
    from adagres.stores.milvus import auth_failure

    refused = _RpcError("UNAUTHENTICATED", "auth check failure,\n check the password")
    assert auth_failure(_raised_from(refused)) == "auth check failure, check the password"
    assert auth_failure(_raised_from(_RpcError("PERMISSION_DENIED", ""))) == "PERMISSION_DENIED"
    assert auth_failure(_raised_from(_RpcError("UNAVAILABLE", "connection refused"))) is None
    assert auth_failure(ValueError("x")) is None


def test_the_server_helper_applies_every_setting_or_refuses_it(tmp_path):
    from milvus import MilvusServer

    server = MilvusServer(data_dir=str(tmp_path), authorization_enabled=True)
    assert server.config.get("authorization_enabled") is False  # what MilvusServer alone does
    milvus_support.configure(server, {"authorization_enabled": True, "proxy_port": 1})
    assert server.config.get("authorization_enabled") is True
    with pytest.raises(ValueError, match="no setting 'authorisation_enabled'"):
        milvus_support.configure(server, {"authorisation_enabled": True})
    with pytest.raises(TypeError, match="needs a bool"):
        milvus_support.configure(server, {"authorization_enabled": "yes"})
