"""The one way the data layer draws while it works: a progress bar, a spinner, a followed job.

Called outside Streamlit's cache functions only (a cache replays what was drawn while it
ran). Labels are shown literally (Markdown-escaped: they may quote file names), and all is
gone once the work ends: the caller shows the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from adagres.errors import AdagresError

from . import jobs
from .text import escape_md

__all__ = ["bar", "describe", "follow", "seconds", "spinner"]

POLL_SECONDS = 0.25


@contextmanager
def bar(label: str) -> Iterator[Callable[..., None]]:
    """A progress bar while the block runs, removed after it.

    Yields ``report(fraction, text=None)``: the fraction done (clipped to 0..1) and an
    optional new label.
    """
    widget = st.progress(0.0, text=escape_md(label))

    def report(fraction: float, text: str | None = None) -> None:
        shown = label if text is None else text
        widget.progress(min(max(float(fraction), 0.0), 1.0), text=escape_md(shown))

    try:
        yield report
    finally:
        widget.empty()


@contextmanager
def spinner(label: str) -> Iterator[None]:
    """A spinner while the block runs (Streamlit shows it only after half a second)."""
    with st.spinner(escape_md(label)):
        yield


def seconds(value: float) -> str:
    """A duration for an estimate: "under a second", "about 7 s", "about 2 min".

    >>> seconds(0.4), seconds(7.2), seconds(130)
    ('under a second', 'about 7 s', 'about 2 min')
    """
    if value < 1:
        return "under a second"
    if value < 90:
        return f"about {round(value)} s"
    return f"about {round(value / 60)} min"


def describe(job: jobs.Job) -> str:
    """The bar's text: what the job does now, the time it took so far and what is left."""
    return (
        f"{job.label}: {job.message} · {job.elapsed():.0f} s so far, "
        f"{seconds(job.remaining())} left"
    )


def _fraction(job: jobs.Job) -> float:
    if job.fraction is not None:
        return job.fraction
    total = job.elapsed() + job.remaining()
    return min(job.elapsed() / total, 0.95) if total > 0 else 0.0


def follow(job: jobs.Job, *, key: str) -> Any:
    """Show ``job`` (progress, estimate, a Cancel button keyed ``key``) until it ends, then
    remove that and return its result.

    Raises :class:`ui.jobs.Cancelled` when the user cancelled it (at once: a job stuck in a
    step that does not report keeps running in the background and its result is dropped),
    and the job's own error otherwise (an AdagresError as a fresh exception of its type, so
    the message shows once). Any click elsewhere on the page ends this run; the page then
    follows the same job again (``ui.pool_sources`` keeps which one is pending).
    """
    holder = st.empty()
    with holder.container():
        shown = st.progress(_fraction(job), text=escape_md(describe(job)))
        st.button(
            "Cancel", key=key, on_click=jobs.cancel, args=(job.name,), icon=":material/cancel:"
        )
    while not job.wait(POLL_SECONDS) and not job.cancelled:
        shown.progress(_fraction(job), text=escape_md(describe(job)))
    holder.empty()
    if job.cancelled:
        raise jobs.Cancelled(job.label)
    if isinstance(job.error, AdagresError):
        raise type(job.error)(str(job.error))
    if job.error is not None:
        raise job.error
    return job.result
