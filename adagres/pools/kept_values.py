"""Values a pool keeps as given (strings, metadata, unknown keys): each must survive a save.

A pool that loads must save, and the saved file must load back to the same pool. So every
string is real text (no lone surrogates, which no UTF-8 file, hash, tokenizer or model can
take) within its length limit, and every kept value is a JSON value that reads back equal:
finite numbers, string keys, lists rather than tuples, no Python objects.

Why reject lone surrogates instead of repairing them: a surrogate half is not a character
(a UTF-16 pair split by a bad decoder); replacing it would alter the user's text, which the
loaders never do, and keeping it would break every consumer that encodes text. Refusing it
at the boundary, naming the chunk and the field, lets every consumer trust a pool's strings.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from adagres.core.validate import limit_hint, string_problem
from adagres.errors import one_line
from adagres.pools.load_limits import Limits

__all__ = ["json_value_problem", "string_list_problem"]

_PLAIN_KEY = re.compile(r"[A-Za-z_][\w-]*\Z")
# Python refuses to read integers of more than 4,300 digits (sys.int_info); 14,000 bits
# stays under that, so a kept integer always reads back.
_MAX_INT_BITS = 14_000
_SCALARS = frozenset({str, int, float, bool, type(None)})


def string_list_problem(value: Any) -> str | None:
    """What keeps ``value`` from being a list of strings (answers, gold ids, queries), or None.

    The rule for every such argument and field: a list (or tuple) whose items are all
    strings. A single string is refused, never split into its characters nor guessed to be
    one item (``"Paris"`` could as well be ``"Paris, Lyon"`` meant as two): the message says
    to wrap it.

    >>> string_list_problem(["Paris"]) is None, string_list_problem(("a", "b")) is None
    (True, True)
    >>> print(string_list_problem("Paris"))
    must be a list of strings, got a string 'Paris'; wrap a single item in a list: ['Paris']
    >>> print(string_list_problem(["a", 3]))
    must be a list of strings; item 1 is an integer 3
    """
    if isinstance(value, (str, bytes)):
        shown = one_line(repr(value), max_chars=40)
        return (
            f"must be a list of strings, got a {'string' if isinstance(value, str) else 'bytes'} "
            f"{shown}; wrap a single item in a list: [{shown}]"
        )
    if not isinstance(value, (list, tuple)):
        return f"must be a list of strings, got {_kind(value)}"
    for position, item in enumerate(value):
        if not isinstance(item, str):
            shown = one_line(repr(item), max_chars=40)
            return f"must be a list of strings; item {position} is {_kind(item)} {shown}"
    return None


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", dict: "an object"}
    return "null" if value is None else names.get(type(value), f"a {type(value).__name__}")


def _key_path(path: str, key: str) -> str:
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{one_line(json.dumps(key), max_chars=40)}]"


def _scalar_problem(item: Any, limits: Limits) -> str | None:
    if item is None or isinstance(item, bool):
        return None
    if not isinstance(item, (str, int, float)):
        return (
            f"a value of type {type(item).__name__} is not a JSON value (a string, number, "
            f"true/false, null, list or object)"
        )
    if isinstance(item, str):
        return string_problem(item, limits.max_field_chars, "max_field_chars")
    if isinstance(item, float) and not math.isfinite(item):
        return (
            f"{item} is not a finite number: JSON has no NaN or infinity "
            f"(a number beyond ±1.8e308 reads as infinity)"
        )
    if isinstance(item, int) and item.bit_length() > _MAX_INT_BITS:
        return f"an integer of {item.bit_length():,} bits is too long to read back from JSON"
    return None


def json_value_problem(
    value: Any, path: str, limits: Limits, *, level: int = 1
) -> tuple[str, str] | None:
    """The path and the problem of the first part of ``value`` that would not save and load
    back unchanged, or None; ``path`` names ``value`` itself (e.g. ``"metadata"``).

    ``level`` is the nesting level ``value`` has in a canonical pool file if it is a list or
    an object (the pool object is level 1, a chunk 3, a chunk's metadata 4): lists and
    objects nested deeper than ``limits.max_depth`` in the file are a problem. Walks
    without recursion, so any depth is safe to check.

    >>> from adagres.pools.load_limits import DEFAULT_LIMITS
    >>> json_value_problem({"page": 1, "spans": [[0, 4]]}, "metadata", DEFAULT_LIMITS) is None
    True
    >>> json_value_problem({"a b": [1.0, float("nan")]}, "metadata", DEFAULT_LIMITS)[0]
    'metadata["a b"][1]'
    """
    if not isinstance(value, (list, dict)):
        problem = _scalar_problem(value, limits)
        return None if problem is None else (path, problem)
    # Depth-first over (container, iterator of its items) frames: memory grows with the
    # depth, not with the number of values, and a path is only built for a problem.
    frames: list[tuple[Any, Iterator[tuple[Any, Any]]]] = []
    steps: list[Any] = []

    def where(*last: Any) -> str:
        text = path
        for step in (*steps, *last):
            text = f"{text}[{step}]" if isinstance(step, int) else _key_path(text, step)
        return text

    def deep(at: int) -> str:
        return (
            f"nested {at} levels deep in the pool file, over the limit of "
            f"{limits.max_depth} ({limit_hint('max_depth')})"
        )

    if level > limits.max_depth:
        return path, deep(level)
    frames.append((value, _items(value)))
    while frames:
        container, items = frames[-1]
        keyed = isinstance(container, dict)
        for key, child in items:
            if keyed:
                problem = _key_problem(key, limits)
                if problem is not None:
                    return where(), problem
            if isinstance(child, (list, dict)):
                if level + len(frames) > limits.max_depth:
                    return where(key), deep(level + len(frames))
                if not child:
                    continue
                if isinstance(child, list):
                    found = _flat_problem(child, limits)
                    if found is None:
                        continue  # a flat list, and fine
                    if found[0] >= 0:
                        return where(key, found[0]), found[1]
                steps.append(key)
                frames.append((child, _items(child)))
                break
            problem = _scalar_problem(child, limits)
            if problem is not None:
                return where(key), problem
        else:
            frames.pop()
            if steps:
                steps.pop()
    return None


def _items(container: Any) -> Iterator[tuple[Any, Any]]:
    return enumerate(container) if isinstance(container, list) else iter(container.items())


def _key_problem(key: Any, limits: Limits) -> str | None:
    if not isinstance(key, str):
        shown = one_line(repr(key), max_chars=40)
        return f"has the key {shown} ({type(key).__name__}): JSON object keys are strings"
    problem = string_problem(key, limits.max_field_chars, "max_field_chars")
    return None if problem is None else f"a key {problem}"


def _flat_problem(items: list[Any], limits: Limits) -> tuple[int, str] | None:
    """For a list without containers, the position and problem of its first bad value, or
    None when all are fine; ``(-1, "")`` for a list that holds containers (walk it)."""
    kinds = set(map(type, items))
    if not kinds <= _SCALARS:
        return -1, ""
    if kinds == {float} and all(map(math.isfinite, items)):
        return None  # the common case, an embedding or a list of scores
    if kinds == {int} and max(map(abs, items)).bit_length() <= _MAX_INT_BITS:
        return None
    for position, element in enumerate(items):
        problem = _scalar_problem(element, limits)
        if problem is not None:
            return position, problem
    return None
