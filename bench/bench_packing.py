"""What overlap-aware packing and the near-duplicate guard cost the recommended preset on a
2,000-chunk pool of overlapping windows, against the preset as it was before them.

Run from the repository root (about a minute):

    .venv/bin/python bench/bench_packing.py

The pool: one seeded synthetic document of random words cut into 2,000 windows of 60–140
words that start every half window (each overlaps its neighbours by about half), with the
seeded embeddings of select_support.make_pool (N = 2,000, d = 384) and one token per word
(the ``words`` tokenizer counts these texts so). Round after round, interleaved, it times
the recommended preset's strategy (``trace=False``) in two settings:

- **kept**: one prepared pool reused, its cosine rows, n-grams and the chunks' places kept
  (the app, the evaluation, a pipeline that keeps its prepared pool);
- **cold**: a pipeline's first call, a new prepared pool each time, the n-gram cache
  emptied, the places found anew (from given offsets, or from the shared edges of the texts).

each way ``before`` (the recommended preset when this work began: the orthogonal variant,
policy fill, derived λ, neither guard nor packing), ``top-k`` (the preset's strategy now,
plain), ``guard`` (top-k with the guard, packing off) and ``guard + packing`` (the
recommended preset now). It prints the medians, their ratios to ``before`` in the same
setting (the issue's target: ≤ 1.5) and the tokens packing saved.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package (this folder is on the path: the script's own)

from select_support import make_pool, time_interleaved  # noqa: E402

from adagres.core import ngrams  # noqa: E402
from adagres.core.baselines import run_prepared  # noqa: E402
from adagres.core.overlaps import Spans  # noqa: E402
from adagres.core.prepared import PreparedPool, prepare  # noqa: E402
from adagres.core.presets import PRESETS  # noqa: E402
from adagres.core.result import Selection  # noqa: E402
from adagres.core.settings import Settings  # noqa: E402
from adagres.core.strategies import ORTHOGONAL  # noqa: E402
from adagres.pools.spans import TokenCounter  # noqa: E402

ROUNDS, BUDGET_CHUNKS, TARGET, N = 30, 20, 1.5, 2000
#: The recommended preset when the guard and packing were asked for.
BEFORE = (ORTHOGONAL.name, Settings(policy="fill", formula="derived"))


def windows(n: int, seed: int) -> tuple[list[str], list[int]]:
    """``n`` overlapping windows of one random document, and each window's character offset."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(60, 141, size=n)
    starts = np.concatenate([[0], np.cumsum(sizes[:-1] // 2)])
    words = [f"w{i}" for i in rng.integers(0, 5000, size=int(starts[-1] + sizes[-1]))]
    offsets = np.concatenate([[0], np.cumsum([len(w) + 1 for w in words])])
    texts = [" ".join(words[s : s + z]) for s, z in zip(starts, sizes, strict=True)]
    return texts, [int(offsets[s]) for s in starts]


def main() -> None:
    q, chunks, _ = make_pool(N, 384, seed=7)
    texts, starts = windows(N, seed=3)
    tokens = np.array([len(t.split()) for t in texts])
    budget = int(np.median(tokens) * BUDGET_CHUNKS)
    recommended = PRESETS["recommended"]
    base = prepare(q, chunks, tokens)
    counter = TokenCounter("words")

    def spans(offsets: bool) -> Spans:
        given = tuple(starts) if offsets else (None,) * N
        return Spans(tuple(texts), ("doc",) * N if offsets else (None,) * N, given, counter)

    kept = base.with_spans(spans(True))
    assert kept.spans is not None
    kept.spans.layout  # noqa: B018  (found once, kept with the pool)

    def run(
        pool: PreparedPool, guard: bool, packing: bool, strategy: str | None = None
    ) -> Selection:
        if strategy is not None:  # the preset before: its own settings
            return run_prepared(strategy, pool, budget, BEFORE[1], texts=texts, trace=False)
        settings = recommended.settings.replace(
            packing=packing, duplicate_guard=recommended.settings.duplicate_guard if guard else None
        )
        return run_prepared(recommended.strategy, pool, budget, settings, texts=texts, trace=False)

    def cold(offsets: bool | None, guard: bool = True, strategy: str | None = None) -> Selection:
        """A pipeline's first call: a new prepared pool, no n-grams or places kept."""
        ngrams.gram_set.cache_clear()
        pool = prepare(q, chunks, tokens)
        if offsets is not None:
            pool = pool.with_spans(spans(offsets))
        return run(pool, guard, offsets is not None, strategy)

    ways = {
        "before, kept": lambda: run(base, False, False, BEFORE[0]),
        "top-k, kept": lambda: run(base, False, False),
        "guard, kept": lambda: run(base, True, False),
        "guard + packing, kept": lambda: run(kept, True, True),
        "before, cold": lambda: cold(None, guard=False, strategy=BEFORE[0]),
        "top-k, cold": lambda: cold(None, guard=False),
        "guard, cold": lambda: cold(None),
        "guard + packing, offsets cold": lambda: cold(True),
        "guard + packing, edges cold": lambda: cold(False),
    }
    medians = {name: r["median_s"] for name, r in time_interleaved(ways, ROUNDS).items()}
    packed, apart = run(kept, True, True), run(base, True, False)
    print(f"N = {N:,} windows overlapping by about half, budget {budget} tokens, {ROUNDS} rounds")
    print(
        f"guard: {apart.size} picks, {apart.tokens_used} tokens; guard + packing: "
        f"{packed.size} picks, {packed.tokens_used} tokens, "
        f"{packed.tokens_saved} saved by {len(packed.merges)} merges"
    )
    for name, median in medians.items():
        first = medians["before, " + name.rsplit(" ", 1)[-1]]
        print(
            f"{name:>30}: median {1e3 * median:7.2f} ms, ratio {median / first:.2f} "
            f"(target ≤ {TARGET})"
        )


if __name__ == "__main__":
    main()
