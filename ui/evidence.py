"""The Evidence page's data: reports of ``python -m adagres.eval`` read from their
``results.json`` (or, in a fresh clone where git keeps only ``report.md``, that Markdown
summary), and the way back from a query row to its pool.

Reports live in ``$ADAGRES_REPORTS_DIR`` or ``<repo>/reports``, a folder each (``latest``
first). A query's pool is rebuilt from the recipe the report stored
(:func:`adagres.eval.cases.rebuild`) and registered as a public pool, ``eval-<12 hex>``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from adagres import Settings as Selector
from adagres.core.strategies import ADAGRES, STRATEGIES, TOPK_BUDGET
from adagres.eval.aggregate import METRIC_LABELS
from adagres.eval.frontier import (
    compared,
    frontier_points,
    preset_entry,
    summary_rows,
    tradeoff_points,
)
from adagres.eval.report import PACKING_COLUMNS, packing_rows
from adagres.eval.results import primary_label, read_results, strategy_table
from adagres.eval.strategies import BASELINE_BUDGET
from adagres.eval.targets import targets_table
from adagres.figures.evaluation import frontier_figure, tradeoff_figure

from . import pools, state

__all__ = [
    "app_settings",
    "document",
    "figure",
    "has_results",
    "open_query",
    "packing_frame",
    "query_frame",
    "query_label",
    "report_names",
    "reports_dir",
    "summary_blocks",
    "summary_frame",
    "table_frame",
    "targets_frame",
]


def summary_frame(doc: Mapping[str, Any]) -> pd.DataFrame:
    """The report's summary table (:func:`adagres.eval.frontier.summary_rows`): a row per
    compared strategy, per corpus its recall, the paired Δ with top-k and its repeated text
    at the mid budget (shares, not percent)."""
    out = []
    for row in summary_rows(doc):
        record: dict[str, Any] = {"strategy": row["label"]}
        for corpus in doc["corpora"]:
            label = primary_label(doc, corpus)
            record[f"{corpus}: {label}"] = row[corpus]["recall"]
            record[f"{corpus}: Δ vs top-k"] = row[corpus]["delta"]
            record[f"{corpus}: repeated text"] = row[corpus]["repeated"]
        out.append(record)
    return pd.DataFrame(out)


def targets_frame(doc: Mapping[str, Any]) -> pd.DataFrame:
    """Which target of the recommended preset holds or fails on which corpus and budget
    (:func:`adagres.eval.targets.targets_table`); empty when the run did not measure it."""
    name = preset_entry(doc, "recommended")
    return pd.DataFrame(targets_table(doc, name) if name else [])


def packing_frame(doc: Mapping[str, Any]) -> pd.DataFrame:
    """What packing did, per corpus and budget, for each strategy that packs
    (:func:`adagres.eval.report.packing_rows`, columns labelled as in the report); empty
    when no strategy of the run packs."""
    labels = {"corpus": "corpus", "budget": "budget", "strategy": "strategy", **PACKING_COLUMNS}
    return pd.DataFrame([{labels[k]: v for k, v in row.items()} for row in packing_rows(doc)])


ROOT = Path(__file__).resolve().parent.parent
RESULTS = "results.json"
SUMMARY = "report.md"

#: Column labels of the strategy table (keys of :func:`adagres.eval.results.strategy_table`).
TABLE_LABELS = {
    "strategy": "strategy",
    "primary": "primary metric",
    "primary_low": "CI low",
    "primary_high": "CI high",
    "answer_recall": "answer recall",
    "gold_recall": "gold recall",
    "iou": "IoU",
    "redundancy_mean": "mean cosine",
    "redundancy_delta": "Δ cosine vs topk_budget",
    "budget_use": "budget use",
    "near_duplicates": "near-dup pairs",
    "primary_delta": "Δ primary vs topk_budget",
    "wtl_topk_budget": "W/T/L vs topk_budget",
    "wtl_topk_same_k": "W/T/L vs topk_same_k",
    "solved": "solved",
    "family": "family",
}


def reports_dir() -> Path:
    """The folder of the report folders (``$ADAGRES_REPORTS_DIR`` or ``<repo>/reports``)."""
    return Path(os.environ.get("ADAGRES_REPORTS_DIR") or ROOT / "reports")


def report_names() -> list[str]:
    """Report folders: those that hold a results.json first, then those that hold only the
    Markdown summary (a fresh clone's, where git keeps report.md alone); ``latest`` first in
    each, then by name."""
    folder = reports_dir()
    if not folder.is_dir():
        return []
    names = sorted(
        p.name for p in folder.iterdir() if (p / RESULTS).is_file() or (p / SUMMARY).is_file()
    )
    return sorted(names, key=lambda name: (not has_results(name), name != "latest"))


def has_results(name: str) -> bool:
    """Whether report ``name`` holds its results.json (False: its summary alone)."""
    return (reports_dir() / name / RESULTS).is_file()


# A Markdown link's target, and the <details> blocks the report folds its long parts into.
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_SUMMARY_LINE = re.compile(r"<summary>(.*)</summary>")


def summary_blocks(name: str) -> list[tuple[str | None, str]]:
    """The Markdown summary of report ``name`` (its report.md, the file git keeps) in
    blocks: ``(None, text)`` for open text, ``(title, text)`` for each folded
    ``<details>`` block (an expander on the page). Lines that link a file absent from the
    report's folder (the figures, built with results.json) are left out."""
    folder = reports_dir() / name
    blocks: list[tuple[str | None, str]] = []
    title: str | None = None
    lines: list[str] = []

    def close() -> None:
        text = "\n".join(lines).strip()
        if text:
            blocks.append((title, text))
        lines.clear()

    for line in (folder / SUMMARY).read_text(encoding="utf-8").splitlines():
        folded = _SUMMARY_LINE.fullmatch(line.strip())
        if line.strip() == "<details>":
            close()
        elif folded and not lines:
            title = folded.group(1)
        elif line.strip() == "</details>":
            close()
            title = None
        elif not any(_missing(folder, target) for target in _LINK.findall(line)):
            lines.append(line)
    close()
    return blocks


def _missing(folder: Path, target: str) -> bool:
    """Whether a relative link of the report names a file its folder lacks."""
    return "://" not in target and not (folder / target).is_file()


# One document per report file, shared and read-only (a report is the same for every
# session): a copy per rerun, as st.cache_data makes, cost 0.19 s of every rerun of the page.
@st.cache_resource(show_spinner=False, max_entries=8)
def _load(path: str, modified: float) -> dict[str, Any]:
    return read_results(path)


@st.cache_resource(show_spinner=False, max_entries=32)
def _figure(path: str, modified: float, corpus: str, tradeoff: bool) -> Any:
    doc = _load(path, modified)
    shown, label = compared(doc), primary_label(doc, corpus)
    if tradeoff:
        return tradeoff_figure(tradeoff_points(doc, corpus, shown), corpus=corpus, label=label)
    points = frontier_points(doc, corpus, shown)
    return frontier_figure(
        points, corpus=corpus, label=label, order=shown, baseline=BASELINE_BUDGET
    )


def _stamped(name: str) -> tuple[str, float]:
    """The results file of report ``name`` and its modification time: the caches' key."""
    path = reports_dir() / name / RESULTS
    return str(path), path.stat().st_mtime


def document(name: str) -> dict[str, Any]:
    """The results document of report ``name`` (cached until its file changes; read-only:
    every session shares it)."""
    return _load(*_stamped(name))


def figure(name: str, corpus: str, *, tradeoff: bool) -> Any:
    """The recall–repeated-text frontier of ``corpus`` in report ``name``
    (:func:`adagres.figures.evaluation.frontier_figure`), or with ``tradeoff`` its
    recall–mean-cosine figure (the compared strategies); built once per report file, not at
    every rerun."""
    return _figure(*_stamped(name), corpus, tradeoff)


def table_frame(doc: Mapping[str, Any], corpus: str, budget: int) -> pd.DataFrame:
    """The strategy table of ``corpus`` at ``budget``, labelled for display: the primary
    metric (answer recall, or gold recall where the corpus has no answers) first."""
    primary_key = doc["corpora"][corpus]["primary"]
    primary = METRIC_LABELS[primary_key]
    columns = [c for c in TABLE_LABELS if c != primary_key]  # shown once, as the primary
    frame = pd.DataFrame(strategy_table(doc, corpus, budget), columns=columns)
    labels = {**TABLE_LABELS, "primary": primary, "primary_delta": f"Δ {primary} vs topk_budget"}
    return frame.rename(columns=labels)


def query_frame(doc: Mapping[str, Any], corpus: str, budget: int, strategy: str) -> pd.DataFrame:
    """One row per query of ``corpus``: the strategy's row at ``budget`` beside topk_budget's,
    with the query's text and whether its pool holds an answer."""
    queries = [q for q in doc["queries"] if q["corpus"] == corpus]
    mine = _rows(doc, corpus, budget, strategy)
    base = _rows(doc, corpus, budget, TOPK_BUDGET.name)
    out = []
    for q in queries:
        row, ref = mine.get(q["query_id"], {}), base.get(q["query_id"], {})
        out.append(
            {
                "query id": q["query_id"],
                "query": q["query"],
                "answer in pool": q["answer_in_pool"],
                "answer found": row.get("answer_found"),
                "topk_budget found": ref.get("answer_found"),
                "gold recall": row.get("gold_recall"),
                "topk_budget gold recall": ref.get("gold_recall"),
                "mean cosine": row.get("redundancy_mean"),
                "tokens used": row.get("tokens_used"),
                "chunks": row.get("size"),
                "solved": row.get("solved"),
            }
        )
    return pd.DataFrame(out)


def _rows(doc: Mapping[str, Any], corpus: str, budget: int, strategy: str) -> dict[str, Any]:
    return {
        r["query_id"]: r
        for r in doc["rows"]
        if r["corpus"] == corpus and r["budget"] == budget and r["strategy"] == strategy
    }


def app_settings(doc: Mapping[str, Any], strategy: str) -> tuple[str, Selector, bool]:
    """The app's strategy and settings that reproduce ``strategy`` of the report, and whether
    they do exactly (False: the strategy is not one the app runs; AdaGReS with the default
    settings is shown instead)."""
    entry = doc["strategies"].get(strategy, {})
    core, settings = entry.get("core"), entry.get("settings")
    if core in STRATEGIES and settings is not None:
        return core, Selector(**settings), True
    return ADAGRES.name, Selector(), False


def open_query(
    doc: Mapping[str, Any], query_id: str, corpus: str, strategy: str, budget: int
) -> None:
    """Rebuild the pool of ``query_id``, register it and make it the session's pool with the
    strategy, settings and budget of the report's run. Raises AdagresError when the pool
    cannot be rebuilt (missing data packages, a moved file)."""
    from adagres.eval.cases import rebuild

    record = next(q for q in doc["queries"] if q["corpus"] == corpus and q["query_id"] == query_id)
    pool = rebuild(record["source"])
    key = f"eval-{pool.fingerprint[:12]}"
    pools.add_pool(pool, "eval", f"{corpus} {query_id}: {pool.query[:40]}", key)
    core, selector, _exact = app_settings(doc, strategy)
    state.update(
        pool=key, budget=int(budget), strategy=core, selector=selector, step=None, chunk=None
    )


def query_label(query_id: str, text: str, width: int = 56) -> str:
    """A query's label in a select box: its id and as much of its text as fits ``width``
    characters (a closed box shows one line; the table above holds the whole text).

    >>> query_label("q7", "How long?")
    'q7: How long?'
    >>> query_label("biomedical_redundant", "What is the maximum daily dose of " * 3)
    'biomedical_redundant: What is the maximum daily dose of…'
    """
    room = max(16, width - len(query_id) - 2)
    short = text if len(text) <= room else text[: room - 1].rstrip() + "…"
    return f"{query_id}: {short}"
