"""AppTest: the Selection page shows overlapping picks as one passage, paid for once."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from apptest_support import SELECTION, context_ids, figures, frame, metric, no_error, page

from adagres import Settings
from adagres.core.baselines import run_prepared
from adagres.corpora.documents import chunk_documents
from adagres.pools.io import load_pool

DOC = " ".join(f"w{i}" for i in range(600))
BUDGET = 330


@pytest.fixture(scope="module", autouse=True)
def windows_dir():
    """A data folder with one pool: 100-word windows of one document overlapping by 40,
    the earlier a window the more relevant (so top-k takes neighbours)."""
    chunks = chunk_documents({"d": DOC}, size=100, overlap=40, tokenizer="words")
    rng = np.random.default_rng(0)
    query = rng.normal(size=16)
    query /= np.linalg.norm(query)
    rows = []
    for i in range(len(chunks)):
        noise = rng.normal(size=16)
        noise -= noise @ query * query
        r = 0.95 * 0.97**i
        rows.append((r * query + np.sqrt(1 - r * r) * noise / np.linalg.norm(noise)).tolist())
    pool = {
        "query": "q",
        "query_embedding": query.tolist(),
        "tokenizer": "words",
        "chunks": [{**c.to_dict(), "embedding": row} for c, row in zip(chunks, rows, strict=True)],
    }
    folder = Path(tempfile.mkdtemp(prefix="adagres-windows-"))
    (folder / "windows.json").write_text(json.dumps(pool), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAGRES_DATA_DIR", str(folder))
        patch.setenv("ADAGRES_PROJECTION", "pca")
        yield folder


def expected(folder: Path, packing: bool):
    pool = load_pool(folder / "windows.json")
    return run_prepared(
        "topk_budget", pool.prepared, BUDGET, Settings(packing=packing), texts=pool.texts
    )


def test_overlapping_picks_are_one_passage_paid_for_once(windows_dir):
    at = page(SELECTION, pool="windows", budget=str(BUDGET), strategy="topk_budget", pack="on")
    no_error(at)
    selection = expected(windows_dir, packing=True)
    assert selection.indices == (0, 1, 2, 3)  # 100 + 60 + 60 + 60 = 280 ≤ 330 < 380
    assert context_ids(at) == ["d#0 + d#1 + d#2 + d#3"]
    table = frame(at, "order")
    assert table["tokens"].tolist() == [280] and table["text"].tolist() == [
        selection.passages[0].text
    ]
    assert selection.passages[0].text == " ".join(f"w{i}" for i in range(280))
    assert metric(at, "Tokens used") == f"280 / {BUDGET}"
    assert metric(at, "Tokens merged") == "120"
    bar = next(f for f in figures(at) if any(t.get("name") == "picks" for t in f["data"]))
    at4 = page(
        SELECTION, pool="windows", budget=str(BUDGET), strategy="topk_budget", pack="on", step="4"
    )
    sentence = next(t.value for t in at4.text if t.value.startswith("Step 4 of"))
    assert sentence.startswith("Step 4 of 5: picked d#3 · ")
    assert sentence.endswith(
        "· 50 tokens left · overlaps d#0, d#1, d#2: one passage, charged 60 of its 100 tokens"
    )
    assert context_ids(at4) == ["d#0 + d#1 + d#2 + d#3"]
    at2 = page(
        SELECTION, pool="windows", budget=str(BUDGET), strategy="topk_budget", pack="on", step="2"
    )
    assert context_ids(at2) == ["d#0 + d#1"]  # the passage as it was after step 2
    assert frame(at2, "order")["tokens"].tolist() == [160]
    assert frame(at2, "order")["text"].tolist() == [" ".join(f"w{i}" for i in range(160))]
    assert "120 repeated tokens paid once" in bar["layout"]["title"]["text"].replace("<br>", " ")


def test_the_toggle_turns_packing_off_and_the_address_keeps_it(windows_dir):
    at = page(SELECTION, pool="windows", budget=str(BUDGET), strategy="topk_budget", pack="on")
    at.toggle(key="sb_packing").set_value(False).run()
    no_error(at)
    selection = expected(windows_dir, packing=False)
    assert selection.indices == (0, 1, 2)  # three windows apart: 300 tokens
    assert context_ids(at) == ["d#0", "d#1", "d#2"]
    assert metric(at, "Tokens merged") == "0"
    assert at.query_params["pack"] == "off"
