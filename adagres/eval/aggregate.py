"""From rows to the report's numbers: means with bootstrap intervals, paired comparisons
with the two top-k baselines, and plain-language findings.

Which queries a metric is averaged over:

- ``answer_recall`` (answer-in-context, reported first): queries whose *pool* holds an
  answer string; where retrieval lost the answer, no selection can find it;
- ``gold_recall``, ``iou``, ``gold_precision``: queries with at least one gold chunk in
  the pool;
- everything else: every query the strategy solved.

The primary metric of a corpus is answer recall where it has answers, gold recall
otherwise (the drug reviews have no answer strings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from .stats import bootstrap_ci, stream, wins_ties_losses
from .strategies import BASELINE_BUDGET, BASELINE_SAME_K

__all__ = [
    "INTERVAL_METRICS",
    "METRIC_LABELS",
    "PAIRED_METRICS",
    "aggregate",
    "findings",
    "interval_text",
    "metric_values",
    "primary_metric",
]

#: Metrics compared query by query with the baselines (wins / ties / losses).
PAIRED_METRICS = ("answer_recall", "gold_recall", "iou")
#: The label of each metric, in the order of the tables.
METRIC_LABELS = {
    "answer_recall": "answer recall",
    "gold_recall": "gold recall",
    "iou": "IoU",
    "gold_precision": "gold precision",
    "redundancy_mean": "mean pairwise cosine",
    "redundancy_max": "max pairwise cosine",
    "near_duplicates": "near-duplicate pairs",
    "repeated_text": "repeated text (share of words in a repeated word 8-gram)",
    "budget_use": "budget use",
    "tokens_used": "tokens used",
    "size": "chunks",
    "stitched": "picks stitched to a passage",
    "left_out": "sentences left out (the context held them)",
    "left_out_words": "words left out",
    "tokens_saved": "tokens packing saved",
}
#: Metrics reported as a mean with a bootstrap interval, in the order of the tables.
INTERVAL_METRICS = tuple(METRIC_LABELS)
_GOLD = ("gold_recall", "iou", "gold_precision")


def primary_metric(queries: Sequence[Mapping[str, Any]]) -> str:
    """``answer_recall`` when any query of the corpus has answers, else ``gold_recall``."""
    return "answer_recall" if any(q.get("answers") for q in queries) else "gold_recall"


def metric_values(
    rows: Mapping[str, Mapping[str, Any]], queries: Sequence[Mapping[str, Any]], metric: str
) -> np.ndarray:
    """``metric`` per query (NaN where it is not measured), aligned with ``queries``;
    ``rows`` maps a query id to its row for one strategy and budget."""
    out = np.full(len(queries), np.nan)
    for position, query in enumerate(queries):
        row = rows.get(query["query_id"])
        if row is None or not row.get("solved"):
            continue
        if metric == "answer_recall":
            if query.get("answer_in_pool") and row.get("answer_found") is not None:
                out[position] = float(row["answer_found"])
        elif metric in _GOLD:
            if query.get("n_gold") and row.get(metric) is not None:
                out[position] = float(row[metric])
        elif row.get(metric) is not None:
            out[position] = float(row[metric])
    return out


def aggregate(
    rows: Sequence[Mapping[str, Any]],
    queries: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    resamples: int = 2000,
) -> list[dict[str, Any]]:
    """One entry per (corpus, budget, strategy), in the order the rows first name them.

    Each entry holds ``metrics`` (Interval dicts), ``delta`` (paired differences with
    ``topk_budget`` for the primary metric and the mean pairwise cosine, with intervals),
    ``wtl`` (wins/ties/losses against ``topk_budget`` and ``topk_same_k`` per paired
    metric), ``n_queries``, ``n_solved`` and the mean ``time_ms``.
    """
    by_key: dict[tuple[str, int, str], dict[str, Mapping[str, Any]]] = {}
    for row in rows:
        key = (row["corpus"], int(row["budget"]), row["strategy"])
        by_key.setdefault(key, {})[row["query_id"]] = row
    corpus_queries: dict[str, list[Mapping[str, Any]]] = {}
    for query in queries:
        corpus_queries.setdefault(query["corpus"], []).append(query)
    return [_entry(key, by_key, corpus_queries.get(key[0], []), seed, resamples) for key in by_key]


def _entry(
    key: tuple[str, int, str],
    by_key: Mapping[tuple[str, int, str], Mapping[str, Mapping[str, Any]]],
    queries: Sequence[Mapping[str, Any]],
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    corpus, budget, strategy = key
    runs = by_key[key]
    primary = primary_metric(queries)

    def values(metric: str, name: str = strategy) -> np.ndarray:
        return metric_values(by_key.get((corpus, budget, name), {}), queries, metric)

    def ci(array: np.ndarray, *names: str) -> dict[str, Any]:
        # One stream per comparison, whatever the strategy: every strategy is resampled
        # with the same query draws (paired), and a rerun draws the same.
        rng = stream(seed, corpus, budget, *names)
        return asdict(bootstrap_ci(array, rng=rng, resamples=resamples))

    metrics = {m: ci(values(m), m) for m in INTERVAL_METRICS}
    delta = {
        m: ci(values(m) - values(m, BASELINE_BUDGET), "delta", m)
        for m in dict.fromkeys((primary, "redundancy_mean"))
    }
    wtl = {
        base: {
            m: asdict(wins_ties_losses(values(m).tolist(), values(m, base).tolist()))
            for m in PAIRED_METRICS
        }
        for base in (BASELINE_BUDGET, BASELINE_SAME_K)
    }
    times = [float(r["time_ms"]) for r in runs.values() if r.get("time_ms") is not None]
    return {
        "corpus": corpus,
        "budget": budget,
        "strategy": strategy,
        "primary": primary,
        "n_queries": len(runs),
        "n_solved": sum(1 for r in runs.values() if r.get("solved")),
        "metrics": metrics,
        "delta": delta,
        "wtl": wtl,
        "time_ms": float(np.mean(times)) if times else None,
    }


# --------------------------------------------------------------------------- findings


def _verdict(delta: Mapping[str, Any]) -> str:
    if not delta.get("n"):
        return "unmeasured"
    if delta["high"] < 0:
        return "loses"
    if delta["low"] > 0:
        return "wins"
    return "ties"


def _budgets(entries: Sequence[Mapping[str, Any]], primary: str, verdict: str) -> str:
    parts = [
        f"{e['budget']} ({d['mean']:+.3f}, 95 % CI {d['low']:+.3f} to {d['high']:+.3f}; "
        f"W/T/L {_wtl(e, BASELINE_BUDGET, primary)})"
        for e in entries
        if _verdict(d := e["delta"][primary]) == verdict
    ]
    return "; ".join(parts) if parts else "none"


def _wtl(entry: Mapping[str, Any], base: str, metric: str) -> str:
    counts = entry["wtl"][base][metric]
    return f"{counts['wins']}/{counts['ties']}/{counts['losses']}"


def findings(aggregates: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """One plain-language statement per (corpus, strategy): the budgets where it loses to,
    ties or beats ``topk_budget`` on the primary metric (a paired interval below, across or
    above zero), its W/T/L against ``topk_same_k``, and what it spends and repeats.

    Losses and ties come first in every statement; a strategy that never loses says so.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for entry in aggregates:
        groups.setdefault((entry["corpus"], entry["strategy"]), []).append(entry)
    out = []
    for (corpus, strategy), entries in groups.items():
        if strategy == BASELINE_BUDGET:
            continue
        entries = sorted(entries, key=lambda e: e["budget"])
        primary = entries[0]["primary"]
        label = METRIC_LABELS[primary]
        solved = sum(e["n_solved"] for e in entries)
        if solved == 0:
            out.append(
                {
                    "corpus": corpus,
                    "strategy": strategy,
                    "text": f"{strategy}: not solved at any budget (no run gave a selection; "
                    "the report's notes say why).",
                }
            )
            continue
        loses = _budgets(entries, primary, "loses")
        ties = _budgets(entries, primary, "ties")
        wins = _budgets(entries, primary, "wins")
        same_k = ", ".join(f"{e['budget']}: {_wtl(e, BASELINE_SAME_K, primary)}" for e in entries)
        use = [e["metrics"]["budget_use"]["mean"] for e in entries]
        cos = [e["delta"]["redundancy_mean"]["mean"] for e in entries]
        spend = ", ".join(f"{100 * u:.0f} %" for u in use if u is not None)
        cosine = ", ".join(f"{c:+.3f}" for c in cos if c is not None)
        unsolved = sum(e["n_queries"] - e["n_solved"] for e in entries)
        text = (
            f"{strategy} against topk_budget on {label}. Loses at: {loses}. Ties at: {ties}. "
            f"Wins at: {wins}. W/T/L against topk_same_k by budget: {same_k}. Budget use: "
            f"{spend}; mean pairwise cosine minus topk_budget's: {cosine}."
        )
        if unsolved:
            text += f" Not solved in {unsolved} runs (left out of its means)."
        out.append({"corpus": corpus, "strategy": strategy, "text": text})
    return out


def interval_text(interval: Mapping[str, Any]) -> str:
    """``0.412 [0.371, 0.455]``; ``–`` when not measured."""
    if interval.get("mean") is None:
        return "–"
    return f"{interval['mean']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"
