"""The near-duplicate guard (Settings.duplicate_guard): duplicates are never co-selected."""

from __future__ import annotations

import re
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adagres
from adagres import InputError, Settings
from adagres.core.baselines import run
from adagres.core.presets import NEAR_DUPLICATE_GUARD, run_preset
from adagres.core.records import VerdictKind

GREEDY = (
    "adagres",
    "topk_budget",
    "topk_same_k",
    "mmr",
    "orthogonal",
    "near_duplicates",
    "coverage",
    "reference_code",
)


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def pool_with_twin(seed: int, n: int, d: int = 8) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A random pool whose last chunk is an exact copy (embedding and text) of chunk 0."""
    rng = np.random.default_rng(seed)
    q = unit(rng.normal(size=d))
    chunks = rng.normal(size=(n, d)) + 1.5 * q
    chunks[-1] = chunks[0]
    texts = [" ".join(f"w{seed}_{i}_{k}" for k in range(12)) for i in range(n)]
    texts[-1] = texts[0]
    return q, chunks, texts


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(3, 12),
    budget=st.integers(1, 2_000),
    strategy=st.sampled_from(GREEDY),
    policy=st.sampled_from(("skip", "stop", "ratio", "fill")),
    guard=st.sampled_from(((0.99, None), (None, 1.0), (0.99, 0.8))),
)
def test_an_exact_duplicate_is_never_co_selected_under_the_guard(
    seed: int, n: int, budget: int, strategy: str, policy: str, guard: tuple
) -> None:
    q, chunks, texts = pool_with_twin(seed, n)
    tokens = np.random.default_rng(seed + 1).integers(20, 200, size=n)
    tokens[-1] = tokens[0]
    s = run(strategy, q, chunks, tokens, budget, texts=texts, policy=policy, duplicate_guard=guard)
    assert not {0, n - 1} <= set(s.indices)
    picked = set(s.indices)
    for d in s.duplicates:  # every drop names a pick made before it, and is not picked
        assert d.of in picked and d.chunk not in picked
        assert s.indices.index(d.of) < d.step
        assert s.verdict(d.chunk).kind is VerdictKind.DUPLICATE
    assert [k for k, _ in s.verdict_kinds] == [s.verdict(i).kind for i in range(n)]


def test_the_guard_is_the_only_thing_that_keeps_the_twin_out() -> None:
    """Without the guard the same runs do select both copies (so the test above can fail)."""
    q, chunks, texts = pool_with_twin(3, 6)
    tokens = np.full(6, 50)
    both = run("topk_budget", q, chunks, tokens, 300, texts=texts)
    assert {0, 5} <= set(both.indices)
    guarded = run("topk_budget", q, chunks, tokens, 300, texts=texts, duplicate_guard=(0.99, None))
    assert not {0, 5} <= set(guarded.indices) and guarded.size == 5
    (drop,) = guarded.duplicates
    assert (drop.of, drop.chunk) == (0, 5)  # equal relevance: the lower position is picked
    assert drop.cosine == pytest.approx(1.0) and drop.shared_text == 1.0  # same text


def pair_at(cosine: float) -> tuple[np.ndarray, np.ndarray]:
    """A query and 8 chunks in 4-d: chunks 0 and 1 at exactly ``cosine``, the rest apart."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    a = unit(np.array([0.9, 0.43, 0.0, 0.0]))
    side = unit(np.array([0.0, 0.0, 1.0, 0.0]))
    b = cosine * a + np.sqrt(1 - cosine**2) * side
    rest = [unit(np.array([0.7, -0.3 * k, 0.2 * (k % 3), 0.5])) for k in range(6)]
    return q, np.vstack([a, b, *rest])


@pytest.mark.parametrize("budget", [100, 200, 300, 400, 800])
def test_a_098_pair_is_never_picked_together_under_the_guard(budget: int) -> None:
    q, chunks = pair_at(0.98)
    assert float(chunks[0] @ chunks[1]) == pytest.approx(0.98)
    tokens = np.full(8, 100)
    unguarded = run("topk_budget", q, chunks, tokens, 800)
    assert {0, 1} <= set(unguarded.indices)  # top-k spends the budget: both without the guard
    s = run("topk_budget", q, chunks, tokens, budget, duplicate_guard=NEAR_DUPLICATE_GUARD)
    assert not {0, 1} <= set(s.indices)
    if budget >= 200:
        (drop,) = [d for d in s.duplicates if {d.chunk, d.of} == {0, 1}]
        verdict = s.verdict(drop.chunk)
        assert verdict.kind is VerdictKind.DUPLICATE and verdict.duplicate_of == drop.of
        assert "duplicate of #0" in verdict.summary() and "cosine 0.980" in verdict.summary()


def test_paper_has_no_guard_and_keeps_the_pair() -> None:
    q, chunks = pair_at(0.98)
    assert adagres.PRESETS["paper"].settings.duplicate_guard is None
    s = run_preset("paper", q, chunks, np.full(8, 100), 800, lam=0.0)
    assert {0, 1} <= set(s.indices) and s.duplicates == ()


def test_shared_text_catches_a_near_copy_the_embeddings_miss() -> None:
    q, chunks = pair_at(0.2)  # embeddings far apart
    body = "the maximum daily dose is 4000 mg for adults and 2000 mg for people with liver disease"
    texts = [body, "Answer posted again: " + body] + [f"other text number {k}" for k in range(6)]
    tokens = np.full(8, 100)
    s = run("topk_budget", q, chunks, tokens, 800, texts=texts, duplicate_guard=(None, 0.8))
    assert not {0, 1} <= set(s.indices)
    (drop,) = s.duplicates
    assert drop.shared_text == 1.0  # every 8-gram of the shorter one is in the longer one
    without_texts = run("topk_budget", q, chunks, tokens, 800, duplicate_guard=(None, 0.8))
    assert {0, 1} <= set(without_texts.indices)  # the text part needs the texts


def test_a_dropped_duplicate_is_ineligible_in_the_record_from_the_next_step() -> None:
    q, chunks, _ = pool_with_twin(5, 5)
    s = run(
        "adagres",
        q,
        chunks,
        np.full(5, 10),
        1000,
        lam=0.0,
        policy="fill",
        duplicate_guard=(0.99, None),
    )
    (drop,) = s.duplicates
    for step in s.steps:
        c = step.candidates
        assert c is not None
        assert bool(c.eligible[drop.chunk]) == (step.number <= drop.step)
    assert s.stop_reason.value == "pool_exhausted"  # every chunk is picked or a duplicate
    duplicates = cast("list[dict[str, object]]", s.to_dict()["duplicates"])
    assert duplicates[0]["duplicate_of"] == drop.of


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ((1.5, None), "duplicate_guard cosine: must be at most 1"),
        ((None, 0), "duplicate_guard shared_text: must be in (0, 1]"),
        (0.9, "duplicate_guard: expected (cosine, shared_text) or None"),
    ],
)
def test_bad_guards_are_named(value: Any, message: str) -> None:  # any value a caller passes
    with pytest.raises(InputError, match=re.escape(message)):
        Settings(duplicate_guard=value)


def test_the_guard_round_trips_through_json_settings() -> None:
    s = Settings(duplicate_guard=(0.9, 0.8))
    assert s.as_dict()["duplicate_guard"] == [0.9, 0.8]
    assert Settings.of(None, **s.as_dict()) == s
    assert Settings(duplicate_guard=(None, None)).duplicate_guard is None


def test_exact_keeps_its_search_and_drops_a_later_duplicate_from_its_set() -> None:
    q, chunks, texts = pool_with_twin(11, 6)
    tokens = np.full(6, 10)
    plain = run("exact", q, chunks, tokens, 60, texts=texts, lam=0.0)
    assert {0, 5} <= set(plain.indices)  # λ = 0: the optimum is every chunk
    s = run("exact", q, chunks, tokens, 60, texts=texts, lam=0.0, duplicate_guard=(0.99, None))
    assert set(s.indices) == set(plain.indices) - {5}
    (drop,) = s.duplicates
    assert (drop.chunk, drop.of) == (5, 0)
    assert s.verdict(5).kind is VerdictKind.DUPLICATE
