"""Shared app state: one frozen :class:`Settings`, kept in session state and in the URL.

The contract, for every page:

- ``ui.sidebar.sidebar()`` returns the current :class:`Settings` (pool, budget, λ, policy,
  strategy, ...) after rendering the shared sidebar controls. Call it first on every page.
- The source of truth is ``st.session_state["settings"]`` (a :class:`Settings`). Widgets are
  bound to it with :func:`bind`: before a widget is drawn its session-state value is set from
  the settings, and its ``on_change`` callback writes the new value back. So state survives
  page switches (Streamlit drops the state of widgets a page does not draw) and code can
  change a setting with :func:`update` (then ``st.rerun()`` if the page was already drawn).
- The URL mirrors the settings: :func:`sync_url` writes :meth:`Settings.to_params` into
  ``st.query_params`` (the sidebar calls it on every run). On the first run of a session the
  settings are read from the URL (:meth:`Settings.from_params`); values that do not parse are
  ignored with a warning. Query-string keys: ``pool``, ``budget``, ``strategy``, ``policy``,
  ``lam`` (``adaptive`` or a number ≥ 0), ``formula``, ``scale``, ``offset``, ``floor``
  (``off``, ``pool`` or a number), ``step`` (1-based; absent = the last step) and ``chunk``
  (a chunk id, for "Why dropped").
- Page-local widgets that are not part of the URL use plain explicit keys, prefixed by
  the page (``pool_``, ``sel_``, ``why_``, ``sim_``, ``lam_``, ``cmp_``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import streamlit as st

from adagres.core.baselines import STRATEGIES
from adagres.core.settings import FORMULAS, POLICIES

__all__ = [
    "DEFAULT_BUDGET",
    "Settings",
    "bind",
    "current",
    "sync_url",
    "update",
    "url_warnings",
]

DEFAULT_BUDGET = 1000
_STATE_KEY = "settings"
_WARNINGS_KEY = "settings_url_warnings"

LamMode = Literal["adaptive", "manual"]
Floor = float | Literal["pool"] | None


@dataclass(frozen=True)
class Settings:
    """Everything that decides what the app shows; small values only (hashable, cacheable).

    ``pool`` is a pool key (see ``ui.data``); ``budget`` is in tokens of the pool's
    tokenizer. ``lam_mode="adaptive"`` derives λ from the pool (``formula``, ``scale``,
    ``offset`` shape it); ``"manual"`` uses ``lam``. ``redundancy_floor`` is τ: None (off),
    ``"pool"`` (ρ̄) or a cosine. ``step`` is the 1-based step shown by the replay, None for the
    last one; ``chunk`` is the chunk id inspected on "Why dropped" (None: none chosen).
    """

    pool: str = ""
    budget: int = DEFAULT_BUDGET
    strategy: str = "adagres"
    policy: str = "skip"
    lam_mode: LamMode = "adaptive"
    lam: float = 0.05
    formula: str = "paper"
    scale: float = 1.0
    offset: float = 0.0
    redundancy_floor: Floor = None
    step: int | None = None
    chunk: str | None = None

    @property
    def lam_arg(self) -> float | Literal["adaptive"]:
        """The ``lam`` argument of :func:`adagres.select`: ``"adaptive"`` or the manual λ."""
        return "adaptive" if self.lam_mode == "adaptive" else self.lam

    def to_params(self) -> dict[str, str]:
        """The query-string form of these settings (every field, ``step``/``chunk`` if set)."""
        floor = self.redundancy_floor
        params = {
            "pool": self.pool,
            "budget": str(self.budget),
            "strategy": self.strategy,
            "policy": self.policy,
            "lam": "adaptive" if self.lam_mode == "adaptive" else _num(self.lam),
            "formula": self.formula,
            "scale": _num(self.scale),
            "offset": _num(self.offset),
            "floor": "off" if floor is None else floor if floor == "pool" else _num(floor),
        }
        if self.step is not None:
            params["step"] = str(self.step)
        if self.chunk is not None:
            params["chunk"] = self.chunk
        return params

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> tuple[Settings, list[str]]:
        """Settings from a query string, and one message per value that was ignored."""
        values: dict[str, Any] = {}
        problems: list[str] = []

        def take(key: str, parse: Callable[[str], Any], field: str | None = None) -> None:
            if key not in params:
                return
            raw = params[key]
            try:
                values[field or key] = parse(raw)
            except ValueError as error:
                problems.append(f"ignored {key}={raw!r} in the URL: {error}")

        take("pool", _text)
        take("budget", lambda s: _integer(s, minimum=1))
        take("strategy", lambda s: _option(s, STRATEGIES))
        take("policy", lambda s: _option(s, POLICIES))
        take("formula", lambda s: _option(s, FORMULAS))
        take("scale", _real)
        take("offset", _real)
        if params.get("lam") == "adaptive":
            values["lam_mode"] = "adaptive"
        else:
            take("lam", lambda s: _real(s, minimum=0.0))
            if "lam" in values:
                values["lam_mode"] = "manual"
        take("floor", _floor, "redundancy_floor")
        take("step", lambda s: _integer(s, minimum=1))
        take("chunk", _text)
        return cls(**values), problems


def _num(value: float) -> str:
    return f"{value:g}" if abs(value) >= 1e-4 or value == 0 else repr(value)


def _text(raw: str) -> str:
    if not raw:
        raise ValueError("empty")
    return raw


def _integer(raw: str, *, minimum: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("not a whole number") from None
    if value < minimum:
        raise ValueError(f"must be ≥ {minimum}")
    return value


def _real(raw: str, *, minimum: float | None = None) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    if minimum is not None and value < minimum:
        raise ValueError(f"must be ≥ {minimum:g}")
    return value


def _option(raw: str, options: tuple[str, ...]) -> str:
    if raw not in options:
        raise ValueError(f"expected one of {', '.join(options)}")
    return raw


def _floor(raw: str) -> Floor:
    if raw == "off":
        return None
    if raw == "pool":
        return "pool"
    return _real(raw)


# --------------------------------------------------------------------------- session


def current() -> Settings:
    """The session's settings; on the first run of a session, read from the URL."""
    settings = st.session_state.get(_STATE_KEY)
    if settings is None:
        settings, problems = Settings.from_params(st.query_params.to_dict())
        st.session_state[_STATE_KEY] = settings
        st.session_state[_WARNINGS_KEY] = problems
    return settings


def url_warnings() -> list[str]:
    """Messages about URL values ignored when this session started."""
    return list(st.session_state.get(_WARNINGS_KEY, []))


def update(**changes: Any) -> Settings:
    """Replace some fields of the session's settings; return the new settings."""
    settings = dataclasses.replace(current(), **changes)
    st.session_state[_STATE_KEY] = settings
    return settings


def sync_url() -> None:
    """Write the current settings into the URL's query string (only when it changed)."""
    params = current().to_params()
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def bind(
    widget: Callable[..., Any],
    field: str,
    key: str,
    *args: Any,
    to_widget: Callable[[Any], Any] = lambda value: value,
    from_widget: Callable[[Any], Any] = lambda value: value,
    reset: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Draw ``widget`` (e.g. ``st.slider``) bound to ``Settings.<field>``; return its value.

    ``to_widget``/``from_widget`` convert between the setting and the widget value (for a
    setting with a sentinel such as ``step=None`` meaning "last"). ``reset`` gives other
    fields to set when the user changes this one (e.g. a new pool resets ``chunk``).
    """
    st.session_state[key] = to_widget(getattr(current(), field))

    def copy_back() -> None:
        update(**{field: from_widget(st.session_state[key])}, **dict(reset or {}))

    widget(*args, key=key, on_change=copy_back, **kwargs)
    return getattr(current(), field)
