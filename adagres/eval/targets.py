"""What a user pays for twice: the preset targets, checked on a results document.

The targets a preset is chosen by (every one against ``topk_budget`` on the same queries,
at each corpus and budget of the run):

1. **at least as many answers as top-k** (the corpus's primary metric: answer recall, gold
   recall where the corpus has no answer strings), with the wins, ties and losses;
2. **at most half of top-k's repeated text** wherever top-k repeats ≥ 2 % of its words.

"No near-duplicate pair" is no longer a target: two paraphrases each holding a fact of their
own are both worth their tokens (the guard that dropped one of them is a user's choice).
:func:`target_checks` checks each target at each corpus and budget; :func:`target_failures`
says which fails where, in words; :func:`targets_table` is the small table the report and
the Evidence page show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .results import entries_by_key, mean_of
from .strategies import BASELINE_BUDGET

__all__ = [
    "TARGETS",
    "TARGET_COLUMNS",
    "TIE",
    "target_checks",
    "target_failures",
    "targets_table",
]

#: The targets by key, as the report names them.
TARGETS = {
    "recall": "at least as many answers as top-k",
    "repeated_text": "≤ 1/2 of top-k's repeated text where top-k repeats ≥ 2 %",
}
#: Column names of :func:`targets_table`, by target.
TARGET_COLUMNS = {
    "recall": "recall ≥ top-k (W/T/L)",
    "repeated_text": "≤ 1/2 of top-k's repeated text",
}
REPEATS, HALF = 0.02, 0.5
#: Two means closer than this are equal (float noise of a mean over the same queries).
TIE = 1e-9


def target_checks(document: Mapping[str, Any], strategy: str) -> list[dict[str, Any]]:
    """Every target at every corpus and budget where ``strategy`` and top-k both ran, in
    the order of the run: one dict per check with ``target`` (a key of :data:`TARGETS`),
    ``corpus``, ``budget``, ``holds`` (True, False, or None where the target does not apply:
    top-k repeats too little text there, or a number is missing) and ``detail`` (the
    numbers, in words)."""
    entries = entries_by_key(document)
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
    primary = entry["primary"]
    got, want = mean_of(entry, primary), mean_of(base, primary)
    if got is None or want is None:
        out.append(("recall", None, "not measured"))
    else:
        wtl = entry.get("wtl", {}).get(BASELINE_BUDGET, {}).get(primary)
        record = f", W/T/L {wtl['wins']}/{wtl['ties']}/{wtl['losses']}" if wtl else ""
        detail = f"{100 * (got - want):+.1f} pt ({primary.replace('_', ' ')}{record})"
        out.append(("recall", got >= want - TIE, detail))
    mine, theirs = mean_of(entry, "repeated_text"), mean_of(base, "repeated_text")
    if theirs is None or mine is None:
        out.append(("repeated_text", None, "not measured"))
    elif theirs < REPEATS:
        out.append(("repeated_text", None, f"top-k repeats {100 * theirs:.1f} %"))
    else:
        detail = f"{100 * mine:.1f} % against top-k's {100 * theirs:.1f} %"
        out.append(("repeated_text", mine <= HALF * theirs, detail))
    return out


def target_failures(document: Mapping[str, Any], strategy: str) -> list[str]:
    """One line per (target, corpus, budget) where ``strategy`` misses a target, with the
    numbers; empty when it meets every target everywhere it ran."""
    return [
        f"{TARGETS[c['target']]}: {c['corpus']} at {c['budget']}, {c['detail']}"
        for c in target_checks(document, strategy)
        if c["holds"] is False
    ]


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
