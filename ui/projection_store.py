"""The map's 2-D coordinates per pool: PCA at once, seeded UMAP from one background worker.

One :class:`ProjectionStore` per server process. Its worker first pays numba's compilation,
then fits UMAP per pool in the order asked; until then the map uses PCA and the page polls
(``ui.render.wait_for_projection``). ``ADAGRES_PROJECTION=pca`` never starts UMAP. The
worker is a daemon thread, so a server told to stop exits at once (a
``ThreadPoolExecutor`` worker is joined at exit, which held the server for tens of seconds).
"""

from __future__ import annotations

import functools
import os
import queue
import threading
from collections.abc import Callable
from typing import Literal

import streamlit as st

from adagres.figures.projection import Projection
from adagres.pools.pool import Pool

from .compute import PoolKey

__all__ = [
    "projection",
    "projection_method",
    "projection_ready",
    "store",
]

#: Seconds the numba warm-up waits after the server starts: the first page's script and
#: its charts (about 3 s from a cold start) run first.
WARM_UP_DELAY = 2.5


def projection_method() -> str:
    """``umap`` (default) or ``pca`` (``$ADAGRES_PROJECTION``): the map's final projection."""
    method = os.environ.get("ADAGRES_PROJECTION", "umap").strip().lower()
    return method if method in ("umap", "pca") else "umap"


class ProjectionStore:
    """2-D coordinates per pool and method, the final method computed in the background."""

    def __init__(self, method: str) -> None:
        self.method = method
        self._lock = threading.Lock()
        self._done: dict[tuple[PoolKey, str], Projection] = {}
        self._pending: set[tuple[PoolKey, str]] = set()
        self._tasks: queue.SimpleQueue[Callable[[], object]] | None = None
        if method == "umap":
            from adagres.figures.projection import warm_up

            self._tasks = queue.SimpleQueue()
            # After the first page is drawn, at low priority: the compilation (cached by
            # numba across starts) took the cores and the interpreter from the first chart.
            self._tasks.put(functools.partial(warm_up, delay=WARM_UP_DELAY, nice=10))
            threading.Thread(target=self._work, name="umap", daemon=True).start()

    def _work(self) -> None:
        """Run the queued tasks one by one, for the life of the process."""
        assert self._tasks is not None
        while True:
            task = self._tasks.get()
            try:
                task()
            except Exception:  # a failed fit leaves the pool on PCA; keep serving the others
                continue

    def _fit(self, key: tuple[PoolKey, str], pool: Pool) -> Projection:
        from adagres.figures.projection import project

        prepared = pool.prepared  # unit rows already: project() does not check them again
        try:
            method: Literal["umap", "pca"] = "umap" if key[1] == "umap" else "pca"
            result = project(prepared, prepared.query, method=method, seed=0)
        finally:
            with self._lock:
                self._pending.discard(key)
        with self._lock:
            self._done[key] = result
        return result

    def get(self, key: PoolKey, pool: Pool) -> tuple[Projection, str, bool]:
        """(projection, method used, whether a better one is still being computed)."""
        fast, best = (key, "pca"), (key, self.method)
        with self._lock:
            if best in self._done:
                return self._done[best], self.method, False
            if self._tasks is not None and best not in self._pending:
                self._pending.add(best)
                self._tasks.put(lambda: self._fit(best, pool))
            ready = self._done.get(fast)
        if ready is None:
            ready = self._fit(fast, pool)
        return ready, "pca", self.method != "pca"

    def ready(self, key: PoolKey) -> bool:
        """Whether the final projection of this pool is available."""
        with self._lock:
            return (key, self.method) in self._done


@st.cache_resource(show_spinner=False)
def store(method: str) -> ProjectionStore:
    """The process-wide projection store (created once per server process and method)."""
    return ProjectionStore(method)


def projection(key: PoolKey) -> tuple[Projection, str, bool]:
    """The map coordinates of a pool: (Projection, method, UMAP still pending)."""
    return store(projection_method()).get(key, key.get())


def projection_ready(key: PoolKey) -> bool:
    """Whether the pool's final (UMAP) layout is ready."""
    return store(projection_method()).ready(key)
