"""The greedy selector against SPEC.md: reference implementation, hand cases, invariants."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from reference import naive_objective, naive_select, random_pool, unit

import adagres
from adagres import InputError, StopReason, VerdictKind, select

E2 = np.array([1.0, 0.0])


def angle(deg: float) -> list[float]:
    rad = np.deg2rad(deg)
    return [float(np.cos(rad)), float(np.sin(rad))]


@pytest.mark.parametrize("policy", ["skip", "stop", "fill", "ratio"])
@pytest.mark.parametrize("seed", range(40))
def test_matches_the_literal_reference(policy, seed):
    rng = np.random.default_rng(seed)
    q, C, tokens = random_pool(rng, n=int(rng.integers(2, 25)))
    budget = int(rng.integers(0, 400))
    lam = float(rng.choice([0.0, 0.05, 0.3, 1.0, 3.0]))
    got = select(q, C, tokens, budget, lam=lam, policy=policy)
    picks, reason = naive_select(q, C, list(tokens), budget, lam, policy=policy)
    if policy == "ratio" and got.note is not None:  # the safeguard replaced the ratio set
        best = max(
            (i for i in range(len(C)) if tokens[i] <= budget), key=lambda i: unit(C[i]) @ unit(q)
        )
        assert got.indices == (best,)
        assert got.objective > naive_objective(q, C, picks, lam)
        return
    assert list(got.indices) == picks
    assert got.stop_reason.value == reason


@pytest.mark.parametrize("floor", [0.0, 0.2, "pool"])
def test_redundancy_floor_matches_reference(floor):
    rng = np.random.default_rng(7)
    q, C, tokens = random_pool(rng, n=20)
    got = select(q, C, tokens, 300, lam=1.0, redundancy_floor=floor)
    assert got.calibration is not None
    tau = got.calibration.mean_similarity if floor == "pool" else floor
    assert got.redundancy_floor == pytest.approx(tau)
    picks, _ = naive_select(q, C, list(tokens), 300, 1.0, tau=tau)
    assert list(got.indices) == picks
    assert got.objective == pytest.approx(naive_objective(q, C, picks, 1.0, tau=tau))


@pytest.mark.parametrize("policy", ["skip", "stop", "fill", "ratio"])
def test_fast_path_equals_traced_path(policy):
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, C, tokens = random_pool(rng, n=int(rng.integers(1, 60)), d=16)
        budget = int(rng.integers(0, 900))
        traced = select(q, C, tokens, budget, policy=policy)
        fast = select(q, C, tokens, budget, policy=policy, trace=False)
        assert fast.indices == traced.indices
        assert fast.stop_reason == traced.stop_reason
        assert [s.gain for s in fast.steps] == [s.gain for s in traced.steps]
        assert [s.runner_up for s in fast.steps] == [s.runner_up for s in traced.steps]
        assert traced.traced and fast.pick_similarity is None


def test_step_gains_sum_to_the_objective():
    rng = np.random.default_rng(11)
    for _ in range(30):
        q, C, tokens = random_pool(rng, n=30)
        s = select(q, C, tokens, int(rng.integers(50, 600)), lam=float(rng.uniform(0, 2)))
        accepted = [step.gain for step in s.steps if step.accepted]
        gains = [g for g in accepted if g is not None]
        assert len(gains) == len(accepted)  # every pick records its gain
        assert sum(gains) == pytest.approx(s.objective, abs=1e-9)
        assert s.objective == pytest.approx(naive_objective(q, C, s.indices, s.lam), abs=1e-9)


def test_budget_and_token_bookkeeping():
    rng = np.random.default_rng(5)
    q, C, tokens = random_pool(rng, n=40)
    s = select(q, C, tokens, 350, lam=0.1, policy="fill")
    assert s.tokens_used == int(tokens[list(s.indices)].sum()) <= 350
    used = 0
    for step in s.steps[:-1]:
        used += int(tokens[step.winner])
        assert (step.tokens_used, step.tokens_left) == (used, 350 - used)
    assert s.budget_use == pytest.approx(s.tokens_used / 350)


def test_hand_computed_redundant_twin_is_passed_over():
    # A at 20°, B at 25° (a near-twin of A), C at -30°; the query at 0°.
    C = np.array([angle(20), angle(25), angle(-30)])
    s = select(E2, C, [10, 10, 10], 100, lam=1.0)
    cos = lambda deg: float(np.cos(np.deg2rad(deg)))  # noqa: E731
    assert s.indices == (0, 2)
    first, second, last = s.steps
    assert first.gain == pytest.approx(cos(20)) and first.runner_up == 1
    # Step 2: B gains cos25 - cos5 < 0, C gains cos30 - cos50 > 0.
    assert second.candidates is not None  # a traced run records them
    assert second.candidates.gain[1] == pytest.approx(cos(25) - cos(5))
    assert second.gain == pytest.approx(cos(30) - cos(50))
    assert second.winner == 2 and second.runner_up == 1
    # Step 3: B's redundancy cos5 + cos55 exceeds its relevance: stop.
    assert last.winner == 1 and not last.accepted
    assert last.redundancy_term == pytest.approx(cos(5) + cos(55))
    assert s.stop_reason is StopReason.NO_POSITIVE_GAIN
    assert s.verdict(1).kind is VerdictKind.NON_POSITIVE_GAIN
    assert s.objective == pytest.approx(cos(20) + cos(30) - cos(50))


def test_hand_computed_gains():
    C = np.array([angle(0), angle(10), angle(70)])
    s = select(E2, C, [10, 10, 10], 100, lam=0.5)
    c10, c70, c60 = np.cos(np.deg2rad([10, 70, 60]))
    step2 = s.steps[1]
    # After picking chunk 0: gain_1 = cos10 - 0.5 cos10, gain_2 = cos70 - 0.5 cos70.
    assert step2.candidates is not None
    assert step2.candidates.gain[1] == pytest.approx(0.5 * c10)
    assert step2.candidates.gain[2] == pytest.approx(0.5 * c70)
    assert step2.winner == 1 and step2.runner_up == 2
    # Step 3: chunk 2 has redundancy 0.5 (cos70 + cos60) > relevance cos70 -> stop.
    last = s.steps[2]
    assert last.winner == 2 and not last.accepted
    assert last.redundancy_term == pytest.approx(0.5 * (c70 + c60))
    assert s.stop_reason is StopReason.NO_POSITIVE_GAIN
    assert s.verdict(2).kind is VerdictKind.NON_POSITIVE_GAIN


def test_ties_go_to_the_lowest_pool_position():
    C = np.array([angle(30), angle(-30), angle(30), angle(-30)])
    s = select(E2, C, [10, 10, 10, 10], 40, lam=0.0)
    assert s.indices == (0, 1, 2, 3)
    assert s.steps[0].runner_up == 1


def test_zero_lambda_is_relevance_order():
    rng = np.random.default_rng(1)
    q, C, _ = random_pool(rng, n=25)
    s = select(q, C, np.ones(25, dtype=int), 10, lam=0.0)
    order = np.argsort(-(unit(C) @ unit(q)), kind="stable")
    assert list(s.indices) == list(order[: len(s.indices)])


class TestPolicies:
    # Chunk 0: the most relevant, but 200 tokens: larger than the whole budget of 100.
    C = np.array([angle(0), angle(20), angle(40), angle(45)])
    tokens = (200, 40, 40, 40)

    def test_skip_steps_past_a_chunk_that_never_fits(self):
        s = select(E2, self.C, self.tokens, 100, lam=0.0)
        assert s.indices == (1, 2)
        assert s.stop_reason is StopReason.BUDGET_EXHAUSTED
        verdict = s.verdict(0)
        assert verdict.kind is VerdictKind.DID_NOT_FIT
        assert (verdict.step, verdict.tokens, verdict.tokens_left) == (1, 200, 100)
        assert s.verdict(3).kind is VerdictKind.DID_NOT_FIT
        assert (s.verdict(3).step, s.verdict(3).tokens_left) == (3, 20)

    def test_stop_ends_when_the_best_does_not_fit(self):
        s = select(E2, self.C, self.tokens, 100, lam=0.0, policy="stop")
        assert s.indices == ()
        assert s.stop_reason is StopReason.BUDGET_EXHAUSTED
        assert s.steps[0].winner == 0 and not s.steps[0].accepted
        assert s.verdict(1).kind is VerdictKind.OUTSCORED

    def test_fill_spends_the_budget_after_gains_turn_negative(self):
        twins = np.array([angle(0), angle(1), angle(2), angle(3)])
        skip = select(E2, twins, [10] * 4, 40, lam=2.0)
        fill = select(E2, twins, [10] * 4, 40, lam=2.0, policy="fill")
        assert skip.indices == (0,) and skip.stop_reason is StopReason.NO_POSITIVE_GAIN
        # After chunk 0, the farthest twin (3°) is the least redundant.
        assert fill.indices == (0, 3, 1, 2) and fill.stop_reason is StopReason.POOL_EXHAUSTED
        assert fill.positive_steps == 1
        assert [s.positive for s in fill.steps[:4]] == [True, False, False, False]
        g1, g2, g3 = (fill.steps[t].gain for t in (1, 2, 3))
        assert g1 is not None and g2 is not None and g3 is not None and g1 > g2 > g3

    def test_ratio_prefers_gain_per_token(self):
        C = np.array([angle(0), angle(30), angle(35)])
        s = select(E2, C, [100, 10, 10], 120, lam=0.0, policy="ratio")
        assert s.indices == (1, 2, 0)
        assert s.note is None

    def test_ratio_safeguard_keeps_the_best_single_chunk(self):
        C = np.array([angle(0), angle(80)])
        s = select(E2, C, [100, 10], 100, lam=0.0, policy="ratio")
        # Ratio picks chunk 1 (cos80/10 > 1/100) and then chunk 0 no longer fits.
        assert s.indices == (0,)
        assert s.note is not None and "safeguard" in s.note
        assert s.objective == pytest.approx(1.0)

    def test_zero_budget(self):
        s = select(E2, self.C, self.tokens, 0)
        assert s.indices == () and s.stop_reason is StopReason.BUDGET_EXHAUSTED
        assert all(v.kind is VerdictKind.DID_NOT_FIT for v in s.verdicts)

    def test_pool_exhausted(self):
        s = select(E2, self.C[1:], [1, 1, 1], 100, lam=0.0)
        assert s.indices == (0, 1, 2) and s.stop_reason is StopReason.POOL_EXHAUSTED


def test_verdicts_cover_every_chunk_with_numbers():
    rng = np.random.default_rng(2)
    q, C, tokens = random_pool(rng, n=30)
    s = select(q, C, tokens, 250, lam=1.5)
    assert len(s.verdicts) == 30
    assert {v.chunk for v in s.verdicts if v.kind is VerdictKind.SELECTED} == set(s.indices)
    for v in s.verdicts:
        if v.kind is VerdictKind.SELECTED:
            assert v.step is not None
            step = s.steps[v.step - 1]
            assert step.winner == v.chunk and v.gain == step.gain
        elif v.kind is VerdictKind.DID_NOT_FIT:
            assert v.step is not None and v.tokens is not None and v.tokens_left is not None
            assert v.tokens > v.tokens_left == s.steps[v.step - 1].tokens_available
            assert v.tokens <= s.steps[v.step - 2].tokens_available if v.step > 1 else True
        else:
            # Outscored or non-positive: its gain never beat a winner's while in play.
            for h in v.history:
                if h.winner is not None and h.eligible:
                    assert h.gain is not None and h.winner_gain is not None
                    assert h.gain <= h.winner_gain
            # The redundancy sources are selected chunks, largest cosine first.
            sims = [sim for _, sim in v.redundancy_sources]
            assert sims == sorted(sims, reverse=True)
            assert all(j in s.indices for j, _ in v.redundancy_sources)
        # A sentence for every kind, naming the kind, the step and the numbers.
        if v.kind is VerdictKind.SELECTED:
            parts = [f"selected at step {v.step}: gain {v.gain:+.4f}"]
        elif v.kind is VerdictKind.DID_NOT_FIT:
            parts = [f"did not fit at step {v.step}: needs {v.tokens} tokens, {v.tokens_left}"]
        elif v.kind is VerdictKind.NON_POSITIVE_GAIN:
            parts = [f"(step {v.step})", f"redundancy {v.redundancy_term:.4f} ≥ relevance"]
        else:
            parts = [f"outscored until the stop (step {v.step}): gain {v.gain:+.4f}"]
        assert all(part in v.summary() for part in parts), (v.summary(), parts)


def test_redundancy_sources_are_the_true_cosines():
    C = np.array([angle(20), angle(25), angle(-30), angle(22)])
    s = select(E2, C, [10, 10, 10, 10], 100, lam=1.0)
    assert s.indices == (0, 2)
    sources = s.verdict(1).redundancy_sources
    assert [j for j, _ in sources] == [0, 2]
    assert [sim for _, sim in sources] == pytest.approx(np.cos(np.deg2rad([5, 55])))


def test_to_dict_is_json_ready():
    import json

    rng = np.random.default_rng(4)
    q, C, tokens = random_pool(rng, n=12)
    s = select(q, C, tokens, 200)
    ids = [f"c{i}" for i in range(12)]
    data = json.loads(json.dumps(s.to_dict(ids, candidates=True)))
    assert data["selected"] == [ids[i] for i in s.indices]
    assert data["calibration"]["lam"] == s.lam
    assert len(data["verdicts"]) == 12
    assert data["steps"][0]["candidates"]["in_play"] == [True] * 12


def test_selection_pickles_and_is_frozen():
    rng = np.random.default_rng(6)
    q, C, tokens = random_pool(rng, n=10)
    s = select(q, C, tokens, 200)
    again = pickle.loads(pickle.dumps(s))
    assert again.indices == s.indices and again.steps == s.steps
    with pytest.raises(AttributeError):
        s.indices = ()  # type: ignore[misc]  # the point: it is read-only
    with pytest.raises(ValueError):
        s.relevance[0] = 1.0


def test_unnormalised_and_float32_inputs_pick_the_same():
    rng = np.random.default_rng(8)
    q, C, tokens = random_pool(rng, n=40, d=32)
    a = select(q, C, tokens, 400, lam=0.5)
    b = select(q * 3, (C * 7).astype(np.float32), tokens, 400, lam=0.5)
    assert a.indices == b.indices


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_embeddings": [[1.0, 0.0], [0.0, 0.0]]}, "chunk 1: all 2 values are zero"),
        ({"chunk_embeddings": [[1.0, 0.0], [np.nan, 1.0]]}, "chunk 1: value 0 is nan: NaN and"),
        ({"chunk_embeddings": [[1.0, np.inf], [1.0, 1.0]]}, "chunk 0: value 1 is inf: NaN and"),
        ({"query_embedding": [1.0, 0.0, 0.0]}, "has 3 values, the chunk embeddings have 2"),
        ({"query_embedding": [0.0, 0.0]}, "query_embedding: all 2 values are zero"),
        ({"token_counts": [10, -1]}, "chunk 1 has -1 tokens"),
        ({"token_counts": [10, 2.5]}, "chunk 1 has 2.5 tokens, not a whole number"),
        ({"token_counts": [10]}, "has 1 entries, the pool has 2 chunks"),
        ({"budget": -5}, "budget: must be >= 0 tokens, got -5"),
        ({"budget": 10.5}, "budget: expected a whole number"),
        ({"lam": -0.1}, "lam: expected 'adaptive' or a number >= 0, got -0.1"),
        ({"lam": "auto"}, "lam: expected 'adaptive' or a number >= 0, got 'auto'"),
        ({"policy": "greedy"}, "policy: expected one of 'skip', 'stop', 'ratio', 'fill'"),
        ({"formula": "eq7"}, "formula: expected one of 'paper', 'derived'"),
        ({"redundancy_floor": "mean"}, "redundancy_floor: expected a cosine, 'pool' or None"),
    ],
)
def test_invalid_input_names_the_problem(kwargs, message):
    args: dict[str, Any] = {
        "query_embedding": [1.0, 0.0],
        "chunk_embeddings": [[1.0, 0.0], [0.0, 1.0]],
        "token_counts": [10, 10],
        "budget": 100,
    }
    args.update(kwargs)
    positional = [
        args.pop(k) for k in ("query_embedding", "chunk_embeddings", "token_counts", "budget")
    ]
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(".", r"\.")):
        select(*positional, **args)


def test_objective_function():
    C = np.array([angle(0), angle(60), angle(90)])
    assert adagres.objective(E2, C, [], 1.0) == 0.0
    value = adagres.objective(E2, C, [0, 1, 2], 0.5)
    expected = (1 + 0.5 + 0) - 0.5 * (0.5 + 0 + np.cos(np.deg2rad(30)))
    assert value == pytest.approx(expected)
    with pytest.raises(InputError, match="more than once"):
        adagres.objective(E2, C, [0, 0], 1.0)
    with pytest.raises(InputError, match="position 5 is outside the pool of 3"):
        adagres.objective(E2, C, [5], 1.0)


@pytest.mark.parametrize("policy", ["skip", "stop", "fill", "ratio"])
def test_verdict_kinds_match_the_full_verdicts(policy):
    rng = np.random.default_rng(12)
    for _ in range(15):
        q, C, tokens = random_pool(rng, n=int(rng.integers(1, 40)))
        s = select(q, C, tokens, int(rng.integers(0, 500)), policy=policy, trace=False)
        assert s.verdict_kinds == tuple((v.kind, v.step) for v in s.verdicts)
    from adagres import baselines

    for make in (baselines.exact, baselines.topk_budget, baselines.mmr):
        s = make(q, C[:12], tokens[:12], 200)
        assert s.verdict_kinds == tuple((v.kind, v.step) for v in s.verdicts)
    raw = baselines.reference_code(
        q, C, tokens, 200, texts=["x" * 30] * len(C), enforce_budget=False
    )
    assert raw.verdict_kinds == tuple((v.kind, v.step) for v in raw.verdicts)
