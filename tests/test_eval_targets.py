"""The preset targets read off a results document (adagres.eval.targets), by hand."""

from __future__ import annotations

from adagres.eval.targets import passes, summary_markdown, target_failures


def entry(corpus: str, budget: int, strategy: str, *, recall: float, repeated: float,
          pairs: float = 0.0) -> dict:  # fmt: skip
    return {
        "corpus": corpus,
        "budget": budget,
        "strategy": strategy,
        "primary": "answer_recall",
        "metrics": {
            "answer_recall": {"mean": recall},
            "repeated_text": {"mean": repeated},
            "near_duplicates": {"mean": pairs},
        },
    }


DOC = {
    "aggregates": [
        # windows: top-k repeats 16 %; good cuts it to 2 % and finds 3 pt more
        entry("windows", 300, "topk_budget", recall=0.50, repeated=0.16),
        entry("windows", 300, "good", recall=0.53, repeated=0.02),
        entry("windows", 300, "bad", recall=0.50, repeated=0.05, pairs=0.5),
        # qa: top-k repeats 2 %; bad loses 1 pt, good loses 0.4 pt (within the slack)
        entry("qa", 300, "topk_budget", recall=0.60, repeated=0.02),
        entry("qa", 300, "good", recall=0.596, repeated=0.004),
        entry("qa", 300, "bad", recall=0.59, repeated=0.004),
    ],
    "strategies": {},
}


def test_a_strategy_that_meets_every_target_passes() -> None:
    assert target_failures(DOC, "good") == [] and passes(DOC, "good")


def test_each_missed_target_is_named_with_where_and_the_numbers() -> None:
    misses = target_failures(DOC, "bad")
    assert misses == [
        "no near-duplicate pair: windows at 300, 0.50 pairs per selection",
        "≤ 1/4 of top-k's repeated text where top-k repeats ≥ 1 %: windows at 300, 5.0 % "
        "against top-k's 16.0 %",
        "more answers than top-k where top-k repeats ≥ 3 %: windows at 300, +0.0 pt with "
        "top-k repeating 16.0 %",
        "recall never > 0.5 pt below top-k: qa at 300, -1.0 pt (answer recall)",
    ]
    assert not passes(DOC, "bad")


def test_the_summary_has_one_row_per_corpus_and_budget_and_a_verdict_per_corpus() -> None:
    text = "\n".join(summary_markdown(DOC, ["good", "bad"]))
    assert "| windows | 300 | 16.0 % | 50.0 % | 2.0 %, +3.0 pt | 5.0 %, +0.0 pt |" in text
    assert "| qa | 300 | 2.0 % | 60.0 % | 0.4 %, -0.4 pt | 0.4 %, -1.0 pt |" in text
    assert ("- **windows**: good repeats 14.0 points less of its text than top-k on average, "
            "and finds +3.0 pt more at 300 tokens, never fewer.") in text  # fmt: skip
    assert "- **qa**: good repeats 1.6 points less" in text
    assert "and finds as many answers (within 0.5 pt)" in text
    assert "good meets every target on every corpus and budget of this run." in text
    assert "Targets bad misses:" in text
