"""One story per chunk: the Selection map, the Pool table and Why dropped's sentence, table
and chart read each chunk's verdict from the selection's record, and say the same.

The view is the app's default, the recommended preset (top-k, repeated text paid for once),
with the near-duplicate guard a user may add (in the address), on the biomedical demo pool
at 1,000 tokens, where faq-02 is dropped as a duplicate of faq-01 at step 1 and the run
stops with the budget exhausted.
"""

from __future__ import annotations

from collections import Counter

import pytest
from apptest_support import (
    DEMO,
    POOL_PAGE,
    SELECTION,
    WHY,
    array,
    figures,
    frame,
    no_error,
    page,
    pool_of,
    recommended_selection,
)

from adagres.figures.layout import plain_name

pytestmark = pytest.mark.usefixtures("data_dir")
VIEW = {"pool": DEMO, "budget": "1000", "guard": "0.9,0.8"}
GUARD = (0.9, 0.8)


def chunk_map(at) -> dict:
    return next(f for f in figures(at) if any(t.get("name") == "query" for t in f["data"]))


def hovers(figure: dict) -> dict[int, tuple[str, str]]:
    """Each chunk's (layer name, hover) on the map."""
    found = {}
    for layer in figure["data"]:
        if layer.get("name") == "query" or "hovertext" not in layer:
            continue
        positions = array(layer["customdata"]).astype(int).tolist()
        for position, hover in zip(positions, layer["hovertext"], strict=True):
            found[position] = (layer["name"], hover)
    return found


def test_the_map_and_the_pool_table_count_the_same_verdicts(data_dir):
    """At the last step the map draws the verdicts, not the last step's state: 53
    outscored, 23 did not fit and 1 duplicate, as the Pool table counts them, not 77 chunks
    that "do not fit"."""
    pool = pool_of(data_dir, DEMO)
    record = Counter(
        kind.value
        for kind, _ in recommended_selection(pool, 1000, duplicate_guard=GUARD).verdict_kinds
    )
    table = page(POOL_PAGE, **VIEW)
    no_error(table)
    counted = Counter(frame(table, "verdict")["verdict"])
    assert counted == Counter({plain_name(kind): n for kind, n in record.items()})
    assert record["outscored"] > 0 and record["did_not_fit"] > 0 and record["duplicate"] == 1
    at = page(SELECTION, **VIEW)
    no_error(at)
    figure = chunk_map(at)
    drawn = {layer["name"]: len(array(layer.get("x", []))) for layer in figure["data"]}
    for kind, n in record.items():
        if kind != "selected":
            assert drawn.get(f"{plain_name(kind)} ({n})") == n, (kind, n, drawn)
    assert drawn.get("does not fit", 0) == 0


def test_faq_02_reads_as_a_duplicate_on_every_view(data_dir):
    """faq-02 fits at step 2 (69 tokens of 900 left): the map says it may not be taken and
    why, Why dropped ticks "fits" and names the guard, and the chart spans the run's 12
    steps with the rule's score on its y axis."""
    pool = pool_of(data_dir, DEMO)
    i = pool.ids.index("faq-02")
    selection = recommended_selection(pool, 1000, duplicate_guard=GUARD)
    verdict = selection.verdict(i)
    assert verdict.kind.value == "duplicate" and verdict.step == 1
    at = page(SELECTION, **VIEW, step="2")
    no_error(at)
    layer, hover = hovers(chunk_map(at))[i]
    assert "does not fit" not in hover and layer != "does not fit"
    assert "verdict: duplicate of a pick ('faq-01', dropped at step 1)" in hover
    assert pool.token_counts is not None
    assert pool.token_counts[i] <= selection.steps[1].tokens_available

    why = page(WHY, **VIEW, chunk="faq-02")
    no_error(why)
    sentence = why.text[0].value
    assert sentence.startswith("faq-02: duplicate of 'faq-01' (picked at step 1)")
    history = frame(why, "could be taken")
    fits = [
        int(pool.token_counts[i]) <= selection.steps[s - 1].tokens_available
        for s in history["step"]
    ]
    assert list(history["fits"]) == fits and all(fits[:2])
    # Step 1 it competed (and lost to faq-01); after, the guard barred it while it fitted.
    expected = [
        "yes" if s == 1 else "duplicate of a pick" if fit else "does not fit"
        for s, fit in zip(history["step"], fits, strict=True)
    ]
    assert list(history["could be taken"]) == expected
    chart = next(f for f in figures(why) if f["layout"]["yaxis"].get("title"))
    assert chart["layout"]["xaxis"]["range"] == [0.5, len(selection.steps) + 0.5]
    assert chart["layout"]["yaxis"]["title"]["text"] == "score = relevance"
    barred = next(t for t in chart["data"] if t["name"].endswith("could not be taken"))
    # Every step it could not be taken is a hollow point, never a line that could win.
    assert len(array(barred["y"])) == sum(1 for why in expected if why != "yes")


def test_a_pick_names_its_runner_up_by_the_rule_s_score(data_dir):
    """The sentence gives the runner-up's number in the quantity it gives the pick's: under
    top-k the score (relevance), not the runner-up's F gain; and names are quoted once."""
    pool = pool_of(data_dir, DEMO)
    selection = recommended_selection(pool, 1000, duplicate_guard=GUARD)
    step = next(
        s
        for s in selection.steps
        if s.accepted and s.runner_up is not None and s.runner_up_score != s.runner_up_gain
    )
    assert step.winner is not None and step.runner_up is not None  # an accepted step
    chunk = pool.ids[step.winner]
    at = page(WHY, **VIEW, chunk=chunk)
    no_error(at)
    sentence = at.text[0].value
    runner = pool.ids[step.runner_up]
    assert f"runner-up {runner!r} (score {step.runner_up_score:+.4f})" in sentence
    assert f"{step.runner_up_gain:+.4f}" not in sentence
    outscored = next(
        j for j, (kind, _) in enumerate(selection.verdict_kinds) if kind.value == "outscored"
    )
    text = selection.verdict(outscored).summary(pool.ids)
    assert "''" not in text and "'s " not in text
