"""Reading a plotly figure in the tests: its dict with typed arrays decoded, one trace."""

from __future__ import annotations

from typing import Any

import numpy as np
from reference import typed_array


def decoded(value: Any) -> Any:
    """``value`` with plotly's typed arrays ({"dtype", "bdata"[, "shape"]}, base64, which
    numpy inputs become) and the numpy arrays it keeps as they are (empty or of objects)
    as lists, so that tests read lists whatever the input; NaN, a typed array's missing
    value (a gap, as null is in a list), reads as None."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        value = typed_array(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return [None if x != x else x for x in value.tolist()]
        return value.tolist()
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


def as_dict(fig: Any) -> dict[str, Any]:
    return decoded(fig.to_dict())


def trace(fig: Any, name: str) -> dict[str, Any]:
    """The one trace of ``fig`` called ``name``, as a decoded dict."""
    matches = [t for t in as_dict(fig)["data"] if t.get("name") == name]
    assert len(matches) == 1, name
    return matches[0]
