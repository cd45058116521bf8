"""Pool sets, found: the pieces (a ``.jsonl`` line, a pool file, a retrieved pool) of a
``.jsonl`` file, a folder of pool files or a collection spec, within the limits.

Rules: ``docs/POOL_FORMAT.md``, "Pool sets", and :func:`load_pool_set` (limits checked as
the set is read). A line is parsed on its own when its pool is needed (:func:`load_unit`),
so reading line 200,000 costs what reading line 1 does; a collection spec is checked field
by field (:func:`spec_fields`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adagres.core.validate import limit_hint
from adagres.errors import InputError, PoolError, one_line
from adagres.pools.chunk_fields import type_name
from adagres.pools.formats.jsonfile import parse_json
from adagres.pools.io import load_pool_line, load_pools
from adagres.pools.kept_values import string_list_problem
from adagres.pools.load_limits import DEFAULT_LIMITS, Limits
from adagres.pools.pool import Pool

__all__ = ["PoolSet", "Unit", "load_pool_set", "load_unit", "spec_fields"]

_POOL_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet", ".pq")


@dataclass(frozen=True)
class Unit:
    """One piece of a pool set: a byte range of a file (a ``.jsonl`` line from ``line``, or a
    whole file) or pools already in memory. It yields one pool, or several for a file that
    holds several."""

    label: str
    path: str | None = None
    start: int = 0
    end: int = 0
    #: The line of a ``.jsonl`` file this piece is (1-based); 0 for a whole file.
    line: int = 0
    pools: tuple[Pool, ...] | None = None
    limits: Limits = DEFAULT_LIMITS


@dataclass(frozen=True)
class PoolSet:
    """The pieces of a pool set, where they came from, and a fingerprint of their content
    (sha256 of the files' bytes, or of a collection spec and the pools it retrieved)."""

    name: str
    source: str
    fingerprint: str
    units: tuple[Unit, ...]

    def __len__(self) -> int:
        return len(self.units)


def _too_many_pieces(label: str, limits: Limits) -> PoolError:
    return PoolError(
        f"{label}: the pool set holds more than {limits.max_set_pools:,} pools (lines and "
        f"files), over the limit of {limits.max_set_pools:,} ({limit_hint('max_set_pools')})"
    )


def _file_units(path: Path, digest: Any, limits: Limits, units: list[Unit]) -> None:
    """Append the pieces of one file to ``units``: each non-blank line of a ``.jsonl`` file
    (its byte range), or the whole file. The file is read once, a line at a time (memory:
    the longest line), into the digest; its size is checked first, against ``max_bytes``."""
    # the pieces carry absolute paths: a Dask worker may run in another folder
    label, where = one_line(path.name, max_chars=120), str(path.resolve())
    with reading(label):
        size = path.stat().st_size
    if size > limits.max_bytes:
        raise PoolError(
            f"{label}: the file has {size:,} bytes, over the limit of {limits.max_bytes:,} "
            f"bytes ({limit_hint('max_bytes')})"
        )
    digest.update(f"{path.name}|{size}|".encode("utf-8", "surrogatepass"))
    lines = path.suffix.lower() == ".jsonl"
    if not lines:
        if len(units) >= limits.max_set_pools:
            raise _too_many_pieces(label, limits)
        units.append(Unit(label, where, 0, size, limits=limits))
    start, number = 0, 1
    with reading(label), path.open("rb") as handle:
        for line in handle:  # lines end at b"\n" only, as the .jsonl reader splits them
            digest.update(line)
            end = start + len(line)
            if lines and line.strip():
                if len(units) >= limits.max_set_pools:
                    raise _too_many_pieces(label, limits)
                stop = end - 1 if line.endswith(b"\n") else end
                units.append(
                    Unit(f"{label}, line {number}", where, start, stop, number, limits=limits)
                )
            start, number = end, number + 1
            if start > limits.max_bytes:  # the file grew while it was read
                raise PoolError(f"{label}: the file grew past {limits.max_bytes:,} bytes")


@contextlib.contextmanager
def reading(label: str) -> Iterator[None]:
    """Turn an OSError (a name too long, a folder we may not read, ...) into a PoolError."""
    try:
        yield
    except OSError as error:
        raise PoolError(f"{label}: cannot read the file ({error.strerror or error})") from None


def _spec(path: Path) -> Mapping[str, Any] | None:
    """The collection spec a ``.json`` file holds, or None (a pool file)."""
    if path.suffix.lower() != ".json" or not is_file(path) or path.stat().st_size > 1 << 20:
        return None
    try:
        obj = parse_json(path.read_bytes())
    except (OSError, ValueError):
        return None  # a pool file with a problem: its loader names it
    return obj if isinstance(obj, dict) and "collection" in obj and "queries" in obj else None


def is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a name the system refuses (too long, ...)."""
    try:
        return path.is_file()
    except OSError:
        return False


def load_pool_set(
    source: str | os.PathLike[str] | Mapping[str, Any], *, limits: Limits | None = None
) -> PoolSet:
    """Find the pools of a ``.jsonl`` file, a folder of pool files, or a collection spec.

    Files are read once here, a line at a time (for the fingerprint and the line offsets),
    and parsed when the set is summarised; a collection spec retrieves its pools now
    (:func:`adagres.stores.milvus.retrieve_pools`, one connection for every query).
    ``limits`` bounds the work: each file's bytes (``max_bytes``), the pieces of the set
    (``max_set_pools``: lines and files), and, when a piece is parsed, every limit of
    :func:`adagres.load_pools`.

    One bad line refuses the set: the PoolError names the file, the line and the problem
    (here, or when that line is parsed).
    """
    chosen = limits or DEFAULT_LIMITS
    if not isinstance(chosen, Limits):
        raise InputError(f"limits must be an adagres.Limits, got {type(chosen).__name__}")
    if not isinstance(source, (str, os.PathLike, Mapping)):
        raise InputError(
            f"pool set: expected a path or a spec mapping, got {type(source).__name__}"
        )
    if isinstance(source, Mapping):
        return _collection_set(source)
    path = Path(source)
    spec = _spec(path)
    if spec is not None:
        return _collection_set(spec)
    label = one_line(path, max_chars=200)
    digest = hashlib.sha256()
    units: list[Unit] = []
    try:
        folder, single = path.is_dir(), path.is_file()
    except OSError as error:
        raise PoolError(f"{label}: cannot read the pool set ({error.strerror or error})") from None
    if folder:
        found: list[Path] = []
        for entry in path.iterdir():  # counted as found: a folder of millions stops early
            if entry.suffix.lower() in _POOL_SUFFIXES and entry.is_file():
                found.append(entry)
                if len(found) > chosen.max_set_pools:
                    raise _too_many_pieces(label, chosen)
        for file in sorted(found):
            _file_units(file, digest, chosen, units)
    elif single:
        _file_units(path, digest, chosen, units)
    else:
        raise PoolError(f"{label}: no such pool set (a .jsonl file, a folder or a .json spec)")
    if not units:
        raise PoolError(f"{label}: the pool set holds no pool file or line")
    return PoolSet(path.name, str(path), digest.hexdigest(), tuple(units))


def _collection_set(spec: Mapping[str, Any]) -> PoolSet:
    from adagres.stores.milvus import redact_uri, retrieve_pools

    uri, collection, top_n, items = spec_fields(spec)
    pools = retrieve_pools(uri, collection, [item["query"] for item in items], top_n=top_n)
    units, digest = [], hashlib.sha256()
    for position, (item, pool) in enumerate(zip(items, pools, strict=True)):
        gold, ids = set(item["gold"]), set(pool.ids)
        unknown = [chunk_id for chunk_id in item["gold"] if chunk_id not in ids]
        if unknown:
            shown = ", ".join(repr(one_line(c, max_chars=60)) for c in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise InputError(
                f"pool set spec: queries[{position}].gold: {len(unknown)} id(s) not among the "
                f"{len(pool)} chunks retrieved for this query: {shown}{more} (raise top_n, "
                f"or check the ids)"
            )
        chunks = tuple(
            dataclasses.replace(c, gold=c.id in gold) if gold else c for c in pool.chunks
        )
        pool = dataclasses.replace(pool, chunks=chunks, answers=item["answers"])
        digest.update(f"{pool.fingerprint}|{sorted(gold)}|{pool.answers}|".encode())
        units.append(Unit(f"queries[{position}]", pools=(pool,)))
    source = f"{redact_uri(uri)} / {collection}"
    return PoolSet(collection, source, digest.hexdigest(), tuple(units))


def spec_fields(
    spec: Mapping[str, Any],
) -> tuple[str, str, int, list[dict[str, Any]]]:
    """The checked fields of a collection spec: ``uri``, ``collection``, ``top_n`` and the
    queries, each as ``{"query": str, "answers": tuple of str, "gold": list of str}``.

    Raise InputError naming the field (``queries[2].gold``) for a missing field, a value
    of the wrong type, a ``top_n`` that is not a whole number (2.9 is refused, not cut to
    2), or a string where a list of strings belongs (see
    :func:`~adagres.pools.kept_values.string_list_problem`), and for an unknown field (a
    misspelt ``answer`` would otherwise be ignored).
    """
    where = "pool set spec"
    _known_fields(spec, ("collection", "queries", "top_n", "uri"), where, "a spec")
    for key in ("uri", "collection", "queries"):
        if key not in spec:
            raise InputError(f"{where}: missing field {key!r}")
    for key in ("uri", "collection"):
        if not isinstance(spec[key], str) or not spec[key].strip():
            raise InputError(
                f"{where}: field {key!r} must be a non-empty string, got {_shown(spec[key])}"
            )
    top_n = spec.get("top_n", 20)
    if isinstance(top_n, float) and top_n.is_integer():
        top_n = int(top_n)  # 40.0 is a whole number, as JSON Schema reads it
    if isinstance(top_n, bool) or not isinstance(top_n, int):
        raise InputError(f"{where}: field 'top_n' must be a whole number, got {_shown(top_n)}")
    queries = spec["queries"]
    if isinstance(queries, (str, bytes)) or not isinstance(queries, (list, tuple)):
        problem = string_list_problem(queries)
        raise InputError(f"{where}: field 'queries': {problem}")
    items = []
    for position, item in enumerate(queries):
        field = f"{where}: queries[{position}]"
        if isinstance(item, str):
            item = {"query": item}
        if not isinstance(item, Mapping):
            raise InputError(f"{field}: must be a query text or an object, got {_shown(item)}")
        _known_fields(item, ("query", "answers", "gold"), field, "a query")
        if not isinstance(item.get("query"), str) or not item["query"].strip():
            raise InputError(
                f"{field}.query: must be a non-empty text, got {_shown(item.get('query'))}"
            )
        lists = {}
        for key in ("answers", "gold"):
            value = [] if item.get(key) is None else item[key]
            problem = string_list_problem(value)
            if problem is not None:
                raise InputError(f"{field}.{key}: {problem}")
            lists[key] = tuple(value) if key == "answers" else list(value)
        items.append({"query": item["query"], **lists})
    return spec["uri"], spec["collection"], top_n, items


def _known_fields(obj: Mapping[str, Any], known: tuple[str, ...], where: str, what: str) -> None:
    """Refuse a field not in ``known`` (a misspelt ``answer`` would otherwise be ignored)."""
    unknown = sorted(set(map(str, obj)) - set(known))
    if unknown:
        shown = ", ".join(repr(one_line(key, max_chars=40)) for key in unknown[:5])
        raise InputError(f"{where}: unknown field(s) {shown}; {what} has {', '.join(known)}")


def _shown(value: Any) -> str:
    return f"{type_name(value)} {one_line(repr(value), max_chars=60)}"


def load_unit(unit: Unit) -> list[Pool]:
    """The pools of one piece, validated (a PoolError names its file and line)."""
    if unit.pools is not None:
        return list(unit.pools)
    assert unit.path is not None
    name = Path(unit.path).name
    with reading(one_line(name, max_chars=120)), open(unit.path, "rb") as handle:
        handle.seek(unit.start)
        data = handle.read(unit.end - unit.start)
    key = (
        Path(name).suffix.lower(),
        unit.line,
        unit.limits,
        hashlib.blake2b(data, digest_size=16).digest(),
    )
    with _PARSED_LOCK:
        if key in _PARSED:
            _PARSED.move_to_end(key)
            return list(_PARSED[key][0])
    if unit.line:
        pools = [load_pool_line(data, name=name, line=unit.line, limits=unit.limits)]
    else:
        pools = load_pools(data, name=name, limits=unit.limits)
    _keep_parsed(key, tuple(pools), len(data))
    return pools


#: Bytes of pool files whose parsed pools a process keeps (:func:`load_unit`): a set
#: summarised again when a setting moves reads its files and finds their pools parsed by
#: the digest of their bytes, instead of parsing them again (a 2,000-chunk pool of 384-d
#: vectors is 15 MB of JSON, about 0.3 s to parse). The least recently used go first.
PARSED_CACHE_BYTES = 64 * 2**20
_PARSED: OrderedDict[tuple, tuple[tuple[Pool, ...], int]] = OrderedDict()
_PARSED_LOCK = threading.Lock()


def _keep_parsed(key: tuple, pools: tuple[Pool, ...], size: int) -> None:
    if size > PARSED_CACHE_BYTES:
        return
    with _PARSED_LOCK:
        _PARSED[key] = (pools, size)
        _PARSED.move_to_end(key)
        held = sum(size for _, size in _PARSED.values())
        while held > PARSED_CACHE_BYTES:
            _, (_, gone) = _PARSED.popitem(last=False)
            held -= gone
