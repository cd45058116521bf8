"""The report's lead (adagres.eval.frontier, charts, report) on a small hand-made results
document: which strategies a reader compares, the sentence per corpus, the frontier's
points against the summary table, the targets table and the folded blocks of report.md."""

from __future__ import annotations

from typing import Any

import pytest

from adagres.core.presets import PRESETS
from adagres.eval.frontier import (
    compared,
    frontier_points,
    mid_budget,
    role,
    summary_rows,
    tradeoff_points,
    verdict,
)
from adagres.eval.report import lead_markdown, packing_markdown, write_report
from adagres.eval.results import primary_label
from adagres.eval.targets import targets_table
from adagres.figures.evaluation import frontier_figure, tradeoff_figure

BUDGETS = (300, 600, 900)
#: (recall, repeated text) per budget; qa has answer strings, reviews only gold chunks.
NUMBERS: dict[str, dict[str, list[tuple[float, float]]]] = {
    "qa": {
        "topk_budget": [(0.65, 0.08), (0.75, 0.08), (0.80, 0.10)],
        "adagres_paper_skip": [(0.55, 0.0), (0.70, 0.0), (0.72, 0.01)],
        "packed_topk": [(0.60, 0.01), (0.75, 0.02), (0.796, 0.02)],
        "mmr": [(0.64, 0.01), (0.74, 0.01), (0.78, 0.01)],
        "near_duplicates": [(0.65, 0.06), (0.75, 0.06), (0.80, 0.07)],
        "coverage": [(0.66, 0.05), (0.78, 0.05), (0.81, 0.06)],
        "guard_topk_t80": [(0.70, 0.06), (0.80, 0.06), (0.85, 0.06)],
        "adagres_lam_0.7": [(0.40, 0.0), (0.50, 0.0), (0.55, 0.0)],
        "adagres_derived_skip": [(0.60, 0.01), (0.70, 0.01), (0.75, 0.01)],
    },
    "reviews": {
        "topk_budget": [(0.30, 0.004), (0.40, 0.004), (0.45, 0.004)],
        "adagres_paper_skip": [(0.30, 0.0), (0.40, 0.0), (0.45, 0.0)],
        "packed_topk": [(0.30, 0.004), (0.42, 0.004), (0.46, 0.004)],
        "mmr": [(0.30, 0.0), (0.40, 0.0), (0.45, 0.0)],
        "near_duplicates": [(0.30, 0.004), (0.40, 0.004), (0.45, 0.004)],
        "coverage": [(0.30, 0.004), (0.40, 0.004), (0.45, 0.004)],
        "guard_topk_t80": [(0.30, 0.004), (0.40, 0.004), (0.45, 0.004)],
        "adagres_lam_0.7": [(0.20, 0.0), (0.30, 0.0), (0.35, 0.0)],
        "adagres_derived_skip": [(0.30, 0.0), (0.40, 0.0), (0.45, 0.0)],
    },
}
CORES = {
    "topk_budget": ("topk_budget", None),
    "adagres_paper_skip": ("adagres", PRESETS["paper"].settings.as_dict()),
    "packed_topk": (
        PRESETS["recommended"].strategy,
        PRESETS["recommended"].settings.as_dict(),
    ),
    "mmr": ("mmr", None),
    "near_duplicates": ("near_duplicates", None),
    "coverage": ("coverage", None),
    "guard_topk_t80": ("topk_budget", {"duplicate_guard": [0.9, 0.8]}),
    "adagres_lam_0.7": ("adagres", {"lam": 0.7}),
    "adagres_derived_skip": ("adagres", {"formula": "derived"}),
}
PRIMARY = {"qa": "answer_recall", "reviews": "gold_recall"}


def _interval(mean: float) -> dict[str, Any]:
    return {"mean": mean, "low": mean - 0.05, "high": mean + 0.05, "n": 20}


def _entry(corpus: str, budget: int, strategy: str) -> dict[str, Any]:
    at = BUDGETS.index(budget)
    recall, repeated = NUMBERS[corpus][strategy][at]
    base = NUMBERS[corpus]["topk_budget"][at][0]
    primary = PRIMARY[corpus]
    metrics = {m: _interval(0.5) for m in ("answer_recall", "gold_recall", "iou")}
    metrics.update(
        {
            primary: _interval(recall),
            "repeated_text": _interval(repeated),
            "redundancy_mean": _interval(0.3),
            "near_duplicates": _interval(0.0),
            "budget_use": _interval(0.9),
        }
    )
    counts = {"wins": 1, "ties": 18, "losses": 1}
    return {
        "corpus": corpus,
        "budget": budget,
        "strategy": strategy,
        "primary": primary,
        "n_queries": 20,
        "n_solved": 20,
        "metrics": metrics,
        "delta": {primary: _interval(recall - base), "redundancy_mean": _interval(-0.01)},
        "wtl": {b: {primary: counts} for b in ("topk_budget", "topk_same_k")},
        "time_ms": 1.0,
    }


def _document() -> dict[str, Any]:
    corpora = {
        name: {
            "description": f"the {name} pools",
            "queries": 20,
            "with_gold": 20,
            "with_answers": 20 if name == "qa" else 0,
            "answerable": 18 if name == "qa" else 0,
            "mean_chunks": 60.0,
            "mean_pool_tokens": 5000.0,
            "mean_similarity": 0.3,
            "primary": PRIMARY[name],
        }
        for name in NUMBERS
    }
    return {
        "format": "adagres-eval/1",
        "stamp": {
            "command": "python -m adagres.eval",
            "created": "2026-01-01T00:00:00+00:00",
            "commit": "abc1234",
            "cpus": 2,
            "config": {
                "budgets": list(BUDGETS),
                "workers": 1,
                "split": "test",
                "held_out": 0.5,
                "queries": None,
                "seed": 7,
                "resamples": 100,
                "exact_queries": 0,
            },
            "seconds": {"build": 1.0, "evaluate": 1.0},
            "tokens": "cl100k",
            "embedding_model": "MiniLM",
            "seeds": {"query sample": "rng(7)", "bootstrap": "rng(7, …)"},
            "versions": {"numpy": "2"},
        },
        "corpora": corpora,
        "strategies": {
            name: {"family": "baseline", "description": name, "core": core, "settings": s}
            for name, (core, s) in CORES.items()
        },
        "aggregates": [
            _entry(corpus, budget, strategy)
            for corpus in NUMBERS
            for budget in BUDGETS
            for strategy in NUMBERS[corpus]
        ],
        "findings": [
            {"corpus": c, "strategy": s, "text": f"{s} on {c}: a paragraph."}
            for c in NUMBERS
            for s in NUMBERS[c]
            if s != "topk_budget"
        ],
        "rows": [],
        "queries": [],
    }


COMPARED = [
    "topk_budget",
    "adagres_paper_skip",
    "packed_topk",
    "mmr",
    "near_duplicates",
    "coverage",
]


def test_a_reader_compares_topk_the_presets_mmr_near_duplicates_and_the_best_of_the_rest():
    """coverage has the best mean recall at the mid budget among the rest (0.59, above
    every compared strategy but top-k); guard_topk_t80 has more but is top-k with a guard."""
    document = _document()
    assert mid_budget(document) == 600
    assert compared(document) == COMPARED
    assert role(document, "packed_topk") == "recommended (packed_topk)"
    assert role(document, "packed_topk", short=True) == "recommended"
    assert role(document, "adagres_paper_skip", short=True) == "paper"


def test_the_best_of_the_rest_is_left_out_when_a_compared_strategy_beats_it():
    document = _document()
    document["aggregates"] = [
        e for e in document["aggregates"] if e["strategy"] not in ("coverage", "guard_topk_t80")
    ]
    # the best of the rest is now adagres_derived_skip (0.55), below recommended (0.585)
    assert compared(document) == COMPARED[:-1]


def test_the_verdict_says_in_words_where_recommended_ties_and_where_it_loses():
    """No slack: 0.4 pt fewer at 900 tokens is fewer."""
    document = _document()
    assert verdict(document, "qa") == (
        "On qa at 600 tokens, recommended finds as many answers as top-k (0.750 vs 0.750) "
        "with about a quarter of its repeated text (2.0 % vs 8.0 % of the words); it finds "
        "fewer answers than top-k at 300 tokens (0.600 vs 0.650) and 900 tokens (0.796 vs "
        "0.800); at 600 tokens paper (-5.0 pt) and mmr (-1.0 pt) find fewer answers than top-k."
    )
    assert verdict(document, "reviews") == (
        "On reviews at 600 tokens, recommended finds more gold chunks than top-k (0.420 vs "
        "0.400) with as much repeated text (0.4 % vs 0.4 % of the words); no other compared "
        "strategy finds fewer gold chunks than top-k at 600 tokens."
    )


def test_the_frontier_points_are_the_numbers_of_the_summary_table():
    document = _document()
    rows = {r["strategy"]: r for r in summary_rows(document)}
    assert list(rows) == COMPARED
    for corpus in NUMBERS:
        points = frontier_points(document, corpus)
        assert {p["strategy"] for p in points} == set(COMPARED)
        assert len(points) == len(COMPARED) * len(BUDGETS)
        for p in points:
            recall, repeated = NUMBERS[corpus][p["strategy"]][BUDGETS.index(p["budget"])]
            assert (p["x"], p["y"]) == (repeated, recall)
            if p["budget"] == 600:
                cell = rows[p["strategy"]][corpus]
                assert (cell["recall"], cell["repeated"], cell["delta"]) == (
                    p["y"],
                    p["x"],
                    p["delta"],
                )
    assert rows["adagres_paper_skip"]["qa"]["delta"] == pytest.approx(-0.05)
    lead = "\n".join(lead_markdown(document))
    assert (
        "| paper (adagres_paper_skip) | 0.700 | -5.0 pt | 0.0 % | 0.400 | +0.0 pt | 0.0 % |"
    ) in lead
    assert "| top-k | 0.750 | +0.0 pt | 8.0 % | 0.400 | +0.0 pt | 0.4 % |" in lead


def test_the_figures_show_only_the_compared_strategies():
    document = _document()
    shown, label = compared(document), primary_label(document, "qa")
    figure = frontier_figure(
        frontier_points(document, "qa", shown), corpus="qa", label=label, order=shown
    )
    names = [trace.name for trace in figure.data]
    assert names == [role(document, s) for s in COMPARED]  # 6 of the run's 9
    points = frontier_points(document, "qa")
    for trace, name in zip(figure.data, COMPARED, strict=True):
        mine = [p for p in points if p["strategy"] == name]
        assert list(trace.x) == [p["x"] for p in mine] and list(trace.y) == [p["y"] for p in mine]
    cosine = tradeoff_figure(tradeoff_points(document, "qa", shown), corpus="qa", label=label)
    assert {trace.name for trace in cosine.data} == set(COMPARED)


def test_the_targets_table_says_which_target_holds_or_fails_where():
    rows = targets_table(_document(), "packed_topk")
    assert [(r["corpus"], r["budget"]) for r in rows] == [
        (c, str(b)) for c in NUMBERS for b in BUDGETS
    ]
    qa300, qa600, qa900 = rows[0], rows[1], rows[2]
    assert qa300 == {
        "corpus": "qa",
        "budget": "300",
        "recall ≥ top-k (W/T/L)": "fails: -5.0 pt (answer recall, W/T/L 1/18/1)",
        "≤ 1/2 of top-k's repeated text": "holds",  # 1.0 % against 8.0 %
    }
    assert qa600["recall ≥ top-k (W/T/L)"] == "holds"  # 0.750 against 0.750
    assert qa900 == {
        "corpus": "qa",
        "budget": "900",
        "recall ≥ top-k (W/T/L)": "fails: -0.4 pt (answer recall, W/T/L 1/18/1)",  # no slack
        "≤ 1/2 of top-k's repeated text": "holds",  # 2.0 % against 10.0 %
    }
    reviews600 = rows[4]
    assert reviews600["≤ 1/2 of top-k's repeated text"] == "–"  # top-k repeats 0.4 %
    assert reviews600["recall ≥ top-k (W/T/L)"] == "holds"  # 0.42 against 0.40


def test_the_report_leads_with_the_summary_and_folds_the_rest(tmp_path):
    document = _document()
    write_report(document, tmp_path / "r", png=False)
    text = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    first_fold = text.index("<details>")
    assert text.index("## Summary: recall against repeated text") < first_fold
    assert text.index("## Targets of the recommended preset") < first_fold
    assert text.index(verdict(document, "qa")) < first_fold
    # the reading guide, a block per corpus with its tables, the paragraphs per strategy
    assert text.count("<details>") == text.count("</details>") == 1 + len(NUMBERS) + 1
    for corpus in NUMBERS:
        block = text[text.index(f"<summary>Every strategy on {corpus} at each budget") :]
        block = block[: block.index("</details>")]
        assert block.count("| adagres_lam_0.7 |") == len(BUDGETS)
        assert f"[tradeoff_{corpus}.html]" in block
        assert (
            f"[interactive](frontier_{corpus}.html)"
            in text[: text.index(f"<summary>Every strategy on {corpus}")]
        )
    paragraphs = text[text.index("<summary>One paragraph per strategy and corpus") :]
    assert "adagres_lam_0.7 on reviews: a paragraph." in paragraphs
    assert "adagres_lam_0.7 on reviews: a paragraph." not in text[: text.index(paragraphs)]
    assert (tmp_path / "r" / "frontier_qa.html").is_file()


def test_a_report_from_before_repeated_text_still_reads():
    """Older reports stored no repeated text and no value for the settings added since (at
    their default in the presets found): the presets are still found, the sentence says
    what is missing, the figure is empty rather than wrong."""
    document = _document()
    for entry in document["aggregates"]:
        del entry["metrics"]["repeated_text"]
    for info in document["strategies"].values():
        if info["settings"]:  # stored no value for settings at their default (off)
            for key in ("packing", "duplicate_guard"):
                if key in info["settings"] and info["settings"][key] in (None, False):
                    info["settings"].pop(key)
    assert compared(document) == COMPARED
    assert verdict(document, "reviews") == (
        "On reviews at 600 tokens, recommended finds more gold chunks than top-k (0.420 vs "
        "0.400); this report has no repeated-text numbers; no other compared strategy finds "
        "fewer gold chunks than top-k at 600 tokens."
    )
    assert frontier_points(document, "qa") == []
    assert summary_rows(document)[0]["qa"] == {"recall": 0.75, "delta": 0.0, "repeated": None}


def test_what_packing_did_is_a_row_per_corpus_and_budget_of_each_strategy_that_packs():
    """Only packed_topk packs in this run (its settings say so): one row per corpus and
    budget with its means, its repeated text and top-k's; a run where nothing packs has no
    such section."""
    document = _document()
    packing = {"stitched": 1.25, "left_out": 0.5, "left_out_words": 4.0, "tokens_saved": 37.5}
    for e in document["aggregates"]:
        for metric, value in packing.items():
            e["metrics"][metric] = _interval(value if e["strategy"] == "packed_topk" else 0.0)
    lines = packing_markdown(document)
    assert lines[0] == "## What packing did"
    rows = [line for line in lines if line.startswith("| qa") or line.startswith("| reviews")]
    assert len(rows) == len(NUMBERS) * len(BUDGETS)
    assert rows[0] == (
        "| qa | 300 | recommended (packed_topk) | 1.25 | 0.50 | 4.0 | 37.5 | 1.0 % | 8.0 % |"
    )
    assert rows[5] == (
        "| reviews | 900 | recommended (packed_topk) | 1.25 | 0.50 | 4.0 | 37.5 | 0.4 % | 0.4 % |"
    )
    document["strategies"]["packed_topk"]["settings"] = {"packing": False}
    assert packing_markdown(document) == []
