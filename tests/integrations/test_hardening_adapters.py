"""The three adapters check what they are given like ``select`` does: offsets too large for
the machine, options of the wrong type (never pydantic's ValidationError, never
``budget=True`` taken as 1 token), unknown options, an embedding model that returns too
few or too many vectors, and saved forms that are malformed or name a model that cannot be
rebuilt. Each gives the project's one-line error naming the argument and the value.
Serialisation round-trips with the embedding model's own fields."""

from __future__ import annotations

import dataclasses
import json
import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported

from typing import Any

import pytest
from haystack import Document as HaystackDocument
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from adagres.errors import InputError
from adagres.integrations.haystack import AdagresSelector
from adagres.integrations.langchain import AdagresCompressor, AdagresRetriever, QueryCache
from adagres.integrations.llamaindex import AdagresPostprocessor, PackagedMiniLMEmbedding

TEXTS = ["alpha beta gamma", "delta epsilon zeta", "eta theta iota"]
VECTORS = [[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.6, 0.0, 0.8]]
QUERY = [1.0, 0.1, 0.1]


class Fixed(Embeddings):
    """LangChain embeddings with a vector per known text; ``extra`` vectors added to (or,
    negative, removed from) what embed_documents returns."""

    def __init__(self, extra: int = 0) -> None:
        self.extra = extra

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = [VECTORS[TEXTS.index(t) % 3] for t in texts]
        return vectors + [VECTORS[0]] * self.extra if self.extra >= 0 else vectors[: self.extra]

    def embed_query(self, text: str) -> list[float]:
        return QUERY


class Miscounting(BaseEmbedding):
    """A LlamaIndex model whose batches hold one vector too many or too few."""

    extra: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        return QUERY

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return QUERY

    def _get_text_embedding(self, text: str) -> list[float]:
        return VECTORS[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        vectors = [VECTORS[0]] * len(texts)
        return vectors + [VECTORS[1]] * self.extra if self.extra >= 0 else vectors[: self.extra]


class Remote(BaseEmbedding):
    """An embedding model neither this project nor LlamaIndex can rebuild by name."""

    @classmethod
    def class_name(cls) -> str:
        return "RemoteEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return QUERY

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return QUERY

    def _get_text_embedding(self, text: str) -> list[float]:
        return VECTORS[0]


def given(**options: Any) -> dict[str, Any]:
    """Keywords of the wrong type or name, passed as the caller would (typed as Any)."""
    return options


def one_line_input_error(call: Any) -> str:
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message and "validation error" not in message
    return message


def lc_documents(**meta: Any) -> list[Document]:
    first = Document(page_content=TEXTS[0], id="a", metadata={"source": "doc", **meta})
    return [first, *(Document(page_content=t, id=f"d{i}") for i, t in enumerate(TEXTS[1:]))]


def li_nodes(**fields: Any) -> list[NodeWithScore]:
    source = {NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc")}
    nodes = [
        TextNode(
            id_=f"n{i}", text=t, embedding=v, relationships=source, **(fields if i == 0 else {})
        )
        for i, (t, v) in enumerate(zip(TEXTS, VECTORS, strict=True))
    ]
    return [NodeWithScore(node=n, score=1.0 - i / 10) for i, n in enumerate(nodes)]


def hs_documents(**meta: Any) -> list[HaystackDocument]:
    return [
        HaystackDocument(
            id=f"h{i}",
            content=t,
            embedding=v,
            meta={"source_id": "doc", **(meta if i == 0 else {})},
        )
        for i, (t, v) in enumerate(zip(TEXTS, VECTORS, strict=True))
    ]


# --------------------------------------------------------------------------- offsets


@pytest.mark.parametrize("value", [2**63, 2**64, 10**30])
def test_langchain_refuses_a_start_index_beyond_the_machine(value):
    compressor = AdagresCompressor(embeddings=Fixed(), budget=50, tokenizer="words")
    message = one_line_input_error(lambda: compressor.select(lc_documents(start_index=value), "q"))
    assert message.startswith("document 'a' (position 0), metadata['start_index']: offset")
    assert str(value) in message and "2**53 - 1" in message


@pytest.mark.parametrize("value", [2**63, 2**64, 10**30])
def test_llamaindex_refuses_a_start_char_idx_beyond_the_machine(value):
    selector = AdagresPostprocessor(
        budget=50, tokenizer="words", embed_model=MockEmbedding(embed_dim=3)
    )
    message = one_line_input_error(
        lambda: selector.select(li_nodes(start_char_idx=value), QueryBundle("q", embedding=QUERY))
    )
    assert message.startswith("node 'n0' (position 0), start_char_idx: offset")
    assert str(value) in message


@pytest.mark.parametrize("value", [2**63, 2**64, 10**30])
def test_haystack_refuses_a_split_idx_start_beyond_the_machine(value):
    selector = AdagresSelector(budget=50, tokenizer="words")
    message = one_line_input_error(
        lambda: selector.select(hs_documents(split_idx_start=value), QUERY)
    )
    assert message.startswith("document 'h0' (position 0), meta['split_idx_start']: offset")
    assert str(value) in message


def test_an_offset_without_its_source_places_nothing_and_selects():
    selector = AdagresSelector(budget=50, tokenizer="words")
    docs = hs_documents()
    docs[0] = dataclasses.replace(docs[0], meta={"split_idx_start": 2**64})  # no source_id
    picked = selector.select(docs, QUERY).documents
    assert [d.id for d in picked] == ["h0", "h1", "h2"]


# --------------------------------------------------------------------------- options

BAD_OPTIONS = [
    ({"budget": True}, "budget: expected a whole number of tokens, got True"),
    ({"budget": "400"}, "budget: expected a whole number of tokens, got '400'"),
    ({"budget": 3.5}, "budget: expected a whole number of tokens, got 3.5"),
    ({"budget": float("nan")}, "budget: expected a whole number of tokens, got nan"),
    ({"budget": -1}, "budget: must be >= 0 tokens, got -1"),
    ({"budget": 10, "preset": 5}, "preset: expected one of 'paper', 'recommended', got 5"),
    ({"budget": 10, "strategy": 3}, "strategy: expected one of"),
    ({"budget": 10, "tokenizer": 5}, "tokenizer: expected one of"),
    ({"budget": 10, "settings": "x"}, "settings: expected adagres.Settings, got str"),
    ({"budget": 10, "settings": {"lamb": 1}}, "settings: unknown field 'lamb'"),
    ({"budget": 10, "record_to": 5}, "record_to: expected a path to a .jsonl file, got 5 (int)"),
    ({"budget": 10, "record_to": "runs.json"}, "record_to: expected a .jsonl file"),
]


def make_langchain(**options: Any) -> Any:
    return AdagresCompressor(embeddings=Fixed(), **options)


def make_llamaindex(**options: Any) -> Any:
    return AdagresPostprocessor(**options)


def make_haystack(**options: Any) -> Any:
    return AdagresSelector(**options)


ADAPTERS = {"langchain": make_langchain, "llamaindex": make_llamaindex, "haystack": make_haystack}


@pytest.mark.parametrize(("options", "expected"), BAD_OPTIONS)
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_options_of_the_wrong_type_are_input_errors_in_every_adapter(adapter, options, expected):
    message = one_line_input_error(lambda: ADAPTERS[adapter](**options))
    assert message.startswith(expected)


def test_a_retriever_refuses_budget_true_and_a_whole_float_is_taken_as_its_number():
    with pytest.raises(InputError, match=r"^budget: expected a whole number of tokens, got True"):
        AdagresRetriever(budget=True)
    whole = AdagresRetriever(budget=400.0)  # type: ignore[arg-type]  # a float, taken as whole
    assert whole.budget == 400 and type(whole.budget) is int


@pytest.mark.parametrize(
    ("make", "field", "expected"),
    [
        (
            lambda: AdagresCompressor(budget=10, **given(embeddings=5)),
            "embeddings",
            "instance of Embeddings",
        ),
        (lambda: AdagresPostprocessor(budget=10, embed_model=5), "embed_model", "BaseEmbedding"),
        (lambda: AdagresRetriever(budget=10, **given(embeddings="x")), "embeddings", "Embeddings"),
        (lambda: QueryCache(**given(embeddings=5)), "embeddings", "instance of Embeddings"),
        (lambda: QueryCache(embeddings=Fixed(), size=0), "size", "greater than 0"),
        (lambda: QueryCache(embeddings=Fixed(), size=True), "size", "valid integer"),
    ],
)
def test_a_framework_field_of_the_wrong_type_is_named_in_one_line(make, field, expected):
    message = one_line_input_error(make)
    assert message.startswith(f"{field}: ") and expected in message


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdagresCompressor(budget=10, embeddings=Fixed(), **given(tokeniser="words")),
        lambda: AdagresPostprocessor(budget=10, tokeniser="words"),
        lambda: AdagresRetriever(budget=10, **given(tokeniser="words")),
        lambda: QueryCache(embeddings=Fixed(), **given(tokeniser="words")),
    ],
)
def test_a_misspelt_option_is_refused_not_dropped(make):
    message = one_line_input_error(make)
    assert message.startswith("tokeniser: not an option of") and "expected some of" in message


def test_a_missing_budget_is_named():
    assert one_line_input_error(lambda: AdagresPostprocessor()).startswith("budget: missing")


# --------------------------------------------------------------------------- vector counts


@pytest.mark.parametrize("extra", [-1, 1, 2])
def test_langchain_embeddings_returning_the_wrong_count_are_named(extra):
    compressor = AdagresCompressor(embeddings=Fixed(extra), budget=50, tokenizer="words")
    message = one_line_input_error(lambda: compressor.select(lc_documents(), "q"))
    assert message == (
        f"embeddings: Fixed returned {3 + extra} vectors for 3 texts; an embedding model "
        f"returns one vector per text"
    )


@pytest.mark.parametrize("extra", [-1, 1])
def test_llamaindex_embed_model_returning_the_wrong_count_is_named(extra):
    nodes = li_nodes()
    for item in nodes:
        item.node.embedding = None  # embedded again by the model
    selector = AdagresPostprocessor(
        budget=50, tokenizer="words", embed_model=Miscounting(extra=extra)
    )
    message = one_line_input_error(
        lambda: selector.select(nodes, QueryBundle("q", embedding=QUERY))
    )
    assert f"Miscounting returned {3 + extra} vectors for 3 texts" in message


def test_the_right_count_still_selects():
    compressor = AdagresCompressor(embeddings=Fixed(), budget=50, tokenizer="words")
    assert [d.id for d in compressor.select(lc_documents(), "q").documents] == ["a", "d0", "d1"]


# --------------------------------------------------------------------------- saved forms


def test_haystack_from_dict_refuses_an_unknown_key_a_bad_shape_and_a_missing_budget():
    saved = AdagresSelector(budget=50, tokenizer="words").to_dict()
    assert (
        AdagresSelector.from_dict(saved).options()
        == AdagresSelector(budget=50, tokenizer="words").options()
    )
    unknown = {**saved, "init_parameters": {**saved["init_parameters"], "budjet": 3}}
    message = one_line_input_error(lambda: AdagresSelector.from_dict(unknown))
    assert message.startswith("init_parameters: 'budjet' is not an option of AdagresSelector")
    no_budget = {**saved, "init_parameters": {"tokenizer": "words"}}
    assert "'budget' is missing" in one_line_input_error(
        lambda: AdagresSelector.from_dict(no_budget)
    )
    shape = {**saved, "init_parameters": [1, 2]}
    assert "expected a mapping" in one_line_input_error(lambda: AdagresSelector.from_dict(shape))
    assert "expected the mapping" in one_line_input_error(
        lambda: AdagresSelector.from_dict(5)  # type: ignore[arg-type]  # the mistake
    )
    other = {**saved, "type": "haystack.components.Other"}
    assert one_line_input_error(lambda: AdagresSelector.from_dict(other)).startswith("type: ")
    bad_value = {**saved, "init_parameters": {**saved["init_parameters"], "budget": True}}
    assert one_line_input_error(lambda: AdagresSelector.from_dict(bad_value)).startswith("budget: ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "data_str: not the JSON text to_json() returns"),
        ("", "data_str: not the JSON text to_json() returns"),
        ("[1, 2]", "data: expected the mapping to_dict() returns, got list"),
        ("5", "data: expected the mapping to_dict() returns, got int"),
        ('{"budget": 10, "bogus": 1}', "bogus: not an option of AdagresPostprocessor"),
        ('{"budget": true}', "budget: expected a whole number of tokens, got True"),
        ('{"preset": "paper"}', "budget: missing"),
        (
            '{"budget": 10, "embed_model": {"class_name": "Nope"}}',
            "embed_model: cannot rebuild 'Nope'",
        ),
        (
            '{"budget": 10, "embed_model": {"class_name": "MockEmbedding"}}',
            "embed_model: cannot rebuild 'MockEmbedding'",
        ),
    ],
)
def test_llamaindex_from_json_on_malformed_text_is_an_input_error(text, expected):
    message = one_line_input_error(lambda: AdagresPostprocessor.from_json(text))
    assert message.startswith(expected)


def test_llamaindex_from_json_refuses_what_is_not_text():
    message = one_line_input_error(lambda: AdagresPostprocessor.from_json(5))
    assert message.startswith("data_str: expected the text to_json() returns, got int")


@pytest.mark.parametrize(
    "model",
    [
        MockEmbedding(embed_dim=3),
        MockEmbedding(embed_dim=7, embed_batch_size=4),
        PackagedMiniLMEmbedding(),
    ],
    ids=["mock-3", "mock-7", "packaged-minilm"],
)
def test_llamaindex_round_trip_keeps_the_embed_models_own_fields(model):
    selector = AdagresPostprocessor(budget=50, preset="paper", tokenizer="words", embed_model=model)
    text = selector.to_json()
    assert json.loads(text)["embed_model"] == {**model.to_dict()}
    again = AdagresPostprocessor.from_json(text)
    restored = again.embed_model
    assert restored is not None and type(restored) is type(model)
    assert restored.to_dict() == model.to_dict()
    assert again.options() == selector.options()
    assert AdagresPostprocessor.from_json(again.to_json()).to_dict() == selector.to_dict()


def test_llamaindex_a_model_it_cannot_rebuild_is_named_with_how_to_pass_it():
    text = AdagresPostprocessor(budget=50, embed_model=Remote()).to_json()
    message = one_line_input_error(lambda: AdagresPostprocessor.from_json(text))
    assert message.startswith("embed_model: cannot rebuild 'RemoteEmbedding'")
    assert message.endswith("pass the model: AdagresPostprocessor.from_json(text, embed_model=...)")
    given = Remote()
    assert AdagresPostprocessor.from_json(text, embed_model=given).embed_model is given


def test_llamaindex_mock_model_selects_the_same_after_the_round_trip():
    selector = AdagresPostprocessor(
        budget=8, preset="paper", tokenizer="words", embed_model=MockEmbedding(embed_dim=3)
    )
    again = AdagresPostprocessor.from_json(selector.to_json())
    bundle = QueryBundle("q", embedding=QUERY)
    first = [n.node.node_id for n in selector.select(li_nodes(), bundle).documents]
    assert first and first == [n.node.node_id for n in again.select(li_nodes(), bundle).documents]
