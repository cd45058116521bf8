"""Shared app state: one frozen :class:`AppSettings`, kept in session state and in the URL.

The contract, for every page:

- ``ui.sidebar.sidebar()`` returns the current :class:`AppSettings` after rendering the shared
  sidebar controls. Call it first on every page.
- :class:`AppSettings` holds what only the app has (the pool key, the budget, the strategy, the
  replay step, the inspected chunk) and ``selector``, the core's :class:`adagres.Settings`
  (λ, policy, formula, scale, offset, τ, calibration top-N), which travels unchanged to every
  computation and is the cache key of all of them (``ui.compute.selection_key``).
- The source of truth is ``st.session_state["settings"]``. Widgets are bound to it with
  :func:`bind`: before a widget is drawn its session-state value is set from the settings,
  and its ``on_change`` callback writes the new value back. So state survives page switches
  (Streamlit drops the state of widgets a page does not draw) and code can change a setting
  with :func:`update` (then ``st.rerun()`` if the page was already drawn). Both take the
  fields of either part by name (``update(budget=600, policy="fill")``).
- The default is the ``"recommended"`` preset (:data:`DEFAULT_PRESET`, from
  :data:`adagres.PRESETS`): strategy ``orthogonal`` with policy ``fill`` and the derived
  formula. The paper's method (``"paper"``: ``adagres``, the core's default
  :class:`adagres.Settings`) is one click away in the sidebar.
- The URL mirrors the settings: :func:`sync_url` writes :meth:`AppSettings.to_params` into
  ``st.query_params`` (the sidebar calls it on every run). On the first run of a session the
  settings are read from the URL (:meth:`AppSettings.from_params`); values that do not parse or
  that :class:`adagres.Settings` refuses are ignored with a warning. What the URL does not
  name comes from a preset: ``preset=paper`` or ``preset=recommended`` if the URL has it,
  else the recommended preset, and every key the URL names replaces that field of it.
  Decision on old URLs: every URL the app has written names ``strategy``, ``policy``,
  ``lam``, ``formula``, ``scale``, ``offset`` and ``floor`` (all that tells the presets
  apart), so a saved link opens exactly what it opened when the paper's method was the
  default. A link without them (written by hand, e.g. ``?pool=…&budget=600``) now opens the
  recommended preset; ``&preset=paper`` opens the paper's method. ``preset`` is read once:
  the URL written back names the fields instead. Query-string keys: ``preset``,
  ``pool``, ``budget``, ``strategy``, ``policy``, ``lam`` (``adaptive`` or a number ≥ 0),
  ``formula``, ``scale``, ``offset``, ``floor`` (``off``, ``pool`` or a cosine), ``topn``
  (calibration over the N most relevant chunks; absent = the whole pool), ``step`` (1-based;
  absent = the last step) and ``chunk`` (a chunk id, for "Why dropped"). ``budget`` is the
  user's value even when it exceeds the pool's tokens; ``ui.compute.selection_key`` uses
  ``min(budget, pool tokens)`` and the sidebar says so.
- Page options that belong in the URL too (Compare's A and B, Similarity's order, size and
  threshold) are :class:`Option` s, bound with :func:`bind_option`: their values live in
  session state (so they survive page switches), start from the URL the session opened
  with, and :func:`sync_url` writes the ones the page drew in this run next to the settings.
- Messages about URL values that were ignored are shown once (:func:`url_warnings` hands
  them out a single time).
- Page-local widgets that are not part of the URL use plain explicit keys, prefixed by
  the page (``pool_``, ``sel_``, ``why_``, ``sim_``, ``lam_``, ``cmp_``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import streamlit as st

from adagres import InputError
from adagres import Settings as Selector
from adagres.core.presets import PRESETS, Preset
from adagres.core.strategies import STRATEGIES

from .text import escape_md

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_PRESET",
    "SELECTOR_FIELDS",
    "AppSettings",
    "Option",
    "Selector",
    "begin_run",
    "bind",
    "bind_option",
    "current",
    "option",
    "set_option",
    "sync_url",
    "update",
    "url_number",
    "url_warnings",
]

DEFAULT_BUDGET = 1000
#: The preset a session starts with when its URL names no settings.
DEFAULT_PRESET: Preset = PRESETS["recommended"]
_STATE_KEY = "settings"
_WARNINGS_KEY = "settings_url_warnings"
_START_KEY = "settings_url_at_start"  # the query string the session opened with
_OPTIONS_KEY = "page_options"  # Option name -> value, for the whole session
_DRAWN_KEY = "page_options_drawn"  # Option name -> URL text, of the options drawn this run

LamMode = Literal["adaptive", "manual"]

#: Fields of :class:`adagres.Settings`, which :meth:`AppSettings.replace` takes by name.
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

    @classmethod
    def param_names(cls) -> frozenset[str]:
        """Every query-string key of the settings: those :meth:`to_params` may write, and
        ``preset``, which :meth:`from_params` reads."""
        return frozenset({"preset", "pool", "budget", "strategy", "policy", "lam", "formula",
                          "scale", "offset", "floor", "guard", "topn", "step",
                          "chunk"})  # fmt: skip

    def to_params(self) -> dict[str, str]:
        """The query-string form of these settings (``topn``, ``step``, ``chunk`` if set;
        ``guard`` when it is not the default preset's, which a URL without it gets)."""
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


# --------------------------------------------------------------------------- session


def current() -> AppSettings:
    """The session's settings; on the first run of a session, read from the URL."""
    settings = st.session_state.get(_STATE_KEY)
    if settings is None:
        start = st.query_params.to_dict()
        settings, problems = AppSettings.from_params(start)
        st.session_state[_STATE_KEY] = settings
        st.session_state[_WARNINGS_KEY] = problems
        st.session_state[_START_KEY] = start
    return settings


def url_warnings() -> list[str]:
    """Messages about URL values ignored when this session started, handed out once (the
    sidebar shows them on the first page drawn, not on every page after it)."""
    return list(st.session_state.pop(_WARNINGS_KEY, None) or [])


def update(**changes: Any) -> AppSettings:
    """Replace some fields of the session's settings (either part, by name); return them."""
    settings = current().replace(**changes)
    st.session_state[_STATE_KEY] = settings
    return settings


def begin_run() -> None:
    """Start a page run: no page option is drawn yet (the sidebar calls it first)."""
    current()
    st.session_state[_DRAWN_KEY] = {}


def sync_url(*, keep_page_options: bool = False) -> None:
    """Write the current settings, and the page options drawn in this run, into the URL's
    query string (only when it changed). The sidebar calls it with ``keep_page_options``
    before the page has drawn its options: the page's own keys already in the URL stay."""
    params = current().to_params()
    drawn: dict[str, str] = st.session_state.get(_DRAWN_KEY, {})
    now = st.query_params.to_dict()
    if keep_page_options:
        params.update({k: v for k, v in now.items() if k not in AppSettings.param_names()})
    params.update(drawn)
    if now != params:
        st.query_params.from_dict(params)


@dataclass(frozen=True)
class Option:
    """A page option carried in the URL as ``name=<text>``.

    ``parse`` turns the URL text into a value (ValueError when it cannot); ``text`` turns a
    value into URL text.
    """

    name: str
    parse: Callable[[str], Any]
    text: Callable[[Any], str] = str


def option(spec: Option, default: Any) -> Any:
    """The option's value in this session: set before, else from the URL the session
    opened with (a value that does not parse is ignored with a warning), else ``default``."""
    values: dict[str, Any] = st.session_state.setdefault(_OPTIONS_KEY, {})
    if spec.name not in values:
        values[spec.name] = default
        raw = st.session_state.get(_START_KEY, {}).get(spec.name)
        if raw is not None:
            try:
                values[spec.name] = spec.parse(raw)
            except (ValueError, InputError) as error:
                st.warning(escape_md(f"ignored {spec.name}={raw!r} in the URL: {error}"))
    return values[spec.name]


def set_option(spec: Option, value: Any) -> None:
    """Change the option's value (e.g. when the sidebar's settings reset a page)."""
    st.session_state.setdefault(_OPTIONS_KEY, {})[spec.name] = value


def bind_option(
    widget: Callable[..., Any],
    spec: Option,
    key: str,
    *args: Any,
    default: Any,
    to_widget: Callable[[Any], Any] = lambda value: value,
    from_widget: Callable[[Any], Any] = lambda value: value,
    **kwargs: Any,
) -> Any:
    """Draw ``widget`` bound to the page option ``spec`` (like :func:`bind` for settings);
    mark it drawn, so that :func:`sync_url` writes it; return its value."""
    st.session_state[key] = to_widget(option(spec, default))

    def copy_back() -> None:
        set_option(spec, from_widget(st.session_state[key]))

    widget(*args, key=key, on_change=copy_back, **kwargs)
    value = option(spec, default)
    st.session_state.setdefault(_DRAWN_KEY, {})[spec.name] = spec.text(value)
    return value


def bind(
    widget: Callable[..., Any],
    name: str,
    key: str,
    *args: Any,
    to_widget: Callable[[Any], Any] = lambda value: value,
    from_widget: Callable[[Any], Any] = lambda value: value,
    reset: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Draw ``widget`` (e.g. ``st.slider``) bound to the setting ``name``; return its value.

    ``name`` is a field of :class:`AppSettings` or of its ``selector``. ``to_widget`` /
    ``from_widget`` convert between the setting and the widget value (for a setting with a
    sentinel such as ``step=None`` meaning "last"). ``reset`` gives other fields to set when
    the user changes this one (e.g. a new pool resets ``chunk``).
    """
    st.session_state[key] = to_widget(current().get(name))

    def copy_back() -> None:
        update(**{name: from_widget(st.session_state[key])}, **dict(reset or {}))

    widget(*args, key=key, on_change=copy_back, **kwargs)
    return current().get(name)
