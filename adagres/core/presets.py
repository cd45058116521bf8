"""Named presets: a strategy and a settings value that go together.

``"paper"`` is the AdaGReS paper's method as SPEC.md fixes it (adaptive λ from Eq. 7 as
printed, policy ``skip``); it is what :func:`adagres.select` does by default.
``"recommended"`` is the configuration the project's evaluation recommends (see the
Evidence section of the README and ``reports/latest``): top-k by relevance until the budget
(``topk_budget``) with repeated text paid for once (:mod:`adagres.core.packing`: windows of
one source stitched, sentences the context already holds left out with a marker, a chunk
with nothing new dropped). It keeps every new fact: the near-duplicate guard, which drops
whole chunks, is a choice (:data:`NEAR_DUPLICATE_GUARD`), not part of it. ``"paper"`` has
neither.

>>> PRESETS["recommended"].strategy, PRESETS["recommended"].settings.policy
('topk_budget', 'skip')
>>> preset("best")
Traceback (most recent call last):
...
adagres.errors.InputError: preset: expected one of 'paper', 'recommended', got 'best'
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from numpy.typing import ArrayLike

from ..errors import InputError
from .baselines import run
from .guard import NEAR_DUPLICATE_GUARD
from .result import Selection
from .settings import Settings
from .strategies import ADAGRES, TOPK_BUDGET

__all__ = ["NEAR_DUPLICATE_GUARD", "PRESETS", "Preset", "preset", "run_preset"]


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
        ADAGRES.name,
        Settings(),
        "the AdaGReS paper: adaptive λ (Eq. 7 as printed), stop when no gain is positive",
    ),
    "recommended": Preset(
        "recommended",
        TOPK_BUDGET.name,
        Settings(packing=True),
        "top-k by relevance until the budget, repeated text paid for once (windows stitched, "
        "repeated sentences left out)",
        "On the held-out evaluation (make eval): 0.0–0.7 % repeated text where top-k repeats "
        "1.5–21 %, with more answers than top-k on FanOutQA and on windows overlapping by "
        "half at every budget (+1.2 to +4.8 points; no query answered by top-k is lost). On "
        "drug reviews it finds 0.6 point less gold than top-k at 600 tokens (one query: the "
        "tokens stitching saved let a more relevant chunk in, crowding out a small gold one) "
        "and loses one query at 900 while winning three; 1 of its 26 target checks fails. It "
        "pays once for overlapping windows; leaving out repeated sentences and the optional "
        "near-duplicate guard changed no answer on these corpora, which have no near-copies "
        "that differ in one sentence.",
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
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    token_counts: ArrayLike,
    budget: int,
    *,
    texts: Sequence[str] | None = None,
    sources: Sequence[Hashable | None] | None = None,
    offsets: Sequence[int | None] | None = None,
    trace: bool = True,
    **overrides: object,
) -> Selection:
    """Select with the preset ``name``; keyword ``overrides`` change fields of its settings.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[0.94, 0.34], [0.91, 0.42], [0.87, -0.5]])
    >>> texts = ["Take it with food.", "Take it with food, twice a day.", "Store it cold."]
    >>> run_preset("recommended", q, C, [50, 50, 50], 100, texts=texts).strategy
    'topk_budget'
    >>> run_preset("recommended", q, C, [50, 50, 50], 100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adagres.errors.InputError: packing: needs the chunk texts to pay once for repeated text; ...
    """
    chosen = preset(name)
    settings = Settings.of(chosen.settings, **overrides)
    return run(
        chosen.strategy,
        query_embedding,
        chunk_embeddings,
        token_counts,
        budget,
        settings=settings,
        texts=texts,
        sources=sources,
        offsets=offsets,
        trace=trace,
    )
