"""The app's settings and their query-string form (``AppSettings.to_params`` / ``from_params``).

Query-string keys: ``preset`` (read once), ``pool``, ``budget``, ``strategy``, ``policy``,
``lam`` (``adaptive`` or a number ≥ 0), ``formula``, ``scale``, ``offset``, ``floor``
(``off``, ``pool`` or a cosine), ``topn`` (absent: the whole pool), ``step`` (1-based;
absent: the last step) and ``chunk`` (a chunk id, for "Why dropped"). What the query string
does not name comes from its ``preset``, else :data:`DEFAULT_PRESET`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from adagres import InputError
from adagres import Settings as Selector
from adagres.core.presets import PRESETS, Preset
from adagres.core.strategies import STRATEGIES

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_PRESET",
    "SELECTOR_FIELDS",
    "AppSettings",
    "Selector",
    "url_number",
]

DEFAULT_BUDGET = 1000
#: The preset a session starts with when its URL names no settings.
DEFAULT_PRESET: Preset = PRESETS["recommended"]

LamMode = Literal["adaptive", "manual"]

#: Fields of :class:`adagres.Settings`, which :meth:`Settings.replace` takes by name.
SELECTOR_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Selector))


@dataclass(frozen=True)
class AppSettings:
    """Everything that decides what the app shows; small values only (hashable, cacheable).

    ``pool`` is a pool key (see ``ui.pools``); ``budget`` is in tokens of the pool's
    tokenizer; ``strategy`` one of :data:`adagres.core.strategies.STRATEGIES`. ``selector`` says how
    to select (every strategy gets the same value, so their F compare). Strategy and
    selector default to :data:`DEFAULT_PRESET`. ``step`` is the
    1-based step shown by the replay, None for the last one; ``chunk`` is the chunk id
    inspected on "Why dropped" (None: none chosen).
    """

    pool: str = ""
    budget: int = DEFAULT_BUDGET
    strategy: str = DEFAULT_PRESET.strategy
    selector: Selector = field(default_factory=lambda: DEFAULT_PRESET.settings)
    step: int | None = None
    chunk: str | None = None

    @property
    def lam_mode(self) -> LamMode:
        """``"adaptive"`` (λ from the pool, Eq. 7) or ``"manual"`` (``selector.lam``)."""
        return "adaptive" if self.selector.adaptive else "manual"

    def get(self, name: str) -> Any:
        """The field ``name`` of the app settings or of ``selector``."""
        return getattr(self.selector if name in SELECTOR_FIELDS else self, name)

    def replace(self, **changes: Any) -> AppSettings:
        """A copy with fields of either part changed (``selector`` fields validated)."""
        core = {k: changes.pop(k) for k in list(changes) if k in SELECTOR_FIELDS}
        if core:
            changes["selector"] = changes.get("selector", self.selector).replace(**core)
        return dataclasses.replace(self, **changes)

    def to_params(self) -> dict[str, str]:
        """The query-string form of these settings (``topn``, ``step``, ``chunk`` if set;
        ``guard`` and ``pack`` when they are not the default preset's, which a URL without
        them gets)."""
        s = self.selector
        floor = s.redundancy_floor
        params = {
            "pool": self.pool,
            "budget": str(self.budget),
            "strategy": self.strategy,
            "policy": s.policy,
            "lam": "adaptive" if isinstance(s.lam, str) else url_number(s.lam),
            "formula": s.formula,
            "scale": url_number(s.scale),
            "offset": url_number(s.offset),
            "floor": "off" if floor is None else floor if floor == "pool" else url_number(floor),
        }
        if s.duplicate_guard != DEFAULT_PRESET.settings.duplicate_guard:  # else implied
            params["guard"] = _guard_text(s.duplicate_guard)
        if s.packing != DEFAULT_PRESET.settings.packing:
            params["pack"] = "on" if s.packing else "off"
        if s.calibration_top_n is not None:
            params["topn"] = str(s.calibration_top_n)
        if self.step is not None:
            params["step"] = str(self.step)
        if self.chunk is not None:
            params["chunk"] = self.chunk
        return params

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> tuple[AppSettings, list[str]]:
        """AppSettings from a query string, and one message per value that was ignored.

        Fields the query string does not name come from its ``preset`` (absent, or not a
        preset's name: :data:`DEFAULT_PRESET`)."""
        values: dict[str, Any] = {}
        core: dict[str, Any] = {}
        problems: list[str] = []

        def take(key: str, parse: Callable[[str], Any], name: str | None = None) -> None:
            if key not in params:
                return
            raw, name = params[key], name or key
            try:
                value = parse(raw)
                if name in SELECTOR_FIELDS:
                    Selector(**{name: value})  # the core's own check of this one field
            except (ValueError, InputError) as error:
                problems.append(f"ignored {key}={raw!r} in the URL: {error}")
                return
            (core if name in SELECTOR_FIELDS else values)[name] = value

        take("preset", lambda s: _option(s, tuple(PRESETS)))
        base = PRESETS[values.pop("preset")] if "preset" in values else DEFAULT_PRESET
        values["strategy"] = base.strategy
        take("pool", _text)
        take("budget", lambda s: _integer(s, minimum=1))
        take("strategy", lambda s: _option(s, STRATEGIES))
        take("policy", _text)
        take("formula", _text)
        take("scale", _real)
        take("offset", _real)
        take("lam", lambda s: "adaptive" if s == "adaptive" else _real(s))
        take("floor", _floor, "redundancy_floor")
        take("guard", _guard, "duplicate_guard")
        take("pack", lambda s: _option(s, ("on", "off")) == "on", "packing")
        take("topn", lambda s: _integer(s, minimum=2), "calibration_top_n")
        take("step", lambda s: _integer(s, minimum=1))
        take("chunk", _text)
        return cls(**values, selector=base.settings.replace(**core)), problems


def url_number(value: float) -> str:
    """A number as the URL writes it (6 significant digits; tiny values exactly)."""
    return f"{value:g}" if abs(value) >= 1e-4 or value == 0 else repr(value)


def _text(raw: str) -> str:
    if not raw:
        raise ValueError("empty")
    return raw


#: The largest whole number a link may carry (``topn``, ``budget``, ``step``): what a
#: browser's number box holds exactly (2**53 − 1); the core's own limits are lower.
URL_INTEGER_MAX = 2**53 - 1


def _integer(raw: str, *, minimum: int, maximum: int = URL_INTEGER_MAX) -> int:
    if len(raw) > 20:  # int() of a long string costs quadratic time; no real value is this long
        raise ValueError(f"not a whole number from {minimum} to {maximum:,}")
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("not a whole number") from None
    if not minimum <= value <= maximum:
        raise ValueError(f"must be from {minimum} to {maximum:,}")
    return value


def _real(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _option(raw: str, options: Collection[str]) -> str:
    if raw not in options:
        raise ValueError(f"expected one of {', '.join(options)}")
    return raw


def _floor(raw: str) -> float | str | None:
    if raw == "off":
        return None
    if raw == "pool":
        return "pool"
    return _real(raw)


def _guard_text(guard: tuple[float | None, float | None] | None) -> str:
    """The near-duplicate guard as the URL writes it: "off" or "cosine,shared" ("off" parts)."""
    if guard is None:
        return "off"
    return ",".join("off" if part is None else url_number(part) for part in guard)


def _guard(raw: str) -> tuple[float | None, float | None] | None:
    """The URL's ``guard``: "off", or "cosine,shared_text" with either part "off"."""
    if raw == "off":
        return None
    parts = raw.split(",")
    if len(parts) != 2:
        raise ValueError('expected "off" or "cosine,shared_text"')
    cosine, shared = (None if p == "off" else _real(p) for p in parts)
    return (cosine, shared)
