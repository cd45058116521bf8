"""2-D projection of a pool's chunks (and its query) for the map view.

Computed once, outside any figure function, and cached by the app. numpy only at import:
umap is imported lazily inside :func:`project` and :func:`warm_up`.

Geometry is cosine throughout. UMAP runs on a precomputed cosine-distance matrix
(1 − c_i·c_j), which at N = 2000 took 2.6 s against 5.7 s for ``metric="cosine"`` on the
same data (2-core machine, after warm-up). The query is projected *jointly*, as one extra
point of the matrix, rather than with ``transform``: a precomputed-metric UMAP cannot
transform new points, and one point among hundreds barely moves the layout. PCA
works on the unit vectors, whose Euclidean geometry is the cosine one
(‖a − b‖² = 2 − 2·cos); there the query is projected onto the chunks' components.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..core import validate as v
from ..core.prepared import unit_chunks as unit_rows_of
from ..errors import InputError

__all__ = ["METHODS", "Projection", "cosine_distances", "pca", "project", "warm_up"]

Method = Literal["umap", "pca"]
METHODS: tuple[str, ...] = ("umap", "pca")

#: Fewer points than this (query included) are projected with PCA: UMAP needs a neighbour graph.
UMAP_MIN_POINTS = 4

_lock = threading.Lock()
_warmed = False


@dataclass(frozen=True, eq=False)
class Projection:
    """2-D coordinates of a pool's chunks (pool order) and of its query.

    ``chunks`` is (N, 2) float64; ``query`` is (2,) or None. ``method`` is the method actually
    used (PCA replaces UMAP for tiny pools); ``note`` says why, or which settings changed.
    """

    chunks: np.ndarray
    query: np.ndarray | None
    method: str
    note: str | None = None
    seed: int | None = None
    n_neighbors: int | None = None


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def pca(
    points: np.ndarray, extra: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Project ``points`` (N, d) onto their first two principal components.

    Deterministic: each component's sign is chosen so that its largest-magnitude loading is
    positive. ``extra`` (d,) is projected with the same mean and components. Missing
    components (N < 3 or d < 2) give zero coordinates.

    >>> xy, _ = pca(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 3.0], [0.0, 1.0, 2.0]]))
    >>> np.round(xy, 6).tolist()
    [[-1.0, -0.333333], [1.0, -0.333333], [0.0, 0.666667]]
    """
    points = np.asarray(points, dtype=np.float64)
    mean = points.mean(axis=0)
    centred = points - mean
    components = _top_two_axes(centred)
    for row in components:
        pivot = int(np.argmax(np.abs(row)))
        if row[pivot] < 0:
            row *= -1.0
    coords = centred @ components.T
    # A component of a rank-deficient matrix is arbitrary: its coordinates are ~0; make them 0.
    coords[np.abs(coords) < 1e-12] = 0.0
    projected = (
        None if extra is None else (np.asarray(extra, dtype=np.float64) - mean) @ components.T
    )
    return coords, projected


def _top_two_axes(centred: np.ndarray) -> np.ndarray:
    """The first two principal axes of centred rows, (2, d); zero rows where there are none.

    From the eigenvectors of the smaller of the two Gram matrices (d×d covariance or N×N):
    the same axes as an SVD of the rows (up to sign, fixed by the caller), at 2,000 × 384
    about 100 ms instead of 1.7 s.
    """
    n, d = centred.shape
    components = np.zeros((2, d))
    if n == 0 or d == 0:
        return components
    if d <= n:
        values, vectors = np.linalg.eigh(centred.T @ centred)
        top = vectors[:, ::-1][:, :2].T
        components[: top.shape[0]] = top
        return components
    values, vectors = np.linalg.eigh(centred @ centred.T)
    scale = max(float(values[-1]), 0.0)
    for row, j in enumerate(range(n - 1, max(n - 3, -1), -1)):
        # A zero eigenvalue has no axis: its coordinates are 0 whatever the direction.
        if values[j] > 1e-12 * scale and values[j] > 0:
            axis = centred.T @ vectors[:, j]
            components[row] = axis / np.linalg.norm(axis)
    return components


def cosine_distances(points: np.ndarray) -> np.ndarray:
    """1 − cosine between unit rows, symmetric, clipped to [0, 2], zero on the diagonal."""
    gram = points @ points.T
    distances = 1.0 - (gram + gram.T) / 2.0
    np.fill_diagonal(distances, 0.0)
    return np.clip(distances, 0.0, 2.0)


_kept = False


def keep_compiled_code(packages: tuple[str, ...] = ("umap", "pynndescent")) -> int:
    """Have numba keep the machine code of umap's functions on disk, across processes.

    Most of umap's numba functions are not declared ``cache=True``, so every new process
    compiled them again: about 10 s before its first fit (measured: the first fit of a
    process 33 s under load, 0.13 s once the code was on disk). Numba stores the code
    beside the package's sources (or in its user-wide cache if those are read-only) and
    recompiles when a source file changes. Returns how many functions it switched on;
    a function numba cannot cache keeps being compiled, as before. Once per process.
    """
    global _kept
    if _kept:
        return 0
    _kept = True
    try:
        from numba.core.registry import CPUDispatcher
    except ImportError:  # pragma: no cover - umap always brings numba
        return 0
    count = 0
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in packages or module is None:
            continue
        for value in list(vars(module).values()):
            # A dispatcher without a cache holds numba's NullCache (private, checked by name).
            cache = getattr(value, "_cache", None)
            if isinstance(value, CPUDispatcher) and type(cache).__name__ == "NullCache":
                with contextlib.suppress(Exception):
                    value.enable_caching()
                    count += 1
    return count


def _umap(points: np.ndarray, *, seed: int, n_neighbors: int, min_dist: float) -> np.ndarray:
    import warnings

    import umap

    # Every precomputed fit warns that inverse_transform is unavailable; we never use it.
    warnings.filterwarnings("ignore", message="using precomputed metric", module="umap")
    keep_compiled_code()
    model = umap.UMAP(
        n_components=2,
        n_neighbors=n_neighbors,
        min_dist=min_dist,
        metric="precomputed",
        random_state=seed,  # also makes UMAP single-threaded, hence reproducible
        n_jobs=1,
    )
    return np.asarray(model.fit_transform(cosine_distances(points)), dtype=np.float64)


def project(
    unit_chunks: Any,
    query: Any = None,
    *,
    method: Method = "umap",
    seed: int = 0,
    n_neighbors: int = 15,
    min_dist: float = 0.1,
) -> Projection:
    """2-D coordinates of the chunks (and the query) under cosine geometry.

    ``unit_chunks`` (N, d) and ``query`` (d,) are normalised if they are not unit vectors;
    ``unit_chunks`` may be a :class:`~adagres.PreparedPool` (its rows are not checked again).
    ``method="umap"`` fits UMAP on the cosine distances of chunks and query together (the
    query is one extra point) with an explicit ``seed``; pools of fewer than 4 points fall
    back to PCA, and ``n_neighbors`` is lowered to (points − 1) when the pool is smaller
    than that; ``note`` records either change. ``method="pca"`` takes milliseconds.

    >>> p = project(np.eye(3), np.array([1.0, 1.0, 0.0]), method="pca")
    >>> p.method, p.chunks.shape, p.query.shape
    ('pca', (3, 2), (2,))
    """
    chunks = unit_rows_of(unit_chunks, "unit_chunks").astype(np.float64)
    q = None if query is None else v.unit_vector(query, chunks.shape[1], "query")
    v.choice(method, "method", METHODS)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed: expected an integer, got {seed!r}")
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise InputError(f"n_neighbors: expected an integer >= 2, got {n_neighbors!r}")
    if n_neighbors < 2:
        raise InputError(f"n_neighbors: must be >= 2, got {n_neighbors}")
    min_dist = v.real(min_dist, "min_dist", minimum=0.0)

    n = chunks.shape[0]
    n_points = n + (q is not None)
    note = None
    if method == "umap" and n_points < UMAP_MIN_POINTS:
        method = "pca"
        note = f"PCA instead of UMAP: {n_points} points are too few for a neighbour graph"
    if method == "pca":
        coords, q_xy = pca(chunks, q)
        return Projection(_frozen(coords), None if q_xy is None else _frozen(q_xy), "pca", note)

    neighbours = int(n_neighbors)
    if neighbours >= n_points:
        neighbours = n_points - 1
        note = f"n_neighbors lowered from {n_neighbors} to {neighbours}: only {n_points} points"
    points = chunks if q is None else np.vstack([chunks, q[None, :]])
    coords = _umap(points, seed=int(seed), n_neighbors=neighbours, min_dist=min_dist)
    q_xy = None if q is None else _frozen(coords[n].copy())
    return Projection(_frozen(coords[:n].copy()), q_xy, "umap", note, int(seed), neighbours)


def warm_up(*, delay: float = 0.0, nice: int = 0) -> float:
    """Pay numba's one-off compilation (about 10 s) with a tiny UMAP fit; once per process.

    Safe to call from several threads (the app starts it in a background thread): the
    first call fits, later calls return at once. Returns the seconds this call spent.
    ``delay`` (seconds) waits first, so that a page being drawn at start-up does not share
    the cores and the interpreter with the compiler; ``nice`` > 0 lowers the priority of
    the calling thread only (Linux), for the compilation and whatever the thread runs after.
    """
    global _warmed
    start = time.perf_counter()
    if delay > 0 and not _warmed:
        time.sleep(delay)
    if nice > 0 and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):  # not permitted here: normal priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    with _lock:
        if not _warmed:
            rng = np.random.default_rng(0)
            points = rng.normal(size=(12, 8))
            points /= np.linalg.norm(points, axis=1, keepdims=True)
            _umap(points, seed=0, n_neighbors=3, min_dist=0.1)
            _warmed = True
    return time.perf_counter() - start
