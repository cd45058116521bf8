"""What bench_select.py measures with: the seeded synthetic pool, timeit-style timers,
peak-memory probes, the MMR comparators (when installed) and a description of the machine.

``make_pool`` is imported from here by bench_select.py, which re-exports it for
bench_exact.py and ratios.py (``from bench_select import make_pool``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import os
import platform
import sys
import threading
import time
import timeit
import tracemalloc
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

import numpy as np

# ----------------------------------------------------------------------------- data


def make_pool(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded synthetic pool: float32 unit vectors (query direction + topic + noise).

    Pure isotropic random unit vectors in 384-d are nearly orthogonal: half have negative
    relevance and the mean pairwise similarity is ~0, so adaptive λ falls back and the run
    stops early. A shared query component and a few topic centres give a pool that looks
    like a retriever's top-N (relevance ~0.35, mean pairwise cosine ~0.13-0.15) while
    remaining random. Token counts are integers in [40, 160].
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    q /= np.linalg.norm(q)
    n_topics = max(4, n // 50) if n <= 1000 else 64
    centres = rng.standard_normal((n_topics, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = rng.integers(0, n_topics, n)
    chunks = rng.standard_normal((n, d), dtype=np.float32)
    chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    chunks *= np.float32(0.85)
    chunks += np.float32(0.35) * q.astype(np.float32)
    chunks += np.float32(0.35) * centres.astype(np.float32)[labels]
    chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    tokens = rng.integers(40, 161, n)
    return q.astype(np.float32), np.ascontiguousarray(chunks, dtype=np.float32), tokens


# ----------------------------------------------------------------------------- timing


def calls_per_repeat(fn: Callable[[], Any], min_time: float) -> int:
    """Warm ``fn`` up, then the number of calls that makes one timed repeat last >= min_time."""
    timer = timeit.Timer(fn)
    fn()  # warm-up (imports, caches, BLAS thread start)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time or number >= 1 << 20:
            return number
        number *= 2 if t == 0 else max(2, int(min_time / t * 1.2))


def time_interleaved(
    fns: Mapping[str, Callable[[], Any]], repeat: int, min_time: float = 0.02
) -> dict[str, dict[str, Any]]:
    """timeit-style, the repeats interleaved (A B C A B C ...): warm up, pick ``number`` so
    one repeat takes >= min_time, then repeat. Per function: per-call seconds (median, q1,
    q3, IQR, min and the raw samples).

    This VM's speed drifts by up to ~2x over minutes (shared memory bandwidth), so ratios
    are only trustworthy between measurements taken in the same rounds.
    """
    numbers = {name: calls_per_repeat(fn, min_time) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            samples[name].append(timeit.Timer(fn).timeit(numbers[name]) / numbers[name])
    return {name: summarise(samples[name], numbers[name]) for name in fns}


def time_wall(fns: Mapping[str, Callable[[], Any]], repeat: int) -> dict[str, dict[str, Any]]:
    """Like :func:`time_interleaved` with one call per sample (for calls that take ~0.1 s or
    more); one warm-up call each first."""
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
    return {name: summarise(values, 1) for name, values in samples.items()}


def summarise(samples: list[float], number: int) -> dict[str, Any]:
    q1, med, q3 = np.percentile(samples, [25, 50, 75])
    return {
        "median_s": float(med),
        "q1_s": float(q1),
        "q3_s": float(q3),
        "iqr_s": float(q3 - q1),
        "min_s": float(min(samples)),
        "repeats": len(samples),
        "calls_per_repeat": number,
        "samples_s": [float(s) for s in samples],
    }


def us(x: float) -> str:
    return f"{x * 1e6:,.1f}"


def ms(x: float) -> str:
    return f"{x * 1e3:,.2f}"


def mb(x: float) -> str:
    return f"{x / 1e6:,.1f} MB"


# ----------------------------------------------------------------------------- memory


@contextlib.contextmanager
def rss_peak(interval: float = 0.0005) -> Iterator[list[int]]:
    """Sample the process RSS in a thread (psutil) to catch the peak during the block;
    yields ``[baseline, peak]`` (bytes), the peak final once the block has ended."""
    import psutil  # optional; the caller handles ImportError

    process = psutil.Process()
    stop = threading.Event()
    seen = [process.memory_info().rss] * 2

    def sample() -> None:
        while not stop.is_set():
            seen[1] = max(seen[1], process.memory_info().rss)
            time.sleep(interval)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()
        seen[1] = max(seen[1], process.memory_info().rss)


def measure_memory(fn: Callable[[], Any]) -> dict[str, Any]:
    """Peak extra memory of one call: tracemalloc (numpy reports its buffers) and RSS."""
    out: dict[str, Any] = {}
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    result = fn()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out["tracemalloc_peak_extra_bytes"] = int(peak - before)
    out["tracemalloc_retained_bytes"] = int(current - before)  # held by the returned Selection
    del result
    gc.collect()
    try:
        with rss_peak() as seen:
            result = fn()
    except ImportError:
        out["rss_peak_extra_bytes"] = None
        out["rss_note"] = "psutil not installed: RSS not sampled"
        return out
    out["rss_peak_extra_bytes"] = int(seen[1] - seen[0])
    del result
    return out


# ----------------------------------------------------------------------------- comparators


def load_pyversity() -> tuple[Callable | None, str]:
    try:
        import pyversity
        from pyversity import Strategy, diversify
    except ImportError as exc:
        return None, f"pyversity not installed ({exc}); pip install -r bench/requirements.txt"

    def run(chunks: np.ndarray, scores: np.ndarray, k: int) -> list[int]:
        res = diversify(chunks, scores, k, strategy=Strategy.MMR, diversity=0.5)
        return [int(i) for i in res.indices]

    return run, f"pyversity {pyversity.__version__}"


def load_langchain() -> tuple[Callable | None, str]:
    try:
        import langchain_core
        from langchain_core.vectorstores.utils import maximal_marginal_relevance
    except ImportError as exc:
        return None, f"langchain-core not installed ({exc}); pip install -r bench/requirements.txt"
    try:
        from langchain_core.vectorstores import utils as lc_utils

        simd = bool(getattr(lc_utils, "_HAS_SIMSIMD", False))
    except Exception:
        simd = False

    def run(query: np.ndarray, chunks: np.ndarray, k: int) -> list[int]:
        # Annotated as a list of lists, it takes the array (it calls np.array on it): timed
        # as a caller with an embedding matrix calls it.
        rows = cast("list[list[float]]", chunks)
        return maximal_marginal_relevance(query, rows, lambda_mult=0.5, k=k)

    return run, f"langchain-core {langchain_core.__version__} (simsimd: {simd})"


# ----------------------------------------------------------------------------- machine


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "date_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count_logical": os.cpu_count(),
        "numpy": np.__version__,
        "load_average_1_5_15": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpu_affinity"] = len(os.sched_getaffinity(0))
    with contextlib.suppress(ImportError):
        import psutil

        info["cpu_count_physical"] = psutil.cpu_count(logical=False)
        info["memory_total_bytes"] = psutil.virtual_memory().total
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        models = [line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")]
        if models:
            info["cpu_model"] = models[0]
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        info["blas"] = f"{blas.get('name')} {blas.get('version')}"
        simd = cfg.get("SIMD Extensions", {})
        info["numpy_simd_found"] = simd.get("found")
    except Exception as exc:
        info["blas"] = f"unknown ({exc})"
    try:
        from threadpoolctl import threadpool_info

        info["blas_threadpools"] = [
            {k: p.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
            for p in threadpool_info()
        ]
    except ImportError:
        info["blas_threadpools"] = "threadpoolctl not installed"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            info[var] = os.environ[var]
    return info
