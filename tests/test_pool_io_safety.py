"""What loading a pool must never do: unpickle (run code from a file), or import the heavy
libraries when ``adagres.pools.io`` is imported."""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from pool_io_support import canonical

from adagres.errors import PoolError
from adagres.pools.io import load_pool

# --------------------------------------------------------------------------- safety


class _Payload:
    """Unpickling this runs code (here it only raises a flag; a real one would do worse)."""

    def __reduce__(self):
        return exec, ("import sys; sys.adagres_unpickled = True",)


def _payloads() -> dict[str, bytes]:
    npy = io.BytesIO()
    np.save(npy, np.array([_Payload()], dtype=object), allow_pickle=True)
    return {
        "pickle-0": pickle.dumps(_Payload(), protocol=0),  # ASCII, looks like text
        "pickle-5": pickle.dumps(_Payload(), protocol=5),
        "npy-object-array": npy.getvalue(),
    }


def test_loaders_never_unpickle(tmp_path, monkeypatch):
    """Pickles disguised as every pool format are refused without running, and no loader
    calls an unpickler or numpy.load (which can unpickle) on good files either."""
    monkeypatch.setattr(sys, "adagres_unpickled", False, raising=False)
    calls: list[str] = []

    def guard(name):
        def called(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} was called")

        return called

    for module, name in [(pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (np, "load")]:
        monkeypatch.setattr(module, name, guard(f"{module.__name__}.{name}"))

    import pyarrow as pa
    import pyarrow.parquet as pq

    good = canonical()
    parquet = io.BytesIO()
    pq.write_table(pa.table({"query": ["q"], "id": ["a"], "text": ["alpha"]}), parquet)
    formats = {
        "json": json.dumps(good).encode(),
        "jsonl": (json.dumps(good) + "\n").encode(),
        "csv": b"query,id,text\nq,a,alpha\n",
        "parquet": parquet.getvalue(),
    }
    for fmt, data in formats.items():
        (tmp_path / f"good.{fmt}").write_bytes(data)
        assert len(load_pool(tmp_path / f"good.{fmt}")) in (1, 3), fmt
        assert len(load_pool(data, format=fmt)) in (1, 3), fmt

    for label, payload in _payloads().items():
        for fmt in formats:
            path = tmp_path / f"{label}.{fmt}"
            path.write_bytes(payload)
            loads: list[tuple[Any, dict[str, Any]]] = [(path, {}), (payload, {"format": fmt})]
            for source, kwargs in loads:
                with pytest.raises(PoolError):
                    load_pool(source, query="q", **kwargs)
        for suffix in (".pkl", ".npy", ".pickle"):
            with pytest.raises(PoolError, match="cannot tell the format"):
                load_pool(payload, name=f"pool{suffix}", query="q")
    assert vars(sys)["adagres_unpickled"] is False  # set by the payload, were it unpickled
    assert calls == []


def test_import_adagres_io_stays_light():
    code = (
        "import sys, adagres, adagres.pools.io, adagres.pools.pool, adagres.embed.tokens, "
        "adagres.embed.models, adagres.corpora.documents, adagres.corpora.datasets\n"
        "heavy = {'torch', 'sentence_transformers', 'pandas', 'pyarrow', 'tokenizers', "
        "'bpe_openai', 'transformers'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
