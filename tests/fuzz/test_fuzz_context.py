"""Fuzzing ``Selection.context(texts, step)`` on packed and unpacked selections: any texts
(strings, wrong lengths, wrong items, arrays, mappings) and any step (whole numbers in and
out of range, floats, NaN, strings, booleans). The answer is the context the record gives
for the step, with the caller's texts untouched, or an InputError naming the argument."""

from __future__ import annotations

import copy
import math
from numbers import Real
from typing import Any

import numpy as np
import pytest
from fuzzing import characters, hostile_text, outcome, time_limit
from hypothesis import given
from hypothesis import strategies as st

from adagres import Settings
from adagres.core.overlaps import Spans
from adagres.core.packing import context_after
from adagres.core.prepared import prepare
from adagres.core.selection import select_prepared
from adagres.errors import InputError

pytestmark = time_limit(0.5)

WORDS = " ".join(f"w{i}" for i in range(60))
#: Four windows of one document, the middle two overlapping their neighbours, and one apart.
TEXTS = (WORDS[0:80], WORDS[60:140], WORDS[120:200], "an unrelated note about rivers")
STARTS = (0, 60, 120, None)


def selections() -> dict[str, Any]:
    rng = np.random.default_rng(3)
    C = rng.normal(size=(len(TEXTS), 6))
    q = C[:3].mean(axis=0)
    tokens = [len(t.split()) for t in TEXTS]
    spans = Spans(TEXTS, ("d", "d", "d", None), STARTS)
    packed = prepare(q, C, tokens).with_spans(spans)
    return {
        "packed": select_prepared(packed, 60, Settings(lam=0.0, packing=True)),
        "plain": select_prepared(prepare(q, C, tokens), 60, Settings(lam=0.0)),
    }


SELECTIONS = selections()

any_texts = st.one_of(
    st.just(list(TEXTS)),
    st.just(TEXTS),
    st.just(np.array(TEXTS)),
    st.lists(st.text(characters, max_size=10), min_size=0, max_size=6),
    st.lists(
        st.one_of(st.text(max_size=4), st.integers(), st.none(), st.binary(max_size=3)),
        min_size=4,
        max_size=4,
    ),
    hostile_text,
    st.binary(max_size=8),
    st.dictionaries(st.integers(0, 3), st.text(max_size=3), max_size=4),
    st.integers(),
    st.none(),
)
any_step = st.one_of(
    st.none(),
    st.integers(min_value=-3, max_value=12),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
)


def valid_texts(texts: Any, n: int) -> bool:
    if isinstance(texts, np.ndarray):
        return texts.ndim == 1 and len(texts) == n and all(isinstance(t, str) for t in texts)
    return (
        isinstance(texts, list | tuple)
        and len(texts) == n
        and all(isinstance(t, str) for t in texts)
    )


def valid_step(step: Any, steps: int) -> bool:
    if step is None:
        return True
    if isinstance(step, bool) or not isinstance(step, Real):
        return False
    if not math.isfinite(step) or step != math.floor(step):
        return False
    return 0 <= float(step) <= steps


@pytest.mark.parametrize("kind", sorted(SELECTIONS))
@given(texts=any_texts, step=any_step)
def test_context_is_the_records_or_an_input_error(kind, texts, step):
    selection = SELECTIONS[kind]
    before = copy.deepcopy(texts)
    context, error = outcome(lambda: selection.context(texts, step))
    expected_ok = valid_texts(texts, selection.n_chunks) and valid_step(step, len(selection.steps))
    if isinstance(texts, np.ndarray):
        assert np.array_equal(texts, before)
    else:
        assert texts == before  # never changed in place
    if not expected_ok:
        assert error is not None and error.split(":")[0] in ("texts", "step"), error
        return
    assert error is None, error
    k = selection.size if step is None else min(int(step), selection.size)
    charged = [
        int(s.winner_tokens) if s.winner_tokens is not None else int(selection.token_counts[i])
        for s, i in zip(selection.steps, selection.indices, strict=False)
    ]
    reference = context_after(
        selection.indices, charged, selection.passages, selection.merges, k, list(texts)
    )
    assert context == reference
    assert sum(paid for _, _, paid in context) <= selection.tokens_used
    assert sorted(i for chunks, _, _ in context for i in chunks) == sorted(selection.indices[:k])


def test_the_packed_selection_stitches():
    """The property above runs on a selection that did stitch (a guard on the fixture)."""
    assert SELECTIONS["packed"].passages and not SELECTIONS["plain"].passages
    with pytest.raises(InputError):
        SELECTIONS["packed"].context("".join(TEXTS))
