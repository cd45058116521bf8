"""Determinism: the same pool and settings give the same picks, the same step record and the
same map coordinates in another process and under another number of BLAS threads.

Each run is a fresh interpreter (``OPENBLAS_NUM_THREADS`` is read when numpy loads). The
selections must agree bit for bit: JSON's float repr round-trips exactly, so equal text is
equal bits. PCA coordinates agree bit for bit between runs with the same thread count; with
1 against 2 threads the eigensolver sums in another order, and they agree to 1e-9 (measured:
about 2e-14 on a 3,000-chunk pool).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parents[1]

RUN = r"""
import json, sys
import numpy as np
import adagres
from adagres import baselines
from adagres.figures.projection import project
from adagres.pools.io import load_pool

S = adagres.Settings
EVERY = [("adagres", S()), ("adagres", S(policy="fill", formula="derived")),
         ("adagres", S(policy="ratio", redundancy_floor="pool")), ("mmr", S()),
         ("topk_budget", S())]

def record(pool, budget, ids, candidates, runs=EVERY):
    out = {}
    for strategy, settings in runs:
        selection = baselines.run_prepared(strategy, pool, budget, settings, trace=True)
        key = f"{strategy}/{settings.policy}/{settings.formula}/{settings.redundancy_floor}"
        out[key] = selection.to_dict(ids, candidates=candidates)
    return out

# A file pool, as the app and the CLI load it.
file_pool = load_pool(sys.argv[1])
out = {"file": record(file_pool.prepared, 800, list(file_pool.ids), True)}
# A pool large enough for OpenBLAS to use its threads (2,000 x 384), with near-twins.
rng = np.random.default_rng(7)
C = rng.standard_normal((2000, 384)).astype(np.float32)
C[1::2] = C[::2] + 0.05 * rng.standard_normal((1000, 384)).astype(np.float32)
q = C[:50].mean(axis=0) + rng.standard_normal(384).astype(np.float32)
big = adagres.prepare(q, C, rng.integers(20, 200, 2000))
out["big"] = record(big, 4000, None, False, EVERY[:1] + EVERY[3:4])
for name, pool, query in [("file", file_pool.prepared, file_pool.query_embedding), ("big", big, q)]:
    projection = project(pool, query, method="pca")
    out[f"{name}_map"] = {"chunks": projection.chunks.tolist(), "query": projection.query.tolist()}
print(json.dumps(out))
"""


def run(threads: int) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    pool_file = ROOT / "data" / "biomedical_redundant.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(pool_file)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def runs() -> dict[str, dict]:
    return {"one": run(1), "one again": run(1), "two": run(2)}


def test_selections_are_bit_identical_across_processes_and_thread_counts(runs):
    for pool, runs_of_pool in (("file", 5), ("big", 2)):
        first = runs["one"][pool]
        assert len(first) == runs_of_pool
        for name in ("one again", "two"):
            for key, selection in first.items():
                other = runs[name][pool][key]
                assert other["selected"] == selection["selected"], (pool, key, name)
                assert json.dumps(other) == json.dumps(selection), (pool, key, name)
    big = runs["one"]["big"]["adagres/skip/paper/None"]
    assert len(big["selected"]) > 10 and len(big["steps"]) == len(big["selected"]) + 1


def test_map_coordinates_agree_across_processes_and_thread_counts(runs):
    for name in ("file_map", "big_map"):
        one, again, two = (np.array(runs[r][name]["chunks"]) for r in ("one", "one again", "two"))
        assert one.shape[1] == 2 and np.isfinite(one).all()
        np.testing.assert_array_equal(one, again)  # same threads, another process: same bits
        np.testing.assert_allclose(two, one, rtol=0, atol=1e-9 * np.abs(one).max())
        query = [np.array(runs[r][name]["query"]) for r in ("one", "two")]
        np.testing.assert_allclose(query[1], query[0], rtol=0, atol=1e-9 * np.abs(one).max())
