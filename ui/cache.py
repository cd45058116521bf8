"""How the app keeps what it computed: one :class:`Slot` per small key, in ``st.cache_resource``.

Each kind of result has a slot function (``@st.cache_resource def _selections(key) ->
Slot[Selection]: return Slot()``): Streamlit keys it on the small value (never on arrays)
and bounds how many are kept; the first caller fills it, outside Streamlit's cache
function. That allows what a plain ``@st.cache_resource`` on the computation does not: a
progress bar while it runs (a cache replays drawn elements on every hit), asking whether a
result is ready (the exact optimum on the λ page), and keeping a refusal (an
:class:`~adagres.AdagresError`) like a result. Results are shared by every session: frozen
values or figures nobody mutates.
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
        kept one does not grow a traceback per rerun). Concurrent callers wait for the first.
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
