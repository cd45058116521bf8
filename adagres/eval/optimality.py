"""The greedy against the optimum: F(greedy) / F(optimum) where ``exact`` proved one, next
to the paper's bound (1 − 1/e)·OPT − k·ε/e (:mod:`adagres.core.guarantee`).

The greedy is ``adagres_paper_skip``: the paper's method, with the settings ``exact`` solves
for (the default :class:`~adagres.Settings`), so both maximise the same F at the same λ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .results import cell
from .strategies import optimum_names

__all__ = ["GREEDY", "optimality_markdown", "optimality_rows"]

#: The strategy whose F is compared with the optimum.
GREEDY = "adagres_paper_skip"


def optimality_rows(
    rows: Sequence[Mapping[str, Any]], corpus: str, budgets: Sequence[int]
) -> list[dict[str, Any]]:
    """Per budget: queries solved, the mean and the lowest F(greedy)/F(opt), the share of
    queries where the greedy is optimal (within 1e-9), and the mean of the paper's bound
    as a share of F(opt) (None where nothing was solved or F(opt) ≤ 0).

    ``bounded`` and ``min_proven``: the queries where ``exact`` ran (solved, or stopped by
    its search limit with a proven upper bound U on the optimum) and the lowest
    F(greedy)/U over them. F(greedy)/U ≤ F(greedy)/F(opt) (F(greedy) ≥ 0: the greedy stops
    before a gain ≤ 0), so ``min_proven`` is a proven floor on the ratio that does not leave
    out the queries the solver found hardest.

    >>> rows = [
    ...     {"corpus": "c", "query_id": "q", "budget": 10, "strategy": "exact",
    ...      "solved": True, "objective": 2.0, "paper_bound": 0.5},
    ...     {"corpus": "c", "query_id": "q", "budget": 10, "strategy": GREEDY,
    ...      "solved": True, "objective": 1.5}]
    >>> optimality_rows(rows, "c", [10])[0]["mean_ratio"]
    0.75
    """
    greedy = {
        (r["query_id"], r["budget"]): r["objective"]
        for r in rows
        if r["corpus"] == corpus and r["strategy"] == GREEDY and r["solved"]
    }
    optima = optimum_names()
    out = []
    for budget in budgets:
        ratios, bounds, optimal, proven = [], [], 0, []
        for r in rows:
            if (r["corpus"], r["budget"]) != (corpus, budget) or r["strategy"] not in optima:
                continue
            found = greedy.get((r["query_id"], budget))
            upper = r.get("upper_bound")
            if found is not None and upper is not None and upper > 0:
                proven.append(found / upper)
            if not r["solved"] or found is None or not r["objective"] > 0:
                continue
            ratios.append(found / r["objective"])
            optimal += found >= r["objective"] - 1e-9
            if r.get("paper_bound") is not None:
                bounds.append(r["paper_bound"] / r["objective"])
        out.append(
            {
                "budget": budget,
                "solved": len(ratios),
                "mean_ratio": sum(ratios) / len(ratios) if ratios else None,
                "min_ratio": min(ratios) if ratios else None,
                "optimal_share": optimal / len(ratios) if ratios else None,
                "mean_bound": sum(bounds) / len(bounds) if bounds else None,
                "bounded": len(proven),
                "min_proven": min(proven) if proven else None,
            }
        )
    return out


def optimality_markdown(document: Mapping[str, Any]) -> list[str]:
    """The report's section "The greedy against the optimum" (lines of markdown)."""
    budgets = document["stamp"]["config"]["budgets"]
    out = [
        "## The greedy against the optimum",
        "",
        f"F({GREEDY}) / F(optimum) on the queries where `exact` proved the optimum within "
        "its search limit, next to the paper's bound (1 − 1/e)·OPT − k·ε/e as a share of the "
        "optimum (ε = λ·k·δ, δ the pool's largest pairwise cosine, k the most chunks the "
        "budget holds). A bound below 0 says nothing; the measured ratio is what the greedy "
        "gives up. The last two columns add the queries where the search stopped at its "
        "limit: there F(greedy) / (the proven upper bound on the optimum) is a floor on "
        'the ratio, so "proven lowest" holds for every query `exact` ran on.',
        "",
    ]
    for corpus in document["corpora"]:
        out += [
            f"### {corpus}",
            "",
            "| budget | solved | mean F(greedy)/F(opt) | lowest | greedy optimal | "
            "paper's bound / F(opt) | runs with a proven bound | proven lowest |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in optimality_rows(document["rows"], corpus, budgets):
            out.append(
                f"| {row['budget']} | {row['solved']} | {cell(row['mean_ratio'])} | "
                f"{cell(row['min_ratio'])} | {cell(row['optimal_share'], '.0%')} | "
                f"{cell(row['mean_bound'], '+.2f')} | {row['bounded']} | "
                f"{cell(row['min_proven'])} |"
            )
        out.append("")
    return out
