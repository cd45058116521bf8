"""AppTest tests of what belongs to whom: uploads per session, pool keys per content, the
budget the user set, URL warnings once, and Compare's and Similarity's options in the URL."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from reference import select_inputs
from streamlit.testing.v1 import AppTest
from synthetic import synthetic_pool

from adagres import baselines, select
from adagres.pools.io import load_pool, load_pools
from ui import pools

APP = "../../app.py"
POOL_PAGE = "../../app_pages/1_pool.py"
SELECTION = "../../app_pages/2_selection.py"
SIMILARITY = "../../app_pages/3_similarity.py"
TIMEOUT = 60
SECRET = "SECRET-7f3a: a chunk only the uploading session may see"


def page(path: str, **params: str) -> AppTest:
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at.run()


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.file_uploader(key="pool_upload").set_value((name, content, "application/octet-stream"))
    return at.run()


def everything_shown(at: AppTest) -> str:
    """Every text the page shows (elements, tables, select box options), as one string."""
    kinds = (
        "markdown",
        "caption",
        "text",
        "code",
        "title",
        "subheader",
        "warning",
        "info",
        "error",
        "metric",
    )
    parts = [str(getattr(e, "value", "")) for kind in kinds for e in at.get(kind)]
    parts += [df.value.to_csv() for df in at.dataframe]
    parts += [" ".join(map(str, box.options)) for box in at.selectbox]
    return "\n".join(parts)


def private_pool() -> bytes:
    pool = synthetic_pool(12, seed=99)
    pool["chunks"][3]["text"] = SECRET
    return json.dumps(pool).encode()


# --------------------------------------------------------------------------- uploads per session


def test_an_upload_belongs_to_the_session_that_made_it(pools_dir):
    mine = page(POOL_PAGE, pool="tiny")
    upload(mine, "private-notes.json", private_pool())
    no_error(mine)
    key = mine.selectbox(key="sb_pool").value
    assert key is not None and key.startswith("upload-") and mine.query_params["pool"] == key
    assert "upload: private-notes.json" in mine.selectbox(key="sb_pool").options  # labels
    assert SECRET in everything_shown(mine)

    other = page(POOL_PAGE, pool="tiny")  # another browser session
    no_error(other)
    options = other.selectbox(key="sb_pool").options
    assert {"large", "medium", "tiny"} <= set(options)
    assert not [o for o in options if o.startswith("upload")], options
    shown = everything_shown(other)
    assert "private-notes" not in shown and SECRET not in shown
    # A link naming that upload opens nothing of it, and says so.
    linked = page(POOL_PAGE, pool=key)
    warnings = " ".join(w.value for w in linked.warning).replace("\\", "")
    assert key in warnings and "not available in this session" in warnings
    assert linked.selectbox(key="sb_pool").value == "large"  # the first bundled pool
    shown = everything_shown(linked)
    assert "private-notes" not in shown and SECRET not in shown
    # The session that made it still has it, under its file name.
    mine.run()
    no_error(mine)
    assert mine.selectbox(key="sb_pool").value == key
    assert SECRET in everything_shown(mine)


def test_public_pools_stay_shared(pools_dir):
    bundled = page(POOL_PAGE, pool="tiny").selectbox(key="sb_pool").options
    assert {"large", "medium", "tiny"} <= set(bundled)
    # A FanOutQA pool loaded by one session is public data: every session lists it.
    public = load_pool(pools_dir / "tiny.json")
    pools.add_pool(public, "fanoutqa", "FanOutQA #9990: test", "fanoutqa-9990")
    other = page(POOL_PAGE, pool="fanoutqa-9990")
    no_error(other)
    assert other.selectbox(key="sb_pool").value == "fanoutqa-9990"
    assert not [w.value for w in other.warning]


# --------------------------------------------------------------------------- keys per content


def good_files() -> tuple[bytes, bytes]:
    """The same 40 texts twice: a JSON pool with gold labels and answers, and a CSV without
    them; neither carries embeddings."""
    texts = [
        f"Passage {i} about {'rivers' if i % 3 else 'mountains'} and sediment" for i in range(40)
    ]
    chunks = [
        {"id": f"p{i}", "text": t, "tokens": 10 + i, "gold": i in (2, 5)}
        for i, t in enumerate(texts)
    ]
    noemb = {"query": "where do rivers carry sediment", "answers": ["the delta"], "chunks": chunks}
    table = io.StringIO()
    writer = csv.writer(table)
    writer.writerow(["query", "id", "text", "tokens"])
    for chunk in chunks:
        writer.writerow([noemb["query"], chunk["id"], chunk["text"], chunk["tokens"]])
    return json.dumps(noemb).encode(), table.getvalue().encode()


def test_uploads_with_other_gold_or_answers_get_other_keys(pools_dir, fake_encoder):
    with_gold, plain = good_files()
    at = page(POOL_PAGE, pool="tiny")
    upload(at, "good_noemb.json", with_gold)
    no_error(at)
    first = at.selectbox(key="sb_pool").value
    upload(at, "good.csv", plain)
    no_error(at)
    second = at.selectbox(key="sb_pool").value
    # Same texts and (after embedding) the same vectors: the fingerprints agree, the keys
    # do not, and neither upload replaced the other.
    assert isinstance(first, str) and isinstance(second, str)
    a, b = pools.registered(first), pools.registered(second)
    assert a is not None and b is not None
    assert a.fingerprint == b.fingerprint
    assert first != second
    assert {"upload: good_noemb.json", "upload: good.csv"} <= set(
        at.selectbox(key="sb_pool").options
    )
    assert a.gold_ids == ("p2", "p5") and a.answers == ("the delta",)
    assert b.gold_ids == () and b.answers == ()
    # Every field that makes a pool what it is moves the key.
    base = load_pools(with_gold, name="x.json")[0]
    assert pools.pool_digest(base) == pools.pool_digest(load_pools(with_gold, name="y.json")[0])
    for change in ({"title": "T"}, {"score": 0.5}, {"gold": False}, {"metadata": {"k": 1}}):
        changed = json.loads(with_gold)
        changed["chunks"][2].update(change)
        other = load_pools(json.dumps(changed).encode(), name="x.json")[0]
        assert pools.pool_digest(other) != pools.pool_digest(base), change


def test_a_failed_upload_leaves_no_status_box(pools_dir):
    at = page(POOL_PAGE, pool="tiny")
    upload(at, "broken.json", b'{"query": "q", "chunks": [{"id": "a"}]}')
    assert not at.exception
    assert len(at.error) == 1 and "broken" in at.error[0].value.replace("\\", "")
    labels = [e.proto.expandable.label for e in at.get("expandable")]
    assert not any("Loading" in label for label in labels), labels
    assert at.selectbox(key="sb_pool").value == "tiny"


# --------------------------------------------------------------------------- budget


def test_budget_is_a_number_input_that_keeps_the_users_value(pools_dir):
    tiny = load_pool(pools_dir / "tiny.json")
    assert tiny.token_counts is not None
    total = int(tiny.token_counts.sum())
    # The paper's method: it stops before the tiny pool's total, so the tokens it uses tell
    # which budget is in use (the recommended preset takes every chunk of it).
    at = page(SELECTION, pool="medium", budget="5000", preset="paper")
    budget = at.number_input(key="sb_budget")
    medium = load_pool(pools_dir / "medium.json").token_counts
    assert medium is not None and budget.max is not None  # the widget holds a float
    assert budget.value == 5000 and budget.step == pools.budget_step(int(budget.max))
    assert budget.min == 1 and budget.max == int(medium.sum())
    # A smaller pool: the budget in use is its total, and the page says so.
    at.selectbox(key="sb_pool").set_value("tiny").run()
    no_error(at)
    assert at.number_input(key="sb_budget").value == total
    said = " ".join(c.value for c in at.caption)
    assert "5,000" in said and f"{total:,}" in said
    assert at.query_params["budget"] == "5000"  # the user's value, not the clamped one
    expected = select(*select_inputs(tiny), total)
    tokens = next(m.value for m in at.metric if m.label == "Tokens used")
    assert tokens == f"{expected.tokens_used:,} / {total:,}"
    # Back on the larger pool, the user's value is in use again.
    at.selectbox(key="sb_pool").set_value("medium").run()
    assert at.number_input(key="sb_budget").value == 5000
    assert not any("5,000" in c.value for c in at.caption)
    at.number_input(key="sb_budget").set_value(1234).run()
    assert at.query_params["budget"] == "1234"


def test_budget_steps_are_round():
    assert [pools.budget_step(n) for n in (10, 40, 1_000, 23_000, 150_000)] == [1, 1, 20, 500, 5000]


# --------------------------------------------------------------------------- URL


def test_url_warnings_show_on_the_first_page_only(pools_dir):
    at = page(APP, pool="tiny", budget="lots")
    assert at.title[0].value == "Selection"
    assert any("lots" in w.value for w in at.warning)
    at.switch_page("app_pages/3_similarity.py").run()
    assert at.title[0].value == "Similarity"
    assert not any("lots" in w.value for w in at.warning)
    at.switch_page("app_pages/2_selection.py").run()
    assert not any("lots" in w.value for w in at.warning)


def test_similarity_options_are_in_the_url(pools_dir):
    """The three controls are bound to the address by Streamlit (``bind="query-params"``):
    a link sets them, a value the control cannot take is dropped for its default, and the
    settings the app writes itself leave them in the address."""
    at = page(SIMILARITY, pool="medium", order="cluster", top="50", pairs="0.95")
    no_error(at)
    assert at.radio(key="order").value == "cluster"
    assert at.select_slider(key="top").value == 50
    assert at.slider(key="pairs").value == pytest.approx(0.95)
    assert {k: at.query_params[k] for k in ("order", "top", "pairs")} == {
        "order": "cluster",
        "top": "50",
        "pairs": "0.95",
    }
    at.number_input(key="sb_budget").set_value(1500).run()  # the app writes its settings
    assert at.query_params["budget"] == "1500"
    assert {k: at.query_params[k] for k in ("order", "top", "pairs")} == {
        "order": "cluster",
        "top": "50",
        "pairs": "0.95",
    }
    bad = page(SIMILARITY, pool="medium", top="77")  # not a size the control offers
    no_error(bad)
    assert bad.select_slider(key="top").value == 150
    assert "top" not in bad.query_params


def test_compare_a_and_b_are_in_the_url(pools_dir):
    params = {
        "pool": "medium",
        "budget": "1500",
        "a_strategy": "mmr",
        "a_budget": "900",
        "a_lam": "adaptive",
        "b_strategy": "topk_budget",
        "b_budget": "400",
        "b_lam": "0.3",
    }
    at = page(APP, **params)
    at.switch_page("app_pages/5_compare.py").run()
    no_error(at)
    assert at.selectbox(key="cmp_a_strategy").value == "mmr"
    assert at.number_input(key="cmp_a_budget").value == 900
    assert at.radio(key="cmp_b_lam_mode").value == "manual"
    assert at.number_input(key="cmp_b_lam").value == pytest.approx(0.3)
    table = next(df.value for df in at.dataframe if "metric" in df.value.columns)
    (a_used, b_used) = table.loc[table["metric"] == "tokens used", ["A", "B"]].iloc[0]
    assert int(a_used.replace(",", "")) <= 900 and int(b_used.replace(",", "")) <= 400
    assert {k: at.query_params[k] for k in params} == params
    at.number_input(key="cmp_b_budget").set_value(600).run()
    assert at.query_params["b_budget"] == "600"
    # Moving to another page keeps the address (one history entry per page switch; Back
    # to Compare finds A and B as they were), with Compare's keys.
    at.switch_page("app_pages/2_selection.py").run()
    assert at.title[0].value == "Selection"
    assert at.query_params["b_budget"] == "600" and at.query_params["budget"] == "1500"
    at.switch_page("app_pages/5_compare.py").run()
    assert at.number_input(key="cmp_b_budget").value == 600


def test_plurals_and_names_in_words(pools_dir):
    at = page(SELECTION, pool="tiny", budget="60")
    headers = [h.value for h in at.subheader]
    assert any(h.endswith(": 1 chunk") for h in headers), headers
    assert next(m.value for m in at.metric if m.label == "Stop reason") in (
        "budget exhausted",
        "no positive gain",
    )


def test_reference_code_says_why_it_takes_one_chunk(pools_dir):
    pool = load_pool(pools_dir / "medium.json")
    mean_chars = float(np.mean([len(t) for t in pool.texts]))
    budget = int(mean_chars) - 1  # k = max(1, ⌊T / mean characters⌋) = 1
    at = page(SELECTION, pool="medium", budget=str(budget), strategy="reference_code")
    no_error(at)
    note = " ".join(i.value for i in at.info).replace("\\", "")
    assert "takes 1 chunk by gain" in note and f"⌊{budget} / {mean_chars:.1f}⌋) = 1" in note
    assert "takes a single chunk" in note
    expected = baselines.run(
        "reference_code",
        *select_inputs(pool),
        budget,
        texts=pool.texts,
    )
    assert expected.params["k"] == 1
    assert next(m.value for m in at.metric if m.label == "Chunks selected") == str(expected.size)
