"""Canonical ``.json`` and ``.jsonl`` pool files: read them, and write pools to them.

- ``json``: one canonical pool ``{"query", "chunks": [...]}``, a list of pools, or a list
  of retrieved documents (see :mod:`adagres.pools.frameworks`).
- ``jsonl``: one pool per line, or one document per line (then the whole file is one pool).

JSON is parsed strictly: ``NaN`` and ``Infinity`` literals are refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from adagres.errors import PoolError
from adagres.pools.fields import Location, RawPool, json_line_finder, line_positions
from adagres.pools.files import detect_format
from adagres.pools.frameworks import looks_like_pool, normalise_pool
from adagres.pools.pool import Pool

__all__ = ["json_pools", "jsonl_pools", "parse_json", "save_pool", "save_pools"]


# --------------------------------------------------------------------------- reading


def parse_json(text: str) -> Any:
    """Parse JSON text; ``NaN`` / ``Infinity`` raise ValueError."""
    return json.loads(text, parse_constant=_reject_constant)


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not valid JSON")


def _json_error(error: json.JSONDecodeError, label: str, line_offset: int = 0) -> PoolError:
    return PoolError(
        f"{label}, line {error.lineno + line_offset}, column {error.colno}: "
        f"malformed JSON ({error.msg})"
    )


def _loads(text: str, label: str, line_offset: int = 0) -> Any:
    try:
        return parse_json(text)
    except json.JSONDecodeError as error:
        raise _json_error(error, label, line_offset) from None
    except ValueError as error:  # NaN / Infinity literals
        raise PoolError(f"{label}, line {line_offset + 1}: malformed JSON ({error})") from None


def json_pools(text: str, label: str, query: str | None) -> list[RawPool]:
    """The pools of a ``.json`` text: one pool, a list of pools, or a document list."""
    obj = _loads(text, label)
    ctx = Location(label, chunk_position=json_line_finder(text))
    if isinstance(obj, list) and obj and all(looks_like_pool(item) for item in obj):
        return [(normalise_pool(item, Location(label), None), Location(label)) for item in obj]
    return [(normalise_pool(obj, ctx, query), ctx)]


def jsonl_pools(text: str, label: str, query: str | None) -> list[RawPool]:
    """The pools of a ``.jsonl`` text: one per line, or one pool of one document per line."""
    records: list[tuple[Any, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            records.append((_loads(line, label, number - 1), number))
    if not records:
        raise PoolError(f"{label}: the file holds no pool (no non-blank line)")
    if not looks_like_pool(records[0][0]):
        lines = [number for _, number in records]
        ctx = Location(label, chunk_position=line_positions(lines))
        return [(normalise_pool([item for item, _ in records], ctx, query), ctx)]
    out = []
    for item, number in records:
        ctx = Location(label, line=number)
        out.append((normalise_pool(item, ctx, None), ctx))
    return out


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
    dicts = [pool.to_dict(float_decimals=float_decimals) for pool in pools]
    if fmt == "jsonl":
        text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in dicts)
    elif fmt == "json" and len(dicts) == 1:
        text = json.dumps(dicts[0], ensure_ascii=False, indent=1) + "\n"
    else:
        raise PoolError(
            f"{path.name}: save one pool per .json file or many to .jsonl "
            f"(got {len(dicts)} pool(s) for a .{fmt} file)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return path
