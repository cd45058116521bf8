"""The lead of the report and of the Evidence page: what a reader compares, in numbers.

A reader choosing a context packer compares a handful of strategies with ``topk_budget``:
the presets ``paper`` and ``recommended`` (found in the run by their settings, whatever
their entry is called), ``mmr``, ``near_duplicates`` and the best-recall strategy of the
rest (:func:`compared`): the recall–repeated-text frontier (:func:`frontier_points`), one
table across corpora at the mid budget (:func:`summary_rows`) and one sentence per corpus
(:func:`verdict`).

Numbers only come from the aggregates of a results document (means over queries; the
difference with top-k is the paired mean over the same queries), so the figure, the table
and the sentence always agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.strategies import MMR, NEAR_DUPLICATES, STRATEGIES, TOPK_BUDGET, TOPK_SAME_K
from .results import entries_by_key, mean_of
from .strategies import BASELINE_BUDGET
from .targets import TIE

__all__ = [
    "FIXED",
    "compared",
    "frontier_points",
    "mid_budget",
    "preset_entry",
    "role",
    "summary_rows",
    "tradeoff_points",
    "verdict",
]

#: The strategies every figure shows when the run has them, after top-k and the presets.
FIXED = (MMR.name, NEAR_DUPLICATES.name)
#: Strategies never picked as "the best recall of the rest": top-k in other guises and the
#: exact solver (measured on a few queries only).
_NOT_BEST_CORES = (
    TOPK_BUDGET.name,
    TOPK_SAME_K.name,
    *(n for n, s in STRATEGIES.items() if s.proves_optimum),
)
#: Below this share (0.05 %) of repeated text, top-k has nothing to cut.
_NOTHING = 0.0005
_FRACTIONS = (
    (0.1, "a tenth"),
    (0.2, "a fifth"),
    (0.25, "a quarter"),
    (1 / 3, "a third"),
    (0.5, "half"),
    (2 / 3, "two thirds"),
    (0.75, "three quarters"),
)


def preset_entry(document: Mapping[str, Any], preset: str) -> str | None:
    """The run's strategy that is preset ``preset`` (registered with its strategy and
    settings; a setting the report has no value for counts as its default), or None when
    the run did not measure it."""
    from ..core.presets import PRESETS

    chosen = PRESETS.get(preset)
    if chosen is None:
        return None
    wanted = (chosen.strategy, _set(chosen.settings.as_dict()))
    for name, info in document.get("strategies", {}).items():
        if (info.get("core"), _set(info.get("settings"))) == wanted:
            return str(name)
    return None


def _set(settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Settings without those at their default: a report written before a setting existed
    stored no value for it, and ran with what is now its default."""
    if settings is None:
        return None
    from ..core.settings import Settings

    default = Settings().as_dict()
    return {k: v for k, v in settings.items() if k not in default or v != default[k]}


def mid_budget(document: Mapping[str, Any]) -> int:
    """The budget the summary compares at: the middle one of the run (the lower of the two
    middle ones for an even count: 600 of 300, 600, 900, 1200)."""
    budgets = sorted(int(b) for b in document["stamp"]["config"]["budgets"])
    return budgets[(len(budgets) - 1) // 2]


def compared(document: Mapping[str, Any]) -> list[str]:
    """The strategies a reader compares, those of the run only, in this order: top-k, the
    ``paper`` and ``recommended`` presets, :data:`FIXED`, then the strategy of the rest with
    the highest mean primary metric over the corpora at the mid budget (ties: the first
    measured), when it beats each compared strategy but top-k there. At most six."""
    measured = {e["strategy"] for e in document["aggregates"]}
    out = [BASELINE_BUDGET]
    out += [s for s in (preset_entry(document, p) for p in ("paper", "recommended")) if s]
    out += list(FIXED)
    out = [s for s in dict.fromkeys(out) if s in measured]
    best = _best_recall(document, out)
    return [*out, best] if best else out


def _best_recall(document: Mapping[str, Any], taken: Sequence[str]) -> str | None:
    budget = mid_budget(document)
    scores: dict[str, list[float]] = {}
    for e in document["aggregates"]:
        value = mean_of(e, e["primary"])
        if e["budget"] == budget and value is not None:
            scores.setdefault(e["strategy"], []).append(value)
    corpora = max((len(v) for v in scores.values()), default=0)
    mean = {s: sum(v) / len(v) for s, v in scores.items() if len(v) == corpora}
    cores = {n: i.get("core") for n, i in document.get("strategies", {}).items()}
    rest = [s for s in mean if s not in taken and cores.get(s, s) not in _NOT_BEST_CORES]
    if not rest:
        return None
    best = max(rest, key=lambda s: mean[s])
    shown = [mean[s] for s in taken if s in mean and s != BASELINE_BUDGET]
    return best if all(mean[best] > value for value in shown) else None


def role(document: Mapping[str, Any], strategy: str, *, short: bool = False) -> str:
    """How the report names a compared strategy: ``recommended`` / ``paper`` for the
    presets (with the run's entry name when it differs, unless ``short``), ``top-k`` for
    topk_budget, else its name."""
    if strategy == BASELINE_BUDGET:
        return "top-k"
    for preset in ("recommended", "paper"):
        if preset_entry(document, preset) == strategy:
            same = short or strategy in (preset, f"preset_{preset}")
            return preset if same else f"{preset} ({strategy})"
    return strategy


def frontier_points(
    document: Mapping[str, Any], corpus: str, strategies: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One point per (strategy, budget) of ``corpus``, for ``strategies`` (default
    :func:`compared`) in that order and budgets ascending: ``x`` = mean share of repeated
    text, ``y`` = mean of the corpus's primary metric, ``y_low``/``y_high`` its interval,
    ``delta`` its paired mean difference with top-k, ``n`` the queries it is measured on.
    Points where either number is missing are left out."""
    names = list(compared(document) if strategies is None else strategies)
    entries = entries_by_key(document)
    budgets = sorted({b for (c, b, _s) in entries if c == corpus})
    points = []
    for name in names:
        for budget in budgets:
            entry = entries.get((corpus, budget, name))
            if entry is None:
                continue
            primary = entry["primary"]
            x, y = mean_of(entry, "repeated_text"), mean_of(entry, primary)
            if x is None or y is None:
                continue
            interval = entry["metrics"][primary]
            points.append(
                {
                    "strategy": name,
                    "label": role(document, name),
                    "budget": budget,
                    "x": x,
                    "y": y,
                    "y_low": interval.get("low"),
                    "y_high": interval.get("high"),
                    "delta": mean_of(entry, primary, "delta"),
                    "n": interval.get("n"),
                }
            )
    return points


def tradeoff_points(
    document: Mapping[str, Any], corpus: str, strategies: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One point per (strategy, budget) of ``corpus`` (of ``strategies`` only, when given):
    ``x`` = mean pairwise cosine of the
    selection minus topk_budget's (paired mean over queries), ``y`` = the primary metric's
    mean, ``y_low``/``y_high`` its bootstrap interval, ``n`` the queries it is measured on
    and ``n_all`` those of topk_budget (fewer for a strategy that was not solved or not run
    on every query)."""
    full = {
        (e["corpus"], e["budget"]): e["metrics"][e["primary"]]["n"]
        for e in document["aggregates"]
        if e["strategy"] == BASELINE_BUDGET
    }
    points = []
    for entry in document["aggregates"]:
        if entry["corpus"] != corpus or (
            strategies is not None and entry["strategy"] not in strategies
        ):
            continue
        y = entry["metrics"][entry["primary"]]
        x = entry["delta"]["redundancy_mean"]["mean"]
        if y["mean"] is None or x is None:
            continue
        points.append(
            {
                "strategy": entry["strategy"],
                "family": document["strategies"].get(entry["strategy"], {}).get("family", "custom"),
                "budget": entry["budget"],
                "x": x,
                "y": y["mean"],
                "y_low": y["low"],
                "y_high": y["high"],
                "n": y["n"],
                "n_all": full.get((corpus, entry["budget"]), y["n"]),
            }
        )
    return points


def summary_rows(document: Mapping[str, Any], budget: int | None = None) -> list[dict[str, Any]]:
    """The summary across corpora at ``budget`` (default :func:`mid_budget`): one row per
    compared strategy with ``strategy``, ``label`` and per corpus a dict under the corpus's
    name: ``recall`` (primary metric mean), ``delta`` (paired mean difference with top-k),
    ``repeated`` (mean share of repeated text); None where not measured."""
    budget = mid_budget(document) if budget is None else budget
    entries = entries_by_key(document)
    rows = []
    for name in compared(document):
        row: dict[str, Any] = {"strategy": name, "label": role(document, name)}
        for corpus in document["corpora"]:
            entry = entries.get((corpus, budget, name))
            primary = document["corpora"][corpus]["primary"]
            row[corpus] = {
                "recall": mean_of(entry, primary),
                "delta": mean_of(entry, primary, "delta"),
                "repeated": mean_of(entry, "repeated_text"),
            }
        rows.append(row)
    return rows


def _repeated(mine: float, top: float) -> str:
    numbers = f"({100 * mine:.1f} % vs {100 * top:.1f} % of the words)"
    if top < _NOTHING:
        return f"while top-k repeats almost no text to cut {numbers}"
    ratio = mine / top
    if ratio < 0.05:
        share = "almost none of its repeated text"
    elif ratio > 1.1:
        share = "more repeated text"
    elif ratio >= 0.9:
        share = "as much repeated text"
    else:
        word = min(_FRACTIONS, key=lambda f: abs(f[0] - ratio))[1]
        share = f"about {word} of its repeated text"
    return f"with {share} {numbers}"


def verdict(document: Mapping[str, Any], corpus: str) -> str:
    """One sentence on ``corpus`` in plain words: how the recommended preset (top-k's
    first challenger when the run lacks it) compares with top-k at the mid budget, the
    other budgets where it finds fewer, and the compared strategies that find fewer at the
    mid budget."""
    names = compared(document)
    challengers = [s for s in names if s != BASELINE_BUDGET]
    if not challengers:
        return f"On {corpus}, only top-k was measured."
    main = preset_entry(document, "recommended") or challengers[0]
    main = main if main in challengers else challengers[0]
    budget = mid_budget(document)
    primary = document["corpora"][corpus]["primary"]
    things = "answers" if primary == "answer_recall" else "gold chunks"
    # Every measured recall, repeated text or not (a report from before the metric).
    points = {
        (s, b): {
            "x": mean_of(e, "repeated_text"),
            "y": mean_of(e, e["primary"]),
            "delta": mean_of(e, e["primary"], "delta"),
        }
        for (c, b, s), e in entries_by_key(document).items()
        if c == corpus and mean_of(e, e["primary"]) is not None
    }
    mine, top = points.get((main, budget)), points.get((BASELINE_BUDGET, budget))
    name = role(document, main, short=True)
    if mine is None or top is None or mine["delta"] is None:
        return f"On {corpus}, {name} and top-k were not both measured at {budget} tokens."
    gap = mine["delta"]
    found = "as many" if abs(gap) <= TIE else ("more" if gap > 0 else "fewer")
    than = "as" if found == "as many" else "than"
    text = (
        f"On {corpus} at {budget} tokens, {name} finds {found} {things} {than} top-k "
        f"({mine['y']:.3f} vs {top['y']:.3f})"
        + (
            "; this report has no repeated-text numbers"
            if mine["x"] is None or top["x"] is None
            else " " + _repeated(mine["x"], top["x"])
        )
    )
    fewer = [
        (b, p, points[(BASELINE_BUDGET, b)])
        for (s, b), p in sorted(points.items(), key=lambda kv: kv[0][1])
        if s == main
        and b != budget
        and p["delta"] is not None
        and p["delta"] < -TIE
        and (BASELINE_BUDGET, b) in points
    ]
    if fewer:
        listed = _and([f"{b} tokens ({p['y']:.3f} vs {t['y']:.3f})" for b, p, t in fewer])
        text += f"; it finds fewer {things} than top-k at {listed}"
    losers = []
    for s in challengers:
        delta = points.get((s, budget), {}).get("delta")
        if s != main and delta is not None and delta < -TIE:
            losers.append((role(document, s, short=True), delta))
    if losers:
        listed = _and([f"{n} ({100 * d:+.1f} pt)" for n, d in losers])
        verb = "finds" if len(losers) == 1 else "find"
        text += f"; at {budget} tokens {listed} {verb} fewer {things} than top-k"
    else:
        text += f"; no other compared strategy finds fewer {things} than top-k at {budget} tokens"
    return text + "."


def _and(parts: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
