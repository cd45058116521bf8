"""Duplicate keys in a JSON object: found, never silently resolved.

JSON parsers (the standard one and orjson alike) keep the last value of a key that an
object holds twice, so ``{"text": "a", "text": "b"}`` would load as ``b`` with no word.
The rule here: a text whose objects repeat a key is refused, naming the key, the line and
the column of the object. The check is cheap on the common path: the number of key/value
separators in the text (colons outside strings) must equal the number of keys the parsed
value holds; only when they differ is the text read again (slowly) to find the key.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from typing import Any

__all__ = ["DuplicateKeyError", "check_no_duplicate_keys", "count_keys", "key_separators"]

# A JSON string; the same pattern as the depth scan's (raw newlines end it).
_STRING_BYTES = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_STRING_TEXT = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_SCALARS = frozenset({int, float, str, bool, type(None)})


class DuplicateKeyError(json.JSONDecodeError):
    """A JSON object holds the same key twice; ``key`` is that key, ``pos`` the object's start."""

    def __init__(self, key: str, doc: str, pos: int) -> None:
        self.key = key
        shown = json.dumps(key, ensure_ascii=False)[:80]
        message = f"the object has the key {shown} twice (a JSON reader keeps only one value)"
        super().__init__(message, doc, pos)


def key_separators(text: str | bytes) -> int:
    """The colons outside JSON strings: for valid JSON, the number of keys it writes.

    >>> key_separators('{"a": 1, "b": {"c: d": 2}}')
    3
    """
    pattern: Any = _STRING_BYTES if isinstance(text, bytes) else _STRING_TEXT
    colon: Any = b":" if isinstance(text, bytes) else ":"
    inside = sum(match.group().count(colon) for match in pattern.finditer(text))
    return int(text.count(colon) - inside)


def count_keys(value: Any) -> int:
    """The keys of every object in a parsed JSON value (lists of scalars are skipped in C).

    >>> count_keys({"a": [1, {"b": 2}], "c": {}})
    3
    """
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            total += len(item)
            stack.extend(v for v in item.values() if type(v) is dict or type(v) is list)
        elif type(item) is list and not set(map(type, item)) <= _SCALARS:
            stack.extend(v for v in item if type(v) is dict or type(v) is list)
    return total


def check_no_duplicate_keys(parsed: Any, text: str | bytes) -> None:
    """Raise :class:`DuplicateKeyError` if ``text`` (which parsed to ``parsed``) repeats a
    key in one of its objects.

    >>> try:
    ...     check_no_duplicate_keys({"a": 2}, '[{"b": 1}, {"a": 1, "a": 2}]')
    ... except DuplicateKeyError as error:
    ...     print(error.key, error.lineno, error.colno)
    a 1 12
    """
    if count_keys(parsed) == key_separators(text):
        return
    document = text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else text
    _find_duplicate(document)


def _find_duplicate(text: str) -> None:
    """Parse ``text`` again with the pure-Python scanner, which tells where each object
    starts, and raise at the first object that repeats a key."""

    def parse_object(
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: Any,
        hook: Any,
        pairs_hook: Any,
        memo: Any = None,
    ) -> tuple[dict[str, Any], int]:
        start = s_and_end[1] - 1
        pairs, end = _JSON_OBJECT(s_and_end, strict, scan_once, None, lambda found: found, memo)
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKeyError(key, text, start)
            seen.add(key)
        return dict(pairs), end

    decoder = json.JSONDecoder(parse_constant=float)
    # The pure-Python scanner calls the decoder's parse_object with each object's start.
    setattr(decoder, "parse_object", parse_object)  # noqa: B010 - an attribute typeshed omits
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    decoder.decode(text)


_JSON_OBJECT: Any = getattr(json.decoder, "JSONObject")  # noqa: B009 - not in typeshed
