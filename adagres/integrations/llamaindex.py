"""AdaGReS in LlamaIndex: a node postprocessor, and an offline embedding model.

- :class:`AdagresPostprocessor` is a ``BaseNodePostprocessor``: give it to
  ``index.as_query_engine(node_postprocessors=[...])`` (or call ``postprocess_nodes``).
- :class:`PackagedMiniLMEmbedding` is a ``BaseEmbedding`` over the installed
  all-MiniLM-L6-v2 (:func:`adagres.embed.models.embed_texts`): offline, cached on disk.

Where the vectors come from. Retrieved nodes come back with ``embedding=None``, so the
postprocessor takes, per node: the node's own ``embedding`` if it has one; else the vector
the ``vector_store`` holds for its id (``SimpleVectorStore.get``, or ``get_nodes`` of a store
that keeps nodes); else it embeds the node again with ``embed_model`` (default: LlamaIndex's
``Settings.embed_model``), on the text the index embedded (``MetadataMode.EMBED``). The query
vector is the one the retriever left in the ``QueryBundle``, else ``embed_model``'s. Pass
``vector_store=index.vector_store`` and the index's embedding model to use stored vectors.

Tokens are counted on the text a response synthesizer sends (``MetadataMode.LLM``: the
node's text with its metadata lines), also the text a recorded pool holds. Each selected
node comes back as a copy with its retriever score, whose metadata adds the step record
(kept out of the LLM and embedding text). Nodes that overlap in their source document
(``start_char_idx`` in ``ref_doc_id``; else the text they share at their edges) are
stitched when packing is on and come back as one node per passage
(:mod:`adagres.integrations.passages`). Nothing is kept on the postprocessor
(``select(nodes, query_bundle)`` returns the full :class:`~adagres.Selection`). Options are
those of :func:`adagres.integrations.common.options`.

Tracing: each selection dispatches an :class:`AdagresSelectionEvent` (the values of
:func:`adagres.integrations.tracing.attributes`) inside the ``postprocess_nodes`` span, to
every event handler of LlamaIndex's instrumentation dispatchers.

Serialisation: ``to_dict``/``to_json`` hold the options (the tokenizer by name) and the
embedding model by its ``class_name``, never the vector store; ``from_dict``/``from_json``
rebuild ``PackagedMiniLMEmbedding`` and the models LlamaIndex recognises by name; pass any
other model, and the vector store, as keywords: ``from_json(text, vector_store=...)``.
"""

from __future__ import annotations

from .extras import llamaindex as _framework  # noqa: F401  (or MissingExtra, naming the extra)

# isort: split

import json
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings.loading import load_embed_model
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from pydantic import Field

from ..embed.models import DEFAULT_MODEL, embed_texts
from ..errors import InputError, one_line
from . import common
from .fields import OptionFields
from .passages import CHUNKS_KEY, TOKENS_KEY, Placed, Places, joined_id, located
from .tracing import PREFIX

__all__ = ["AdagresPostprocessor", "AdagresSelectionEvent", "PackagedMiniLMEmbedding"]

FRAMEWORK = "llamaindex"
_RECORD_KEYS = [common.STEP_KEY, common.GAIN_KEY, CHUNKS_KEY, TOKENS_KEY]
dispatcher = get_dispatcher(__name__)


class AdagresSelectionEvent(BaseEvent):
    """One selection, as LlamaIndex's instrumentation reports it: ``attributes`` holds the
    flat ``adagres.*`` values; the fields repeat the main ones."""

    query: str
    strategy: str
    preset: str
    budget: int
    tokens_used: int
    lam: float | str
    stop_reason: str
    picked_ids: list[str]
    dropped_ids: list[str]
    attributes: dict[str, Any]

    @classmethod
    def class_name(cls) -> str:
        return "AdagresSelectionEvent"


class PackagedMiniLMEmbedding(BaseEmbedding):
    """The packaged all-MiniLM-L6-v2 as a LlamaIndex embedding model (384-d unit vectors)."""

    model_name: str = DEFAULT_MODEL

    @classmethod
    def class_name(cls) -> str:
        return "PackagedMiniLMEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        vector: list[float] = embed_texts([query])[0].tolist()
        return vector

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_query_embedding(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = embed_texts(texts).tolist() if texts else []
        return vectors


class AdagresPostprocessor(OptionFields, BaseNodePostprocessor):
    """Keep the nodes AdaGReS selects within ``budget`` tokens, in pick order."""

    embed_model: BaseEmbedding | None = None
    vector_store: Any = Field(default=None, exclude=True)

    def __init__(self, **data: Any) -> None:
        if isinstance(data.get("embed_model"), dict):  # a saved model, named by class_name
            data["embed_model"] = _model_from_saved(data["embed_model"])
        super().__init__(**data)

    @classmethod
    def class_name(cls) -> str:
        return "AdagresPostprocessor"

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The options and the embedding model's saved form; no vector store."""
        saved = self.saved_options()  # a callable tokenizer: one-line InputError naming it
        data: dict[str, Any] = super().to_dict(**kwargs)
        data.pop("callback_manager", None)
        if self.embed_model is not None:
            # The model's own to_dict keeps its own fields (a MockEmbedding's embed_dim),
            # which the field's declared type, BaseEmbedding, leaves out.
            data["embed_model"] = self.embed_model.to_dict()
        return {**data, **saved}

    @classmethod
    def from_dict(cls, data: Any, **kwargs: Any) -> AdagresPostprocessor:
        """The postprocessor from :meth:`to_dict`'s output; ``kwargs`` (``vector_store=``,
        ``embed_model=``) replace or add fields. An unknown key is an InputError."""
        if not isinstance(data, Mapping):
            raise InputError(
                f"data: expected the mapping to_dict() returns, got {type(data).__name__}"
            )
        rebuilt: AdagresPostprocessor = super().from_dict(dict(data), **kwargs)
        return rebuilt

    @classmethod
    def from_json(cls, data_str: Any, **kwargs: Any) -> AdagresPostprocessor:
        """The postprocessor from :meth:`to_json`'s text (see :meth:`from_dict`)."""
        if not isinstance(data_str, str | bytes | bytearray):
            raise InputError(
                f"data_str: expected the text to_json() returns, got {type(data_str).__name__}"
            )
        try:
            data = json.loads(data_str)
        except (ValueError, RecursionError) as error:
            raise InputError(
                f"data_str: not the JSON text to_json() returns ({one_line(error, max_chars=120)})"
            ) from None
        return cls.from_dict(data, **kwargs)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self.select(nodes, query_bundle).documents

    def select(
        self, nodes: Sequence[NodeWithScore], query_bundle: QueryBundle | None
    ) -> common.Selected[NodeWithScore]:
        """The selected nodes and the full selection record."""
        if query_bundle is None:
            raise InputError(
                "query_bundle: AdagresPostprocessor needs the query; call "
                "postprocess_nodes(nodes, query_str=...) or run it in a query engine"
            )
        nodes = list(nodes)
        if not nodes:
            return common.Selected([], None)
        labels = [f"{n.node.node_id!r} (position {i})" for i, n in enumerate(nodes)]
        retrieved = common.Retrieved(
            query=query_bundle.query_str,
            texts=tuple(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes),
            embeddings=common.matrix(self._vectors(nodes), labels),
            query_embedding=common.matrix([self._query_vector(query_bundle)], ["query"])[0],
            ids=tuple(n.node.node_id for n in nodes),
            metadata=tuple(n.node.metadata for n in nodes),
            scores=tuple(n.score for n in nodes),
            embedding_model=None if self.embed_model is None else self.embed_model.model_name,
            places=_places(nodes),
        )
        chosen_options = self.options()
        selection = common.select(chosen_options, retrieved, framework=FRAMEWORK)
        values = common.report(chosen_options, retrieved, selection)
        # the event repeats the main values under their names (and λ as lam)
        named = (f"{PREFIX}{name}" for name in AdagresSelectionEvent.__annotations__)
        fields = {key.removeprefix(PREFIX): values[key] for key in named if key in values}
        event = AdagresSelectionEvent(
            query=retrieved.query, lam=values[f"{PREFIX}lambda"], attributes=values, **fields
        )
        dispatcher.event(event)
        return common.answer(selection, retrieved, lambda placed: _passage(nodes, placed))

    def _vectors(self, nodes: list[NodeWithScore]) -> list[Any]:
        """Each node's own vector, else the store's, else a new embedding (see the module)."""
        vectors: list[Any] = [n.node.embedding for n in nodes]
        missing = [i for i, vector in enumerate(vectors) if vector is None]
        if missing and self.vector_store is not None:
            stored = _stored(self.vector_store, [nodes[i].node.node_id for i in missing])
            for i in missing:
                vectors[i] = stored.get(nodes[i].node.node_id)
            missing = [i for i in missing if vectors[i] is None]
        if missing:
            texts = [nodes[i].node.get_content(metadata_mode=MetadataMode.EMBED) for i in missing]
            model = self._model()
            embedded = common.embedded(model.get_text_embedding_batch(texts), len(texts), model)
            for i, vector in zip(missing, embedded, strict=True):
                vectors[i] = vector
        return vectors

    def _query_vector(self, query_bundle: QueryBundle) -> Any:
        if query_bundle.embedding is not None:
            return query_bundle.embedding  # what the retriever searched with
        return self._model().get_agg_embedding_from_queries(query_bundle.embedding_strs)

    def _model(self) -> BaseEmbedding:
        if self.embed_model is not None:
            return self.embed_model
        from llama_index.core import Settings as LlamaSettings

        model: BaseEmbedding = LlamaSettings.embed_model
        return model


def _model_from_saved(data: dict[str, Any]) -> BaseEmbedding:
    """The embedding model a saved postprocessor names (its ``class_name``):
    ``PackagedMiniLMEmbedding`` or one LlamaIndex recognises by name
    (``load_embed_model``); any other is an InputError naming it and how to pass it."""
    name = data.get("class_name")
    try:
        if name == PackagedMiniLMEmbedding.class_name():
            return PackagedMiniLMEmbedding.from_dict(data)
        return load_embed_model(data)
    except (ValueError, TypeError, KeyError) as error:  # pydantic's ValidationError too
        shown = one_line(repr(name), max_chars=60)
        reason = one_line(error, max_chars=100)
        raise InputError(
            f"embed_model: cannot rebuild {shown} from its saved form ({reason}); pass the "
            f"model: AdagresPostprocessor.from_json(text, embed_model=...)"
        ) from None


def _stored(vector_store: Any, node_ids: list[str]) -> dict[str, Any]:
    """The vectors ``vector_store`` holds for ``node_ids`` (those it has)."""
    if isinstance(vector_store, SimpleVectorStore):
        data = vector_store.data.embedding_dict
        return {node_id: data[node_id] for node_id in node_ids if node_id in data}
    try:
        found = vector_store.get_nodes(node_ids=node_ids)
    except (NotImplementedError, AttributeError):
        return {}
    return {node.node_id: node.embedding for node in found if node.embedding is not None}


def _places(nodes: Sequence[NodeWithScore]) -> Places:
    """Each node's text, source document (``ref_doc_id``: its source relationship) and offset
    in it (``start_char_idx``, set by LlamaIndex's node parsers). The tokens of a passage are
    counted on the text a response synthesizer would send: the passage in its first node's
    place, with that node's metadata lines (``MetadataMode.LLM``)."""
    found = []
    for position, item in enumerate(nodes):
        node = item.node
        source = node.ref_doc_id if isinstance(node, TextNode) else None
        key = (FRAMEWORK, source) if isinstance(source, str) else None
        where = f"node {node.node_id!r} (position {position}), start_char_idx"
        found.append((key, getattr(node, "start_char_idx", None), where))
    texts = tuple(n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes)

    def render(first: int, text: str) -> str:
        node = nodes[first].node
        if not isinstance(node, TextNode):
            return text
        rendered: str = node.model_copy(update={"text": text}).get_content(MetadataMode.LLM)
        return rendered

    return located(texts, found, render)


def _passage(nodes: Sequence[NodeWithScore], placed: Placed) -> NodeWithScore:
    """The node returned for one passage (see :mod:`adagres.integrations.passages`): a copy
    of its first node with the step record in its metadata, out of its LLM and embedding
    text; a stitched one has the passage's text, its character range, the best score of
    its nodes and no embedding."""
    first = nodes[placed.first]
    node, score = first.node, first.score
    update: dict[str, Any] = {
        "metadata": {**node.metadata, **placed.extra},
        "excluded_llm_metadata_keys": [*node.excluded_llm_metadata_keys, *_RECORD_KEYS],
        "excluded_embed_metadata_keys": [*node.excluded_embed_metadata_keys, *_RECORD_KEYS],
    }
    if placed.stitched:
        start = getattr(node, "start_char_idx", None)
        end = None if start is None else start + len(placed.text)
        update.update(text=placed.text, embedding=None, end_char_idx=end)
        scores = [s for s in (nodes[i].score for i in placed.chunks) if s is not None]
        score = max(scores) if scores else None
        node_id = joined_id([nodes[i].node.node_id for i in placed.chunks])
        if node_id is not None:
            update["id_"] = node_id
    return NodeWithScore(node=node.model_copy(update=update), score=score)
