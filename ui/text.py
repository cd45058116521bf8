"""Words for the pages: Markdown escaping, counted nouns, percentages, readable names.

Kept apart from ``ui.render`` so that ``ui.progress`` can use it without an import cycle.
The readable names of stop reasons and verdicts come from ``adagres.figures.layout``, so a
figure and the page around it say the same thing.
"""

from __future__ import annotations

import re
from typing import cast

from adagres.core.result import Selection
from adagres.core.strategies import STRATEGIES
from adagres.figures.layout import plain_name

__all__ = [
    "STRATEGY_HELP",
    "both_in_selection",
    "count",
    "escape_md",
    "lam_note",
    "percent",
    "plain_name",
    "reference_code_note",
    "strategy_label",
    "strategy_short",
]

# "&" too: Markdown decodes entities ("&lt;" would show as "<").
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&])")

#: The sidebar select box's help: every strategy by its long label.
STRATEGY_HELP = "\n".join(f"- {s.long_label}" for s in STRATEGIES.values())


def escape_md(text: str) -> str:
    """``text`` with every Markdown/HTML special character backslash-escaped, entities too.

    >>> escape_md("**a** &lt;")
    '\\\\*\\\\*a\\\\*\\\\* \\\\&lt;'
    """
    return _MARKDOWN_SPECIALS.sub(r"\\\1", str(text))


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and the noun, singular for exactly one:
    ``count(1, "chunk") == "1 chunk"``.

    >>> count(1, "chunk"), count(0, "chunk"), count(2, "query", "queries")
    ('1 chunk', '0 chunks', '2 queries')
    >>> count(2000, "chunk")
    '2,000 chunks'
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def both_in_selection(both: int, listed: int) -> str:
    """How many of the ``listed`` near-duplicate pairs have both chunks selected, in words
    that agree in number.

    >>> both_in_selection(1, 5)
    '1 of the listed pairs has both chunks in the selection.'
    >>> both_in_selection(3, 5)
    '3 of the listed pairs have both chunks in the selection.'
    >>> both_in_selection(0, 5)
    'No listed pair has both chunks in the selection.'
    >>> both_in_selection(1, 1)
    'The listed pair has both chunks in the selection.'
    """
    if both == 0:
        return "No listed pair has both chunks in the selection."
    if listed == 1:
        return "The listed pair has both chunks in the selection."
    verb = "has" if both == 1 else "have"
    return f"{both:,} of the listed pairs {verb} both chunks in the selection."


def percent(fraction: float) -> str:
    """A fraction as the app writes percentages everywhere: one decimal.

    >>> percent(0.974), percent(1.0)
    ('97.4%', '100.0%')
    """
    return f"{100.0 * float(fraction):.1f}%"


def strategy_label(strategy: str) -> str:
    """What a strategy id is, for prose (the id itself if unknown)."""
    return STRATEGIES[strategy].long_label if strategy in STRATEGIES else strategy


def lam_note(strategy: str, *, short: bool = False) -> str | None:
    """Why λ changes no pick under ``strategy`` (None where it can); ``short``: the first
    clause alone, for one line on a page.

    >>> lam_note("adagres") is None, lam_note("topk_same_k") is None
    (True, True)
    >>> lam_note("topk_budget", short=True)
    'topk_budget: score = relevance, with no λ; moving λ changes no pick.'
    """
    chosen = STRATEGIES.get(strategy)
    if chosen is None or chosen.lam_changes_picks:
        return None
    if short:
        return f"{chosen.name}: score = {chosen.score}, with no λ; moving λ changes no pick."
    return (
        f"{chosen.long_label} scores by {chosen.score}, with no λ: moving λ changes none of "
        "its picks, only the paper's F(S) reported for them. The paper's method weighs "
        "redundancy by λ."
    )


def strategy_short(strategy: str) -> str:
    """The select box label of a strategy id (the id itself if unknown)."""
    return STRATEGIES[strategy].short_label if strategy in STRATEGIES else strategy


def reference_code_note(selection: Selection) -> str | None:
    """For a ``reference_code`` selection: how many chunks it takes and why (its k comes
    from characters, not tokens, and is 1 whenever the budget is below the mean chunk
    length in characters); None for every other strategy."""
    if "mean_chars" not in selection.params:  # the authors' code's own numbers
        return None
    params = cast("dict[str, float]", selection.params)  # the numbers reference_code records
    k, mean_chars = int(params["k"]), float(params["mean_chars"])
    rule = (
        f"k = max(1, ⌊T / mean characters⌋) = max(1, ⌊{selection.budget} / {mean_chars:.1f}⌋) = {k}"
    )
    why = (
        ": the budget in tokens is smaller than the mean chunk length in characters, so it "
        "takes a single chunk"
        if k == 1
        else ""
    )
    short = (
        f" Here it took {count(selection.size, 'chunk')}: the next one did not fit the budget."
        if selection.size < k
        else ""
    )
    return (
        f"reference_code does what the authors' released code does: it takes "
        f"{count(k, 'chunk')} by gain, {rule}, dividing the token budget by the mean chunk "
        f"length in characters (not tokens){why}.{short}"
    )
