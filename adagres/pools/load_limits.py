"""Limits that bound the work of loading a pool, not just the size of its file.

A pool file comes from someone else's pipeline. Its size alone does not bound what reading
it costs: 199 MB of ``[]`` parse into 100 million Python lists, a 771-byte Parquet file can
decompress to gigabytes, one 100 MB CSV field makes a tokenizer allocate 14 GB, and JSON
nested a thousand levels deep exhausts Python's stack. Each :class:`Limits` field bounds one
of those, and each is checked *before* the expensive step (parsing, decompressing,
tokenizing, embedding); a file over a limit raises a one-line
:class:`~adagres.errors.PoolError` that names the limit and how to raise it.

Within the limits, loading a file takes at most 4 × its decoded bytes + 80 bytes per value
+ 1.7 KB per chunk + 16 MB of memory (``docs/POOL_FORMAT.md`` has the measured figures).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from adagres.core.validate import limit_hint
from adagres.errors import InputError, PoolError

__all__ = [
    "DEFAULT_LIMITS",
    "SCAN_BLOCK",
    "JsonShape",
    "Limits",
    "check_json_depth",
    "check_json_text",
    "scan_json",
    "too_many_chunks",
    "too_many_values",
]


@dataclass(frozen=True)
class Limits:
    """The limits a loader enforces; pass ``limits=Limits(max_depth=200)`` to raise one.

    - ``max_bytes``: bytes of the file as stored (compressed, for Parquet);
    - ``max_decoded_bytes``: bytes of the data once decoded (Parquet's uncompressed column
      data, as its metadata declares it and as it is read; for JSON and CSV, the file);
    - ``max_values``: values in the whole file: every JSON number, string (object keys
      too), true/false/null, list and object, every CSV field and every Parquet value;
    - ``max_depth``: nesting of JSON lists and objects, anywhere (a CSV cell, metadata);
    - ``max_field_chars``: characters of any one string (a CSV or Parquet cell, an id, a
      metadata value); the text of a chunk and the query have their own limit:
    - ``max_text_chars``: characters of a chunk's text or of the query (what a tokenizer
      and the embedding model read);
    - ``max_chunks``: chunks of one pool;
    - ``max_file_chunks``: chunks of all the pools of one file together (rows of a table),
      each of which costs about 1.5 KB while it loads;
    - ``max_set_pools``: pieces of a pool set (the non-blank lines of its ``.jsonl`` files
      and its other pool files), each of which the set keeps (about 300 bytes) until it is
      summarised.

    >>> Limits(max_depth=200).max_depth, Limits().max_chunks
    (200, 100000)
    """

    max_bytes: int = 200_000_000
    max_decoded_bytes: int = 200_000_000
    max_values: int = 20_000_000
    max_depth: int = 100
    max_field_chars: int = 1_000_000
    max_text_chars: int = 100_000
    max_chunks: int = 100_000
    max_file_chunks: int = 1_000_000
    max_set_pools: int = 100_000

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"Limits.{item.name}: must be a whole number >= 1, got {value!r}")

    def replace(self, **changes: int | None) -> Limits:
        """Return a copy with the given limits changed (a ``None`` value changes nothing)."""
        given = {key: value for key, value in changes.items() if value is not None}
        return dataclasses.replace(self, **given) if given else self


DEFAULT_LIMITS = Limits()

# --------------------------------------------------------------------------- JSON shape

# A JSON string as the parser reads it. Raw newlines end it: they are not allowed inside a
# JSON string, and stopping there keeps the line numbers of the stripped text right.
_STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
SCAN_BLOCK = 1 << 20  # bytes per numpy pass: bounds the scan's own memory (~8 MB)

# Per byte: +1 opens a list or object, -1 closes one.
_DELTA = np.zeros(256, np.int8)
_DELTA[[ord("["), ord("{")]] = 1
_DELTA[[ord("]"), ord("}")]] = -1
# Bytes to delete to keep only brackets and line ends (the depth scan reads those).
_NOT_BRACKETS = bytes(b for b in range(256) if chr(b) not in "[]{}\n")
# Bytes of numbers, literals and (after stripping) strings as "a", all others as " ": each
# " a" then starts one value.
_SEPARATORS = b"[]{},: \t\r\n"
_SCALARS_AS_A = bytes(32 if b in _SEPARATORS else 97 for b in range(256))
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")
_BIG_EXPONENT = re.compile(rb"e\+?00")  # a literal first byte: the engine skips to each "e"
# Inside strings: an escaped UTF-16 surrogate (raw ones cannot be valid UTF-8).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass(frozen=True)
class JsonShape:
    """What :func:`scan_json` measured: deepest nesting, number of values, and the line on
    which the nesting first went over ``max_depth`` (0 if it never did)."""

    depth: int
    values: int
    deep_line: int = 0
    #: No NaN/Infinity literal, no number that could overflow a float or be a huge
    #: integer, no escaped surrogate: the parsed values need no walk for those.
    plain: bool = False


def scan_json(data: bytes | str, max_depth: int) -> JsonShape:
    """Measure a JSON text's nesting depth and number of values without parsing it.

    Exact for valid JSON (strings are skipped, so brackets inside them do not count). For
    invalid JSON the parser stops at the first error, no deeper than this scan measured.
    The scan stops at the first place nested deeper than ``max_depth`` (``depth`` is then
    the depth reached there, ``values`` 0). Memory: two more copies of the text at most,
    and buffers of a fixed size.

    >>> # 3 objects or lists, 3 keys, 4 other values (the "[[[" string is one)
    >>> scan_json(b'{"a": [1, 2, {"b": "[[["}], "c": null}', max_depth=10)
    JsonShape(depth=3, values=10, deep_line=0, plain=True)
    >>> scan_json("[[[\\n[[]]]]]", max_depth=3).deep_line
    2
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    text = _STRING.sub(b"s", raw) if b'"' in raw else raw
    # Depth: a cumulative sum over the brackets alone (few, in a pool of numbers and text).
    brackets = text.translate(None, _NOT_BRACKETS)
    array = np.frombuffer(brackets, np.uint8)
    depth = deepest = 0
    for start in range(0, array.shape[0], SCAN_BLOCK):
        levels = np.cumsum(_DELTA[array[start : start + SCAN_BLOCK]], dtype=np.int32)
        levels += depth  # |depth| <= the file's bytes < 2**31
        peak = int(levels.max())
        if peak > max_depth:
            offset = start + int(np.argmax(levels > max_depth))
            line = brackets.count(b"\n", 0, offset) + 1
            return JsonShape(depth=peak, values=0, deep_line=line)
        deepest = max(deepest, peak)
        depth = int(levels[-1])
    runs = text.translate(_SCALARS_AS_A)
    values = text.count(b"[") + text.count(b"{") + runs.count(b" a") + runs.startswith(b"a")
    del runs
    plain = not _risky_numbers(text) and _SURROGATE_ESCAPE.search(raw) is None
    return JsonShape(depth=deepest, values=values, plain=plain)


def _risky_numbers(text: bytes) -> bool:
    """True if a stripped JSON text (no strings) has a NaN or Infinity literal, a positive
    exponent of two digits or more, or a run of 100 digits. Without these no number
    reaches 1e109, so none overflows a float and none is an integer of more than 333 bits.
    (Byte searches on a copy with every digit as "0": a regular expression took a second
    for 76 MB.)

    >>> _risky_numbers(b"[1.5e-05, 2e+9, -0.25]"), _risky_numbers(b"[1e+99]")
    (False, True)
    >>> _risky_numbers(b"[" + b"9" * 100 + b"]"), _risky_numbers(b"[NaN]")
    (True, True)
    """
    if b"NaN" in text or b"Infinity" in text:
        return True
    zeros = text.translate(_DIGITS_AS_ZERO)  # and "E" as "e"
    return b"0" * 100 in zeros or _BIG_EXPONENT.search(zeros) is not None


def _too_deep(where: str, line: int, limits: Limits) -> PoolError:
    at = f", line {line}" if line else ""
    return PoolError(
        f"{where}{at}: JSON nested more than {limits.max_depth} levels deep, over the limit "
        f"of {limits.max_depth} ({limit_hint('max_depth')})"
    )


def too_many_values(where: str, count: int, limits: Limits) -> PoolError:
    """The error of a file with more than ``limits.max_values`` values (``count`` of them)."""
    return PoolError(
        f"{where}: the file holds {count:,} values or more, over the limit of "
        f"{limits.max_values:,} ({limit_hint('max_values')})"
    )


def too_many_chunks(where: str, count: int, limits: Limits) -> PoolError:
    """The error of a file with more than ``limits.max_file_chunks`` chunks or rows."""
    return PoolError(
        f"{where}: the file holds {count:,} chunks or more, over the limit of "
        f"{limits.max_file_chunks:,} for one file ({limit_hint('max_file_chunks')})"
    )


# Levels the canonical layout can add to a value's depth in the file it came from: a
# document on a JSONL line (metadata at level 2) becomes a chunk of a saved pool (level 4).
_LAYOUT_LEVELS = 2


def check_json_text(data: bytes | str, where: str, limits: Limits, first_line: int = 1) -> bool:
    """Raise PoolError if a JSON text nests deeper than ``limits.max_depth`` or holds more
    than ``limits.max_values`` values.

    Return True when the values it parses to need no check by
    :func:`~adagres.pools.kept_values.json_value_problem` (no NaN or infinite number, no lone
    surrogate, no huge integer, no string over ``max_field_chars``, and three levels to
    spare below ``max_depth`` for the canonical layout): the walk costs about 1 µs per value.
    ``first_line`` is the file's line number of the text's first line, for messages.
    """
    shape = scan_json(data, limits.max_depth)
    if shape.depth > limits.max_depth:
        raise _too_deep(where, shape.deep_line + first_line - 1, limits)
    if shape.values > limits.max_values:
        at = f"{where}, line {first_line}" if first_line > 1 else where
        raise too_many_values(at, shape.values, limits)
    if not shape.plain or shape.depth + _LAYOUT_LEVELS >= limits.max_depth:
        return False
    if len(data) <= limits.max_field_chars:
        return True
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return longest_string_bytes(raw) <= limits.max_field_chars


def longest_string_bytes(raw: bytes) -> int:
    """An upper bound on the bytes (so on the characters) of the longest string in a JSON
    text: the most bytes between an opening quote and its closing one.

    A quote after a backslash is taken as escaped, so ``"a\\\\"`` (a string that ends in
    an escaped backslash) reads as running on to the next quote: longer, never shorter.

    >>> longest_string_bytes(b'{"id": "abc", "t": "x\\\\"y"}')
    4
    """
    array = np.frombuffer(raw, np.uint8)
    longest = 0
    open_at = -1  # position of the quote that opened a string still open at a block's end
    for start in range(0, array.shape[0], SCAN_BLOCK):
        block = array[start : start + SCAN_BLOCK]
        quotes = np.flatnonzero(block == 34) + start
        if quotes.shape[0] and quotes[0] == 0:
            keep = np.ones(quotes.shape[0], bool)
            keep[1:] = array[quotes[1:] - 1] != 92
        else:
            keep = array[quotes - 1] != 92
        quotes = quotes[keep]
        if open_at >= 0:
            quotes = np.concatenate(([open_at], quotes))
        pairs = quotes.shape[0] // 2
        if pairs:
            lengths = quotes[1 : 2 * pairs : 2] - quotes[0 : 2 * pairs : 2] - 1
            longest = max(longest, int(lengths.max()))
        open_at = int(quotes[-1]) if quotes.shape[0] % 2 else -1
    return longest


def check_json_depth(data: str, where: str, limits: Limits) -> None:
    """Raise PoolError if a (small) JSON text nests deeper than ``limits.max_depth``.

    Cheap for the common case: a text with no more brackets than the limit is not scanned.
    """
    if data.count("[") + data.count("{") > limits.max_depth:
        shape = scan_json(data, limits.max_depth)
        if shape.depth > limits.max_depth:
            raise _too_deep(where, 0, limits)
