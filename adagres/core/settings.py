"""One frozen value for everything that decides how a pool is selected.

:class:`Settings` travels unchanged from the app's sidebar, the command line or a pipeline
to :func:`adagres.select`, every baseline, both sweeps and the metrics. It is validated once,
when it is made; inside the core its fields are trusted. It is hashable, so the app keys its
caches on it, and :meth:`Settings.replace` gives a changed copy.

>>> s = Settings(policy="fill", scale=0.5)
>>> s.replace(lam=0.3).lam, s.lam
(0.3, 'adaptive')
>>> Settings(lam=-1)
Traceback (most recent call last):
...
adagres.errors.InputError: lam: expected 'adaptive' or a number >= 0, got -1
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal, cast

from ..errors import InputError

__all__ = ["FORMULAS", "MAX_WEIGHT", "POLICIES", "Formula", "Policy", "RunInputs", "Settings"]

Policy = Literal["skip", "stop", "ratio", "fill"]
POLICIES: tuple[Policy, ...] = ("skip", "stop", "ratio", "fill")
Formula = Literal["paper", "derived"]
FORMULAS: tuple[Formula, ...] = ("paper", "derived")
Floor = float | Literal["pool"] | None

#: Largest |λ|, α, scale, offset accepted. Weights beyond it overflow float32 gains (about
#: 3.4e38) long before they mean anything: a λ of 1e12 already makes every pair dominate.
MAX_WEIGHT = 1e12


def _number(
    value: object, name: str, *, minimum: float | None = None, maximum: float = MAX_WEIGHT
) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{name}: expected a finite number, got {value!r:.60}")
    try:
        number = float(value)
    except (OverflowError, ValueError):  # an int or a Fraction too large for a float
        raise InputError(
            f"{name}: must be at most {maximum:g} in size, got {value!r:.30}"
        ) from None
    if not math.isfinite(number):
        raise InputError(f"{name}: expected a finite number, got {value!r:.60}")
    if minimum is not None and number < minimum:
        raise InputError(f"{name}: must be >= {minimum:g}, got {value!r:.60}")
    if abs(number) > maximum:
        raise InputError(f"{name}: must be at most {maximum:g} in size, got {value!r:.30}")
    return number


def _guard(value: object) -> tuple[float | None, float | None] | None:
    """``duplicate_guard`` as a (cosine, shared_text) tuple, or None (lists are accepted: JSON)."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, tuple | list) or len(value) != 2:
        raise InputError(
            f"duplicate_guard: expected (cosine, shared_text) or None, got {value!r:.60}"
        )
    cosine, shared = value
    if cosine is not None:
        cosine = _number(cosine, "duplicate_guard cosine", minimum=-1.0, maximum=1.0)
    if shared is not None:
        shared = _number(shared, "duplicate_guard shared_text", minimum=0.0, maximum=1.0)
        if shared <= 0:
            raise InputError(f"duplicate_guard shared_text: must be in (0, 1], got {value[1]!r}")
    return None if cosine is None and shared is None else (cosine, shared)


@dataclass(frozen=True)
class Settings:
    """How to select: λ and its derivation, α, the budget policy, the redundancy floor.

    - ``lam``: ``"adaptive"`` (Eq. 7 of the paper, from the pool) or a fixed number >= 0.
    - ``alpha``: relevance weight α >= 0.
    - ``policy``: ``"skip"``, ``"stop"``, ``"ratio"`` or ``"fill"`` (SPEC.md, "Greedy
      selection under the budget").
    - ``formula``: ``"paper"`` ((k̄ − 1)/2, as printed) or ``"derived"`` (k̄ − 1).
    - ``scale``, ``offset``, ``lam_max``: λ = min(λ_max, max(0, scale·λ* + offset)).
    - ``redundancy_floor``: τ, counting only similarity above it (a cosine, ``"pool"`` for
      ρ̄, or None for off).
    - ``calibration_top_n``: take L̄, r̄, ρ̄ over the N most relevant chunks (None: all).
    - ``lambda_mmr``: the relevance weight of the MMR baseline, in [0, 1].
    - ``duplicate_guard``: ``(cosine, shared_text)``, the near-duplicate guard of every
      strategy (:mod:`adagres.core.guard`): a chunk with cosine ≥ ``cosine`` to a pick, or
      sharing ≥ ``shared_text`` of its word 8-grams with it, is never selected with it.
      Either part None turns that part off; None (the default) turns the guard off.
    - ``packing``: overlap-aware packing (:mod:`adagres.core.packing`): picks that overlap
      in their source are stitched into one passage and the budget pays only for the
      tokens each adds. It needs a pool that places its chunks (``PreparedPool.spans``);
      without overlapping chunks it changes nothing. Off by default.
    """

    lam: float | Literal["adaptive"] = "adaptive"
    alpha: float = 1.0
    policy: Policy = "skip"
    formula: Formula = "paper"
    scale: float = 1.0
    offset: float = 0.0
    lam_max: float | None = None
    redundancy_floor: Floor = None
    calibration_top_n: int | None = None
    lambda_mmr: float = 0.5
    duplicate_guard: tuple[float | None, float | None] | None = None
    packing: bool = False

    def __post_init__(self) -> None:
        def put(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        lam = self.lam
        if not (isinstance(lam, str) and lam == "adaptive"):  # an array never compares
            if isinstance(lam, str | bool) or not isinstance(lam, Real) or not lam >= 0:
                raise InputError(f"lam: expected 'adaptive' or a number >= 0, got {lam!r:.60}")
            put("lam", _number(lam, "lam", minimum=0.0))
        put("alpha", _number(self.alpha, "alpha", minimum=0.0))
        for name, options in (("policy", POLICIES), ("formula", FORMULAS)):
            if not isinstance(getattr(self, name), str) or getattr(self, name) not in options:
                raise InputError(
                    f"{name}: expected one of {', '.join(map(repr, options))}, "
                    f"got {getattr(self, name)!r}"
                )
        put("scale", _number(self.scale, "scale"))
        put("offset", _number(self.offset, "offset"))
        if self.lam_max is not None:
            put("lam_max", _number(self.lam_max, "lam_max", minimum=0.0))
        floor = self.redundancy_floor
        if floor is not None and not (isinstance(floor, str) and floor == "pool"):
            if isinstance(floor, str):
                raise InputError(
                    f"redundancy_floor: expected a cosine, 'pool' or None, got {floor!r}"
                )
            put("redundancy_floor", _number(floor, "redundancy_floor", minimum=-1.0, maximum=1.0))
        top_n = self.calibration_top_n
        if top_n is not None:
            if isinstance(top_n, bool) or not isinstance(top_n, Integral) or top_n < 2:
                raise InputError(
                    f"calibration_top_n: expected a whole number >= 2 (or None), got {top_n!r}"
                )
            put("calibration_top_n", int(top_n))
        lambda_mmr = _number(self.lambda_mmr, "lambda_mmr", minimum=0.0)
        if lambda_mmr > 1:
            raise InputError(f"lambda_mmr: must be in [0, 1], got {self.lambda_mmr!r}")
        put("lambda_mmr", lambda_mmr)
        put("duplicate_guard", _guard(self.duplicate_guard))
        if not isinstance(self.packing, bool):
            raise InputError(f"packing: expected True or False, got {self.packing!r:.60}")

    @property
    def adaptive(self) -> bool:
        """Whether λ is derived from the pool."""
        return self.lam == "adaptive"

    def replace(self, **changes: object) -> Settings:
        """A copy with some fields changed (validated like a new value)."""
        return dataclasses.replace(self, **_unchecked(changes))

    def as_dict(self) -> dict[str, object]:
        """The fields as plain values (JSON-ready: the guard as a list, as JSON reads it)."""
        out = dataclasses.asdict(self)
        if self.duplicate_guard is not None:
            out["duplicate_guard"] = list(self.duplicate_guard)
        return out

    @classmethod
    def of(cls, settings: Settings | None = None, **overrides: object) -> Settings:
        """``settings`` (default: the defaults) with keyword ``overrides`` applied.

        This is how the public functions turn their keyword arguments into the one value;
        an unknown keyword raises :class:`InputError` that names it.
        """
        unknown = sorted(set(overrides) - _FIELDS)
        if unknown:
            raise InputError(f"settings: unknown setting {unknown[0]!r}")
        if settings is None:
            return cls(**_unchecked(overrides))
        if not isinstance(settings, Settings):
            raise InputError(f"settings: expected adagres.Settings, got {type(settings).__name__}")
        return settings.replace(**overrides) if overrides else settings


_FIELDS = frozenset(f.name for f in dataclasses.fields(Settings))


def _unchecked(fields: dict[str, object]) -> dict[str, Any]:
    """Keyword fields as given: :meth:`Settings.__post_init__` checks their values, which
    their declared types cannot (a JSON list for the guard, a numpy float)."""
    return cast("dict[str, Any]", fields)


@dataclass(frozen=True)
class RunInputs:
    """What a run takes beyond the pool, the budget and the settings (trusted: checked by
    the public callers): the chunk ``texts`` (``reference_code`` counts characters, the
    guard compares text) and ``options``, the strategy's own options (an instance of its
    :attr:`Strategy.options`, None for a strategy that has none)."""

    texts: Sequence[str] | None = None
    options: object = None
