"""2-D projections: PCA against an eigendecomposition, tiny pools, one real UMAP run."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from adagres.errors import InputError
from adagres.figures.projection import pca, project, warm_up


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_pca_matches_eigendecomposition_with_the_sign_rule():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 6)) * np.array([5.0, 3.0, 1.0, 0.5, 0.2, 0.1])
    coords, _ = pca(X)
    centred = X - X.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    top = vectors[:, ::-1][:, :2].T.copy()
    for row in top:  # the documented rule: largest-magnitude loading positive
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    np.testing.assert_allclose(coords, centred @ top.T, atol=1e-9)


def test_pca_is_exact_for_points_in_a_plane_and_projects_the_query_alike():
    rng = np.random.default_rng(1)
    basis = np.linalg.qr(rng.normal(size=(5, 2)))[0].T  # 2 orthonormal directions in 5-D
    flat = rng.normal(size=(20, 2)) @ basis + 3.0 * rng.normal(size=5)
    coords, q_xy = pca(flat, flat[7])
    assert q_xy is not None
    dist = lambda a: np.linalg.norm(a[:, None] - a[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(dist(coords), dist(flat), atol=1e-9)
    np.testing.assert_allclose(q_xy, coords[7], atol=1e-12)


def test_project_pca_is_deterministic_and_invariant_to_row_order():
    rng = np.random.default_rng(2)
    C = unit(rng.normal(size=(30, 8)))
    q = unit(rng.normal(size=8))
    a = project(C, q, method="pca")
    perm = rng.permutation(30)
    b = project(C[perm], q, method="pca")
    assert a.method == "pca" and a.note is None
    np.testing.assert_allclose(b.chunks, a.chunks[perm], atol=1e-9)
    assert a.query is not None and b.query is not None
    np.testing.assert_allclose(b.query, a.query, atol=1e-9)
    assert not a.chunks.flags.writeable


def test_tiny_pool_falls_back_to_pca_and_says_so():
    C = unit(np.array([[1.0, 0.2, 0.0], [0.1, 1.0, 0.3]]))
    p = project(C, np.array([1.0, 1.0, 0.0]), method="umap")
    assert p.method == "pca"
    assert p.note is not None and "3 points" in p.note
    assert p.query is not None
    assert p.chunks.shape == (2, 2) and p.query.shape == (2,)
    single = project(C[:1], method="umap")
    assert single.method == "pca" and single.chunks.tolist() == [[0.0, 0.0]]


def test_project_validates_its_inputs():
    C = unit(np.eye(4))
    with pytest.raises(InputError, match="chunk 1"):
        project(np.array([[1.0, 0.0], [0.0, 0.0]]), method="pca")
    with pytest.raises(InputError, match="method"):
        project(C, method="tsne")  # type: ignore[arg-type]  # the mistake
    with pytest.raises(InputError, match="query"):
        project(C, np.ones(3), method="pca")
    with pytest.raises(InputError, match="n_neighbors"):
        project(C, n_neighbors=1)


def test_importing_projection_and_sweep_loads_neither_umap_nor_plotly():
    code = (
        "import sys, adagres, adagres.figures.projection, adagres.core.sweep\n"
        "heavy = ('umap', 'numba', 'plotly', 'streamlit', 'sklearn', 'scipy')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_umap_is_deterministic_with_a_seed_and_handles_small_pools():
    """The one test that runs real UMAP (pays numba's compilation once, ~10 s)."""
    warm_up()
    start = time.perf_counter()
    warm_up()
    assert time.perf_counter() - start < 0.5  # once per process

    rng = np.random.default_rng(4)
    centers = rng.normal(size=(3, 16))
    C = unit(centers[rng.integers(0, 3, 60)] + 0.3 * rng.normal(size=(60, 16)))
    q = unit(centers[0])
    a = project(C, q, seed=7)
    b = project(C, q, seed=7)
    assert a.method == "umap" and a.note is None and a.n_neighbors == 15
    assert a.query is not None
    assert a.chunks.shape == (60, 2) and a.query.shape == (2,)
    np.testing.assert_array_equal(a.chunks, b.chunks)
    np.testing.assert_array_equal(a.query, b.query)
    # The query (one more point, close to cluster 0) lands among cluster 0's chunks.
    labels = np.argmax(C @ centers.T, axis=1)
    nearest = np.argsort(np.linalg.norm(a.chunks - a.query, axis=1))[:5]
    assert (labels[nearest] == 0).sum() >= 3

    small = project(C[:6], q, seed=0)
    assert small.method == "umap" and small.n_neighbors == 6
    assert small.note is not None and "lowered from 15 to 6" in small.note
    assert np.isfinite(small.chunks).all()


@pytest.mark.slow
def test_umap_machine_code_is_loaded_from_disk_in_a_new_process():
    """keep_compiled_code: a process after the first loads umap's compiled functions from
    numba's cache instead of compiling them again (the ~10 s before each server's first map)."""
    code = (
        "from adagres.figures.projection import warm_up\n"
        "warm_up()\n"
        "import umap.umap_ as u\n"
        "for f in (u.smooth_knn_dist, u.compute_membership_strengths):\n"
        "    print(type(f._cache).__name__, sum(f.stats.cache_hits.values()))\n"
    )
    run = [sys.executable, "-c", code]
    subprocess.run(run, capture_output=True, text=True, check=True)  # compiles if it must
    lines = subprocess.run(run, capture_output=True, text=True, check=True).stdout.split("\n")
    caches = [line.split() for line in lines if line.strip()]
    assert len(caches) == 2
    for kind, hits in caches:
        assert kind == "FunctionCache" and int(hits) >= 1
