"""What counts as repeated text: measured on the tuning half (``--split dev``), never the
held-out one.

For each minimum sentence length n (``adagres.core.packing.REPEAT_MIN_WORDS``) it runs top-k
with packing on the dev pools of FanOutQA, windows and drug reviews at every budget, and
prints, against top-k without packing: answer recall (gold recall for drugs), the share of
the context's words that repeat an 8-gram already in it, and the tokens saved. Run:
``python bench/repeat_unit.py`` (a few minutes; the embedding cache is shared with the
evaluation).
"""

from __future__ import annotations

import argparse
import statistics

import adagres.core.packing as packing
from adagres import Settings
from adagres.core.baselines import run_prepared
from adagres.core.metrics import evaluate
from adagres.core.strategies import TOPK_BUDGET
from adagres.eval.harness import BUDGETS, Config, build_cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=60, help="per pool set")
    parser.add_argument("--lengths", default="3,6,10,1000", help="minimum words (1000: off)")
    args = parser.parse_args()
    config = Config(pools=("fanoutqa", "windows", "drugs"), split="dev", queries=args.queries)
    cases = build_cases(config, print)
    lengths = [int(x) for x in args.lengths.split(",")]
    print("corpus   budget  n     recall  (top-k)  repeated  (top-k)  tokens saved")
    for corpus in ("fanoutqa", "windows", "drugs"):
        mine = [c for c in cases if c.corpus == corpus]
        for budget in BUDGETS:
            base = []
            for case in mine:
                s = run_prepared(
                    TOPK_BUDGET.name, case.pool.prepared, budget, Settings(), trace=False
                )
                base.append(measure(case, s))
            for n in lengths:
                packing.REPEAT_MIN_WORDS = n
                rows = []
                for case in mine:
                    s = run_prepared(
                        TOPK_BUDGET.name,
                        case.pool.prepared,
                        budget,
                        Settings(packing=True),
                        texts=case.pool.texts,
                        trace=False,
                    )
                    rows.append((*measure(case, s), s.tokens_saved))
                print(
                    f"{corpus:8} {budget:6} {n:5} {mean(rows, 0):7.3f}  {mean(base, 0):7.3f}"
                    f"  {mean(rows, 1):7.2%}  {mean(base, 1):7.2%}  {mean(rows, 2):8.1f}"
                )


def measure(case, selection) -> tuple[float, float]:
    m = evaluate(
        selection,
        case.pool.prepared,
        gold=case.gold_positions,
        answers=list(case.answers) or None,
        texts=case.pool.texts,
    )
    found = m.answer_found if case.answers else m.recall
    return (float(found) if found is not None else float("nan"), m.repeated_text or 0.0)


def mean(rows, k: int) -> float:
    values = [r[k] for r in rows if r[k] == r[k]]
    return statistics.fmean(values) if values else float("nan")


if __name__ == "__main__":
    main()
