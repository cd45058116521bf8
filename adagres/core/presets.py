"""Named presets: a strategy and a settings value that go together.

``"paper"`` is the AdaGReS paper's method as SPEC.md fixes it (adaptive λ from Eq. 7 as
printed, policy ``skip``); it is what :func:`adagres.select` does by default.
``"recommended"`` is the configuration the project's evaluation recommends (see the
Evidence section of the README and ``reports/latest``): redundancy measured on what two
chunks share beyond their relevance to the query (:func:`adagres.core.variants.orthogonal`),
λ from Eq. 7 in the form Eqs. 5–6 give (``derived``), and policy ``fill``, so the budget is
spent like top-k's while repeats are pushed out; its near-duplicate guard
(:data:`RECOMMENDED_GUARD`) never selects two near-duplicates together, and overlap-aware
packing (:mod:`adagres.core.packing`) stitches picks that overlap in their source and
charges only the tokens each adds. ``"paper"`` has neither.

>>> PRESETS["recommended"].strategy, PRESETS["recommended"].settings.policy
('orthogonal', 'fill')
>>> preset("best")
Traceback (most recent call last):
...
adagres.errors.InputError: preset: expected one of 'paper', 'recommended', got 'best'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from .baselines import run
from .result import Selection
from .settings import Settings

__all__ = ["PRESETS", "RECOMMENDED_GUARD", "Preset", "preset", "run_preset"]

#: The near-duplicate guard of ``recommended`` (:mod:`adagres.core.guard`): never two chunks
#: at cosine ≥ 0.9 (the metrics' near-duplicate line), nor two that share ≥ 80 % of the
#: smaller one's word 8-grams.
RECOMMENDED_GUARD = (0.9, 0.8)


@dataclass(frozen=True)
class Preset:
    """A strategy name of :func:`adagres.baselines.run` and the settings it runs with."""

    name: str
    strategy: str
    settings: Settings
    description: str
    #: What the evaluation found it misses of the targets it was chosen by ("": none).
    caveat: str = ""


PRESETS: dict[str, Preset] = {
    "paper": Preset(
        "paper",
        "adagres",
        Settings(),
        "the AdaGReS paper: adaptive λ (Eq. 7 as printed), stop when no gain is positive",
    ),
    "recommended": Preset(
        "recommended",
        "orthogonal",
        Settings(policy="fill", formula="derived", duplicate_guard=RECOMMENDED_GUARD, packing=True),
        "redundancy beyond shared relevance to the query, derived λ, fill the budget, "
        "never two near-duplicates, overlapping chunks paid for once",
        "On the held-out evaluation (make eval): no near-duplicate pair and 0.1–0.4 % "
        "repeated text where top-k repeats 6–21 %, and more answers than top-k at 600–1,200 "
        "tokens on FanOutQA and on windows overlapping by half; but fewer at 300 tokens "
        "(−2.4 and −8.4 points) and 2–11 points less gold on the drug reviews: 9 of its 64 "
        "target checks fail. Top-k with the same guard and packing missed fewer (strategy "
        "topk_budget, packing on): see the Evidence section of the README.",
    ),
}


def preset(name: str) -> Preset:
    """The preset called ``name`` (an :class:`InputError` names the known ones)."""
    if not isinstance(name, str) or name not in PRESETS:
        known = ", ".join(map(repr, PRESETS))
        raise InputError(f"preset: expected one of {known}, got {name!r:.60}")
    return PRESETS[name]


def run_preset(
    name: str,
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    texts: Sequence[str] | None = None,
    trace: bool = True,
    **overrides: Any,
) -> Selection:
    """Select with the preset ``name``; keyword ``overrides`` change fields of its settings.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[0.94, 0.34], [0.91, 0.42], [0.87, -0.5]])
    >>> run_preset("recommended", q, C, [50, 50, 50], 100).strategy
    'orthogonal'
    """
    chosen = preset(name)
    settings = Settings.of(chosen.settings, **overrides)
    return run(chosen.strategy, query_embedding, chunk_embeddings, token_counts, budget,
               settings=settings, texts=texts, trace=trace)  # fmt: skip
