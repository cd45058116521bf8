"""Long work off the script thread (loading, counting, embedding pools), with progress, an
estimate of the time left and Cancel.

A :class:`Job` runs one function in a daemon thread; the function calls
:meth:`Job.report` as it goes, which raises :class:`Cancelled` once cancelled. Jobs live in
a process-wide table by name, so a second request for the same work joins the running job.
Nothing here draws: the page calls :func:`ui.progress.follow`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Cancelled", "Job", "cancel", "find", "forget", "start", "succeeded"]


class Cancelled(Exception):
    """Raised inside a job's function when the user cancelled it (from its next report)."""


class Job:
    """One piece of long work: its progress, and its result or error once it has ended.

    ``expected`` is a prior guess of the whole run in seconds, used for the estimate until
    the work reports a fraction done.
    """

    def __init__(self, name: str, label: str, expected: float) -> None:
        self.name, self.label, self.expected = name, label, float(expected)
        self.started = time.monotonic()
        self.fraction: float | None = None
        self.message = label
        self._measured_from: tuple[float, float] | None = None  # (time, fraction) first seen
        self._last_report = self.started
        self._done = threading.Event()
        self._cancel = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    # -- inside the work

    def report(self, fraction: float | None = None, message: str | None = None) -> None:
        """Record progress (``fraction`` of the work done, 0..1) and an optional message;
        raise :class:`Cancelled` if the job was cancelled."""
        if self._cancel.is_set():
            raise Cancelled(self.label)
        if message is not None:
            self.message = message
        if fraction is not None:
            self.fraction = min(max(float(fraction), 0.0), 1.0)
            self._last_report = time.monotonic()
            if self._measured_from is None:
                self._measured_from = (self._last_report, self.fraction)

    def counter(self, message: Callable[[int, int], str]) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` callback (as the pool loaders take) reporting here."""
        return lambda done, total: self.report(done / max(total, 1), message(done, total))

    # -- from the page

    @property
    def done(self) -> bool:
        """Whether the work has ended (with a result, an error or a cancellation)."""
        return self._done.is_set()

    @property
    def cancelled(self) -> bool:
        """Whether the user asked to cancel it."""
        return self._cancel.is_set()

    def elapsed(self) -> float:
        """Seconds since the job started."""
        return time.monotonic() - self.started

    def remaining(self) -> float:
        """Estimated seconds left (never below zero): once a fraction has been reported
        twice, the rest at the rate measured between them, counted down from the last
        report; before that, ``expected`` minus the time spent."""
        now = time.monotonic()
        if self.fraction is not None and self._measured_from is not None:
            since, first = self._measured_from
            gained = self.fraction - first
            if gained > 0 and self._last_report > since:
                rest = (1.0 - self.fraction) * (self._last_report - since) / gained
                return max(rest - (now - self._last_report), 0.0)
        return max(self.expected - self.elapsed(), 0.0)

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the end; whether it has ended."""
        return self._done.wait(timeout)

    def _run(self, work: Callable[[Job], Any]) -> None:
        try:
            self.result = work(self)
        except BaseException as error:  # kept for the page, which shows or raises it
            self.error = error
        finally:
            self._done.set()


_LOCK = threading.Lock()
_JOBS: dict[str, Job] = {}


def start(name: str, work: Callable[[Job], Any], *, label: str, expected: float) -> Job:
    """The job ``name``: the running or finished one of that name, or a new one running
    ``work(job)`` in a daemon thread. A cancelled or failed job is replaced by a new one."""
    with _LOCK:
        job = _JOBS.get(name)
        if job is not None and not job.cancelled and (not job.done or job.error is None):
            return job
        job = Job(name, label, expected)
        _JOBS[name] = job
    threading.Thread(target=job._run, args=(work,), name=f"job-{name}", daemon=True).start()
    return job


def find(name: str) -> Job | None:
    """The job of that name, if one was started in this process."""
    with _LOCK:
        return _JOBS.get(name)


def succeeded(name: str) -> bool:
    """Whether the job ``name`` has ended with a result (in this process)."""
    job = find(name)
    return job is not None and job.done and job.error is None


def cancel(name: str) -> None:
    """Ask the job ``name`` to stop at its next report (a Cancel button's callback)."""
    job = find(name)
    if job is not None:
        job._cancel.set()


def forget(name: str) -> None:
    """Drop a finished job from the table (its result is kept elsewhere, or not needed)."""
    with _LOCK:
        job = _JOBS.get(name)
        if job is not None and job.done:
            del _JOBS[name]
