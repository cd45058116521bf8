"""Metrics of a selection, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from adagres import InputError, select
from adagres import baselines as b
from adagres.core.metrics import answer_found, evaluate, iou, near_duplicate_pairs, normalize_answer


def angle(deg):
    return [np.cos(np.deg2rad(deg)), np.sin(np.deg2rad(deg))]


E2 = np.array([1.0, 0.0])
C = np.array([angle(0), angle(5), angle(10), angle(60)])
TEXTS = ["The maximum is 1,200 mg.", "An adult dose is 200 mg.", "Take with food.", "Unrelated."]


def test_metrics_by_hand():
    s = b.topk_budget(E2, C, [10, 10, 10, 10], 30, lam=0.5)
    assert s.indices == (0, 1, 2)
    m = evaluate(s, C, gold=[0, 3], answers=["1200 mg"], texts=TEXTS)
    cos = np.cos(np.deg2rad([5, 10, 5]))  # pairs (0,1), (0,2), (1,2)
    assert m.size == 3 and m.tokens_used == 30 and m.budget_use == 1.0
    assert m.relevance_sum == pytest.approx(1 + np.cos(np.deg2rad(5)) + np.cos(np.deg2rad(10)))
    assert m.redundancy_mean == pytest.approx(cos.mean())
    assert m.redundancy_max == pytest.approx(cos.max())
    assert m.near_duplicates == 3
    assert m.iou == pytest.approx(1 / 4) and m.recall == 0.5 and m.precision == pytest.approx(1 / 3)
    assert m.answer_found is True
    assert m.objective == pytest.approx(s.objective)


def test_metrics_without_gold_and_for_empty_selections():
    s = select(E2, C, [10, 10, 10, 10], 5)
    m = evaluate(s, C)
    assert (m.size, m.redundancy_mean, m.redundancy_max, m.near_duplicates) == (0, 0.0, 0.0, 0)
    assert m.iou is None and m.answer_found is None
    assert evaluate(s, C, gold=[1]).iou == 0.0
    with pytest.raises(InputError, match="has 3 chunks, the selection was made from 4"):
        evaluate(s, C[:3])
    with pytest.raises(InputError, match="needs the chunk texts"):
        evaluate(s, C, answers=["x"])


def test_answer_normalisation():
    assert normalize_answer("  The Answer, an ANSWER! ") == "answer answer"
    assert answer_found(["the 1,200 mg"], "limit: 1200 MG per day") is True
    assert answer_found(["12"], "take 120 mg") is False  # whole tokens, not substrings
    assert answer_found([""], "anything") is False
    assert iou([], []) == 1.0 and iou([1], [2]) == 0.0


def test_near_duplicate_pairs_threshold():
    pairs = near_duplicate_pairs(C, [0, 1, 3], threshold=0.99)
    assert pairs == [(0, 1, pytest.approx(np.cos(np.deg2rad(5))))]
    assert near_duplicate_pairs(C, [3]) == []


def test_gold_by_chunk_id_equals_gold_by_position():
    s = b.topk_budget(E2, C, [10, 10, 10, 10], 30, lam=0.5)
    ids = ["a", "b", "c", "d"]
    by_id = evaluate(s, C, gold=["a", "d"], ids=ids)
    by_position = evaluate(s, C, gold=[0, 3])
    assert (by_id.iou, by_id.recall, by_id.precision) == (
        by_position.iou,
        by_position.recall,
        by_position.precision,
    )
    with pytest.raises(InputError, match="gold: chunk id 'z': not in the pool"):
        evaluate(s, C, gold=["z"], ids=ids)
    with pytest.raises(InputError, match="no ids were given"):
        evaluate(s, C, gold=["a"])
    with pytest.raises(InputError, match="position 9 is outside the pool of 4"):
        evaluate(s, C, gold=[9])


def test_candidates_relevance_term_is_alpha_r():
    s = select(E2, C, [10, 10, 10, 10], 20, lam=0.5, alpha=2.0)
    for step in s.steps:
        c = step.candidates
        assert c is not None  # a traced run records them
        live = c.in_play
        assert c.relevance_term[live] == pytest.approx(2.0 * s.relevance[live])
        assert np.isnan(c.relevance_term[~live]).all()
