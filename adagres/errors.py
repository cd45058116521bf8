"""The project's error types, and :func:`one_line` for the messages they carry.

Every error a user can cause (a bad argument, a bad file, a pool too large to solve) is an
:class:`AdagresError`, so a caller (the CLI, the app) can catch one type and show its
message, which names the field, the chunk and the numbers involved.

Build the parts of a message that quote what the user gave with :func:`one_line`;
:class:`AdagresError` applies it to the whole message too, so ``str(error)`` is always one
printable, UTF-8-encodable line.
"""

from __future__ import annotations

import importlib
import unicodedata
from types import ModuleType
from typing import Protocol

__all__ = [
    "AdagresError",
    "InputError",
    "MissingExtra",
    "PoolError",
    "Proved",
    "SolverError",
    "install_hint",
    "missing_extra",
    "one_line",
    "require",
]

#: The distribution name, as an install command spells it.
DISTRIBUTION = "adagres-explorer"

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


class Proved(Protocol):
    """What a stopped search proved, as :class:`SolverError` carries it (the optional exact
    solver's ``ExactResult``, which this module, below it, does not import)."""

    @property
    def indices(self) -> tuple[int, ...]: ...
    @property
    def objective(self) -> float: ...
    @property
    def upper_bound(self) -> float: ...


class SolverError(AdagresError):
    """The exact solver refused a pool (too large) or could not prove optimality.

    ``result``: for a search stopped by its node (or time) limit, what it proved
    (:class:`adagres.optimum.exact.ExactResult`: the best set found, its F and an upper bound
    on the optimum); None for a refusal.
    """

    def __init__(self, *args: object, result: Proved | None = None) -> None:
        super().__init__(*args)
        self.result = result


class MissingExtra(AdagresError, ImportError):
    """An optional package is not installed; the message names the extra that brings it.

    It is also an :class:`ImportError`, so code that falls back when a package is missing
    keeps working. ``extra`` is the extra's name (``"embed"``, ``"milvus"``, ...).
    """

    def __init__(self, message: str, *, extra: str, module: str | None = None) -> None:
        super().__init__(message)
        self.extra = extra
        self.name = module


def install_hint(extra: str) -> str:
    """The command that installs an extra (pip adds its packages to any installed copy).

    >>> install_hint("embed")
    'pip install "adagres-explorer[embed]"'
    """
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def require(module: str, extra: str, *, purpose: str | None = None) -> ModuleType:
    """Import optional ``module`` or raise :class:`MissingExtra` naming ``extra`` and ``purpose``.

    Only a missing module becomes MissingExtra; any other failure of the import propagates.

    >>> require("json", "embed").__name__
    'json'
    >>> require("adagres_no_such_module", "embed", purpose="embedding texts")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adagres.errors.MissingExtra: embedding texts needs the 'embed' extra (no module named ...
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise missing_extra(error, extra, purpose or module) from None


def missing_extra(error: ModuleNotFoundError, extra: str, purpose: str) -> MissingExtra:
    """The :class:`MissingExtra` for an import that failed with ``error``: for modules that
    import their framework at the top, inside ``try``/``except ModuleNotFoundError``."""
    missing = error.name or "?"
    return MissingExtra(
        f"{purpose} needs the {extra!r} extra (no module named {missing!r}): {install_hint(extra)}",
        extra=extra,
        module=missing,
    )
