"""How the app keeps what it computed: one :class:`Slot` per small key, in ``st.cache_resource``.

Each kind of result has a two-line slot function in ``ui.compute`` or ``ui.charts``::

    @st.cache_resource(max_entries=64, show_spinner=False)
    def _selections(key: SelectionKey) -> Slot[Selection]:
        return Slot()

Streamlit's cache keys the slot on the small value (never on arrays) and bounds how many
are kept; the slot holds the result, filled by the first caller. Filling happens outside
Streamlit's cache function, which is what makes three things possible that a plain
``@st.cache_resource`` on the computation does not allow: a progress bar drawn while it
runs (a cache would replay the drawn bar on every hit), asking whether a result is ready
without computing it (the exact optimum on the λ page), and keeping a refusal (an
:class:`~adagres.AdagresError`, such as the exact solver's) like a result, so it is not
computed again on every rerun. Results are shared by every session: they are frozen values
(selections, sweeps, tuples) or figures that nobody mutates after building.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from adagres.errors import AdagresError

__all__ = ["Slot"]

T = TypeVar("T")


class Slot(Generic[T]):
    """One cached result (or the AdagresError computing it raised), computed at most once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._filled = False
        self._value: T | None = None
        self._error: AdagresError | None = None

    @property
    def filled(self) -> bool:
        """Whether the result (or its error) is there."""
        return self._filled

    def fill(self, compute: Callable[[], T]) -> T:
        """The result, computing it with ``compute()`` if this is the first call.

        An AdagresError raised by ``compute`` is kept and raised again (a shallow copy: the
        same type, message and attributes, such as a stopped search's ``result``, so the
        kept one does not grow a traceback per rerun).
        Concurrent callers wait for the first one.
        """
        if not self._filled:
            with self._lock:
                if not self._filled:
                    try:
                        self._value = compute()
                    except AdagresError as error:
                        self._error = error
                    self._filled = True
        if self._error is not None:
            raise copy.copy(self._error)
        return self._value  # type: ignore[return-value]
