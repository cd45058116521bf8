"""What the harness measures: configurations of the strategies of the one registry.

The strategies themselves are those of :data:`adagres.core.strategies.STRATEGIES`, with their
capabilities (their options, whether their F is the proven optimum, the settings they are
meant for). An entry here is a :class:`Configuration`: a name, a strategy of that registry
with the :class:`adagres.Settings` and options it runs with (so the app can open the same
selection), and the picklable function ``fn(pool, budget, texts) -> Selection`` that runs
it. A function of one's own (no strategy of the registry) can be measured too. Built in:

- ``adagres_<formula>_<policy>``: AdaGReS with adaptive λ, both formula variants × every
  policy (``skip``, ``stop``, ``ratio``, ``fill``);
- ``adagres_lam_0.55`` / ``0.65`` / ``0.7``: fixed λ, the paper's ablation values (policy
  ``skip``);
- ``fill_derived_pool_floor``: AdaGReS, derived λ, τ = ρ̄, policy ``fill``;
- every other strategy of the registry under its own name, with the settings it is meant
  for (``Strategy.tuned``, else the defaults): ``topk_same_k`` (k from
  ``adagres_paper_skip``), ``topk_budget``, ``mmr`` (λ_mmr 0.5), ``reference_code``,
  ``exact`` (the solver's node limit :data:`EXACT_MAX_NODES`; a
  :class:`~adagres.SolverError` is recorded as "not solved" by the runner) and the variants;
- every preset of :data:`adagres.core.presets.PRESETS` (``preset_<name>``) that is not one
  of the entries above under another name.

Another engineer's strategy plugs in with :func:`register`. Runs in worker processes
receive the function itself, so it must pickle: a module-level function or a
:func:`functools.partial` of one (a lambda does not; use ``--workers 1`` for those).

>>> "topk_budget" in registered() and get("adagres_paper_fill").settings.policy
'fill'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.baselines import run_prepared
from ..core.prepared import PreparedPool
from ..core.presets import PRESETS
from ..core.result import Selection
from ..core.settings import FORMULAS, POLICIES, Settings
from ..core.strategies import ADAGRES, ORTHOGONAL, STRATEGIES, TOPK_BUDGET, TOPK_SAME_K
from ..errors import InputError

__all__ = [
    "BASELINE_BUDGET",
    "BASELINE_SAME_K",
    "EXACT_MAX_NODES",
    "FIXED_LAMS",
    "Configuration",
    "StrategyFn",
    "get",
    "optimum_names",
    "register",
    "registered",
    "resolve",
    "run_core",
    "unregister",
]

StrategyFn = Callable[[PreparedPool, int, Sequence[str]], Selection]

#: The paper's ablation values of a fixed λ.
FIXED_LAMS = (0.55, 0.65, 0.7)
#: Nodes the exact solver bounds per pool and budget in the harness: a work limit, so a
#: rerun proves (or stops at) the same sets whatever the machine's speed. A time limit
#: made the solved count differ between two runs of the same command (263 and 261 of 300).
#: At the harness's pool size (top 60 chunks) the unproven runs take a few seconds each here.
EXACT_MAX_NODES = 5000
#: The two baselines every strategy is compared with, query by query.
BASELINE_BUDGET = TOPK_BUDGET.name
BASELINE_SAME_K = TOPK_SAME_K.name


@dataclass(frozen=True)
class Configuration:
    """One named configuration the harness measures.

    ``fn(pool, budget, texts)`` returns a :class:`~adagres.Selection` within ``budget``
    tokens. ``core`` (a strategy of :data:`~adagres.core.strategies.STRATEGIES`) and
    ``settings`` say how ``adagres.core.baselines.run_prepared`` reproduces it (None for a
    function of one's own); ``family`` groups the configurations in tables and figures;
    ``proves_optimum``: its F is the proven optimum (its strategy's capability).
    """

    name: str
    fn: StrategyFn
    settings: Settings | None = None
    core: str | None = None
    family: str = "custom"
    description: str = ""
    proves_optimum: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready description (the function itself is left out)."""
        return {
            "family": self.family,
            "description": self.description,
            "core": self.core,
            "settings": None if self.settings is None else self.settings.as_dict(),
        }


def run_core(
    core: str,
    settings: Settings,
    pool: PreparedPool,
    budget: int,
    texts: Sequence[str],
    **options: Any,
) -> Selection:
    """``run_prepared(core, ...)`` with the fast path (``trace=False``); picklable by name."""
    return run_prepared(core, pool, budget, settings, texts=texts, trace=False, **options)


_REGISTRY: dict[str, Configuration] = {}


def register(
    name: str,
    fn: StrategyFn,
    *,
    settings: Settings | None = None,
    core: str | None = None,
    family: str = "custom",
    description: str = "",
    replace: bool = False,
) -> Configuration:
    """Add ``fn(pool: PreparedPool, budget, texts) -> Selection`` under ``name``.

    ``replace=False`` refuses a name that is taken (InputError naming it).

    >>> from adagres.core.baselines import run_prepared
    >>> entry = register("mine", lambda pool, budget, texts: run_prepared(
    ...     "topk_budget", pool, budget, Settings()))
    >>> entry.family, "mine" in registered()
    ('custom', True)
    >>> unregister("mine")
    """
    if not isinstance(name, str) or not name or name != name.strip() or "," in name:
        raise InputError(f"strategy name: expected a non-empty name without commas, got {name!r}")
    if not callable(fn):
        raise InputError(f"strategy {name!r}: fn is a {type(fn).__name__}, not a function")
    if name in _REGISTRY and not replace:
        raise InputError(f"strategy {name!r} is registered already (pass replace=True)")
    proves = core is not None and core in STRATEGIES and STRATEGIES[core].proves_optimum
    entry = Configuration(
        name=name,
        fn=fn,
        settings=settings,
        core=core,
        family=family,
        description=description,
        proves_optimum=proves,
    )
    _REGISTRY[name] = entry
    return entry


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (InputError if it is not there)."""
    get(name)
    del _REGISTRY[name]


def get(name: str) -> Configuration:
    """The strategy ``name`` (InputError listing the known names if there is none)."""
    if name not in _REGISTRY:
        raise InputError(f"unknown strategy {name!r}; registered: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def registered() -> dict[str, Configuration]:
    """Every registered strategy by name, in registration order (a copy)."""
    return dict(_REGISTRY)


def optimum_names() -> frozenset[str]:
    """The configurations whose F is the proven optimum (the exact solver's, when its
    package is present): the rows the optimality table reads."""
    return frozenset(name for name, entry in _REGISTRY.items() if entry.proves_optimum)


def resolve(names: Sequence[str] | None = None) -> list[Configuration]:
    """The strategies ``names`` (None: all), always with both baselines, in registry order."""
    wanted = set(registered()) if names is None else {get(n).name for n in names}
    wanted |= {BASELINE_BUDGET, BASELINE_SAME_K}
    return [entry for name, entry in _REGISTRY.items() if name in wanted]


def _core_entry(
    name: str, core: str, settings: Settings, family: str, description: str, **options: Any
) -> None:
    fn = functools.partial(run_core, core, settings, **options)
    register(name, fn, settings=settings, core=core, family=family, description=description)


def _builtins() -> None:
    for formula in FORMULAS:
        for policy in POLICIES:
            settings = Settings(formula=formula, policy=policy)
            what = f"AdaGReS, adaptive λ ({formula} formula), policy {policy}"
            _core_entry(f"adagres_{formula}_{policy}", ADAGRES.name, settings, "adagres", what)
    for lam in FIXED_LAMS:
        what = f"AdaGReS, fixed λ = {lam:g} (the paper's ablation), policy skip"
        _core_entry(f"adagres_lam_{lam:g}", ADAGRES.name, Settings(lam=lam), "fixed λ", what)
    _core_entry(
        "fill_derived_pool_floor",
        ADAGRES.name,
        Settings(policy="fill", formula="derived", redundancy_floor="pool"),
        "variant",
        "AdaGReS, derived λ, τ = ρ̄ (only similarity above the pool's mean counts), fill",
    )
    for name, entry in STRATEGIES.items():
        if entry is ADAGRES:
            continue  # measured above, by formula, policy and λ
        # a work limit, so that a rerun proves (or stops at) the same sets on any machine
        limited = "max_nodes" in entry.option_names
        options: dict[str, Any] = {"max_nodes": EXACT_MAX_NODES} if limited else {}
        settings = entry.tuned or Settings()
        family = "baseline" if entry.proves_optimum else entry.family
        _core_entry(name, name, settings, family, entry.description, **options)


def _presets() -> None:
    known = {(e.core, e.settings) for e in _REGISTRY.values() if e.core is not None}
    for name, chosen in PRESETS.items():
        if (chosen.strategy, chosen.settings) not in known:
            what = f"preset {name!r}: {chosen.description}"
            _core_entry(f"preset_{name}", chosen.strategy, chosen.settings, "preset", what)


#: The near-duplicate guards the preset search tries (adagres.core.guard): (cosine, shared
#: text) pairs, from "near-copies only" to "any window that half-repeats a pick".
GUARDS = {"t80": (0.9, 0.8), "t50": (0.9, 0.5), "t25": (0.9, 0.25)}


def _guarded() -> None:
    """top-k and the orthogonal variant with each of :data:`GUARDS` (family ``guard``)."""
    for tag, guard in GUARDS.items():
        said = f"with the near-duplicate guard (cosine {guard[0]}, shared text {guard[1]})"
        settings = Settings(duplicate_guard=guard)
        _core_entry(f"guard_topk_{tag}", BASELINE_BUDGET, settings, "guard", f"topk_budget {said}")
        settings = Settings(policy="fill", formula="derived", duplicate_guard=guard)
        what = f"orthogonal (fill, derived) {said}"
        _core_entry(f"guard_orthogonal_{tag}", ORTHOGONAL.name, settings, "guard", what)


def _packed() -> None:
    """top-k with overlap-aware packing, alone and with the t80 guard (family ``packing``):
    the candidates that pay once for overlapping text without weighing redundancy."""
    for name, guard, words in (
        ("packed_topk", None, ""),
        ("packed_guard_topk_t80", GUARDS["t80"], " and the t80 guard"),
    ):
        settings = Settings(duplicate_guard=guard, packing=True)
        what = f"topk_budget with overlap-aware packing{words}"
        _core_entry(name, BASELINE_BUDGET, settings, "packing", what)


_builtins()
_guarded()
_packed()
_presets()
