"""What a user pays for twice: the preset targets, checked on a results document.

The targets a preset is chosen by (every one against ``topk_budget`` on the same queries,
at each corpus and budget of the run):

1. **no near-duplicate pair** (cosine ≥ 0.9) in any selection;
2. **at most a quarter of top-k's repeated text** wherever top-k repeats ≥ 1 % of its words;
3. **answer recall never more than 0.5 point below top-k** (the corpus's primary metric:
   gold recall where the corpus has no answer strings);
4. **more answers than top-k** wherever top-k repeats ≥ 3 % of its words.

:func:`target_failures` says which target fails where; :func:`summary_markdown` is the table
and the one-sentence verdicts the report leads with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .strategies import BASELINE_BUDGET

__all__ = ["TARGETS", "compared_strategies", "passes", "summary_markdown", "target_failures"]

#: The targets by key, as the report names them.
TARGETS = {
    "near_duplicates": "no near-duplicate pair",
    "repeated_text": "≤ 1/4 of top-k's repeated text where top-k repeats ≥ 1 %",
    "recall": "recall never > 0.5 pt below top-k",
    "more_answers": "more answers than top-k where top-k repeats ≥ 3 %",
}
REPEATS, REPEATS_A_LOT, QUARTER, SLACK = 0.01, 0.03, 0.25, 0.005


def _entries(document: Mapping[str, Any]) -> dict[tuple[str, int, str], Mapping[str, Any]]:
    return {(e["corpus"], e["budget"], e["strategy"]): e for e in document["aggregates"]}


def _mean(entry: Mapping[str, Any], metric: str) -> float | None:
    value = entry["metrics"].get(metric, {}).get("mean")
    return None if value is None else float(value)


def target_failures(document: Mapping[str, Any], strategy: str) -> list[str]:
    """One line per (target, corpus, budget) where ``strategy`` misses a target, with the
    numbers; empty when it meets every target everywhere it ran."""
    entries = _entries(document)
    out = []
    for (corpus, budget, name), entry in entries.items():
        base = entries.get((corpus, budget, BASELINE_BUDGET))
        if name != strategy or base is None:
            continue
        where = f"{corpus} at {budget}"
        pairs = _mean(entry, "near_duplicates")
        if pairs:
            out.append(f"{TARGETS['near_duplicates']}: {where}, {pairs:.2f} pairs per selection")
        mine, theirs = _mean(entry, "repeated_text"), _mean(base, "repeated_text")
        if (
            theirs is not None
            and mine is not None
            and theirs >= REPEATS
            and mine > QUARTER * theirs
        ):
            out.append(
                f"{TARGETS['repeated_text']}: {where}, {100 * mine:.1f} % against top-k's "
                f"{100 * theirs:.1f} %"
            )
        primary = entry["primary"]
        got, want = _mean(entry, primary), _mean(base, primary)
        if got is not None and want is not None:
            if got < want - SLACK:
                out.append(
                    f"{TARGETS['recall']}: {where}, {100 * (got - want):+.1f} pt "
                    f"({primary.replace('_', ' ')})"
                )
            if theirs is not None and theirs >= REPEATS_A_LOT and not got > want:
                out.append(
                    f"{TARGETS['more_answers']}: {where}, {100 * (got - want):+.1f} pt with "
                    f"top-k repeating {100 * theirs:.1f} %"
                )
    return out


def passes(document: Mapping[str, Any], strategy: str) -> bool:
    """Whether ``strategy`` meets every target on every corpus and budget of the run."""
    return not target_failures(document, strategy)


def summary_markdown(document: Mapping[str, Any], compared: Sequence[str]) -> list[str]:
    """The table the report leads with: per corpus and budget, top-k's repeated text and, for
    each of ``compared``, its repeated text and primary-metric difference with top-k; then
    one sentence per corpus in plain words and the targets each compared strategy misses."""
    entries = _entries(document)
    names = [s for s in compared if any(k[2] == s for k in entries)]
    head = "| corpus | budget | top-k repeated text | top-k recall | " + " | ".join(
        f"{s}: repeated text, Δ recall" for s in names
    )
    lines = [head + " |", "|" + "---|" * (4 + len(names))]
    verdicts: dict[str, list[tuple[float, float, int]]] = {}
    for (corpus, budget, name), base in entries.items():
        if name != BASELINE_BUDGET:
            continue
        primary = base["primary"]
        top_rep, top_rec = _mean(base, "repeated_text"), _mean(base, primary)
        cells = []
        for s in names:
            e = entries.get((corpus, budget, s))
            rep = None if e is None else _mean(e, "repeated_text")
            rec = None if e is None else _mean(e, primary)
            delta = None if rec is None or top_rec is None else rec - top_rec
            cells.append(f"{_pct(rep)}, {_pt(delta)}")
            if s == names[0] and delta is not None and rep is not None and top_rep is not None:
                verdicts.setdefault(corpus, []).append((top_rep - rep, delta, budget))
        lines.append(
            f"| {corpus} | {budget} | {_pct(top_rep)} | {_pct(top_rec)} | "
            + " | ".join(cells)
            + " |"
        )
    out = [*lines, ""]
    if names:
        for corpus, rows in verdicts.items():
            saved = sum(r[0] for r in rows) / len(rows)
            worst = min(rows, key=lambda r: r[1])
            best = max(rows, key=lambda r: r[1])
            if worst[1] < -SLACK:
                tail = f"but it finds {_pt(worst[1])} answers at {worst[2]} tokens"
            elif best[1] > SLACK:
                tail = f"and finds {_pt(best[1])} more at {best[2]} tokens, never fewer"
            else:
                tail = "and finds as many answers (within 0.5 pt)"
            out.append(
                f"- **{corpus}**: {names[0]} repeats {100 * saved:.1f} points less of its "
                f"text than top-k on average, {tail}."
            )
        out.append("")
        for s in names:
            misses = target_failures(document, s)
            if misses:
                out += [f"Targets {s} misses:", "", *[f"- {m}" for m in misses], ""]
            else:
                out += [f"{s} meets every target on every corpus and budget of this run.", ""]
    return out


def compared_strategies(document: Mapping[str, Any]) -> list[str]:
    """The strategies a reader compares with top-k: the run's entry of the ``recommended``
    preset (the strategy registered with its settings), then the paper's method."""
    from ..core.presets import PRESETS

    chosen = PRESETS["recommended"]
    wanted = (chosen.strategy, chosen.settings.as_dict())
    strategies = document.get("strategies", {})
    out = [name for name, info in strategies.items()
           if (info.get("core"), info.get("settings")) == wanted][:1]  # fmt: skip
    return out + [name for name in ("paper",) if name in strategies]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _pt(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f} pt"
