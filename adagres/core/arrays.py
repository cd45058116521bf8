"""The array type of the selection library that is named once: the embeddings' precision.

Every other array is typed where it appears, with its one dtype
(``NDArray[np.float64]``, ``NDArray[np.int64]``, ``NDArray[np.bool_]``, ``NDArray[np.intp]``);
the public functions take ``numpy.typing.ArrayLike``.
"""

from __future__ import annotations

from typing import TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "frozen"]

#: Unit embeddings and what is computed in their precision (cosine rows, gains): float32 as
#: embedding models emit it, float64 otherwise (:func:`adagres.core.validate.unit_rows`).
FloatArray: TypeAlias = NDArray[np.float32 | np.float64]

ArrayT = TypeVar("ArrayT", bound=NDArray[np.generic])


def frozen(array: ArrayT) -> ArrayT:
    """A read-only view of ``array`` (no copy; the caller's array stays writeable)."""
    view = array.view()
    view.flags.writeable = False
    return view
