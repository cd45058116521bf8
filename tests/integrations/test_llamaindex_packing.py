"""LlamaIndex: overlapping nodes of TokenTextSplitter come back as one stitched node."""

from __future__ import annotations

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import TokenTextSplitter
from llama_index.core.schema import MetadataMode, QueryBundle, TextNode
from packing_checks import DOC, NOTES, QUERY, QUERY_VECTOR, core, union_budget, vector, words
from pydantic import Field

from adagres.core.presets import PRESETS
from adagres.integrations.llamaindex import AdagresPostprocessor

HEADER = "file_name: doc.txt\n\n"  # what MetadataMode.LLM puts before a window's text


class Table(BaseEmbedding):
    """Vectors looked up by text (made by hand: see packing_checks)."""

    vectors: dict[str, list[float]] = Field(default_factory=dict)

    def _get_query_embedding(self, query: str) -> list[float]:
        return QUERY_VECTOR

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return QUERY_VECTOR

    def _get_text_embedding(self, text: str) -> list[float]:
        return self.vectors[text]


def nodes(offsets: bool) -> list[TextNode]:
    """The first four windows of DOC (splitter order), then unrelated notes."""
    splitter = TokenTextSplitter(
        chunk_size=36, chunk_overlap=12, separator=" ", tokenizer=str.split
    )
    split = splitter.get_nodes_from_documents(
        [Document(text=DOC, metadata={"file_name": "doc.txt"})]
    )
    windows = [w for w in split[:4] if isinstance(w, TextNode)]
    assert len(windows) == 4
    if not offsets:
        windows = [TextNode(id_=w.node_id, text=w.text, metadata=w.metadata) for w in windows]
    notes = [
        TextNode(text=text, metadata={"file_name": f"note{i}"}) for i, text in enumerate(NOTES)
    ]
    return [*windows, *notes]


@pytest.mark.parametrize("offsets", [True, False], ids=["start_char_idx", "shared-edges"])
def test_two_overlapping_nodes_are_one_node_paid_for_once(offsets):
    pool = nodes(offsets)
    raw = [n.get_content(metadata_mode=MetadataMode.NONE) for n in pool]
    embed = Table(
        vectors={
            n.get_content(metadata_mode=MetadataMode.EMBED): vector(rank)
            for rank, n in enumerate(pool)
        }
    )
    index = VectorStoreIndex(nodes=pool, embed_model=embed)
    found = index.as_retriever(similarity_top_k=len(pool)).retrieve(QUERY)
    assert [n.node.node_id for n in found] == [n.node_id for n in pool]  # rank order
    union, plain = union_budget((DOC.index(raw[0]), raw[0]), (DOC.index(raw[1]), raw[1]))
    budget = words(HEADER + union)  # the metadata lines are paid once too
    assert plain + 5 == budget
    adapter = AdagresPostprocessor(
        budget=budget, tokenizer="words", embed_model=embed, vector_store=index.vector_store
    )
    got = adapter.select(found, QueryBundle(QUERY, embedding=QUERY_VECTOR))

    (item,) = got.documents
    node = item.node
    assert isinstance(node, TextNode)  # a passage stitched from text nodes
    assert node.get_content(metadata_mode=MetadataMode.NONE) == union
    assert node.get_content(metadata_mode=MetadataMode.LLM) == HEADER + union  # no record keys
    assert node.node_id == f"{pool[0].node_id}+{pool[1].node_id}"
    assert node.metadata["adagres_chunks"] == [pool[0].node_id, pool[1].node_id]
    assert node.metadata["adagres_tokens"] == budget and node.metadata["adagres_step"] == 1
    assert item.score == pytest.approx(0.9) and node.embedding is None
    if offsets:
        assert (node.start_char_idx, node.end_char_idx) == (0, len(union))
        assert node.ref_doc_id == pool[0].ref_doc_id

    llm = [n.get_content(metadata_mode=MetadataMode.LLM) for n in pool]
    sources = [n.ref_doc_id if offsets else None for n in pool]
    starts = [n.start_char_idx if offsets else None for n in pool]
    want = core(
        raw,
        sources,
        starts,
        range(len(pool)),
        budget,
        tokens=[words(t) for t in llm],
        count=lambda text: words(HEADER + text),
    )
    assert got.selection is not None and got.selection.indices == want.indices == (0, 1)
    assert got.selection.passages == want.passages and got.selection.tokens_used == budget

    apart = adapter.model_copy(
        update={"settings": PRESETS["recommended"].settings.replace(packing=False)}
    ).select(found, QueryBundle(QUERY, embedding=QUERY_VECTOR))
    ids = [n.node.node_id for n in apart.documents]
    assert ids[0] == pool[0].node_id and pool[1].node_id not in ids
    assert all("adagres_chunks" not in n.node.metadata for n in apart.documents)
