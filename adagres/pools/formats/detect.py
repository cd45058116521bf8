"""A pool file before parsing: which format it is, its bytes within the size limit, its text."""

from __future__ import annotations

import os
from pathlib import Path

from adagres.errors import PoolError, one_line

__all__ = ["FORMATS", "decode_text", "detect_format", "read_source"]

FORMATS = ("json", "jsonl", "csv", "parquet")

_EXTENSIONS = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def detect_format(name: str | None, format: str | None = None) -> str:
    """Return the pool format (one of ``FORMATS``) from ``format`` or the name's extension.

    >>> detect_format("runs/pool.JSONL")
    'jsonl'
    """
    if format is not None:
        fmt = format.lower().lstrip(".")
        fmt = "jsonl" if fmt == "ndjson" else fmt
        if fmt not in FORMATS:
            shown = one_line(repr(format), max_chars=60)
            raise PoolError(f"unknown format {shown}; choose one of {', '.join(FORMATS)}")
        return fmt
    suffix = Path(name or "").suffix.lower()
    if suffix not in _EXTENSIONS:
        raise PoolError(
            f"{name or '<bytes>'}: cannot tell the format from the name; give format= "
            f"({', '.join(FORMATS)}) or a name ending in {', '.join(sorted(_EXTENSIONS))}"
        )
    return _EXTENSIONS[suffix]


def read_source(
    source: str | os.PathLike[str] | bytes, name: str | None, max_bytes: int
) -> tuple[bytes, str]:
    """Return the bytes of a path (or of bytes given) and the label messages name it by."""
    data = b""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        label, size = name or "<bytes>", len(data)
    else:
        path = Path(source)
        label = name or path.name
        try:
            if not path.is_file():
                raise PoolError(f"{label}: no such file ({path})")
            size = path.stat().st_size
            if size <= max_bytes:  # a file over the limit is not read
                with path.open("rb") as handle:
                    data = handle.read(max_bytes + 1)  # a file that grew since stat() stops here
                size = len(data)
        except OSError as error:  # a name too long, a folder we may not read, ...
            raise PoolError(f"{label}: cannot read the file ({error.strerror})") from None
    if size > max_bytes:
        raise PoolError(
            f"{label}: the file has {size:,} bytes, over the limit of "
            f"{max_bytes:,} bytes (raise max_bytes to load it)"
        )
    return data, label


def decode_text(data: bytes, label: str) -> str:
    """Decode UTF-8 (dropping a byte-order mark); name the line of the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise PoolError(
            f"{label}, line {line}: bytes are not UTF-8 (byte 0x{data[error.start]:02x} at "
            f"offset {error.start:,}); save the file as UTF-8"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text
