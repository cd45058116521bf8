"""The pool loaders' JSON parser (orjson where it reads a text as the standard parser does,
the standard parser otherwise) gives exactly what ``json.loads(text, parse_constant=float)``
gives, value for value and type for type, on any JSON a program writes and on texts that
only the standard parser reads."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adagres.pools.formats.jsonfile import fast_parse_is_exact, parse_json

scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # far past 64 bits too: orjson would read those as floats
    | st.floats()  # NaN, infinities, subnormals, -0.0
    | st.text()  # lone surrogates included
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def same(a, b) -> bool:
    """Equal, with the same types all the way down (1 is not 1.0), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def standard(text):
    return json.loads(text, parse_constant=float)


@given(values, st.booleans(), st.sampled_from([None, 1]))
def test_parse_json_equals_the_standard_parser(value, ascii_only, indent):
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    expected = standard(text)
    assert same(parse_json(text), expected)
    data = text.encode("utf-8", "surrogatepass")
    assert same(parse_json(data), standard(data))


@pytest.mark.parametrize(
    "text",
    [
        "123456789012345678901234567890",  # an integer orjson would make a float
        "[1, -12345678901234567890123]",
        '{"a": 18446744073709551616}',  # 2**64
        "[9223372036854775807, -9223372036854775808]",
        "[0.00012345678901234567890, 1e400, -1e400, NaN, Infinity]",
        '"\\ud800"',  # an escaped lone surrogate
        "  7  ",
        "-0",
        "[1e-400, 5e-324, 1.7976931348623157e308]",
    ],
)
def test_texts_at_the_edges_parse_as_the_standard_parser_does(text):
    assert same(parse_json(text), standard(text))
    assert same(parse_json(text.encode()), standard(text.encode()))


@pytest.mark.parametrize("text", ["[1, 2,]", "{'a': 1}", "[1] x", "\ufeff[1]", "[01]"])
def test_malformed_texts_raise_the_standard_error(text):
    with pytest.raises(json.JSONDecodeError) as expected:
        standard(text)
    with pytest.raises(json.JSONDecodeError) as got:
        parse_json(text)
    assert (got.value.msg, got.value.pos) == (expected.value.msg, expected.value.pos)


def test_the_fast_parser_reads_what_programs_write_for_pools():
    """Embeddings as Python writes them (17 significant digits, leading zeros) go to the
    fast parser; integers of 19 digits or more, anywhere, go to the standard one."""
    import numpy as np

    rng = np.random.default_rng(0)
    pool = {
        "query": "q",
        "chunks": [
            {
                "id": f"c{i}",
                "text": "x",
                "tokens": 120,
                "embedding": (rng.normal(size=384) / 20).tolist(),
            }
            for i in range(20)
        ],
    }
    assert fast_parse_is_exact(json.dumps(pool).encode())
    assert fast_parse_is_exact(json.dumps(pool, indent=2).encode())
    for text in (
        b"12345678901234567890",  # 20 digits: past 2**64 - 1 from 18446744073709551616
        b'{"n":-1234567890123456789}',  # 19 after a minus: below -2**63 from ...809
        b"[1,\n22222222222222222222]",
        b"[0.5, 12345678901234567890.5]",
    ):
        assert not fast_parse_is_exact(text)
    assert fast_parse_is_exact(
        b"[1234567890123456789, -123456789012345678, 0.00012345678901234567]"
    )


def test_a_large_text_goes_to_the_standard_parser():
    """orjson's parse holds about 13 bytes per byte of text: past a megabyte the standard
    parser keeps the loaders within their memory bound (tests/fuzz/test_limits.py)."""
    from adagres.pools.formats.jsonfile import FAST_PARSE_MAX_BYTES

    text = json.dumps(["x" * 1000] * 2000).encode()
    assert len(text) > FAST_PARSE_MAX_BYTES and not fast_parse_is_exact(text)
    assert fast_parse_is_exact(text[: FAST_PARSE_MAX_BYTES // 2].rsplit(b",", 1)[0] + b"]")
