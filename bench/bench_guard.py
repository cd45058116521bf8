"""What the near-duplicate guard costs the recommended preset on a 2,000-chunk pool.

Run from the repository root (about half a minute):

    .venv/bin/python bench/bench_guard.py

Round after round it times ``run_preset("recommended", …, trace=False)`` on one seeded
synthetic pool (select_support.make_pool: N = 2,000, d = 384) with texts of random words
(as many words as the chunk's tokens), four ways within each round: the guard off (the
preset before the guard), the cosine part only, the whole guard with the texts' n-grams
already kept from an earlier run (the app, the evaluation), and the whole guard from cold
(the n-gram cache emptied first: a pipeline's first call). It prints the medians and their
ratios to the guard off; the target is ≤ 1.5.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package (this folder is on the path: the script's own)

from select_support import make_pool, time_wall  # noqa: E402

from adagres.core import ngrams  # noqa: E402
from adagres.core.presets import run_preset  # noqa: E402
from adagres.core.result import Selection  # noqa: E402

#: The preset's duplicate guard: (cosine, shared text) thresholds, or None for none.
Guard = tuple[float | None, float | None] | None

ROUNDS, BUDGET_CHUNKS, TARGET = 40, 20, 1.5


def main() -> None:
    q, chunks, tokens = make_pool(2000, 384, seed=7)
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choice(vocab, size=int(t))) for t in tokens]
    budget = int(np.median(tokens) * BUDGET_CHUNKS)

    def run(guard: Guard | Literal["preset"] = "preset") -> Selection:
        if guard == "preset":
            return run_preset("recommended", q, chunks, tokens, budget, texts=texts, trace=False)
        return run_preset(
            "recommended",
            q,
            chunks,
            tokens,
            budget,
            texts=texts,
            trace=False,
            duplicate_guard=guard,
        )

    def cold() -> Selection:
        ngrams.gram_set.cache_clear()
        return run()

    ways = {
        "guard off": lambda: run(None),
        "cosine only": lambda: run((0.9, None)),
        "guard, n-grams kept": run,
        "guard, cold": cold,
    }
    medians = {name: timed["median_s"] for name, timed in time_wall(ways, ROUNDS).items()}
    base = medians["guard off"]
    print(f"N = 2,000, budget {budget} tokens, {run().size} picks, {ROUNDS} rounds")
    for name, median in medians.items():
        print(
            f"{name:>20}: median {1e3 * median:7.2f} ms, ratio {median / base:.2f} "
            f"(target ≤ {TARGET})"
        )


if __name__ == "__main__":
    main()
