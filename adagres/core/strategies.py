"""Every strategy by name: the one registry the library, the CLI, the evaluation, the presets
and the app read.

A :class:`Strategy` carries what callers need to know of a strategy without testing its
name. Adding a strategy is adding an entry here (or calling :func:`register` from an
optional package: :mod:`adagres.optimum` registers ``exact``).

>>> STRATEGIES["orthogonal"].score
'α·relevance − λ·Σ cos beyond the query to the picks'
>>> [name for name, s in STRATEGIES.items() if s.family == "baseline"][:2]
['topk_same_k', 'topk_budget']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..errors import InputError
from . import classic, validate, variants
from .guard import NEAR_DUPLICATE_GUARD
from .prepared import PreparedPool
from .result import Selection
from .selection import select_prepared
from .settings import RunInputs, Settings

__all__ = [
    "ADAGRES",
    "ORTHOGONAL",
    "STRATEGIES",
    "SWEPT",
    "TOPK_BUDGET",
    "TOPK_SAME_K",
    "RunInputs",
    "Strategy",
    "StrategyFn",
    "register",
    "strategy",
]


StrategyFn = Callable[[PreparedPool, int, Settings, bool, RunInputs], Selection]


@dataclass(frozen=True)
class Strategy:
    """One strategy: ``fn(pool, budget, settings, trace, options)`` returns its Selection.

    ``score`` states in one line what the rule maximises at each step (the record's
    ``step.score``, its two terms named by ``Selection.scoring``). ``family`` groups the
    strategies: ``"adagres"``, ``"baseline"``, ``"variant"`` or ``"optimum"``. ``label``
    and ``short`` say what it is in words (prose, select boxes); ``in_sweeps`` puts it in
    the sweeps' default comparison. ``options`` is the frozen dataclass of its own options
    (None: it has none); ``reference`` names the strategy whose run with the same settings
    gives its size (a caller holding that run passes it as the option ``reference``);
    ``working`` is what the app says while it runs; ``proves_optimum``: its F is the proven
    optimum (the evaluation compares the paper's bound with it); ``tuned``: the settings it
    is meant for, which the evaluation measures it with (None: the defaults);
    ``needs_texts``: it cannot run without the chunk texts (it counts characters).
    """

    name: str
    family: str
    description: str
    score: str
    fn: StrategyFn
    label: str
    short: str = ""
    in_sweeps: bool = False
    options: type | None = None
    reference: str | None = None
    working: str = "Selecting…"
    proves_optimum: bool = False
    tuned: Settings | None = None
    needs_texts: bool = False

    @property
    def weighs_lam(self) -> bool:
        """Whether λ weighs a term of its score (``score`` has "λ·"): under a strategy that
        does not (top-k, MMR's own λ_mmr, coverage), λ changes no pick, only the F reported.

        >>> STRATEGIES["adagres"].weighs_lam, STRATEGIES["topk_budget"].weighs_lam
        (True, False)
        """
        return "λ·" in self.score

    @property
    def lam_changes_picks(self) -> bool:
        """Whether λ can change its picks: it weighs the score, or the strategy takes as
        many chunks as a strategy that does (``reference``)."""
        return self.weighs_lam or self.reference is not None

    @property
    def long_label(self) -> str:
        """The name and what it is, for prose: "mmr (maximal marginal relevance)"."""
        return f"{self.name} ({self.label})"

    @property
    def short_label(self) -> str:
        """The name and a word or two, for a select box: "mmr (marginal relevance)"."""
        return f"{self.name} ({self.short})" if self.short else self.name

    @property
    def option_names(self) -> tuple[str, ...]:
        """The names of its own options, in order (empty: it takes none)."""
        if self.options is None:
            return ()
        return tuple(f.name for f in dataclasses.fields(self.options))

    def options_of(self, given: Mapping[str, object]) -> object:
        """Its options value from ``given`` (name: value; an option left out is its
        default). An option it does not take is an :class:`InputError` naming the ones it
        does.

        >>> STRATEGIES["topk_same_k"].options_of({"k": 3}).k
        3
        >>> STRATEGIES["mmr"].options_of({"k": 3})
        Traceback (most recent call last):
        adagres.errors.InputError: strategy 'mmr': takes no option 'k' (it takes none)
        """
        names = self.option_names
        unknown = [name for name in given if name not in names]
        if unknown:
            takes = ", ".join(map(repr, names)) if names else "none"
            raise InputError(
                f"strategy {self.name!r}: takes no option {unknown[0]!r} (it takes {takes})"
            )
        return None if self.options is None else self.options(**given)

    def run(
        self,
        pool: PreparedPool,
        budget: int,
        settings: Settings,
        *,
        trace: bool = True,
        texts: Sequence[str] | None = None,
        options: object = None,
    ) -> Selection:
        """Run on a prepared pool (inputs trusted); ``options`` is an instance of
        :attr:`options` (None: its defaults)."""
        if options is None and self.options is not None:
            options = self.options()
        return self.fn(pool, budget, settings, trace, RunInputs(texts=texts, options=options))


def adagres(
    pool: PreparedPool, budget: int, settings: Settings, trace: bool, inputs: RunInputs
) -> Selection:
    """The paper's method with the settings' policy (:func:`adagres.select`)."""
    return select_prepared(pool, budget, settings, trace=trace, texts=inputs.texts)


ENTRIES = {
    entry.name: entry
    for entry in (
        Strategy(
            name="adagres",
            family="adagres",
            fn=adagres,
            description="AdaGReS, the paper's method",
            score="α·relevance − λ·Σ cos to the picks (per token with policy ratio)",
            label="AdaGReS",
            short="AdaGReS",
            in_sweeps=True,
        ),
        Strategy(
            name="topk_same_k",
            family="baseline",
            fn=classic.topk_same_k,
            description="relevance order, k = the AdaGReS selection's size",
            score="relevance",
            label="top-k, AdaGReS's k",
            short="AdaGReS's k",
            in_sweeps=True,
            options=classic.SameK,
            reference="adagres",
        ),
        Strategy(
            name="topk_budget",
            family="baseline",
            fn=classic.topk_budget,
            description="relevance order, skipping chunks that do not fit, until nothing fits",
            score="relevance",
            label="top-k until the budget",
            short="fill budget",
            in_sweeps=True,
        ),
        Strategy(
            name="mmr",
            family="baseline",
            fn=classic.mmr,
            description="maximal marginal relevance, until nothing fits",
            score="λ_mmr·relevance − (1 − λ_mmr)·largest cos to a pick",
            label="maximal marginal relevance",
            short="marginal relevance",
            in_sweeps=True,
        ),
        Strategy(
            name="reference_code",
            family="baseline",
            fn=classic.reference_code,
            description="the authors' released code: k = ⌊T / mean characters⌋ picks",
            score="α·relevance − β·Σ cos to the picks (their β, k picks)",
            label="the authors' code",
            short="authors'",
            options=classic.ReferenceCodeOptions,
            needs_texts=True,
        ),
        Strategy(
            name="orthogonal",
            family="variant",
            fn=variants.orthogonal,
            description="redundancy beyond shared relevance to the query",
            score="α·relevance − λ·Σ cos beyond the query to the picks",
            label="redundancy beyond shared relevance",
            short="beyond query",
            # it fills the budget with the derived λ, with the guard and packing it had as the
            # recommended preset (before the preset search chose top-k with them)
            tuned=Settings(
                policy="fill", formula="derived", duplicate_guard=NEAR_DUPLICATE_GUARD, packing=True
            ),
        ),
        Strategy(
            name="near_duplicates",
            family="variant",
            fn=variants.near_duplicates,
            description="only near-copies penalised, steeply; fills the budget",
            score="α·relevance − 5·Σ (cos − 0.85)⁺ to the picks",
            label="only near-copies penalised",
        ),
        Strategy(
            name="coverage",
            family="variant",
            fn=variants.coverage,
            description="budgeted facility location: relevance plus coverage",
            score="relevance + coverage it adds "
            "(its coverage alone − what the picks cover already)",
            label="budgeted facility location",
            short="facility loc.",
        ),
    )
}
#: Every strategy by name, in the order they were registered, as the CLI, the app and the
#: evaluation offer them (read-only: :func:`register` adds one).
STRATEGIES: Mapping[str, Strategy] = MappingProxyType(ENTRIES)

#: The paper's method: the strategy every other is compared with, and the one whose run
#: gives ``topk_same_k`` its size.
ADAGRES = STRATEGIES["adagres"]
#: The two baselines every strategy is compared with: top-k until the budget, and top-k with
#: AdaGReS's k.
TOPK_BUDGET = STRATEGIES["topk_budget"]
TOPK_SAME_K = STRATEGIES["topk_same_k"]
#: The variant the evaluation also measures with the near-duplicate guard.
ORTHOGONAL = STRATEGIES["orthogonal"]
#: The two redundancy-aware baselines the evaluation's figures always show: MMR and
#: top-k that drops near-duplicates.
MMR = STRATEGIES["mmr"]
NEAR_DUPLICATES = STRATEGIES["near_duplicates"]

#: The strategies a sweep compares by default (cheap, and needing no texts).
SWEPT: tuple[str, ...] = tuple(name for name, s in STRATEGIES.items() if s.in_sweeps)


def register(entry: Strategy, *, before: str | None = None) -> None:
    """Add ``entry`` (an optional package's strategy), at the end or just ``before`` the
    strategy of that name (the order the CLI, the app and the colours follow); a name taken
    already is refused."""
    if entry.name in ENTRIES:
        raise InputError(f"strategy {entry.name!r} is registered already")
    items = list(ENTRIES.items())
    at = list(ENTRIES).index(before) if before in ENTRIES else len(items)
    items.insert(at, (entry.name, entry))
    ENTRIES.clear()
    ENTRIES.update(items)


def strategy(name: str) -> Strategy:
    """The strategy ``name`` (an :class:`InputError` names the known ones)."""
    return STRATEGIES[validate.choice(name, "strategy", STRATEGIES)]
