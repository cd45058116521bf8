"""What a user pays for twice: the preset targets, checked on a results document.

The targets a preset is chosen by (every one against ``topk_budget`` on the same queries,
at each corpus and budget of the run):

1. **no near-duplicate pair** (cosine ≥ 0.9) in any selection;
2. **at most a quarter of top-k's repeated text** wherever top-k repeats ≥ 1 % of its words;
3. **answer recall never more than 0.5 point below top-k** (the corpus's primary metric:
   gold recall where the corpus has no answer strings);
4. **more answers than top-k** wherever top-k repeats ≥ 3 % of its words.

:func:`target_checks` checks each target at each corpus and budget; :func:`target_failures`
says which fails where, in words; :func:`targets_table` is the small table the report and
the Evidence page show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .strategies import BASELINE_BUDGET

__all__ = [
    "TARGETS",
    "TARGET_COLUMNS",
    "passes",
    "target_checks",
    "target_failures",
    "targets_table",
]

#: The targets by key, as the report names them.
TARGETS = {
    "near_duplicates": "no near-duplicate pair",
    "repeated_text": "≤ 1/4 of top-k's repeated text where top-k repeats ≥ 1 %",
    "recall": "recall never > 0.5 pt below top-k",
    "more_answers": "more answers than top-k where top-k repeats ≥ 3 %",
}
#: Column names of :func:`targets_table`, by target.
TARGET_COLUMNS = {
    "near_duplicates": "no near-duplicate pair",
    "repeated_text": "≤ 1/4 of top-k's repeated text",
    "recall": "recall ≥ top-k − 0.5 pt",
    "more_answers": "more answers where top-k repeats ≥ 3 %",
}
REPEATS, REPEATS_A_LOT, QUARTER, SLACK = 0.01, 0.03, 0.25, 0.005


def _entries(document: Mapping[str, Any]) -> dict[tuple[str, int, str], Mapping[str, Any]]:
    return {(e["corpus"], e["budget"], e["strategy"]): e for e in document["aggregates"]}


def _mean(entry: Mapping[str, Any], metric: str) -> float | None:
    value = entry["metrics"].get(metric, {}).get("mean")
    return None if value is None else float(value)


def target_checks(document: Mapping[str, Any], strategy: str) -> list[dict[str, Any]]:
    """Every target at every corpus and budget where ``strategy`` and top-k both ran, in
    the order of the run: one dict per check with ``target`` (a key of :data:`TARGETS`),
    ``corpus``, ``budget``, ``holds`` (True, False, or None where the target does not apply:
    top-k repeats too little text there, or a number is missing) and ``detail`` (the
    numbers, in words)."""
    entries = _entries(document)
    out: list[dict[str, Any]] = []
    for (corpus, budget, name), entry in entries.items():
        base = entries.get((corpus, budget, BASELINE_BUDGET))
        if name == strategy and base is not None:
            out += [
                {"target": t, "corpus": corpus, "budget": budget, "holds": h, "detail": d}
                for t, h, d in _checks(entry, base)
            ]
    return out


def _checks(
    entry: Mapping[str, Any], base: Mapping[str, Any]
) -> list[tuple[str, bool | None, str]]:
    """(target, holds, detail) of one corpus and budget, in the order of :data:`TARGETS`."""
    out: list[tuple[str, bool | None, str]] = []
    pairs = _mean(entry, "near_duplicates")
    if pairs is None:
        out.append(("near_duplicates", None, "not measured"))
    else:
        out.append(("near_duplicates", not pairs, f"{pairs:.2f} pairs per selection"))
    mine, theirs = _mean(entry, "repeated_text"), _mean(base, "repeated_text")
    if theirs is None or mine is None:
        out.append(("repeated_text", None, "not measured"))
    elif theirs < REPEATS:
        out.append(("repeated_text", None, f"top-k repeats {100 * theirs:.1f} %"))
    else:
        detail = f"{100 * mine:.1f} % against top-k's {100 * theirs:.1f} %"
        out.append(("repeated_text", mine <= QUARTER * theirs, detail))
    primary = entry["primary"]
    got, want = _mean(entry, primary), _mean(base, primary)
    if got is None or want is None:
        return [*out, ("recall", None, "not measured"), ("more_answers", None, "not measured")]
    delta = f"{100 * (got - want):+.1f} pt"
    out.append(("recall", got >= want - SLACK, f"{delta} ({primary.replace('_', ' ')})"))
    if theirs is None or theirs < REPEATS_A_LOT:
        repeats = "not measured" if theirs is None else f"{100 * theirs:.1f} %"
        out.append(("more_answers", None, f"top-k repeats {repeats}"))
    else:
        detail = f"{delta} with top-k repeating {100 * theirs:.1f} %"
        out.append(("more_answers", got > want, detail))
    return out


def target_failures(document: Mapping[str, Any], strategy: str) -> list[str]:
    """One line per (target, corpus, budget) where ``strategy`` misses a target, with the
    numbers; empty when it meets every target everywhere it ran."""
    return [
        f"{TARGETS[c['target']]}: {c['corpus']} at {c['budget']}, {c['detail']}"
        for c in target_checks(document, strategy)
        if c["holds"] is False
    ]


def passes(document: Mapping[str, Any], strategy: str) -> bool:
    """Whether ``strategy`` meets every target on every corpus and budget of the run."""
    return not target_failures(document, strategy)


def targets_table(document: Mapping[str, Any], strategy: str) -> list[dict[str, str]]:
    """The targets of ``strategy`` as one small table: a row per corpus and budget, a column
    per target (named as in :data:`TARGET_COLUMNS`) saying ``holds``, ``fails: numbers``
    or ``–`` where the target does not apply there."""
    rows: dict[tuple[str, int], dict[str, str]] = {}
    for c in target_checks(document, strategy):
        key = (c["corpus"], c["budget"])
        row = rows.setdefault(key, {"corpus": c["corpus"], "budget": str(c["budget"])})
        cell = {True: "holds", False: f"fails: {c['detail']}", None: "–"}[c["holds"]]
        row[TARGET_COLUMNS[c["target"]]] = cell
    return list(rows.values())
