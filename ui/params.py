"""The app's settings and their query-string form: the keys of :data:`PARAMS`, and
``preset`` (read once). What the query string does not name comes from its ``preset``,
else :data:`DEFAULT_PRESET`.
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
    "DEFAULT_PRESET",
    "PARAMS",
    "AppSettings",
    "Selector",
    "lam",
    "lam_text",
    "one_of",
    "real",
    "text",
    "url_number",
    "whole",
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

    ``pool`` is a pool key (``ui.pools``); ``budget`` in tokens of the pool's tokenizer;
    ``selector`` says how to select, the same for every strategy (so their F compare);
    ``step`` is the replay's 1-based step (None: the last); ``chunk`` the chunk id inspected
    on "Why dropped" (None: none chosen). Strategy and selector default to
    :data:`DEFAULT_PRESET`.
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
        values = {p.key: self.get(p.field) for p in PARAMS}
        return {p.key: p.text(values[p.key]) for p in PARAMS if values[p.key] not in p.implied}

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> tuple[AppSettings, list[str]]:
        """AppSettings from a query string, and one message per value that was ignored.

        Fields the query string does not name come from its ``preset`` (absent, or not a
        preset's name: :data:`DEFAULT_PRESET`)."""
        problems: list[str] = []
        read: dict[str, Any] = {}
        preset = Param("preset", "preset", lambda s: one_of(s, tuple(PRESETS)))
        for param in (preset, *PARAMS):
            raw = params.get(param.key)
            if raw is None:
                continue
            try:
                read[param.field] = param.parse(raw)
                if param.field in SELECTOR_FIELDS:
                    Selector(**{param.field: read[param.field]})  # the core's check of it alone
            except (ValueError, InputError) as error:
                read.pop(param.field, None)
                problems.append(f"ignored {param.key}={raw!r} in the URL: {error}")
        base = PRESETS[read.pop("preset")] if "preset" in read else DEFAULT_PRESET
        return cls(strategy=base.strategy, selector=base.settings).replace(**read), problems


def url_number(value: float) -> str:
    """A number as the URL writes it (6 significant digits; tiny values exactly)."""
    return f"{value:g}" if abs(value) >= 1e-4 or value == 0 else repr(value)


def text(raw: str) -> str:
    """A URL value that must not be empty (ValueError)."""
    if not raw:
        raise ValueError("empty")
    return raw


#: The largest whole number a link may carry (``topn``, ``budget``, ``step``): what a
#: browser's number box holds exactly (2**53 − 1); the core's own limits are lower.
URL_INTEGER_MAX = 2**53 - 1


def whole(raw: str, *, minimum: int, maximum: int = URL_INTEGER_MAX) -> int:
    """A URL value that must be a whole number from ``minimum`` to ``maximum`` (ValueError)."""
    if len(raw) > 20:  # int() of a long string costs quadratic time; no real value is this long
        raise ValueError(f"not a whole number from {minimum} to {maximum:,}")
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("not a whole number") from None
    if not minimum <= value <= maximum:
        raise ValueError(f"must be from {minimum} to {maximum:,}")
    return value


def real(raw: str) -> float:
    """A URL value that must be a finite number (ValueError)."""
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def one_of(raw: str, options: Collection[str]) -> str:
    """A URL value that must be one of ``options`` (ValueError)."""
    if raw not in options:
        raise ValueError(f"expected one of {', '.join(options)}")
    return raw


def lam(raw: str) -> float | Literal["adaptive"]:
    """The URL's λ: ``adaptive`` or a finite number (the core checks its range)."""
    return "adaptive" if raw == "adaptive" else real(raw)


def lam_text(value: float | str) -> str:
    """λ as the URL writes it: ``adaptive`` or the number."""
    return "adaptive" if value == "adaptive" else url_number(float(value))


def _off_or_real(raw: str) -> float | None:
    return None if raw == "off" else real(raw)


def _off_or_number(value: float | None) -> str:
    return "off" if value is None else url_number(value)


def _guard(raw: str) -> tuple[float | None, float | None] | None:
    """The URL's ``guard``: "off", or "cosine,shared_text" with either part "off"."""
    if raw == "off":
        return None
    parts = raw.split(",")
    if len(parts) != 2:
        raise ValueError('expected "off" or "cosine,shared_text"')
    return (_off_or_real(parts[0]), _off_or_real(parts[1]))


@dataclass(frozen=True)
class Param:
    """A query-string key of the settings: the field it names (of :class:`AppSettings` or
    of its ``selector``), how its text is read and written, and the values it leaves out
    of the address (``implied`` by a URL without it)."""

    key: str
    field: str
    parse: Callable[[str], Any]
    text: Callable[[Any], str] = str
    implied: tuple[Any, ...] = ()


#: Every key :meth:`AppSettings.to_params` writes, in the address's order; ``floor`` is
#: ``off``, ``pool`` or a cosine, ``guard`` "off" or "cosine,shared_text" (either part "off").
PARAMS = (
    Param("pool", "pool", text),
    Param("budget", "budget", lambda s: whole(s, minimum=1)),
    Param("strategy", "strategy", lambda s: one_of(s, STRATEGIES)),
    Param("policy", "policy", text),
    Param("lam", "lam", lam, lam_text),
    Param("formula", "formula", text),
    Param("scale", "scale", real, url_number),
    Param("offset", "offset", real, url_number),
    Param(
        "floor",
        "redundancy_floor",
        lambda s: s if s == "pool" else _off_or_real(s),
        lambda f: f if f == "pool" else _off_or_number(f),
    ),
    Param(
        "guard",
        "duplicate_guard",
        _guard,
        lambda g: "off" if g is None else ",".join(_off_or_number(part) for part in g),
        (DEFAULT_PRESET.settings.duplicate_guard,),
    ),
    Param(
        "pack",
        "packing",
        lambda s: one_of(s, ("on", "off")) == "on",
        lambda on: "on" if on else "off",
        (DEFAULT_PRESET.settings.packing,),
    ),
    Param("topn", "calibration_top_n", lambda s: whole(s, minimum=2), str, (None,)),
    Param("step", "step", lambda s: whole(s, minimum=1), str, (None,)),
    Param("chunk", "chunk", text, str, (None,)),
)
