"""The preset targets read off a results document (adagres.eval.targets), by hand."""

from __future__ import annotations

from adagres.eval.targets import passes, target_checks, target_failures, targets_table


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


def test_every_target_is_checked_where_it_applies() -> None:
    """A target that depends on top-k's repeated text does not apply where top-k repeats too
    little: qa's top-k repeats 2 %, under the 3 % of "more answers"."""
    checks = {(c["corpus"], c["target"]): c["holds"] for c in target_checks(DOC, "good")}
    assert checks == {
        ("windows", "near_duplicates"): True,
        ("windows", "repeated_text"): True,
        ("windows", "recall"): True,
        ("windows", "more_answers"): True,
        ("qa", "near_duplicates"): True,
        ("qa", "repeated_text"): True,
        ("qa", "recall"): True,
        ("qa", "more_answers"): None,
    }
    assert targets_table(DOC, "bad") == [
        {
            "corpus": "windows",
            "budget": "300",
            "no near-duplicate pair": "fails: 0.50 pairs per selection",
            "≤ 1/4 of top-k's repeated text": "fails: 5.0 % against top-k's 16.0 %",
            "recall ≥ top-k − 0.5 pt": "holds",
            "more answers where top-k repeats ≥ 3 %": "fails: +0.0 pt with top-k repeating 16.0 %",
        },
        {
            "corpus": "qa",
            "budget": "300",
            "no near-duplicate pair": "holds",
            "≤ 1/4 of top-k's repeated text": "holds",
            "recall ≥ top-k − 0.5 pt": "fails: -1.0 pt (answer recall)",
            "more answers where top-k repeats ≥ 3 %": "–",
        },
    ]
