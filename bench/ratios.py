"""The selector against its fastest peer: interleaved ratios at three pool sizes, two BLAS
thread settings.

For each size, one run times, round after round and in the same round for one BLAS thread
and for the default (two here): ``adagres.select(trace=False)``, ``trace=True`` (up to
2,000 chunks), pyversity's MMR with its defaults and with ``normalize=False`` (same k as
the fast run's picks, scores C·q given for free), the floor: the k products C·c_w for the
same picks, and ``lean``: the same greedy in the fewest numpy calls (no validation, no
record), what any numpy loop costs at the least. Ratios of medians are taken within one
thread setting. Called by ``bench_select.py`` (``make bench``); runnable alone:

    .venv/bin/python bench/ratios.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package (this folder is on the path: the script's own)

from select_support import calls_per_repeat  # noqa: E402

import adagres  # noqa: E402

#: pool size -> (budget, manual λ, rounds, rounds with --quick)
SIZES = {200: (2000, 0.05, 31, 7), 2000: (2000, 0.05, 21, 5), 100_000: (4800, 0.01, 5, 2)}
#: ratio -> (sizes it applies to, target)
TARGETS: dict[str, tuple[tuple[int, ...], float]] = {
    "fast/pyversity": ((200, 2000), 0.6),
    "fast/pyversity normalize=False": ((200, 2000), 0.6),
    "fast/pyversity @100k": ((100_000,), 1.0),
    "fast/pyversity normalize=False @100k": ((100_000,), 1.0),
    "fast/floor": ((200,), 2.0),
    "traced/fast": ((200, 2000), 1.3),
}
THREADS: tuple[int | None, ...] = (1, None)  # None: the default BLAS thread count


def lean(q: np.ndarray, chunks: np.ndarray, tokens: np.ndarray, budget: int, lam: float) -> list:
    """The same greedy (policy ``skip``, fixed λ, τ off) as the fewest numpy calls do it: no
    validation, no record, no runner-up. What a numpy loop costs at the least, next to the
    floor's products: one normalisation, then per pick a mask, an argmax and one product."""
    unit = chunks / np.linalg.norm(chunks, axis=1, keepdims=True)
    gains = unit @ (q / np.linalg.norm(q))
    alive = np.ones(len(gains), bool)
    left, picks = budget, list[int]()
    while True:
        masked = np.where(alive & (tokens <= left), gains, -np.inf)
        w = int(masked.argmax())
        if not masked[w] > 0:
            return picks
        picks.append(w)
        alive[w] = False
        left -= int(tokens[w])
        gains -= lam * (unit @ unit[w])


def functions(n: int, make_pool: Callable) -> tuple[dict[str, Callable[[], Any]], dict]:
    """The timed calls at pool size ``n`` and what they picked."""
    from pyversity import Strategy, diversify

    budget, lam = SIZES[n][:2]
    q, chunks, tokens = make_pool(n, 384, 20251231 + (n > 2000))
    scores = chunks @ q
    fast = adagres.select(q, chunks, tokens, budget, lam=lam, trace=False)
    picks, k = list(fast.indices), fast.size
    fns: dict[str, Callable[[], Any]] = {
        "fast": lambda: adagres.select(q, chunks, tokens, budget, lam=lam, trace=False),
        "pyversity": lambda: diversify(chunks, scores, k, strategy=Strategy.MMR, diversity=0.5),
        "pyversity normalize=False": lambda: diversify(
            chunks, scores, k, strategy=Strategy.MMR, diversity=0.5, normalize=False
        ),
        "floor": lambda: [chunks @ chunks[w] for w in picks],
        "lean": lambda: lean(q, chunks, tokens, budget, lam),
    }
    assert lean(q, chunks, tokens, budget, lam) == picks, "the lean loop picks differently"
    if n <= 2000:
        fns["traced"] = lambda: adagres.select(q, chunks, tokens, budget, lam=lam, trace=True)
    info = {"n": n, "budget": budget, "lam": lam, "picks": k, "stop": fast.stop_reason.value}
    return fns, info


def measure(n: int, rounds: int, make_pool: Callable) -> dict[str, Any]:
    """Medians (s per call) of every function at size ``n`` for each thread setting."""
    from threadpoolctl import threadpool_limits

    fns, info = functions(n, make_pool)
    min_time = 0.02 if n <= 2000 else 0.0
    numbers = {name: calls_per_repeat(fn, min_time) for name, fn in fns.items()}
    samples: dict[str, dict[str, list[float]]] = {
        str(t): {name: [] for name in fns} for t in THREADS
    }
    names = list(fns)
    for round_number in range(rounds):
        for threads in THREADS:
            with threadpool_limits(limits=threads):
                # The first BLAS call after the thread count changes wakes or reshapes the
                # pool: pay it untimed, and rotate the order so no function is always first.
                warm = np.ones((256, 384), np.float32)
                warm @ warm[0]
                shift = round_number % len(names)
                for name in names[shift:] + names[:shift]:
                    fn = fns[name]
                    if n <= 2000:
                        fn()
                    seconds = timeit.timeit(fn, number=numbers[name]) / numbers[name]
                    samples[str(threads)][name].append(seconds)
    out: dict[str, Any] = {**info, "rounds": rounds, "by_threads": {}}
    for setting, by_name in samples.items():
        medians = {name: float(np.median(v)) for name, v in by_name.items()}
        spread = {
            name: float(np.subtract(*np.percentile(v, [75, 25]))) for name, v in by_name.items()
        }
        out["by_threads"][setting] = {
            "median_s": medians,
            "iqr_s": spread,
            "ratios": ratios(medians, n),
        }
    return out


def ratios(m: dict[str, float], n: int) -> dict[str, float]:
    suffix = " @100k" if n >= 100_000 else ""
    out = {
        f"fast/pyversity{suffix}": m["fast"] / m["pyversity"],
        f"fast/pyversity normalize=False{suffix}": m["fast"] / m["pyversity normalize=False"],
        "fast/floor": m["fast"] / m["floor"],
        "floor/pyversity": m["floor"] / m["pyversity"],
        "floor/pyversity normalize=False": m["floor"] / m["pyversity normalize=False"],
        "lean/pyversity": m["lean"] / m["pyversity"],
        "lean/pyversity normalize=False": m["lean"] / m["pyversity normalize=False"],
        "lean/floor": m["lean"] / m["floor"],
    }
    if "traced" in m:
        out["traced/fast"] = m["traced"] / m["fast"]
    return out


def verdict(name: str, n: int, value: float) -> str:
    sizes, target = TARGETS.get(name, ((), 0.0))
    if n not in sizes:
        return ""
    return f"target ≤ {target:g}: {'MET' if value <= target else 'MISSED'}"


def report(results: dict[int, dict[str, Any]]) -> None:
    for n, r in results.items():
        print(
            f"\n  N = {n:,}, d = 384, float32, {r['picks']} picks (T = {r['budget']}, "
            f"λ = {r['lam']}, {r['stop']}); median of {r['rounds']} interleaved rounds"
        )
        for threads, t in r["by_threads"].items():
            label = "one BLAS thread" if threads == "1" else "default BLAS threads"
            cells = ", ".join(f"{name} {1e6 * s:,.0f} µs" for name, s in t["median_s"].items())
            print(f"    {label}: {cells}")
            for name, value in t["ratios"].items():
                print(f"      {name:40s} {value:6.2f}  {verdict(name, n, value)}")
            print(f"      {below_floor(t['ratios'], n)}")


def below_floor(r: dict[str, float], n: int) -> str:
    """The two lower bounds next to the fast/pyversity targets: the k products alone (the
    floor) and the same greedy in the fewest numpy calls (lean), each against each target."""
    sizes, target = TARGETS["fast/pyversity"]
    if n not in sizes:
        return "(large pools are scored from a shortlist: the floor does not bound them)"
    peers = ("pyversity", "pyversity normalize=False")
    told = []
    for bound, name in (("floor", "the k products alone"), ("lean", "the lean numpy loop")):
        values = [r[f"{bound}/{peer}"] for peer in peers]
        cells = ", ".join(f"{value:.2f}× {peer}" for value, peer in zip(values, peers, strict=True))
        above = sum(value > target for value in values)
        told.append(f"{name} {cells} ({above} of 2 above the target)")
    return f"next to the {target:g}× targets: " + "; ".join(told)


def run(quick: bool, make_pool: Callable) -> dict[int, dict[str, Any]]:
    """Measure every size; print and return the results (keyed by pool size)."""
    try:
        import pyversity  # noqa: F401
        import threadpoolctl  # noqa: F401
    except ImportError as exc:
        print(f"  ratios SKIPPED: {exc}; pip install -r bench/requirements.txt")
        return {}
    print("\n== Ratios: fast path against pyversity's MMR and the k-product floor ==")
    results = {}
    for n, (_, _, rounds, quick_rounds) in SIZES.items():
        results[n] = measure(n, quick_rounds if quick else rounds, make_pool)
    report(results)
    return results


if __name__ == "__main__":
    from select_support import make_pool as pool_maker

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    run(parser.parse_args().quick, pool_maker)
