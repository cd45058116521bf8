"""A new query in place on the Pool page's map: embed a typed question with the pool's own
model, place it on the map, ring its nearest chunks and select again for it.

The question is the page option ``ask``, so a link restores it. It is embedded offline
with the model the pool records (``embedding_model``); a pool naming no model, a model not
on this machine or vectors of another length are refused with a one-line message. On the
PCA map the question is placed by the PCA's own transform, as the query is; UMAP has no
transform, so there it sits at the cosine-weighted mean of its :data:`NEIGHBOURS` nearest
chunks. The new selection runs the session's strategy, budget and settings on the same
chunks with the question as the query.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from adagres.core import baselines
from adagres.core.prepared import prepare
from adagres.core.result import Selection
from adagres.embed.models import embed_texts, resolve_model
from adagres.errors import AdagresError, PoolError
from adagres.figures.projection import pca
from adagres.pools.pool import Pool

from . import compute, pools, render, state
from .compute import PoolKey, SelectionKey

__all__ = [
    "ASK",
    "Placed",
    "Question",
    "asked",
    "beside_frame",
    "clear",
    "open_everywhere",
    "place",
    "question",
    "reselect",
    "restore_from_url",
]

#: How many nearest chunks are ringed on the map (and, under UMAP, place the question).
NEIGHBOURS = 10
#: Longest question accepted (characters): a question, not a document.
MAX_CHARS = 2000


def _question_text(raw: str) -> str:
    if len(raw) > MAX_CHARS:
        raise ValueError(f"a question of at most {MAX_CHARS} characters, got {len(raw)}")
    return raw


ASK = state.Option("ask", _question_text)
#: The pool a question opened in every page was asked of (with ``ask``: the link's way back).
ASKED_FROM = state.Option("asked_from", str)


@dataclass(frozen=True, eq=False)
class Question:
    """A question embedded by the pool's model: its unit vector, its cosine to every chunk
    and its nearest chunks (positions, most similar first)."""

    text: str
    vector: np.ndarray
    similarities: np.ndarray
    neighbours: tuple[int, ...]


@dataclass(frozen=True)
class Placed:
    """The question's point on the map and how it was placed (``"PCA transform"`` or
    ``"weighted mean of the N nearest chunks"``)."""

    x: float
    y: float
    how: str


def asked() -> str:
    """The question in the address (stripped; empty: no new query)."""
    return str(state.option(ASK, "")).strip()


def clear() -> None:
    """The button's callback: back to the original query (a history entry)."""
    state.set_option(ASK, "")


def _embedded(key: PoolKey, text: str) -> Question:
    pool = key.get()
    if pool.embedding_model is None:
        raise PoolError(
            "this pool does not name the model that embedded its chunks "
            "(embedding_model), so a question cannot be embedded the same way"
        )
    try:
        name = resolve_model(pool.embedding_model)
    except PoolError:
        raise PoolError(
            f"the pool's embedding model {pool.embedding_model!r} is not available on this "
            f"machine, so a new question cannot be embedded"
        ) from None
    with st.spinner("Embedding the question…"):
        vector = embed_texts([text], model=name)[0].astype(np.float64)
    prepared = pool.prepared
    if vector.shape[0] != prepared.dim:
        raise PoolError(
            f"the model {pool.embedding_model!r} gives {vector.shape[0]} values, the pool's "
            f"embeddings have {prepared.dim}: they did not come from this model"
        )
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or norm == 0.0:
        raise PoolError(f"the model gave a zero vector for the question {text!r}")
    unit = vector / norm
    similarities = (prepared.chunks @ unit.astype(prepared.chunks.dtype)).astype(np.float64)
    order = np.argsort(-similarities, kind="stable")[:NEIGHBOURS]
    return Question(text, unit, similarities, tuple(int(i) for i in order))


def question(key: PoolKey, text: str) -> Question:
    """The question embedded for the pool of ``key`` (cached; a refusal is a PoolError
    whose message is one line)."""
    return compute.derived("question", key, text).fill(lambda: _embedded(key, text))


def place(key: PoolKey, asked_question: Question, chunks_xy: np.ndarray, method: str) -> Placed:
    """Where the question goes on the map whose chunk coordinates are ``chunks_xy``."""
    if method == "pca":  # an eigen-decomposition of the pool: once per pool and question

        def transform() -> Placed:
            chunks = np.asarray(key.get().prepared.chunks, dtype=np.float64)
            _, point = pca(chunks, asked_question.vector)
            assert point is not None
            return Placed(float(point[0]), float(point[1]), "PCA transform")

        return compute.derived("placed", key, asked_question.text).fill(transform)
    near = list(asked_question.neighbours)
    weights = np.maximum(asked_question.similarities[near], 1e-6)
    x, y = (weights[:, None] * np.asarray(chunks_xy)[near]).sum(axis=0) / weights.sum()
    return Placed(float(x), float(y), f"weighted mean of the {len(near)} nearest chunks")


def reselect(key: SelectionKey, asked_question: Question) -> Selection:
    """The session's strategy, budget and settings run with the question as the query
    (cached per selection key and question)."""

    def run() -> Selection:
        pool = key.pool.get()
        prepared = prepare(asked_question.vector, pool.prepared.chunks, pool.prepared.tokens)
        return baselines.run_prepared(
            key.strategy, prepared, key.budget, key.selector, texts=pool.texts
        )

    return compute.derived("reselected", key, asked_question.text).fill(run)


def beside_frame(pool: Pool, original: Selection, new: Selection) -> pd.DataFrame:
    """The new query's picks in order (tokens, relevance to the question) beside the
    original query's picks in order; the shorter list is padded with empty cells."""
    rows = max(len(original.indices), len(new.indices))

    def column(values: list[object]) -> list[object]:
        return values + [None] * (rows - len(values))

    return pd.DataFrame(
        {
            "order": range(1, rows + 1),
            "new pick": column([pool.ids[i] for i in new.indices]),
            "tokens": column([int(new.token_counts[i]) for i in new.indices]),
            "relevance to the question": column([float(new.relevance[i]) for i in new.indices]),
            "original pick": column([pool.ids[i] for i in original.indices]),
        }
    )


# --------------------------------------------------------------------------- every page


def _register(base: str, asked_question: Question) -> str:
    """Register pool ``base`` with the question as its query (its text and vector; no gold
    labels or answers: they belong to the original query) and return its key."""
    pool = pools.get_pool(base)
    chunks = tuple(dataclasses.replace(chunk, gold=False) for chunk in pool.chunks)
    pool = dataclasses.replace(
        pool,
        query=asked_question.text,
        chunks=chunks,
        answers=(),
        raw_query_embedding=asked_question.vector,
    )
    label = f"{pools.pool_label(base)}, asked: {asked_question.text[:40]}"
    return pools.add_pool(pool, "asked", label)


def open_everywhere(base: str, asked_question: Question) -> None:
    """The button's callback: the question's pool (the same chunks, the question as query)
    becomes the current pool of every page; the address keeps the question and the pool it
    was asked of, so a link asks it again."""
    key = _register(base, asked_question)
    state.set_option(ASKED_FROM, base)
    state.update(pool=key, step=None, chunk=None)


def restore_from_url() -> str | None:
    """Ask the address's question (``ask``) of its pool (``asked_from``) again and return the
    key of that pool (a link opened in another browser); the sidebar calls it when the
    address names an ``asked-`` pool this session lacks."""
    base, text = str(state.option(ASKED_FROM, "")), asked()
    if not (base and text):
        return None
    try:
        return _register(base, question(compute.pool_key(base), text))
    except AdagresError as error:
        render.error(f"Could not ask {text!r} of pool {base!r} again: {error}")
        return None
