"""Linear time for repeated text: placement, repeated-text detection and charging on pools
built to make them quadratic.

Run from the repository root (about a minute):

    .venv/bin/python bench/bench_repeated_text.py [--chunks 20000] [--budget 4000]

Four pools of N chunks with seeded embeddings (select_support.make_pool, d = 384), counted
with the ``words`` tokenizer, each selected cold (a new prepared pool, places found anew)
by the recommended preset (top-k, packing on, ``trace=False``):

- **header**: every chunk begins with the same contextual header sentence (eight words and
  more in common, nothing overlapping), then a sentence of its own;
- **identical**: every chunk has the same text;
- **one offset**: every chunk claims offset 0 of one source (PDF pages read without their
  page), with texts that disagree;
- **windows**: one document cut into windows overlapping by half, with true offsets.

It prints, per pool, the seconds to place the chunks (``Spans.layout``) and to select, the
seconds of the same top-k without packing on the same pool ("top-k s": what the loop itself
costs, mostly one cosine row per pick for the record), the peak memory Python allocated
(tracemalloc, in a second run) and what was picked and left out. The issue's
target: under 2 s each at N = 20,000 on this 2-core machine, memory O(N).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package (this folder is on the path: the script's own)

from select_support import make_pool  # noqa: E402

from adagres import PRESETS, Settings  # noqa: E402
from adagres.core.baselines import run_prepared  # noqa: E402
from adagres.core.overlaps import Spans  # noqa: E402
from adagres.core.prepared import prepare  # noqa: E402
from adagres.pools.spans import TokenCounter  # noqa: E402

HEADER = "Section 4.2 of the employee handbook, revised edition, applies to all staff."


def pools(n: int) -> dict[str, tuple[list[str], list, list]]:
    words = [f"w{k}" for k in range(n * 40 + 200)]
    doc = " ".join(words)
    step = len(doc) // (n + 1)
    return {
        "header": (
            [f"{HEADER} Fact {k} holds for case {k} only." for k in range(n)],
            [None] * n,
            [None] * n,
        ),
        "identical": (
            ["The same paragraph, copied into every chunk of the pool."] * n,
            [None] * n,
            [None] * n,
        ),
        "one offset": (
            [f"Page {k} says something of its own, number {k}." for k in range(n)],
            ["report.pdf"] * n,
            [0] * n,
        ),
        "windows": (
            [doc[k * step : k * step + 2 * step] for k in range(n)],
            ["doc"] * n,
            [k * step for k in range(n)],
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--budget", type=int, default=4_000)
    args = parser.parse_args()
    q, C, _ = make_pool(args.chunks, 384, seed=1)
    recommended = PRESETS["recommended"]
    counter = TokenCounter("words")
    print(f"N = {args.chunks}, budget {args.budget} tokens")
    print("pool         place s  select s  top-k s  peak MB  picks  left out  duplicates  tokens")
    for name, (texts, sources, offsets) in pools(args.chunks).items():
        tokens = [len(t.split()) for t in texts]

        def run(texts=texts, sources=sources, offsets=offsets, tokens=tokens):
            spans = Spans(tuple(texts), tuple(sources), tuple(offsets), counter)
            began = time.perf_counter()
            assert spans.layout is not None  # placed now, timed apart
            placed = time.perf_counter()
            pool = prepare(q, C, tokens).with_spans(spans)
            s = run_prepared(
                recommended.strategy,
                pool,
                args.budget,
                recommended.settings,
                texts=texts,
                trace=False,
            )
            done = time.perf_counter()
            run_prepared(recommended.strategy, pool, args.budget, Settings(), trace=False)
            return s, placed - began, done - placed, time.perf_counter() - done

        s, place, select, plain = run()  # timed without tracemalloc, which slows Python
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        left_out = sum(len(p.omissions) for p in s.passages)
        print(
            f"{name:12} {place:7.2f}  {select:8.2f}  {plain:7.2f}  {peak:7.1f}  {s.size:5}"
            f"  {left_out:8}  {len(s.duplicates):10}  {s.tokens_used:6}"
        )


if __name__ == "__main__":
    main()
