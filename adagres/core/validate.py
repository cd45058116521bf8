"""Validation at the boundary of the public functions.

Each helper takes what a caller passed, checks it once and returns the array the core
trusts from then on. Messages name the argument, the chunk index and the numbers.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Collection, Hashable, Iterable, Sequence
from numbers import Integral, Real
from typing import TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError, one_line
from .arrays import FloatArray

T = TypeVar("T")

# A vector whose norm is this close to 1 is taken as already normalised (no copy).
UNIT_TOLERANCE = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def _float_array(value: ArrayLike, name: str) -> FloatArray:
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: cannot be read as an array of numbers ({exc})") from None
    if array.dtype == np.float32 or array.dtype == np.float64:
        return array
    if array.dtype.kind in "iubf":  # integers, bools, float16, longdouble
        return array.astype(np.float64)
    raise InputError(f"{name}: expected numbers, got values of type {array.dtype}")


def vector_problem(row: FloatArray) -> str | None:
    """What makes an embedding unusable, in words, or None if it has a direction.

    The one description of a bad vector: loaders, :class:`~adagres.Pool` and the core all
    use it, so a NaN reads the same wherever it is caught.

    >>> vector_problem(np.array([1.0, np.nan]))
    'value 1 is nan: NaN and infinite values are not allowed'
    >>> vector_problem(np.zeros(3))
    'all 3 values are zero: the vector has no direction'
    """
    finite = np.isfinite(row)
    if not finite.all():
        position = int(np.flatnonzero(~finite)[0])
        return f"value {position} is {row[position]}: NaN and infinite values are not allowed"
    if not row.any():
        return f"all {row.shape[0]} values are zero: the vector has no direction"
    return None


def normalise_rows(array: FloatArray) -> FloatArray:
    """Rows divided by their norms, exact also for rows whose squared norm would over- or
    underflow (those are scaled by their largest value first). Rows must be finite, nonzero."""
    with np.errstate(over="ignore", under="ignore"):
        norms = np.sqrt(np.vecdot(array, array))
    extreme = ~np.isfinite(norms) | (norms == 0)
    if not extreme.any():
        unit: FloatArray = array / norms[:, None].astype(array.dtype)
        return unit
    out = np.array(array, copy=True)
    scaled = out[extreme] / np.abs(out[extreme]).max(axis=1, keepdims=True)
    out[extreme] = scaled
    norms[extreme] = np.sqrt(np.vecdot(scaled, scaled))
    rows: FloatArray = out / norms[:, None].astype(array.dtype)
    return rows


def unit_rows(value: ArrayLike, name: str = "chunk_embeddings") -> FloatArray:
    """Return ``value`` as an (N, d) float array of unit rows, normalising only if needed
    (:func:`unit_rows_and_squares` without ‖c_i‖²)."""
    return unit_rows_and_squares(value, name)[0]


def unit_rows_and_squares(
    value: ArrayLike, name: str = "chunk_embeddings"
) -> tuple[FloatArray, FloatArray]:
    """Return ``value`` as an (N, d) float array of unit rows, and ‖c_i‖² of those rows.

    float32 input stays float32 (embedding models emit float32 and it halves memory
    traffic); anything else becomes float64. Zero, NaN and infinite rows raise an error
    that names the row index. Idempotent: rows that are already unit within the dtype's
    tolerance are returned as they are, so ``unit_rows(unit_rows(x))`` is ``unit_rows(x)``
    bit for bit and every number derived from the rows is the same whichever caller
    normalised first. The squared norms are computed the same way (``np.vecdot``) on both
    paths, so their sum is also the same bits.
    """
    array = _float_array(value, name)
    if array.ndim != 2:
        raise InputError(
            f"{name}: expected a 2-D array (chunks x dimensions), got shape {array.shape}"
        )
    n, d = array.shape
    if n == 0:
        raise InputError(f"{name}: the pool is empty (0 chunks)")
    if d == 0:
        raise InputError(f"{name}: embeddings have 0 dimensions")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        squares = np.vecdot(array, array)
    # Already unit (|‖c‖² − 1| within 2·tol ⇔ |‖c‖ − 1| within ~tol): no copy. A NaN fails
    # both comparisons.
    tol = 2 * UNIT_TOLERANCE[array.dtype]
    if squares.min() >= 1.0 - tol and squares.max() <= 1.0 + tol:
        return array, squares
    suspect = ~np.isfinite(squares) | (squares == 0)
    for i in np.flatnonzero(suspect):
        problem = vector_problem(array[i])
        if problem is not None:
            raise InputError(f"{name}: chunk {i}: {problem}")
    rows = normalise_rows(array)
    return rows, np.vecdot(rows, rows)


def unit_vector(value: ArrayLike, dim: int, name: str = "query_embedding") -> NDArray[np.float64]:
    """Return the query as a unit vector of length ``dim`` (float64), idempotent like
    :func:`unit_rows`: a vector already unit to 1e-12 is returned as is."""
    array = np.asarray(_float_array(value, name), dtype=np.float64)
    if array.ndim != 1:
        raise InputError(f"{name}: expected a 1-D vector, got shape {array.shape}")
    if array.shape[0] != dim:
        raise InputError(
            f"{name}: has {array.shape[0]} values, the chunk embeddings have {dim} dimensions"
        )
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        square = float(array @ array)  # a BLAS product: NaN, inf or 0 here need a closer look
    if 1e-280 < square < 1e280:  # finite and nonzero, far from over- and underflow
        if abs(math.sqrt(square) - 1.0) <= 1e-12:
            return array
        # the arithmetic of normalise_rows, without its checks for extreme values
        unit: NDArray[np.float64] = array / np.sqrt(np.vecdot(array, array))
        return unit
    problem = vector_problem(array)
    if problem is not None:
        raise InputError(f"{name}: {problem}")
    row: NDArray[np.float64] = normalise_rows(array[None, :])[0]  # its norm is far from 1
    return row


#: Largest token budget or count accepted: sums of counts stay exact in int64 and float64.
MAX_TOKENS = 10**12

#: Largest character offset accepted (2**53 - 1): the largest whole number a 64-bit float
#: holds exactly, so every JSON reader reads it back unchanged, and an offset plus a text's
#: length stays far inside int64, where the packing arithmetic runs.
MAX_OFFSET = 2**53 - 1


def offset_problem(value: object) -> str | None:
    """What keeps ``value`` from being a character offset (a whole number from 0 to
    :data:`MAX_OFFSET`), in words, or None.

    >>> offset_problem(12) is None
    True
    >>> print(offset_problem(2**64))
    offset 18446744073709551616 is beyond the largest offset, 2**53 - 1 = 9007199254740991
    >>> print(offset_problem(2.0))
    must be a whole number of characters >= 0, got a float 2.0
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        shown = f"{value!r:.40}"
        return f"must be a whole number of characters >= 0, got a {type(value).__name__} {shown}"
    number = operator.index(value)
    if number < 0:
        return f"must be a whole number of characters >= 0, got {number}"
    if number > MAX_OFFSET:
        return f"offset {str(number)[:40]} is beyond the largest offset, 2**53 - 1 = {MAX_OFFSET}"
    return None


def token_counts(value: ArrayLike, n: int, name: str = "token_counts") -> NDArray[np.int64]:
    """Return token counts as an int64 array of length ``n``; each in [0, MAX_TOKENS]."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name}: cannot be read as an array of integers ({exc})") from None
    if array.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array, got shape {array.shape}")
    if array.shape[0] != n:
        raise InputError(f"{name}: has {array.shape[0]} entries, the pool has {n} chunks")
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (array != np.round(array))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{name}: chunk {i} has {float(array[i]):g} tokens, not a whole number"
            )
    elif array.dtype.kind not in "iu":
        raise InputError(f"{name}: expected integers, got values of type {array.dtype}")
    if n and array.min() < 0:
        i = int(np.flatnonzero(array < 0)[0])
        raise InputError(f"{name}: chunk {i} has {int(array[i])} tokens; counts must be >= 0")
    if n and array.max() > MAX_TOKENS:
        i = int(np.flatnonzero(array > MAX_TOKENS)[0])
        raise InputError(
            f"{name}: chunk {i} has {array[i]} tokens; counts must be at most {MAX_TOKENS}"
        )
    return np.asarray(array, dtype=np.int64)  # no copy when the counts are int64 already


def budget(value: object) -> int:
    """Return the token budget as an int in [0, MAX_TOKENS]."""
    return whole(value, "budget", maximum=MAX_TOKENS, unit=" tokens")


def real(value: object, name: str, *, minimum: float | None = None) -> float:
    """Return ``value`` as a finite float >= ``minimum``: any real number (int, float, numpy
    scalar, Fraction, Decimal); one too large for a float is refused, never an OverflowError."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{name}: expected a finite number, got {value!r:.60}")
    try:
        number = float(value)
    except (OverflowError, ValueError):
        number = math.inf
    if not math.isfinite(number):
        raise InputError(f"{name}: expected a finite number, got {value!r:.60}")
    if minimum is not None and number < minimum:
        raise InputError(f"{name}: must be >= {minimum}, got {number:g}")
    return number


def whole(
    value: object, name: str, *, minimum: int = 0, maximum: int | None = None, unit: str = ""
) -> int:
    """Return ``value`` as an int in [minimum, maximum]: a whole number (int, numpy
    integer, or a float, Fraction or Decimal with no fractional part), never a bool or a
    string; ``unit`` (" tokens") is named in the messages."""
    kind = f"a whole number of{unit}" if unit else "a whole number"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{name}: expected {kind}, got {value!r:.60}")
    if isinstance(value, Integral):
        number = operator.index(value)
    else:
        try:
            as_float = float(value)
        except (OverflowError, ValueError):
            as_float = math.inf
        if not math.isfinite(as_float) or as_float != math.floor(as_float):
            raise InputError(f"{name}: expected {kind}, got {value!r:.60}")
        number = int(as_float)
    if number < minimum:
        raise InputError(f"{name}: must be >= {minimum}{unit}, got {number}")
    if maximum is not None and number > maximum:
        raise InputError(f"{name}: must be at most {maximum}{unit}, got {str(number)[:30]}")
    return number


def choice(value: object, name: str, options: Collection[str]) -> str:
    """Return ``value`` if it is one of ``options``; otherwise name them all."""
    if value not in options:
        raise InputError(f"{name}: expected one of {', '.join(map(repr, options))}, got {value!r}")
    return cast(str, value)


def indices(value: object, n: int, name: str = "indices") -> NDArray[np.int64]:
    """Return distinct pool positions in [0, n) as an int64 array, from a sequence of whole
    numbers (not a string, not a bare number, no bools)."""
    if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
        raise InputError(f"{name}: expected a sequence of pool positions, got {value!r:.60}")
    items = list(cast("Iterable[object]", value))
    for item in items:
        if not isinstance(item, Integral) or isinstance(item, bool):
            raise InputError(f"{name}: {item!r:.40} is not a pool position (a whole number)")
        if not 0 <= cast(int, item) < n:
            raise InputError(f"{name}: position {item} is outside the pool of {n} chunks")
    array = np.asarray(items, dtype=np.int64).reshape(-1)
    if len(np.unique(array)) != len(array):
        raise InputError(f"{name}: a chunk appears more than once")
    return array


def chunk_ids(value: object, n: int | None, name: str = "ids") -> list[object] | None:
    """Return ``value`` (chunk ids by pool position) as a list, or None for None; a string
    is refused (it would be read one character per chunk); with ``n`` given, exactly ``n``."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
        raise InputError(f"{name}: expected a sequence of chunk ids, got {value!r:.60}")
    items = list(cast("Iterable[object]", value))
    if n is not None and len(items) != n:
        raise InputError(f"{name}: has {len(items)} ids; the pool has {n} chunks")
    return items


def position(value: object, n: int, name: str = "chunk") -> int:
    """Return ``value`` as a pool position in [0, n): a whole number, not a bool."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(f"{name}: expected a pool position (a whole number), got {value!r:.60}")
    index = operator.index(value)
    if not 0 <= index < n:
        raise InputError(f"{name}: position {index} is outside the pool of {n} chunks")
    return index


def items(value: Iterable[T], name: str) -> list[T]:
    """Return the items of a list-like ``value``; a string or a bare value is refused (a
    string would otherwise be read one character at a time), whatever its declared type."""
    if isinstance(value, str | bytes | dict) or not hasattr(value, "__iter__"):
        raise InputError(f"{name}: expected a list, got {value!r:.60}")
    return list(value)


def spans(texts: object, sources: object, starts: object, count_tokens: object) -> None:
    """Check the fields of :class:`adagres.core.overlaps.Spans` as given (nothing is
    converted): ``texts`` a sequence of strings, ``sources`` and ``starts`` one entry per
    text, each source None or hashable, each start None or a character offset
    (:func:`offset_problem`: a float, even a whole one, is refused rather than cut), and
    ``count_tokens`` None or a callable. Raises :class:`InputError` naming the field and
    the position.

    >>> spans(("a b", "b c"), ("d", "d"), (0, 2), None)
    >>> spans(("a b",), ("d",), (2.5,), None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adagres.errors.InputError: starts[0]: must be a whole number of characters >= 0, got a ...
    """
    for name, value in (("texts", texts), ("sources", sources), ("starts", starts)):
        if isinstance(value, str | bytes | dict) or not hasattr(value, "__len__"):
            raise InputError(
                f"{name}: expected a sequence with one entry per chunk, got {value!r:.60}"
            )
    texts, sources, starts = cast("tuple[Sequence[object], ...]", (texts, sources, starts))
    n = len(texts)
    for name, value in (("sources", sources), ("starts", starts)):
        if len(value) != n:
            raise InputError(f"{name}: has {len(value)} entries; texts has {n}")
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(
                f"texts[{position}]: expected a string, got a {type(text).__name__} {text!r:.40}"
            )
    for position, key in enumerate(sources):
        try:
            hash(key)
        except TypeError:
            raise InputError(
                f"sources[{position}]: a source key must be hashable (a string, "
                f"a number, a tuple), got a {type(key).__name__} "
                f"{key!r:.40}"
            ) from None
    for position, start in enumerate(starts):
        problem = None if start is None else offset_problem(start)
        if problem is not None:
            raise InputError(f"starts[{position}]: {problem}")
    if count_tokens is not None and not callable(count_tokens):
        raise InputError(
            f"count_tokens: expected None or a callable text -> int, got {count_tokens!r:.60}"
        )


def texts(value: object, n: int, name: str = "texts") -> Sequence[str]:
    """Return ``value`` if it is a sequence of ``n`` strings (a list, a tuple, a numpy array
    of strings), unchanged; a single string is refused (it would be read one character per
    chunk), as are other lengths and non-string items.

    >>> texts(["a", "b"], 2)
    ['a', 'b']
    >>> texts("ab", 2)
    Traceback (most recent call last):
    ...
    adagres.errors.InputError: texts: expected a sequence of 2 strings, got str 'ab'
    """
    if isinstance(value, str | bytes | dict | set | frozenset) or not (
        hasattr(value, "__len__") and hasattr(value, "__getitem__")
    ):
        raise InputError(
            f"{name}: expected a sequence of {n} strings, got {type(value).__name__} {value!r:.40}"
        )
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise InputError(
            f"{name}: expected a sequence of {n} strings, got an array of shape {value.shape}"
        )
    sequence = cast("Sequence[object]", value)
    if len(sequence) != n:
        raise InputError(f"{name}: got {len(sequence)} texts, the pool has {n} chunks")
    for i, text in enumerate(sequence):
        if not isinstance(text, str):
            raise InputError(
                f"{name}: chunk {i} is {type(text).__name__} {text!r:.40}, not a string"
            )
    return cast("Sequence[str]", sequence)


def strings(value: object, name: str) -> list[str]:
    """Return ``value`` (a list, a tuple or a 1-D numpy array of strings, or any other
    sequence of them) as a list of strings. A single string is refused, never split into
    its characters nor taken as one item.

    >>> strings(np.array(["Paris", "Lyon"]), "answers")
    ['Paris', 'Lyon']
    >>> strings("Paris", "answers")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adagres.errors.InputError: answers: must be a list of strings, got a string 'Paris'; wrap a ...
    """
    if isinstance(value, str | bytes):
        shown = f"{value!r:.40}"
        raise InputError(
            f"{name}: must be a list of strings, got a string {shown}; wrap a "
            f"single item in a list: [{shown}]"
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise InputError(
                f"{name}: must be a list of strings, got an array of shape {value.shape}"
            )
        value = value.tolist()
    if isinstance(value, dict | set | frozenset) or not (
        hasattr(value, "__len__") and hasattr(value, "__getitem__")
    ):
        raise InputError(
            f"{name}: must be a list of strings, got {type(value).__name__} {value!r:.40}"
        )
    items = list(cast("Iterable[object]", value))
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InputError(
                f"{name}: must be a list of strings; item {i} is {type(item).__name__} {item!r:.40}"
            )
    return [str(item) for item in items]


def placements(
    sources: object, offsets: object, n: int
) -> tuple[tuple[Hashable | None, ...], tuple[int | None, ...]]:
    """Each chunk's source key and character offset in it, one per chunk (None: unknown).

    ``sources`` holds hashable keys (a string, a number, a tuple), ``offsets`` character
    offsets (:func:`offset_problem`); either may be None as a whole or for one chunk.

    >>> placements(["a", None], [0, None], 2)
    (('a', None), (0, None))
    """
    keys: list[Hashable | None] = [None] * n
    starts: list[int | None] = [None] * n
    for name, value in (("sources", sources), ("offsets", offsets)):
        if value is None:
            continue
        if isinstance(value, str | bytes | dict) or not hasattr(value, "__len__"):
            raise InputError(f"{name}: expected a sequence of {n} values, got {value!r:.60}")
        if len(value) != n:
            raise InputError(f"{name}: got {len(value)} values, the pool has {n} chunks")
        for i, item in enumerate(cast("Sequence[object]", value)):
            if item is None:
                continue
            if name == "sources":
                if isinstance(item, float) and item != item:  # NaN: never equal to itself
                    raise InputError(f"sources: chunk {i} has NaN as its source")
                try:
                    hash(item)
                except TypeError:
                    raise InputError(
                        f"sources: chunk {i} has {type(item).__name__} as its source; "
                        "expected a string, a number or a tuple"
                    ) from None
                keys[i] = item
            else:
                problem = offset_problem(item)
                if problem is not None:
                    raise InputError(f"offsets: chunk {i}: {problem}")
                starts[i] = operator.index(cast(Integral, item))
    return tuple(keys), tuple(starts)


# --------------------------------------------------------------------------- strings

_SURROGATE = re.compile("[\ud800-\udfff]")


def limit_hint(name: str) -> str:
    """How a message tells the user to raise the pool loader's limit ``name``."""
    return f"raise it with limits=Limits({name}=...) or the CLI's --limit {name}=..."


def string_problem(value: str, max_chars: int, limit: str) -> str | None:
    """What makes ``value`` unusable as a pool string, in words, or None.

    >>> string_problem("ok", 10, "max_field_chars") is None
    True
    >>> print(string_problem("ab\\ud800", 10, "max_field_chars")[:46])
    holds a lone surrogate (\\ud800) at character 2
    """
    if len(value) > max_chars:
        return (
            f"has {len(value):,} characters, over the limit of {max_chars:,} ({limit_hint(limit)})"
        )
    if not value.isascii():
        found = _SURROGATE.search(value)
        if found is not None:
            return (
                f"holds a lone surrogate ({one_line(found.group())}) at character "
                f"{found.start()}, which is not a character and cannot be written as UTF-8"
            )
    return None
