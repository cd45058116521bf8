"""Canonical ``.json`` and ``.jsonl`` pool files: read them, and write pools to them.

- ``json``: one canonical pool ``{"query", "chunks": [...]}``, a list of pools, or a list
  of retrieved documents (see :mod:`adagres.pools.formats.frameworks`).
- ``jsonl``: one pool per line, or one document per line (then the whole file is one pool).

JSON is parsed strictly, except that ``NaN`` and ``Infinity`` (which Python's ``json.dumps``
writes) are read as numbers, so that the field checks can name the chunk and field that
holds them, and refuse them there. Before parsing, :func:`~adagres.pools.load_limits.scan_json`
checks the nesting depth and the number of values against the
:class:`~adagres.pools.load_limits.Limits`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from adagres.errors import PoolError, one_line
from adagres.pools.chunk_fields import (
    Location,
    RawPool,
    json_line_finder,
    positions,
    show_id,
    type_name,
)
from adagres.pools.formats.detect import detect_format
from adagres.pools.formats.duplicates import DuplicateKeyError, check_no_duplicate_keys
from adagres.pools.formats.frameworks import looks_like_pool, normalise_pool
from adagres.pools.kept_values import json_value_problem
from adagres.pools.load_limits import DEFAULT_LIMITS, Limits, check_json_text
from adagres.pools.pool import Pool

__all__ = [
    "fast_parse_is_exact",
    "json_pools",
    "jsonl_line_pool",
    "jsonl_pools",
    "parse_json",
    "save_pool",
    "save_pools",
]


# --------------------------------------------------------------------------- reading


_orjson: Any
try:  # a compiled parser, 10x faster than the standard one on a pool of embeddings
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is pinned in requirements.txt
    _orjson = None

#: orjson holds about 13 bytes per byte of text while it parses (the standard parser about
#: 2): it reads texts up to this size (a pool line of a JSONL file, a small pool), whose
#: peak stays within the fixed part of the loaders' memory bound (docs/POOL_FORMAT.md).
FAST_PARSE_MAX_BYTES = 1_000_000

_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def fast_parse_is_exact(data: bytes) -> bool:
    """True if orjson parses ``data`` to what ``json.loads`` gives, within the memory
    bound: at most :data:`FAST_PARSE_MAX_BYTES`, and no integer that orjson would read as
    a float (past 2**64 - 1, or below -2**63): no run of 19 digits after a minus sign,
    and no run of 20 digits that is not a fraction (Python writes up to 20 digits after
    the point: 0.000 and 17 significant ones, as ``repr`` does).
    Digits inside strings count too; that only sends such a text to the standard parser.
    """
    if len(data) > FAST_PARSE_MAX_BYTES:
        return False
    zeros = data.translate(_DIGITS_AS_ZERO)
    if b"-" + b"0" * 19 in zeros:
        return False
    run = b"0" * 20
    at = zeros.find(run)
    while at >= 0:
        if at == 0 or zeros[at - 1] != 0x2E:  # not right after a "."
            return False
        at = zeros.find(run, at + 20)
    return True


def parse_json(text: str | bytes) -> Any:
    """Parse JSON text; ``NaN`` and ``Infinity`` become floats (for the checks to name).

    The result is always what ``json.loads(text, parse_constant=float)`` gives: orjson
    parses a text it reads the same way (strict JSON, integers within 64 bits, texts up to
    :data:`FAST_PARSE_MAX_BYTES`), and the standard parser reads every other text, and
    gives the error of a malformed one.
    Check the text with :func:`~adagres.pools.load_limits.check_json_text` (or
    ``check_json_depth``) first: this function does not bound the nesting depth.

    An object that holds a key twice raises
    :class:`~adagres.pools.formats.duplicates.DuplicateKeyError` (a ``JSONDecodeError`` naming
    the key and where the object starts), where both parsers would keep the last value.
    """
    parsed = _parse(text)
    check_no_duplicate_keys(parsed, text)
    return parsed


def _parse(text: str | bytes) -> Any:
    if _orjson is not None:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        if fast_parse_is_exact(data):
            try:
                return _orjson.loads(data)
            except _orjson.JSONDecodeError:
                pass  # NaN, lone surrogates, 1e400, a BOM, bad JSON: the standard parser decides
    return json.loads(text, parse_constant=float)


def _loads(text: str, label: str, line_offset: int = 0) -> Any:
    try:
        return parse_json(text)
    except json.JSONDecodeError as error:
        where = f"{label}, line {error.lineno + line_offset}, column {error.colno}"
        if isinstance(error, DuplicateKeyError):
            raise PoolError(f"{where}: {error.msg}; remove one of them") from None
        raise PoolError(f"{where}: malformed JSON ({error.msg})") from None
    except RecursionError:  # only when max_depth was raised past Python's recursion limit
        raise PoolError(
            f"{label}, line {line_offset + 1}: JSON nested too deep for Python's recursion "
            f"limit; lower max_depth or flatten the file"
        ) from None
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise PoolError(
            f"{label}, line {line_offset + 1}: malformed JSON ({one_line(error, max_chars=200)})"
        ) from None


def _scan(text: str, raw: bytes | None, label: str, limits: Limits, first_line: int = 1) -> bool:
    source = raw[3:] if raw is not None and raw.startswith(b"\xef\xbb\xbf") else raw
    return check_json_text(text if source is None else source, label, limits, first_line)


def json_pools(
    text: str,
    label: str,
    query: str | None,
    limits: Limits = DEFAULT_LIMITS,
    *,
    raw: bytes | None = None,
) -> list[RawPool]:
    """The pools of a ``.json`` text: one pool, a list of pools, or a document list.

    ``raw`` is the text's UTF-8 bytes when the caller has them (the scan reads those).
    """
    plain = _scan(text, raw, label, limits)
    obj = _loads(text, label)
    ctx = Location(label, chunk_position=json_line_finder(text), plain=plain)
    if isinstance(obj, list) and obj and all(looks_like_pool(item) for item in obj):
        each = Location(label, plain=plain)
        return [(normalise_pool(item, each, None), each) for item in obj]
    return [(normalise_pool(obj, ctx, query), ctx)]


def jsonl_pools(
    text: str,
    label: str,
    query: str | None,
    limits: Limits = DEFAULT_LIMITS,
    *,
    raw: bytes | None = None,
) -> list[RawPool]:
    """The pools of a ``.jsonl`` text: one per line, or one pool of one document per line."""
    plain = _scan(text, raw, label, limits)
    records: list[tuple[Any, int]] = []
    # Lines end at "\n" only: JSON strings may hold U+2028 or U+0085, which splitlines()
    # would take for line ends.
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            records.append((_loads(line, label, number - 1), number))
    if not records:
        raise PoolError(f"{label}: the file holds no pool (no non-blank line)")
    if not looks_like_pool(records[0][0]):
        lines = [number for _, number in records]
        ctx = Location(label, chunk_position=positions("line", lines), plain=plain)
        return [(normalise_pool([item for item, _ in records], ctx, query), ctx)]
    at_lines = [(item, Location(label, line=number, plain=plain)) for item, number in records]
    return [(normalise_pool(item, ctx, None), ctx) for item, ctx in at_lines]


def jsonl_line_pool(
    text: str, label: str, line: int, limits: Limits = DEFAULT_LIMITS, *, raw: bytes | None = None
) -> RawPool:
    """The pool of one line of a ``.jsonl`` pool set (``line``: its number in the file, for
    messages). The line must be a pool object, ``{"query": ..., "chunks": [...]}`` or a
    wrapper of documents: a set's line is never read as one document of a larger pool."""
    plain = _scan(text, raw, label, limits, line)
    obj = _loads(text, label, line - 1)
    ctx = Location(label, line=line, plain=plain)
    if not looks_like_pool(obj):
        got = "an object without 'chunks'" if isinstance(obj, dict) else type_name(obj)
        raise ctx.fail(
            f'each line of a pool set must be a pool {{"query": ..., "chunks": [...]}}, got {got}'
        )
    return normalise_pool(obj, ctx, None), ctx


# --------------------------------------------------------------------------- writing


def save_pool(
    pool: Pool, path: str | os.PathLike[str], *, float_decimals: int | None = None
) -> Path:
    """Write ``pool`` as canonical JSON (``.json``) or as one line (``.jsonl``); return the path.

    Loading the file gives back an equal pool (texts, ids, embeddings, token counts,
    metadata and extra keys), unless ``float_decimals`` rounds the embeddings.

    >>> import tempfile, pathlib
    >>> from adagres.pools.io import load_pool
    >>> pool = load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}', format="json")
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "pool.json"
    >>> load_pool(save_pool(pool, target)) == pool
    True
    """
    return save_pools([pool], path, float_decimals=float_decimals)


def save_pools(
    pools: Iterable[Pool], path: str | os.PathLike[str], *, float_decimals: int | None = None
) -> Path:
    """Write pools to ``path``: a ``.jsonl`` file (one per line) or a ``.json`` file (one pool).

    >>> import tempfile, pathlib
    >>> from adagres.pools.io import load_pool, load_pools
    >>> pool = load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}', format="json")
    >>> target = save_pools([pool, pool], pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl")
    >>> len(load_pools(target))
    2
    """
    path = Path(path)
    pools = list(pools)
    fmt = detect_format(path.name)
    for pool in pools:
        _check_saveable(pool, path.name)
    dicts = [pool.to_dict(float_decimals=float_decimals) for pool in pools]
    if fmt == "jsonl":
        text = "".join(_dumps(item, path.name) + "\n" for item in dicts)
    elif fmt == "json" and len(dicts) == 1:
        text = _dumps(dicts[0], path.name, indent=1) + "\n"
    else:
        raise PoolError(
            f"{path.name}: save one pool per .json file or many to .jsonl "
            f"(got {len(dicts)} pool(s) for a .{fmt} file)"
        )
    temporary = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:  # a name too long, a folder we may not write, a full disk
        with contextlib.suppress(OSError):
            temporary.unlink()
        shown = one_line(path.name, max_chars=120)
        raise PoolError(f"{shown}: cannot write the file ({error.strerror or error})") from None
    return path


def _dumps(obj: dict[str, Any], label: str, indent: int | None = None) -> str:
    # allow_nan=False: a file this writes must load again, and JSON has no NaN.
    try:
        return json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:  # _check_saveable names most
        raise PoolError(f"{label}: the pool cannot be written as JSON ({error})") from None


def _check_saveable(pool: Pool, label: str) -> None:
    """Raise PoolError naming the chunk and field of a value that would not load back.

    Loaded pools always pass; this catches pools built in code (NaN or a numpy value in
    metadata, a tuple, a non-string key, a lone surrogate).
    """
    strings = {"query": pool.query, "embedding_model": pool.embedding_model}
    strings.update({f"answers[{i}]": answer for i, answer in enumerate(pool.answers)})
    found = json_value_problem({**strings, **pool.extra}, "", _SAVE_LIMITS)
    where = ""
    if found is None:
        for chunk in pool.chunks:
            found = json_value_problem(chunk.to_dict(), "", _SAVE_LIMITS, level=3)
            if found is not None:
                where = f"chunk {show_id(chunk.id)}, "
                break
    if found is not None:
        field, problem = found
        raise PoolError(f"{label}: cannot save: {where}field '{field}': {problem}")


# Saving refuses what no loader could read back; sizes and depth are the loader's limits
# (a pool loaded with raised limits saves, and loads again with the same limits).
_SAVE_LIMITS = Limits(max_field_chars=2**62, max_text_chars=2**62, max_depth=2**62)
