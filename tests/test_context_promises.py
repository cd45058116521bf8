"""The promises of the packed context, attacked (SPEC.md, "Repeated text").

Packing promises three things: the context fits the budget, counted by the pool's tokenizer;
it is made of the sources' own text (a passage is a slice of one source, with repeated
sentences left out and marked); and no word of a pick is lost unless the context already
holds it. The reproducers below are the cases an adversarial round found; the properties
draw pools that mix boilerplate, several sources, PDF pages, identical chunks, lying
offsets and Unicode, and run every strategy with and without the guard.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import adagres
from adagres import Settings
from adagres.core.baselines import run_prepared
from adagres.core.overlaps import MAX_ANCHORED, Spans
from adagres.core.packing import OMISSION_MARK, Packer, context_tokens, pieces, sentences
from adagres.core.presets import NEAR_DUPLICATE_GUARD
from adagres.core.records import VerdictKind
from adagres.core.strategies import STRATEGIES
from adagres.embed.tokens import count_tokens
from adagres.errors import InputError
from adagres.pools.pool import Chunk, Pool
from adagres.pools.spans import TokenCounter, placement

FOOTER = "Keep this leaflet, you may need to read it again before your next dose."
HEADER = "Patient information leaflet, read all of it before you start taking this medicine."


def unit_rows(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=dim)
    C = rng.normal(size=(n, dim)) + 2.0 * q
    return q, C


def pool_of(chunks: list[Chunk], seed: int = 0, tokenizer: str = "cl100k") -> Pool:
    q, C = unit_rows(len(chunks), 16, seed)
    counted = [
        Chunk(
            c.id,
            c.text,
            tokens=int(count_tokens([c.text], tokenizer)[0]),
            source=c.source,
            metadata=c.metadata,
            extra=c.extra,
        )
        for c in chunks
    ]
    return Pool("q", tuple(counted), raw_embeddings=C, raw_query_embedding=q, tokenizer=tokenizer)


def context_of(selection: adagres.Selection, texts) -> list[str]:
    return [text for _, text, _ in selection.context(texts)]


def check_context(selection: adagres.Selection, texts, counter=None) -> None:
    """The promises, read from one selection: budget, true slices, nothing new lost."""
    if selection.respects_budget:
        assert selection.tokens_used <= selection.budget
    if selection.passages:
        assert sum(p.tokens for p in selection.passages) == selection.tokens_used
        assert sorted(m for p in selection.passages for m in p.chunks) == sorted(selection.indices)
        context = "\n".join(p.text for p in selection.passages)
        for p in selection.passages:
            for m, (a, _) in zip(p.chunks, p.spans, strict=True):
                # each pick's own text stands at its place in the passage's source text
                own = texts[m].rstrip()  # (stitching sets trailing white space aside)
                assert p.source_text[a : a + len(own)] == own
            for o in p.omissions:  # a left-out sentence is held, word for word, elsewhere
                assert p.source_text[o.start : o.end] == o.text
                kept = context.replace(OMISSION_MARK, "\x00")
                assert " ".join(o.text.split()) in " ".join(kept.split())
            if counter is not None:  # counted by the tokenizer, never more than paid
                assert context_tokens(p.text, counter) <= p.tokens
                assert int(counter(p.text)) <= p.tokens


# --------------------------------------------------------------------------- reproducers


def test_a_window_that_began_mid_sentence_does_not_cut_the_sentence_a_stitch_completes():
    """A window starting inside "Fever stop pain ... daily." takes its tail for a sentence and
    leaves it out (a copy of the tail is held); a later pick completes the sentence by a
    stitch and holds it; a pick of another document leaves the sentence out for that holder.
    The tail's omission must not stand inside the completed sentence, or no copy is left."""
    doc = "Go now. Fever stop pain now with water daily. Rest well at home."
    texts = (
        "Note. stop pain now with water daily. Drink it.",  # holds the tail, no source
        doc[14:],  # the window that begins mid-sentence
        doc[:45],  # completes the sentence where the window began
        "Then. Fever stop pain now with water daily. More.",  # another document
    )
    spans = Spans(texts, (None, "d", "d", "e"), (None, 14, 0, None))
    packer = Packer(spans, np.array([9, 10, 9, 9]), lambda _: np.zeros(4))
    for step, chunk in enumerate(range(4)):
        packer.take(chunk, step)
    passages, _ = packer.result()
    context = " ".join(" ".join(p.text.replace(OMISSION_MARK, "\x00").split()) for p in passages)
    assert "Fever stop pain now with water daily." in context
    for p in passages:
        for o in p.omissions:
            assert " ".join(o.text.split()) in context


def test_boilerplate_openings_of_different_documents_stay_within_the_budget():
    """Chunks of different documents that begin with one boilerplate sentence: budget 31
    gave a 41-token context (a stale cost bound charged above what was left)."""
    bodies = [
        "Ibuprofen eases pain and fever in adults.",
        "Take paracetamol every six hours.",
        "Aspirin thins the blood and protects the heart.",
        "Store below 25 degrees.",
    ]
    chunks = [Chunk(f"c{i}", f"{HEADER} {b}", source=f"doc{i}") for i, b in enumerate(bodies)]
    pool = pool_of(chunks)
    counter = TokenCounter("cl100k")
    for budget in range(10, 90, 3):
        s = run_prepared("topk_budget", pool.prepared, budget, Settings(packing=True))
        check_context(s, pool.texts, counter)
        assert sum(int(counter(t)) for t in context_of(s, pool.texts)) <= budget
    s = run_prepared("topk_budget", pool.prepared, 1000, Settings(packing=True))
    context = "\n".join(context_of(s, pool.texts))
    assert context.count(HEADER) == 1 and context.count(OMISSION_MARK) == 3
    for body in bodies:  # every new fact kept
        assert body in context


def test_chunks_of_two_sources_are_never_stitched():
    """The end of one label (a footer) and the start of another: no passage joins them."""
    a = Chunk("a", f"Label A says take one tablet daily with water. {FOOTER}", source="label-a")
    b = Chunk("b", f"{FOOTER} Label B says take two tablets at night.", source="label-b")
    pool = pool_of([a, b])
    s = run_prepared("topk_budget", pool.prepared, 1000, Settings(packing=True))
    assert s.merges == () and len(s.passages) == 2
    assert all(len(p.chunks) == 1 for p in s.passages)
    context = "\n".join(context_of(s, pool.texts))
    assert context.count(FOOTER) == 1 and "Label B says take two tablets at night." in context


def test_pdf_pages_are_sources_of_their_own():
    """LangChain's PDF loader: every page starts at 0 of the same file; the page is part of
    the source, so page 2 is never read as a window of page 1."""
    pages = [
        Chunk(f"p{k}", f"Page {k} text.", metadata={"source": "f.pdf", "page": k, "start_index": 0})
        for k in range(3)
    ]
    keys = {placement(c)[0] for c in pages}
    assert len(keys) == 3


def test_the_guard_spares_only_chunks_packing_really_stitches():
    """Two chunks whose offsets say they overlap but whose texts disagree are not stitched,
    so the guard must not spare them (cosine 0.99 against 0.9)."""
    t0 = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    t1 = "alpha beta gamma omega epsilon zeta eta theta iota kappa"
    q = np.array([1.0, 0.0, 0.0])
    C = np.array([[0.9, 0.43, 0.0], [0.9, 0.42, 0.06]])
    assert float(C[0] @ C[1] / np.linalg.norm(C[0]) / np.linalg.norm(C[1])) > 0.99
    s = adagres.baselines.run(
        "topk_budget",
        q,
        C,
        [10, 10],
        100,
        texts=[t0, t1],
        sources=["d", "d"],
        offsets=[0, 0],
        packing=True,
        duplicate_guard=NEAR_DUPLICATE_GUARD,
    )
    assert s.indices == (1,) and s.merges == ()  # chunk 1 is the more relevant
    v = s.verdict(0)
    assert v.kind is VerdictKind.DUPLICATE and not v.duplicate_inside and v.duplicate_of == 1


def test_the_array_api_packs_with_texts_and_refuses_packing_without():
    words = [f"w{k}" for k in range(240)]
    texts = [" ".join(words[a : a + 80]) for a in range(0, 161, 40)]  # 80 words, half overlap
    q, C = unit_rows(len(texts), 8, 3)
    tokens = [80] * len(texts)
    for call in (
        lambda **kw: adagres.select(q, C, tokens, 400, lam=0.0, **kw),
        lambda **kw: adagres.run_preset("recommended", q, C, tokens, 400, **kw),
        lambda **kw: adagres.baselines.run("topk_budget", q, C, tokens, 400, **kw),
    ):
        s = call(texts=texts, packing=True)
        assert len(s.merges) >= 2 and s.size + len(s.duplicates) == 5 and s.tokens_used <= 400
        assert [p.text for p in s.passages] == [" ".join(words)]
        assert s.tokens_used < sum(tokens)
        with pytest.raises(InputError, match=r"^packing: needs the chunk texts"):
            call(packing=True)
    with pytest.raises(InputError, match=r"^offsets: chunk 1: offset 18446744073709551616 "):
        adagres.select(q, C, tokens, 240, texts=texts, offsets=[0, 2**64, 0, 0, 0])


def test_a_long_stitched_passage_is_counted_in_pieces():
    """26 windows of 80,000 characters stitch into one passage of about 1 MB: it is
    counted in pieces (no tokenizer input limit), and the budget holds."""
    rng = np.random.default_rng(5)
    vocabulary = [f"word{k}" for k in range(500)]
    doc = " ".join(rng.choice(vocabulary, size=160_000).tolist())
    starts = list(range(0, 26 * 40_000, 40_000))
    texts = [doc[s : s + 80_000] for s in starts]
    spans = Spans(tuple(texts), ("d",) * 26, tuple(starts), TokenCounter("cl100k"))
    tokens = np.array([int(count_tokens([t], "cl100k")[0]) for t in texts])
    q, C = unit_rows(26, 8, 1)
    prepared = adagres.prepare(q, C, tokens).with_spans(spans)
    budget = int(tokens.sum() // 2)
    s = run_prepared("topk_budget", prepared, budget, Settings(packing=True), trace=False)
    assert s.tokens_used <= budget and s.merges
    (longest,) = sorted(s.passages, key=lambda p: -len(p.text))[:1]
    assert longest.text == doc[: len(longest.text)] or longest.text in doc
    assert len(pieces(longest.text)) > 1


def test_shared_headers_do_not_make_every_chunk_a_window_of_another():
    texts = [f"{HEADER} Fact number {k} is unique to this chunk." for k in range(3 * MAX_ANCHORED)]
    layout = Spans(tuple(texts), (None,) * len(texts), (None,) * len(texts)).layout
    assert layout.neighbours == {}


def test_a_chunk_with_nothing_new_is_a_duplicate_naming_the_holder():
    first = "The adult dose is 400 mg every six hours. Do not exceed 1200 mg a day."
    copy = "The adult dose is 400 mg every six hours.\nDo not exceed 1200 mg a day."
    q, C = unit_rows(2, 8, 2)
    s = adagres.select(q, C, [20, 20], 100, lam=0.0, texts=[first, copy], packing=True)
    (kept,) = s.indices
    v = s.verdict(1 - kept)
    assert v.kind is VerdictKind.DUPLICATE and v.duplicate_of == kept


def test_long_answers_are_found_sentence_by_sentence():
    context = f"Take 400 mg. {OMISSION_MARK} Never more than 1200 mg a day."
    assert adagres.metrics.answer_found(["Take 400 mg. Never more than 1200 mg a day."], context)
    assert not adagres.metrics.answer_found(["Take 800 mg. Never more."], context)


# --------------------------------------------------------------------------- properties

WORDS = [
    "dose",
    "tablet",
    "héllo",
    "naïve",
    "日本",
    "fever",
    "pain",
    "the",
    "of",
    "take",
    "water",
    "twice",
    "daily",
    "mg",
    "42",
    "Ω",
    "child",
    "adult",
    "stop",
    "label",
]


@st.composite
def adversarial_pools(draw):
    """Documents of sentences (some shared: boilerplate), cut into windows that overlap, with
    true or lying offsets, some without offsets, some identical, some as PDF pages."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_docs = draw(st.integers(1, 4))
    boiler = [" ".join(rng.choice(WORDS, size=8)) + "." for _ in range(2)]
    docs = []
    for _ in range(n_docs):
        parts = []
        for _ in range(int(rng.integers(3, 9))):
            if rng.random() < 0.3:
                parts.append(boiler[int(rng.integers(0, 2))])
            else:
                parts.append(" ".join(rng.choice(WORDS, size=int(rng.integers(2, 12)))) + ".")
        docs.append(" ".join(parts))
    chunks: list[Chunk] = []
    truth: list[tuple[int, int, str]] = []
    for d, doc in enumerate(docs):
        size = int(rng.integers(20, 90))
        step = max(5, size - int(rng.integers(0, size)))
        for start in range(0, max(1, len(doc) - 5), step):
            text = doc[start : start + size]
            if not text.strip():
                continue
            mode = rng.choice(["offset", "lie", "none", "page"])
            offset = start if mode != "lie" else int(rng.integers(0, len(doc)))
            if mode == "page":
                meta = {"source": f"doc{d}.pdf", "page": int(rng.integers(0, 3)), "start_index": 0}
                chunks.append(Chunk(f"c{len(chunks)}", text, metadata=meta))
            elif mode == "none":
                chunks.append(Chunk(f"c{len(chunks)}", text, source=f"doc{d}"))
            else:
                chunks.append(
                    Chunk(f"c{len(chunks)}", text, source=f"doc{d}", extra={"offset": offset})
                )
            truth.append((d, start, mode))
            if rng.random() < 0.15:  # an identical copy
                chunks.append(Chunk(f"c{len(chunks)}", text))
                truth.append((d, start, "none"))
    return docs, chunks[:40], truth[:40], int(rng.integers(0, 2**16))


@given(adversarial_pools(), st.integers(5, 400), st.booleans())
def test_every_strategy_keeps_the_promises_on_adversarial_pools(drawn, budget, guard):
    docs, chunks, truth, seed = drawn
    pool = pool_of(chunks, seed)
    counter = TokenCounter("cl100k")
    chosen = Settings(packing=True, duplicate_guard=NEAR_DUPLICATE_GUARD if guard else None)
    for name in STRATEGIES:
        if name == "exact" and len(chunks) > 18:
            continue
        fast = run_prepared(name, pool.prepared, budget, chosen, texts=pool.texts, trace=False)
        check_context(fast, pool.texts, counter)
        traced = run_prepared(name, pool.prepared, budget, chosen, texts=pool.texts)
        assert traced.indices == fast.indices and traced.passages == fast.passages
        assert traced.tokens_used == fast.tokens_used
        for p in traced.passages:  # one source: a true slice where every offset was true
            members = [truth[m] for m in p.chunks]
            known = {placement(pool.chunks[m])[0] for m in p.chunks} - {None}
            assert len(known) <= 1  # chunks of no known source may join by shared edges
            if all(mode == "offset" for _, _, mode in members):
                d = members[0][0]
                lo = min(s for _, s, _ in members)
                assert docs[d][lo : lo + len(p.source_text)] == p.source_text


@given(
    st.lists(
        st.sampled_from([*WORDS, "end.", "Stop!", "ok?", "\n", "  ", "x" * 30]),
        min_size=0,
        max_size=400,
    )
)
def test_a_passage_counted_in_pieces_is_never_less_than_counted_whole(words):
    text = " ".join(words)
    counter = TokenCounter("cl100k")
    assert "".join(pieces(text)) == text
    assert context_tokens(text, counter) >= int(counter(text))


def test_sentences_key_only_long_sentences():
    found = sentences("Short one. " + " ".join(["word"] * 7) + ". Done")
    assert [k is not None for _, _, k in found] == [False, True, False]


@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_every_pool_format_reads_where_chunks_sit(tmp_path, suffix):
    """The same pool packs the same from JSON, CSV and Parquet: offset and source, or doc_id
    with start, are read in every format."""
    from adagres.pools.io import load_pool, save_pool

    words = [f"w{k}" for k in range(120)]
    doc = " ".join(words)
    cuts = [(0, 200), (150, 350), (300, 480)]
    chunks = [
        Chunk(f"c{k}", doc[a:b], source="doc", extra={"offset": a}) for k, (a, b) in enumerate(cuts)
    ]
    chunks.append(Chunk("d0", doc[:100], metadata={"doc_id": "other", "start": 0}))
    pool = pool_of(chunks, tokenizer="words")
    path = tmp_path / f"pool{suffix}"
    if suffix == ".json":
        save_pool(pool, path)
    else:
        import pandas as pd

        rows = [
            {
                "id": c.id,
                "text": c.text,
                "tokens": c.tokens,
                "query": "q",
                "source": c.source,
                "offset": c.extra.get("offset"),
                "doc_id": (c.metadata or {}).get("doc_id"),
                "start": (c.metadata or {}).get("start"),
            }
            for c in pool.chunks
        ]
        frame = pd.DataFrame(rows)
        for column in ("offset", "start"):  # integers with gaps: pandas' nullable Int64
            frame[column] = frame[column].astype("Int64")
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    loaded = load_pool(path)
    assert [placement(c) for c in loaded.chunks] == [placement(c) for c in pool.chunks]
    assert placement(loaded.chunks[3]) == (("doc", "other"), 0)


def test_why_dropped_names_what_was_left_out_and_who_holds_it():
    chunks = [
        Chunk("a", f"{HEADER} Ibuprofen eases pain in adults.", source="x"),
        Chunk("b", f"{HEADER} Aspirin protects the heart.", source="y"),
    ]
    pool = pool_of(chunks)
    s = run_prepared("topk_budget", pool.prepared, 1000, Settings(packing=True))
    first, second = s.indices
    v = s.verdict(second)
    assert v.left_out == ((first, HEADER),)
    said = f"1 repeated sentence left out ([…]), already held by '{pool.ids[first]}'"
    assert said in v.summary(pool.ids)


@given(adversarial_pools(), st.lists(st.integers(5, 400), min_size=2, max_size=4))
def test_runs_that_share_a_pools_reading_equal_runs_on_a_fresh_pool(drawn, budgets):
    """Packing keeps each pool's sentences and counted pieces across runs (a sweep runs the
    selector dozens of times on one pool): what one run read must not change another's."""
    _, chunks, _, seed = drawn
    shared = pool_of(chunks, seed)
    counter = TokenCounter("cl100k")
    chosen = Settings(packing=True, duplicate_guard=NEAR_DUPLICATE_GUARD)
    for budget in budgets:
        for name in ("adagres", "topk_budget", "mmr"):
            again = run_prepared(name, shared.prepared, budget, chosen, texts=shared.texts)
            fresh = pool_of(chunks, seed)
            alone = run_prepared(name, fresh.prepared, budget, chosen, texts=fresh.texts)
            assert fresh.prepared.spans is not shared.prepared.spans
            assert again.indices == alone.indices and again.passages == alone.passages
            assert again.tokens_used == alone.tokens_used and again.steps == alone.steps
            check_context(again, shared.texts, counter)  # the budget, by the tokenizer
