"""The cases the harness measures: real QA pools, the demo pools, or a user's pool files.

The harness measures a list of :class:`Case`: one query, its pool (embedded, token counts, gold
chunks marked, answers) and ``source``, a small JSON recipe from which :func:`rebuild`
makes the very same pool again (the app opens a query of a report through it).

- ``fanoutqa``: FanOutQA dev sub-questions over the Wikipedia lead summaries. The top
  ``articles`` summaries by BM25 (:func:`adagres.corpora.datasets.fanoutqa_pools`, the
  evidence article kept) are chunked with overlap (64-token windows every 48 tokens by
  default) and the ``top_n`` chunks closest to the sub-question by MiniLM form the pool.
  Gold: the chunks of the evidence article that made the pool; answers: the sub-question's
  answer strings.
- ``drugs``: one query per (drug, condition) with at least ``min_reviews`` reviews,
  "What do patients report about <drug> for <condition>?", over all 979 reviews chunked
  the same way. Gold: the chunks of that drug's reviews for that condition. Answers: none
  (a patient's experience has no answer string), so answer recall is not measured here.
- ``demo``: the three bundled pools of ``data/`` as they are.
- a path: a user's pool set (:func:`path_cases`).

Query samples come from :func:`sample_ids`; embeddings from the on-disk cache after the first run.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..corpora import datasets
from ..corpora.documents import chunk_documents, pool_from_documents
from ..embed.models import embed_texts
from ..errors import InputError, PoolError
from ..pools.pool import Pool

__all__ = [
    "NAMED_SETS",
    "WINDOW_OVERLAP",
    "Case",
    "Chunking",
    "Split",
    "demo_cases",
    "drug_cases",
    "drug_queries",
    "fanoutqa_cases",
    "fanoutqa_queries",
    "mark",
    "path_cases",
    "rebuild",
    "sample_ids",
    "windows_chunking",
]

#: The pool sets known by name (anything else given to the CLI is a path).
NAMED_SETS = ("fanoutqa", "windows", "drugs", "demo")
#: The ``windows`` set: the FanOutQA queries and documents chunked the way many pipelines
#: chunk, fixed windows overlapping by half (``size`` tokens, a new window every size/2).
WINDOW_OVERLAP = 0.5
Split = Literal["test", "dev", "all"]
Progress = Callable[[int, int], None]
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Chunking:
    """How the real corpora become pools: windows of ``size`` tokens overlapping by
    ``overlap`` (``tokenizer``), the ``top_n`` closest to the query; ``articles`` BM25
    summaries per FanOutQA sub-question, ``min_reviews`` per drug query."""

    size: int = 64
    overlap: int = 16
    top_n: int = 60
    articles: int = 40
    min_reviews: int = 3
    tokenizer: str = "cl100k"


@dataclass(frozen=True, eq=False)
class Case:
    """One query of a pool set: ``pool`` is ready to select from; ``source`` rebuilds it."""

    corpus: str
    query_id: str
    pool: Pool
    source: dict[str, Any]

    @property
    def gold_positions(self) -> tuple[int, ...] | None:
        """Pool positions of the gold chunks; None when the pool marks none."""
        positions = tuple(i for i, chunk in enumerate(self.pool.chunks) if chunk.gold)
        return positions or None

    @property
    def answers(self) -> tuple[str, ...]:
        """The gold answer strings (empty when the set has none)."""
        return self.pool.answers


def sample_ids(
    ids: Sequence[str],
    *,
    seed: int,
    split: Split = "test",
    held_out: float = 0.7,
    limit: int | None = None,
) -> list[str]:
    """A seeded sample of ``ids``, in their original order.

    A permutation by ``numpy.random.default_rng(seed)`` puts the first ``1 - held_out``
    share into ``dev`` (for tuning) and the rest into ``test`` (held out); ``limit`` keeps
    the first ``limit`` of the chosen part in permutation order (a random subsample).

    >>> sample_ids([f"q{i}" for i in range(10)], seed=0, held_out=0.5)
    ['q0', 'q1', 'q5', 'q8', 'q9']
    """
    if not 0.0 < held_out < 1.0:
        raise InputError(f"held_out: expected a share between 0 and 1, got {held_out!r}")
    if limit is not None and limit < 1:
        raise InputError(f"queries: expected at least 1, got {limit!r}")
    order = np.random.default_rng(seed).permutation(len(ids))
    cut = round(len(ids) * (1.0 - held_out))
    part = {"dev": order[:cut], "test": order[cut:], "all": order}[split]
    chosen = part[:limit] if limit is not None else part
    return [ids[i] for i in sorted(chosen.tolist())]


def mark(pool: Pool, gold_documents: Sequence[str], answers: Sequence[str]) -> Pool:
    """``pool`` with its chunks of ``gold_documents`` (``metadata["doc_id"]``) marked gold."""
    gold = set(gold_documents)
    chunks = tuple(
        dataclasses.replace(chunk, gold=(chunk.metadata or {}).get("doc_id") in gold)
        for chunk in pool.chunks
    )
    return dataclasses.replace(pool, chunks=chunks, answers=tuple(answers))


def _documents_pool(
    corpus: str,
    query_id: str,
    documents: Mapping[str, str],
    query: str,
    gold_documents: Sequence[str],
    answers: Sequence[str],
    chunking: Chunking,
    cache_dir: str | os.PathLike[str] | None,
) -> Case:
    pool = pool_from_documents(
        documents,
        query,
        size=chunking.size,
        overlap=chunking.overlap,
        top_n=chunking.top_n,
        tokenizer=chunking.tokenizer,
        cache_dir=cache_dir,
    )
    pool = dataclasses.replace(mark(pool, gold_documents, answers), name=f"{corpus}:{query_id}")
    present = {(chunk.metadata or {}).get("doc_id") for chunk in pool.chunks}
    source = {
        "kind": "documents",
        "corpus": corpus,
        "query_id": query_id,
        "query": query,
        # Only the documents that reached the pool, in the order given: their chunks hold
        # the pool's chunks, so the top-N of their chunks is the same pool (ties included).
        "documents": [doc for doc in documents if doc in present],
        "gold_documents": list(gold_documents),
        "answers": list(answers),
        "chunking": dataclasses.asdict(chunking),
    }
    return Case(corpus, query_id, pool, source)


def _warm(texts: Sequence[str], cache_dir: Any, progress: Progress | None) -> None:
    """Embed every text once, in full batches, so each pool then reads the cache."""
    if texts:
        embed_texts(list(dict.fromkeys(texts)), cache_dir=cache_dir, progress=progress)


# --------------------------------------------------------------------------- FanOutQA


def fanoutqa_queries() -> list[str]:
    """Query ids of the FanOutQA set: ``q<i>`` for the i-th dev sub-question whose evidence
    is among the summaries (the order of :func:`adagres.corpora.datasets.sub_questions`)."""
    return [f"q{i}" for i in range(len(datasets.sub_questions()))]


def fanoutqa_cases(
    ids: Sequence[str],
    chunking: Chunking = Chunking(),
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    corpus: str = "fanoutqa",
) -> list[Case]:
    """The FanOutQA cases ``ids`` (from :func:`fanoutqa_queries`), in that order, as pool set
    ``corpus`` (``windows``: give it :func:`windows_chunking`)."""
    retrieved = datasets.fanoutqa_pools(top_n=chunking.articles)
    summaries = datasets.wiki_summaries()
    chosen = []
    for query_id in ids:
        index = int(query_id[1:]) if query_id[1:].isdigit() else -1
        if not query_id.startswith("q") or not 0 <= index < len(retrieved):
            raise InputError(f"fanoutqa: no query {query_id!r} (q0 … q{len(retrieved) - 1})")
        chosen.append((query_id, retrieved[index]))
    documents = {
        str(c.title): summaries[str(c.title)]["extract"] for _, bm25 in chosen for c in bm25.chunks
    }
    pieces = chunk_documents(
        documents, size=chunking.size, overlap=chunking.overlap, tokenizer=chunking.tokenizer
    )
    _warm([c.text for c in pieces] + [bm25.query for _, bm25 in chosen], cache_dir, progress)
    cases = []
    for query_id, bm25 in chosen:
        docs = {str(c.title): summaries[str(c.title)]["extract"] for c in bm25.chunks}
        gold = [str(c.title) for c in bm25.chunks if c.gold]
        cases.append(
            _documents_pool(
                corpus, query_id, docs, bm25.query, gold, bm25.answers, chunking, cache_dir
            )
        )
    return cases


def windows_chunking(chunking: Chunking) -> Chunking:
    """``chunking`` with windows overlapping by half their size (the ``windows`` set)."""
    return dataclasses.replace(chunking, overlap=int(chunking.size * WINDOW_OVERLAP))


# --------------------------------------------------------------------------- drug reviews


def drug_queries(min_reviews: int = 3) -> dict[str, tuple[str, str]]:
    """``{"<drug> | <condition>": (drug, condition)}`` for every pair with at least
    ``min_reviews`` reviews, most reviewed first (ties: by name)."""
    counts = Counter(
        (row["drug"], row["condition"])
        for row in datasets.drug_review_rows()
        if row["drug"].strip() and row["condition"].strip()
    )
    ranked = sorted(
        (pair for pair, n in counts.items() if n >= min_reviews),
        key=lambda pair: (-counts[pair], pair),
    )
    return {f"{drug} | {condition}": (drug, condition) for drug, condition in ranked}


def drug_cases(
    ids: Sequence[str],
    chunking: Chunking = Chunking(),
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> list[Case]:
    """The drug-review cases ``ids`` (keys of :func:`drug_queries`), in that order."""
    known = drug_queries(chunking.min_reviews)
    missing = [query_id for query_id in ids if query_id not in known]
    if missing:
        raise InputError(f"drugs: no query {missing[0]!r} with {chunking.min_reviews}+ reviews")
    rows = datasets.drug_review_rows()
    reviews = datasets.drug_reviews()
    pieces = chunk_documents(
        reviews, size=chunking.size, overlap=chunking.overlap, tokenizer=chunking.tokenizer
    )
    queries = {
        query_id: "What do patients report about {} for {}?".format(*known[query_id])
        for query_id in ids
    }
    _warm([c.text for c in pieces] + list(queries.values()), cache_dir, progress)
    cases = []
    for query_id in ids:
        drug, condition = known[query_id]
        gold = [r["id"] for r in rows if (r["drug"], r["condition"]) == (drug, condition)]
        cases.append(
            _documents_pool(
                "drugs", query_id, reviews, queries[query_id], gold, (), chunking, cache_dir
            )
        )
    return cases


# --------------------------------------------------------------------------- files


def _project_path(path: Path) -> str:
    """The path as a report records it: relative to the repository when inside it."""
    resolved = path.resolve()
    return resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else str(path)


def path_cases(path: str | os.PathLike[str], *, corpus: str | None = None) -> list[Case]:
    """Every pool of a pool set (:func:`adagres.poolsets.summaries.load_pool_set`: a JSONL file
    of pools, a folder of pool files, one pool file, or a ``.json`` spec of queries against
    a Milvus collection), with token counts (cl100k) and embeddings (MiniLM) where the file
    has none. Query ids: ``<file stem>:<position in the file>``, or the spec's
    ``queries[<i>]``."""
    from ..poolsets.summaries import load_pool_set, load_unit, prepare_pool

    pool_set = load_pool_set(path)
    name = corpus or Path(pool_set.name).stem
    seen: dict[str, int] = {}
    cases = []
    for number, unit in enumerate(pool_set.units):
        for index, pool in enumerate(load_unit(unit)):
            if unit.path is None:
                query_id = unit.label
            else:
                stem = Path(unit.path).stem
                query_id = f"{stem}:{seen.get(stem, 0)}"
                seen[stem] = seen.get(stem, 0) + 1
            source = {
                "kind": "pool set",
                "path": _project_path(Path(path)),
                "unit": number,
                "index": index,
            }
            cases.append(Case(name, query_id, prepare_pool(pool), source))
    return cases


def demo_cases(data_dir: str | os.PathLike[str] | None = None) -> list[Case]:
    """The bundled demo pools (``data/*.json``), one case each, ids = file stems."""
    folder = Path(data_dir) if data_dir is not None else ROOT / "data"
    files = sorted(folder.glob("*.json"))
    if not files:
        raise PoolError(f"{folder}: no demo pools (*.json)")
    cases = []
    for file in files:
        found = path_cases(file, corpus="demo")
        if len(found) == 1:  # one pool per demo file: the file's name is the query's id
            found = [dataclasses.replace(found[0], query_id=file.stem)]
        cases.extend(found)
    return cases


# --------------------------------------------------------------------------- rebuild


def rebuild(source: Mapping[str, Any], *, cache_dir: str | os.PathLike[str] | None = None) -> Pool:
    """The pool a case's ``source`` describes, built again (embeddings from the cache).

    PoolError names what is missing when the recipe cannot be followed (a moved file, the
    optional data packages not installed).
    """
    kind = source.get("kind")
    if kind == "pool set":
        from ..poolsets.summaries import load_pool_set, load_unit, prepare_pool

        path = Path(str(source["path"]))
        path = path if path.is_absolute() or path.exists() else ROOT / path
        units = load_pool_set(path).units
        number, index = int(source["unit"]), int(source["index"])
        pools = load_unit(units[number]) if 0 <= number < len(units) else []
        if not 0 <= index < len(pools):
            raise PoolError(f"{path}: the pool set has no pool #{index} in piece #{number}")
        return prepare_pool(pools[index])
    if kind != "documents":
        raise PoolError(f"source: unknown kind {kind!r}; expected 'pool set' or 'documents'")
    chunking = Chunking(**source["chunking"])
    corpus = str(source["corpus"])
    if corpus in ("fanoutqa", "windows"):
        summaries = datasets.wiki_summaries()
        texts = {title: summaries[title]["extract"] for title in source["documents"]}
    elif corpus == "drugs":
        reviews = datasets.drug_reviews()
        texts = {doc: reviews[doc] for doc in source["documents"]}
    else:
        raise PoolError(f"source: unknown corpus {corpus!r}")
    query_id, query = str(source.get("query_id", "")), str(source["query"])
    gold, answers = source["gold_documents"], source["answers"]
    return _documents_pool(corpus, query_id, texts, query, gold, answers, chunking, cache_dir).pool
