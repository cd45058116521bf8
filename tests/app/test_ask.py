"""A new query in place on the Pool page's map: a typed question embedded with the pool's
model, its point, its nearest chunks and a new selection on the same map; the original
query one click away; all of it in the address (``ask=``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from apptest_support import DEMO, POOL_PAGE, figures, frame, no_error, page

import adagres
from adagres.core import baselines
from adagres.embed.models import DEFAULT_MODEL, embed_texts
from adagres.figures.projection import pca
from adagres.pools.io import load_pool

WORDS = "asking_words"  # the demo pool's texts embedded by the fake encoder (64 values)
NO_MODEL = "asking_no_model"  # a pool whose model is a folder this machine does not have
UNNAMED = "asking_unnamed"  # a pool that does not say which model embedded it
PARAMS = {
    "budget": "600",
    "policy": "skip",
    "lam": "adaptive",
    "formula": "derived",
    "guard": "off",
}
SETTINGS = adagres.Settings(formula="derived")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ask_dir(tmp_path_factory: pytest.TempPathFactory):
    """The demo pool and a copy naming a model folder that does not exist."""
    folder = tmp_path_factory.mktemp("asking")
    demo = json.loads((ROOT / "data" / f"{DEMO}.json").read_text(encoding="utf-8"))
    (folder / f"{DEMO}.json").symlink_to(ROOT / "data" / f"{DEMO}.json")
    missing = dict(demo, embedding_model=str(folder / "no-such-model"))
    (folder / f"{NO_MODEL}.json").write_text(json.dumps(missing), encoding="utf-8")
    unnamed = {k: v for k, v in demo.items() if k != "embedding_model"}
    (folder / f"{UNNAMED}.json").write_text(json.dumps(unnamed), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAGRES_DATA_DIR", str(folder))
        patch.setenv("ADAGRES_PROJECTION", "pca")
        yield folder


@pytest.fixture
def words(ask_dir: Path, fake_encoder):
    """The demo pool's texts embedded by the fake encoder, recorded as the packaged model's
    (so a question is embedded by the same fake encoder, without loading the model)."""
    path = ask_dir / f"{WORDS}.json"
    if not path.exists():
        demo = json.loads((ask_dir / f"{DEMO}.json").read_text(encoding="utf-8"))
        vectors = fake_encoder.vectors([c["text"] for c in demo["chunks"]] + [demo["query"]])
        chunks = [
            dict(c, embedding=v.tolist()) for c, v in zip(demo["chunks"], vectors[:-1], strict=True)
        ]
        pool = dict(
            demo, chunks=chunks, query_embedding=vectors[-1].tolist(), embedding_model=DEFAULT_MODEL
        )
        path.write_text(json.dumps(pool), encoding="utf-8")
    return load_pool(path)


def map_figure(at) -> dict:
    return next(f for f in figures(at) if f["layout"].get("dragmode") == "lasso")


def named(fig: dict, start: str) -> dict | None:
    return next((t for t in fig["data"] if t.get("name", "").startswith(start)), None)


def check_new_query(at, pool, q_new: np.ndarray, strategy: str) -> None:
    """The map and the table show the question's point, neighbours and selection as the
    library computes them from the same vectors."""
    no_error(at)
    fig = map_figure(at)
    unit = q_new / np.linalg.norm(q_new)
    chunks = np.asarray(pool.prepared.chunks, dtype=np.float64)
    # The point: the PCA map's own transform of the question (as for the pool's query).
    _, expected_xy = pca(chunks, unit)
    assert expected_xy is not None  # pca returns the extra point's place when given one
    star = named(fig, "new query")
    assert star is not None
    assert (star["x"][0], star["y"][0]) == pytest.approx(tuple(expected_xy), abs=1e-6)
    # The neighbours: 10 chunks, most similar first, none less similar to the question than
    # a chunk left out (brute force; ties within float32 rounding may go either way).
    cosines = [float(np.dot(unit, c)) for c in chunks]
    ring = named(fig, "nearest to the new query")
    assert ring is not None
    ringed = [int(i) for i in ring["customdata"]]
    assert len(set(ringed)) == 10
    assert all(cosines[a] >= cosines[b] - 1e-6 for a, b in itertools.pairwise(ringed))
    rest = max(cosines[i] for i in range(len(pool)) if i not in ringed)
    assert min(cosines[i] for i in ringed) >= rest - 1e-6
    # The new selection: the session's strategy and settings with the question as query.
    expected = baselines.run(
        strategy,
        q_new,
        pool.embeddings,
        pool.token_counts,
        600,
        settings=SETTINGS,
        texts=pool.texts,
    )
    crosses = named(fig, "new selection")
    assert crosses is not None and list(crosses["customdata"]) == list(expected.indices)
    table = frame(at, "new pick")
    shown = [i for i in table["new pick"] if isinstance(i, str)]
    assert shown == [pool.ids[i] for i in expected.indices]
    args = (pool.query_embedding, pool.embeddings, pool.token_counts, 600)
    original = baselines.run(strategy, *args, settings=SETTINGS, texts=pool.texts)
    assert [i for i in table["original pick"] if isinstance(i, str)] == [
        pool.ids[i] for i in original.indices
    ]
    assert set(expected.indices) != set(original.indices)  # relevance moved with the query


@pytest.mark.parametrize("strategy", ["adagres", "mmr"])
def test_a_link_with_ask_shows_the_new_query_its_neighbours_and_picks(
    words, fake_encoder, strategy
):
    question = "who should avoid aspirin and kidney disease"
    at = page(POOL_PAGE, pool=WORDS, strategy=strategy, ask=question, **PARAMS)
    check_new_query(at, words, fake_encoder.vectors([question])[0], strategy)
    assert at.query_params["ask"] == question  # the link is kept as it was
    assert at.text_input(key="pool_ask").value == question


def test_typing_a_question_goes_into_the_address_and_the_button_clears_it(words, fake_encoder):
    at = page(POOL_PAGE, pool=WORDS, strategy="adagres", **PARAMS)
    no_error(at)
    before = map_figure(at)
    assert named(before, "new query") is None and not frame_present(at)
    assert at.button(key="pool_ask_clear").disabled
    question = "stomach bleeding risk with daily use"
    at.text_input(key="pool_ask").set_value(question).run()
    assert at.query_params["ask"] == question
    check_new_query(at, words, fake_encoder.vectors([question])[0], "adagres")
    at.button(key="pool_ask_clear").click().run()
    no_error(at)
    assert "ask" not in at.query_params and at.text_input(key="pool_ask").value == ""
    after = map_figure(at)
    assert named(after, "new query") is None and named(after, "new selection") is None
    assert not frame_present(at)
    assert after["data"] == before["data"]  # the original view, trace for trace


def frame_present(at) -> bool:
    return any("new pick" in df.value.columns for df in at.dataframe)


@pytest.mark.parametrize(
    ("name", "words"),
    [(NO_MODEL, ("no-such-model", "not available")), (UNNAMED, ("does not name the model",))],
)
def test_a_pool_whose_model_is_missing_gives_one_line(ask_dir, name, words):
    at = page(POOL_PAGE, pool=name, ask="is ibuprofen safe", **PARAMS)
    assert not at.exception and not at.error
    (warning,) = [w.value.replace("\\", "") for w in at.warning if "No new query" in w.value]
    assert "\n" not in warning and all(word in warning for word in words)
    assert named(map_figure(at), "new query") is None and not frame_present(at)
    assert at.query_params["ask"] == "is ibuprofen safe"


@pytest.mark.model
def test_the_bundled_pool_asks_with_the_packaged_model(ask_dir):
    question = "Can children take ibuprofen for a fever?"
    at = page(POOL_PAGE, pool=DEMO, strategy="adagres", ask=question, **PARAMS)
    pool = load_pool(ask_dir / f"{DEMO}.json")
    assert pool.embedding_model == DEFAULT_MODEL
    check_new_query(at, pool, embed_texts([question])[0], "adagres")


def test_under_umap_the_question_sits_at_its_neighbours_weighted_mean() -> None:
    """UMAP on precomputed distances has no transform: the point is the cosine-weighted
    mean of the nearest chunks' coordinates (a negative cosine weighs almost nothing)."""
    from ui import asking

    question = asking.Question(
        "q", np.array([1.0, 0.0]), np.array([0.5, 0.25, -0.5, 0.1]), (0, 1, 2)
    )
    xy = np.array([[0.0, 0.0], [3.0, 6.0], [100.0, 100.0], [7.0, 7.0]])
    placed = asking.place(None, question, xy, "umap")  # type: ignore[arg-type]
    total = 0.5 + 0.25 + 1e-6
    expected = ((0.25 * 3 + 1e-6 * 100) / total, (0.25 * 6 + 1e-6 * 100) / total)
    assert (placed.x, placed.y) == pytest.approx(expected, rel=1e-12)
    assert placed.how == "weighted mean of the 3 nearest chunks"


def test_a_question_opens_in_every_page_and_its_link_asks_it_again(words, fake_encoder):
    """ "Open this question in every page" makes the question's pool (the same chunks, the
    question as query) the current one; its address opens it on the Selection page of
    another session, with the picks the library makes for the question."""
    from apptest_support import SELECTION, context_ids

    question = "who should avoid aspirin and kidney disease"
    at = page(POOL_PAGE, pool=WORDS, strategy="adagres", ask=question, **PARAMS)
    at.button(key="pool_ask_open").click().run()
    no_error(at)
    key = at.session_state["settings"].pool
    params = dict(at.query_params)
    assert key.startswith("asked-") and params["pool"] == key
    assert params["ask"] == question and params["asked_from"] == WORDS
    assert at.text[0].value == question  # the Pool page's query is the question
    linked = page(SELECTION, **params)  # another browser: asked again from the address
    no_error(linked)
    assert not linked.warning, [w.value for w in linked.warning]
    assert linked.session_state["settings"].pool == key
    q_new = fake_encoder.vectors([question])[0]
    expected = baselines.run(
        "adagres",
        q_new,
        words.embeddings,
        words.token_counts,
        600,
        settings=SETTINGS,
        texts=words.texts,
    )
    assert context_ids(linked) == [words.ids[i] for i in expected.indices]
