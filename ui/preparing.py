"""The embedding model in the background, and a pool made ready to select from.

:func:`prepare_pool` computes what a pool lacks (token counts, embeddings) and
:func:`prepare_bundled` does it as a job for a bundled file that comes without them. The
model loads once per process (:func:`start_model`); job estimates count on it. Nothing here
knows where pools are kept (``ui.pools`` and ``ui.corpora`` call in).
"""

from __future__ import annotations

import os
import tempfile

from adagres.embed.tokens import DEFAULT_TOKENIZER
from adagres.pools.pool import Pool

from . import jobs, progress
from .text import count

__all__ = [
    "expected_seconds",
    "model_prefetch_pending",
    "prefetch_on",
    "prepare_bundled",
    "prepare_pool",
    "start_model",
]

#: Prior guesses for the estimate until the work measures its own rate.
MODEL_SECONDS = 1.0  # read MiniLM's weights and tokenizer (numpy, no torch), once per process
TEXTS_PER_SECOND = 40.0
_MODEL_JOB = "embedding-model"


def prefetch_on() -> bool:
    """Whether loading ahead of need is on (off with ``ADAGRES_PREFETCH=off``)."""
    return os.environ.get("ADAGRES_PREFETCH", "on").strip().lower() not in ("0", "off", "no")


def _load_model(job: jobs.Job) -> bool:
    from adagres.embed.models import embed_texts

    job.report(None, "Loading the embedding model (MiniLM, packaged)…")
    # A throw-away cache folder, so that the model really runs (and stays loaded).
    embed_texts(["warm-up"], cache_dir=tempfile.mkdtemp(prefix="adagres-warm-"))
    return True


def start_model() -> jobs.Job:
    """Load the embedding model in the background (joins the load already running)."""
    return jobs.start(_MODEL_JOB, _load_model, label="Loading the model", expected=MODEL_SECONDS)


def model_prefetch_pending() -> bool:
    """Whether a prefetch would start loading the model: prefetching is on and no load has
    started in this process. A failed load is not retried from here (the load the user asks
    for says why it failed)."""
    job = jobs.find(_MODEL_JOB)
    return prefetch_on() and (job is None or job.cancelled)


def expected_seconds(n_texts: int, embed: bool) -> float:
    """A prior guess of a job that reads, counts and (with ``embed``) embeds ``n_texts``."""
    return (
        (0.0 if jobs.succeeded(_MODEL_JOB) else MODEL_SECONDS) + n_texts / TEXTS_PER_SECOND
        if embed
        else 2.0
    )


def prepare_pool(pool: Pool, job: jobs.Job | None = None) -> Pool:
    """``pool`` with token counts and embeddings, computing only what is missing (a pool
    with chunk vectors but no query vector gets its query embedded, nothing else)."""
    from adagres.pools.ready import ensure_embeddings, ensure_token_counts

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
    expected = expected_seconds(len(pool), True)
    job = jobs.start(
        f"bundled-{name}",
        lambda j: prepare_pool(pool, j),
        label=f"Preparing {name}",
        expected=expected,
    )
    return progress.follow(job, key=f"cancel_bundled_{name}")
