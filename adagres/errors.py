"""The project's error types, and :func:`one_line` for the messages they carry.

Every error a user can cause (a bad argument, a bad file, a pool too large to solve) is an
:class:`AdagresError`, so a caller (the CLI, the app) can catch one type and show its
message, which names the field, the chunk and the numbers involved.

Messages are one line. A message quotes what the user gave (an id, a value, a third-party
library's error text), which may hold newlines, terminal escapes or lone surrogates; build
such parts with :func:`one_line`. :class:`AdagresError` applies it to its message as well,
as a safety net, so ``str(error)`` is always one printable, UTF-8-encodable line.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["AdagresError", "InputError", "PoolError", "SolverError", "one_line"]

# Escapes Python's repr uses for the common control characters.
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Categories escaped: control (Cc), format (Cf: the bidirectional controls U+202A-U+202E,
# U+2066-U+2069, U+200E/F and U+061C, zero-width characters, the BOM), line and paragraph
# separators (Zl, Zp), surrogates (Cs). A bidirectional control in a file name or an id
# would otherwise reorder the rest of the message on the user's terminal.
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if unicodedata.category(char) not in _ESCAPED:
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def one_line(text: object, *, max_chars: int | None = None) -> str:
    """Return ``str(text)`` as one printable line: control and format characters (the
    bidirectional controls such as U+202E among them), line separators and lone surrogates
    become Python-style escapes (``\\n``, ``\\x1b``, ``\\u202e``, ``\\u2028``, ``\\ud800``).

    Everything else is kept as is (backslashes too), so the result is readable and applying
    ``one_line`` again changes nothing. ``max_chars`` cuts a longer result to that many
    characters, ending in ``…``.

    >>> print(one_line("line 1\\nline 2\\tend\\x1b[31m"))
    line 1\\nline 2\\tend\\x1b[31m
    >>> one_line("id-\\ud800") == "id-\\\\ud800"
    True
    >>> print(one_line("report\\u202etxt.exe"))
    report\\u202etxt.exe
    >>> one_line("a" * 10, max_chars=5)
    'aaaa…'
    """
    value = str(text)
    # isprintable() is False for every character _escape changes: the common case is fast.
    out = value if value.isprintable() else "".join(map(_escape, value))
    if max_chars is not None and len(out) > max_chars:
        out = out[: max(max_chars - 1, 0)] + "…"
    return out


class AdagresError(ValueError):
    """Base class of every error that bad input can raise; its message is one line."""

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)


class InputError(AdagresError):
    """An argument of a public function is invalid (shape, value, option)."""


class PoolError(AdagresError):
    """A pool file or pool object is invalid; the message names file, line, field and chunk."""


class SolverError(AdagresError):
    """The exact solver refused a pool (too large) or could not prove optimality.

    ``result``: for a search stopped by its node (or time) limit, what it proved
    (:class:`adagres.optimum.exact.ExactResult`: the best set found, its F and an upper bound
    on the optimum); None for a refusal.
    """

    def __init__(self, *args: object, result: Any = None) -> None:
        super().__init__(*args)
        self.result = result
