"""Shared app state: one frozen :class:`AppSettings` per session, and the address it is in.

- Every page calls ``ui.sidebar.sidebar()`` first (it calls :func:`begin_run` and returns
  the settings) and :func:`sync_url` last.
- When the address changes from outside (a session's first run, Back, Forward, an edited
  address), :func:`begin_run` reads the settings and page options from it (a bare address:
  the ``recommended`` preset) and writes nothing.
- A user's change (a widget drawn with :func:`bind` / :func:`bind_option`, or
  :func:`update` / :func:`set_option`) is written once, by the :func:`sync_url` ending that
  run: one action, one history entry. The app's own changes pass ``record=False``.
- Page options (:class:`Option`: Compare's A and B, the Live pool's query…) live in the
  session and, where not at their default, in the address of every page, so a link
  restores every page's view. :func:`switch_page` keeps the address (``st.switch_page``
  alone clears it).
- Plain page widgets are bound by Streamlit (``bind="query-params"``, the key is the
  parameter: ``order``, ``top``, ``pairs``, ``find``, ``color``); this module leaves them be.

Why the rest is not bound by Streamlit: a bound widget's change replaces the history entry
(Back and Forward would skip settings); a page switch drops the parameters bound on the
page left (pool keys must stay on every page); some values are not one widget's (``lam``:
a radio and a slider; a preset fills the fields a link leaves out); a bound widget with a
``format_func`` writes the label; the map's lasso and the replay's step are no widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import streamlit as st

from adagres import InputError

from .params import AppSettings
from .text import escape_md

__all__ = [
    "AppSettings",
    "Option",
    "adopted",
    "begin_run",
    "bind",
    "bind_option",
    "current",
    "on_view_written",
    "option",
    "set_option",
    "stop",
    "switch_page",
    "sync_url",
    "update",
    "url_warnings",
]

_STATE_KEY = "settings"
_WARNINGS_KEY = "settings_url_warnings"
_START_KEY = "settings_url_at_start"  # the address the view was last read from
_KNOWN_KEY = "settings_url_known"  # the address the view matches (read or written last)
_DIRTY_KEY = "settings_url_dirty"  # a user's change not yet in the address
_ADOPTED_KEY = "settings_url_adopted"  # this run read the view from the address
_OPTIONS_KEY = "page_options"  # Option name -> value, for the whole session
_DEFAULTS_KEY = "page_option_defaults"  # Option name -> its default where last drawn
_LINKS_KEY = "settings_url_links"  # (draw, address drawn) of the page list, this run
_SPECS: dict[str, Option] = {}  # every Option made, by name (to write their URL text)


# --------------------------------------------------------------------------- session


def _adopt(params: dict[str, str]) -> AppSettings:
    """Take the view from the address ``params`` (settings now, options when next asked)."""
    settings, problems = AppSettings.from_params(params)
    st.session_state[_STATE_KEY] = settings
    st.session_state[_WARNINGS_KEY] = problems
    st.session_state[_START_KEY] = params
    st.session_state[_KNOWN_KEY] = params
    st.session_state[_OPTIONS_KEY] = {}
    st.session_state[_DIRTY_KEY] = False
    return settings


def _address() -> dict[str, str]:
    """The address's parameters this module reads and writes: all but those of widgets
    bound with ``bind="query-params"`` (their key, a session key, is the parameter's name),
    which Streamlit itself keeps in the address."""
    return {k: v for k, v in st.query_params.to_dict().items() if k not in st.session_state}


def _write(params: dict[str, str]) -> None:
    """Make the address's own parameters ``params``, leaving the bound widgets' alone: one
    message (one history entry), unless a parameter goes while a bound one is there."""
    bound = set(st.query_params.to_dict()) - set(_address())
    if not bound:
        st.query_params.from_dict(params)
        return
    for name in set(_address()) - set(params):  # Streamlit refuses to clear a bound one
        del st.query_params[name]
    st.query_params.update(params)


def current() -> AppSettings:
    """The session's settings; on the first run of a session, read from the URL."""
    settings = st.session_state.get(_STATE_KEY)
    if settings is None:
        settings = _adopt(_address())
    return settings


def begin_run() -> None:
    """Start a page run: read the view from the address when the address changed from
    outside (first run, Back, Forward, an edited address); the sidebar calls it first."""
    st.session_state.pop(_LINKS_KEY, None)
    now = _address()
    first = st.session_state.get(_STATE_KEY) is None
    moved = not st.session_state.get(_DIRTY_KEY) and st.session_state.get(_KNOWN_KEY) != now
    st.session_state[_ADOPTED_KEY] = first or moved
    if first or moved:
        _adopt(now)


def adopted() -> bool:
    """Whether this run read the view from the address (the user did not change it here)."""
    return bool(st.session_state.get(_ADOPTED_KEY))


def url_warnings() -> list[str]:
    """Messages about URL values ignored when the view was read, handed out once (the
    sidebar shows them on the first page drawn, not on every page after it)."""
    return list(st.session_state.pop(_WARNINGS_KEY, None) or [])


def update(*, record: bool = True, **changes: Any) -> AppSettings:
    """Replace some fields of the session's settings (either part, by name); return them.
    ``record``: the user made this change, so it goes into the address (a history entry)."""
    settings = current().replace(**changes)
    st.session_state[_STATE_KEY] = settings
    if record:
        st.session_state[_DIRTY_KEY] = True
    return settings


def view_params() -> dict[str, str]:
    """The address of the current view: the settings and every page option that differs
    from its default."""
    params = current().to_params()
    values: dict[str, Any] = st.session_state.get(_OPTIONS_KEY, {})
    defaults: dict[str, Any] = st.session_state.get(_DEFAULTS_KEY, {})
    for name, value in values.items():
        spec = _SPECS.get(name)
        if spec and spec.shareable(value) and (name not in defaults or value != defaults[name]):
            params[name] = spec.text(value)
    return params


def sync_url(*, links: bool = True) -> None:
    """Write the view into the address if the user changed it since it was last read or
    written (once per action; nothing otherwise), and give the page list (``ui.sidebar``) the
    final address. Pages call it last (a fragment passes ``links=False``)."""
    if st.session_state.get(_DIRTY_KEY):
        params = view_params()
        st.session_state[_DIRTY_KEY] = False
        st.session_state[_KNOWN_KEY] = params
        if _address() != params:
            _write(params)
    drawn = st.session_state.get(_LINKS_KEY)
    if links and drawn is not None and drawn[1] != view_params():
        on_view_written(drawn[0])


def on_view_written(draw: Callable[[dict[str, str]], None]) -> None:
    """Call ``draw`` with the view's address now, and again from :func:`sync_url` if the
    run changes it (the sidebar's page list, whose links carry the address)."""
    params = view_params()
    draw(params)
    st.session_state[_LINKS_KEY] = (draw, params)


def stop() -> NoReturn:
    """``st.stop`` after writing the user's change to the address (:func:`sync_url`)."""
    sync_url()
    st.stop()
    raise AssertionError("st.stop returned")  # pragma: no cover


def switch_page(page: Any) -> None:
    """``st.switch_page`` to ``page`` with the current view in the address."""
    params = view_params()
    st.session_state[_DIRTY_KEY] = False
    st.session_state[_KNOWN_KEY] = params
    st.switch_page(page, query_params=params)


# --------------------------------------------------------------------------- page options


@dataclass(frozen=True)
class Option:
    """A page option carried in the URL as ``name=<text>``.

    ``parse`` turns the URL text into a value (ValueError when it cannot); ``text`` turns a
    value into URL text; ``shareable`` says whether a value may go into the address at all
    (a store address with credentials may not).
    """

    name: str
    parse: Callable[[str], Any]
    text: Callable[[Any], str] = str
    shareable: Callable[[Any], bool] = lambda value: True

    def __post_init__(self) -> None:
        _SPECS[self.name] = self


def option(spec: Option, default: Any) -> Any:
    """The option's value in this session: set before, else from the address the view was
    read from (a value that does not parse is ignored with a warning), else ``default``."""
    values: dict[str, Any] = st.session_state.setdefault(_OPTIONS_KEY, {})
    st.session_state.setdefault(_DEFAULTS_KEY, {})[spec.name] = default
    if spec.name not in values:
        values[spec.name] = default
        raw = st.session_state.get(_START_KEY, {}).get(spec.name)
        if raw is not None:
            try:
                values[spec.name] = spec.parse(raw)
            except (ValueError, InputError) as error:
                st.warning(escape_md(f"ignored {spec.name}={raw!r} in the URL: {error}"))
    return values[spec.name]


def set_option(spec: Option, value: Any, *, record: bool = True) -> None:
    """Change the option's value (``record``: the user's change, written to the address)."""
    st.session_state.setdefault(_OPTIONS_KEY, {})[spec.name] = value
    if record:
        st.session_state[_DIRTY_KEY] = True


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
    return its value."""
    st.session_state[key] = to_widget(option(spec, default))

    def copy_back() -> None:
        set_option(spec, from_widget(st.session_state[key]))

    widget(*args, key=key, on_change=copy_back, **kwargs)
    return option(spec, default)


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
