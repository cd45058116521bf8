"""Every strategy and preset records what its rule maximised: the winner is the argmax of
the recorded score, the score is its two terms (each recomputed here from the embeddings),
and every verdict agrees with a reading of the record done by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import adagres
from adagres import Settings, StopReason, VerdictKind
from adagres.core.baselines import run_prepared
from adagres.core.presets import NEAR_DUPLICATE_GUARD, PRESETS
from adagres.core.strategies import ORTHOGONAL, STRATEGIES

DATA = Path(__file__).resolve().parent.parent / "data"
POOLS = sorted(DATA.glob("*.json"))
BUDGETS = (150, 300, 1000)
#: Float32 pools: a gain kept in float32 over a run differs from a float64 sum by ~1e-6.
TOL = 1e-4

#: Every strategy of the registry with the default settings (exact is no greedy rule: its
#: steps list the optimal set, see test_exact_is_marked_as_no_greedy_rule), AdaGReS under
#: every policy, and every preset.
CONFIGS = [
    *[(name, Settings()) for name, entry in STRATEGIES.items() if name != "exact"],
    *[("adagres", Settings(policy=p)) for p in ("stop", "ratio", "fill")],
    *[(p.strategy, p.settings) for p in PRESETS.values()],
]
IDS = [
    *[name for name in STRATEGIES if name != "exact"],
    "adagres-stop",
    "adagres-ratio",
    "adagres-fill",
    *[f"preset-{name}" for name in PRESETS],
]


def load(path: Path):
    return adagres.load_pool(path)


@pytest.fixture(scope="module", params=POOLS, ids=[p.stem for p in POOLS])
def pool(request):
    return load(request.param)


def similarities(selection, prepared) -> np.ndarray:
    """The cosines the rule's redundancy reads, recomputed (orthogonal: beyond the query)."""
    chunks = prepared.chunks.astype(np.float64)
    if selection.strategy == "orthogonal":
        q = prepared.query.astype(np.float64)
        chunks = chunks - np.outer(chunks @ q, q)
        chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    return chunks @ chunks.T


def expected_terms(selection, prepared, picks: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(relevance term, redundancy term) of every chunk's score with ``picks`` made."""
    r = prepared.relevance.astype(np.float64)
    sims = similarities(selection, prepared)
    name, params = selection.strategy, selection.params
    if name in ("topk_budget", "topk_same_k"):
        return r, np.zeros_like(r)
    if name == "mmr":
        lm = params["lambda_mmr"]
        closest = np.maximum(sims[picks].max(axis=0), 0.0) if picks else np.zeros_like(r)
        return lm * r, (1 - lm) * closest
    if name == "coverage":
        weight, positive = params["weight"], np.maximum(sims, 0.0)
        w = np.maximum(r, 0.0) / np.maximum(r, 0.0).sum()
        covered = positive[picks].max(axis=0) if picks else np.zeros_like(r)
        alone = r + weight * (positive @ w)
        now = r + weight * (np.maximum(positive - covered, 0.0) @ w)
        return alone, alone - now
    lam, tau = selection.lam, selection.redundancy_floor
    if name == "near_duplicates":
        lam, tau = params["lam_near_duplicates"], params["floor"]
    if name == "reference_code":
        lam, tau = params["beta"], None
    counted = sims[picks] if tau is None else np.maximum(sims[picks] - tau, 0.0)
    relevance, redundancy = selection.alpha * r, lam * counted.sum(axis=0)
    if selection.scoring.per_token:
        per = np.maximum(prepared.tokens, 1).astype(np.float64)
        return relevance / per, redundancy / per
    return relevance, redundancy


def leader(selection, step) -> tuple[int | None, float | None]:
    """The step's winner, or where nothing fitted, the best chunk in play of those that fit
    the whole budget (lowest position first)."""
    if step.winner is not None:
        return step.winner, step.score
    c = step.candidates
    best = None
    for j in range(len(c.score)):
        possible = c.in_play[j] and selection.token_counts[j] <= selection.budget
        if possible and (best is None or c.score[j] > c.score[best]):
            best = j
    return best, None if best is None else float(c.score[best])


def by_hand(selection, i: int) -> tuple[VerdictKind, int]:
    """The verdict of chunk i read from the record in plain loops (see verdicts.py)."""
    if i in selection.indices:
        return VerdictKind.SELECTED, selection.indices.index(i) + 1
    steps, scoring, reason = selection.steps, selection.scoring, selection.stop_reason
    duplicate = next((d for d in selection.duplicates if d.chunk == i), None)
    for s in steps:
        c = s.candidates
        too_big = selection.token_counts[i] > s.tokens_available
        if not c.in_play[i] or c.eligible[i] or not too_big:
            continue  # in play and fits, or ineligible as a duplicate
        if selection.token_counts[i] > selection.budget:  # never fits at all
            return VerdictKind.DID_NOT_FIT, s.number
        score = float(c.score[i])
        winner, winner_score = leader(selection, s)
        assert winner is not None and winner_score is not None  # chunk i itself fits
        beats = i == winner or score > winner_score or (score == winner_score and i < winner)
        if scoring.stops_nonpositive and not score > 0:
            beats = False
        if not s.accepted and reason is StopReason.K_REACHED:
            beats = False
        if beats:
            if duplicate is not None and duplicate.step < s.number:
                break  # the guard dropped it before it would have been taken
            return VerdictKind.DID_NOT_FIT, s.number
    if duplicate is not None:
        return VerdictKind.DUPLICATE, duplicate.step
    if reason is StopReason.NO_POSITIVE_GAIN and steps[-1].candidates.score[i] <= 0:
        return VerdictKind.NON_POSITIVE_GAIN, len(steps)
    competing = "in_play" if scoring.competes == "in_play" else "eligible"
    for among in (competing, "behind"):  # where it competed, else where it was behind
        best = None
        for s in steps:
            c = s.candidates
            winner, winner_score = leader(selection, s)
            if winner is None or winner_score is None or winner == i or not c.in_play[i]:
                continue
            gap = winner_score - float(c.score[i])
            if (among == "behind" and not gap >= 0) or (among == "eligible" and not c.eligible[i]):
                continue
            if best is None or gap < best[0]:
                best = (gap, s.number)
        if best is not None:
            return VerdictKind.OUTSCORED, best[1]
    return VerdictKind.OUTSCORED, len(steps)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize(("strategy", "settings"), CONFIGS, ids=IDS)
def test_the_record_tells_the_rule_in_use(pool, strategy, settings, budget):
    prepared = pool.prepared
    s = run_prepared(strategy, prepared, budget, settings, texts=pool.texts)
    assert s.traced and s.scoring.greedy
    n = prepared.n_chunks
    for t, step in enumerate(s.steps):
        c = step.candidates
        assert c is not None  # a traced run records them
        too_big = s.token_counts > step.tokens_available
        # a chunk that does not fit still competes where the rule checks the budget after
        # the choice; a duplicate the guard dropped never does
        competing = (
            c.eligible | (too_big & c.in_play) if s.scoring.competes == "in_play" else c.eligible
        )
        # the winner is the argmax of the recorded score among the competing chunks
        if step.winner is None:
            assert not competing.any()
        else:
            best = np.max(c.score[competing])
            first_best = int(np.flatnonzero(competing & (c.score == best))[0])
            assert step.winner == first_best, (t, step.winner, first_best)
            assert step.score == pytest.approx(float(c.score[step.winner]), abs=1e-6)
            assert step.score_relevance is not None and step.score_redundancy is not None
            assert step.score == pytest.approx(
                step.score_relevance - step.score_redundancy, abs=TOL
            )
        # score = relevance term − redundancy term, each as the rule defines it
        relevance, redundancy = expected_terms(s, prepared, list(s.indices[:t]))
        live = c.in_play
        assert np.allclose(c.score_relevance[live], relevance[live], atol=TOL)
        assert np.allclose(c.score_redundancy[live], redundancy[live], atol=TOL)
        assert np.allclose(c.score[live], relevance[live] - redundancy[live], atol=TOL)
        assert np.isnan(c.score[~live]).all()
    # every verdict agrees with a reading of the record by hand, and says what it claims
    for i in range(n):
        v = s.verdict(i)
        assert (v.kind, v.step) == by_hand(s, i), i
        assert s.verdict_kinds[i] == (v.kind, v.step)
        assert v.step is not None  # by_hand gave a step
        step = s.steps[v.step - 1]
        if v.kind is VerdictKind.DID_NOT_FIT:
            assert v.tokens > step.tokens_available == v.tokens_left
        if v.kind is VerdictKind.OUTSCORED and v.winner is not None:
            assert (v.winner, v.winner_score) == leader(s, step)
            assert v.winner_score is not None and v.score is not None
            assert v.winner_score >= v.score
        if v.kind is not VerdictKind.SELECTED:
            picks_before = set(s.indices[: v.step - 1])
            assert all(j in picks_before for j, _ in v.redundancy_sources)
            rows = similarities(s, prepared)
            for j, sim in v.redundancy_sources:
                assert sim == pytest.approx(rows[j, i], abs=TOL)


def test_the_one_line_rule_names_only_the_terms_it_has():
    """The rule as the Selection and Why pages print it: top-k has no redundancy term."""
    rng = np.random.default_rng(3)
    q, C = rng.normal(size=8), rng.normal(size=(8, 8))
    tokens = [30, 40, 50, 20, 60, 30, 40, 50]
    topk = adagres.baselines.run("topk_budget", q, C, tokens, 120)
    assert topk.scoring.formula == "score = relevance"
    paper = adagres.baselines.run("adagres", q, C, tokens, 120)
    assert paper.scoring.formula == "score = α·relevance − λ·Σ cos to the picks"


def test_exact_is_marked_as_no_greedy_rule():
    rng = np.random.default_rng(5)
    q, C = rng.normal(size=8), rng.normal(size=(8, 8)) + 0.5
    s = adagres.baselines.run("exact", q, C, [30, 40, 50, 20, 60, 30, 40, 50], 120, lam=0.5)
    assert not s.scoring.greedy and s.stop_reason is StopReason.OPTIMAL
    kinds = {v.kind for i, v in enumerate(s.verdicts) if i not in s.indices}
    assert kinds == {VerdictKind.NOT_IN_OPTIMUM}


def test_the_guard_names_the_pick_faq_02_duplicates():
    """Top-k with the near-duplicate guard on biomedical_redundant at 1,000 tokens: top-k
    would pick faq-02 second; the guard drops it, and its verdict names faq-01, the step and
    the cosine (brute force). The recommended preset keeps it: a paraphrase with facts of its
    own ("six 200 mg tablets"), no sentence of which faq-01 holds."""
    pool = load(DATA / "biomedical_redundant.json")
    guard = Settings(duplicate_guard=NEAR_DUPLICATE_GUARD)
    s = run_prepared("topk_budget", pool.prepared, 1000, guard, texts=pool.texts)
    plain = run_prepared("topk_budget", pool.prepared, 1000, Settings())
    i, first = pool.ids.index("faq-02"), pool.ids.index("faq-01")
    assert list(plain.indices[:2]) == [first, i]
    chosen = PRESETS["recommended"]
    kept = run_prepared(chosen.strategy, pool.prepared, 1000, chosen.settings, texts=pool.texts)
    assert kept.verdict(i).kind is VerdictKind.SELECTED and kept.indices[:2] == (first, i)
    assert "six 200 mg tablets" in "\n".join(text for _, text, _ in kept.context(pool.texts))
    v = s.verdict(i)
    assert v.kind is VerdictKind.DUPLICATE and v.duplicate_of == first and v.step == 1
    unit = pool.prepared.chunks.astype(np.float64)
    cosine = float(unit[i] @ unit[first])
    assert cosine >= NEAR_DUPLICATE_GUARD[0]
    assert v.duplicate_cosine == pytest.approx(cosine, abs=TOL)
    said = f"duplicate of 'faq-01' (picked at step 1): cosine {cosine:.3f}"
    assert v.summary(pool.ids).startswith(said)
    assert i not in s.indices


def test_the_orthogonal_variant_names_what_blog_02_repeats():
    """The orthogonal variant as the evaluation runs it (fill, derived λ, the guard and
    packing) on biomedical_redundant at 1,000 tokens: blog-02, a near-copy of faq-02 and the
    first picks, gets a verdict in the rule's terms that names the picks it repeats, the
    most similar beyond the query first (brute force)."""
    pool = load(DATA / "biomedical_redundant.json")
    assert ORTHOGONAL.tuned is not None  # the settings the orthogonal variant is meant for
    s = run_prepared("orthogonal", pool.prepared, 1000, ORTHOGONAL.tuned, texts=pool.texts)
    i = pool.ids.index("blog-02")
    v = s.verdict(i)
    assert v.step is not None  # blog-02 was dropped at a step
    text = v.summary(pool.ids)
    assert "repeats" in text and "cos beyond the query" in text
    q = pool.prepared.query.astype(np.float64)
    unit = pool.prepared.chunks.astype(np.float64)
    residual = unit - np.outer(unit @ q, q)
    residual /= np.linalg.norm(residual, axis=1, keepdims=True)
    before = list(s.indices[: v.step - 1])
    most = before[int(np.argmax(residual[before] @ residual[i]))]
    assert v.redundancy_sources[0][0] == most
    assert f"repeats {pool.ids[most]!r}" in text
