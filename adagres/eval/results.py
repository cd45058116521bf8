"""``results.json``: every per-query row, the query records, the aggregates and the findings
of one run, in a form the app and later analyses read (numbers, not markdown).

Rows are stored in blocks of one (corpus, strategy, budget), a list of values per row under
shared column names, floats rounded to 4 decimals (a full run stays a few MB); query records
likewise. :func:`read_results` gives both back as lists of dicts (rows block by block).
:func:`strategy_table` is the one place a report table's rows are taken from, for the
markdown and the app alike.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.strategies import TOPK_BUDGET, TOPK_SAME_K
from ..errors import PoolError
from .aggregate import METRIC_LABELS

__all__ = [
    "FORMAT",
    "cell",
    "corpus_summary",
    "entries_by_key",
    "mean_of",
    "primary_label",
    "read_results",
    "rounded",
    "strategy_table",
    "write_results",
]

FORMAT = "adagres-eval/1"
#: Decimals kept of the floats of rows (metrics of one selection) and of everything else.
ROW_DECIMALS = 4
DECIMALS = 6
#: The row fields a block of rows shares (stored once per block).
BLOCK_KEYS = ("corpus", "strategy", "budget")


def rounded(value: Any, decimals: int = DECIMALS) -> Any:
    """``value`` with every float rounded to ``decimals`` (NaN and inf become None)."""
    if isinstance(value, float):
        return round(value, decimals) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): rounded(v, decimals) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, decimals) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        return rounded(value.item(), decimals)
    return value


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _lines(values: Sequence[Any]) -> str:
    return "[\n" + ",\n".join(_line(v) for v in values) + "\n]"


def _blocks(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[dict[str, Any]]:
    """Rows grouped by (corpus, strategy, budget), in the order they first appear."""
    blocks: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = tuple(row[k] for k in BLOCK_KEYS)
        block = blocks.setdefault(key, {**dict(zip(BLOCK_KEYS, key, strict=True)), "data": []})
        block["data"].append([rounded(row.get(c), ROW_DECIMALS) for c in columns])
    return list(blocks.values())


def write_results(
    path: str | os.PathLike[str],
    document: Mapping[str, Any],
    *,
    row_columns: Sequence[str],
    query_columns: Sequence[str],
) -> Path:
    """Write ``document`` to ``path``: its ``rows`` in blocks of one (corpus, strategy,
    budget), one line per block; its ``queries``, ``aggregates`` and ``findings`` one line
    per item. Row floats keep 4 decimals, other floats 6."""
    lists = ("rows", "queries", "aggregates", "findings")
    head = {k: rounded(v) for k, v in document.items() if k not in lists}
    columns = [c for c in row_columns if c not in BLOCK_KEYS]
    queries = [[rounded(q.get(c)) for c in query_columns] for q in document["queries"]]
    parts = [json.dumps(head, ensure_ascii=False, indent=1)[:-2]]  # without the closing "}"
    parts.append('"findings": ' + _lines(rounded(list(document["findings"]))))
    parts.append('"aggregates": ' + _lines(rounded(list(document["aggregates"]))))
    parts.append(
        f'"queries": {{"columns": {_line(list(query_columns))}, "data": ' + _lines(queries) + "}"
    )
    parts.append(
        f'"rows": {{"columns": {_line(columns)}, "blocks": '
        + _lines(_blocks(document["rows"], columns))
        + "}"
    )
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(",\n ".join(parts) + "\n}\n", encoding="utf-8")
    return target


def read_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The document :func:`write_results` wrote, rows and queries as lists of dicts."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PoolError(f"{path}: not a readable results file ({error})") from None
    if document.get("format") != FORMAT:
        raise PoolError(f"{path}: format {document.get('format')!r}, expected {FORMAT!r}")
    queries = document["queries"]
    document["queries"] = [dict(zip(queries["columns"], q, strict=True)) for q in queries["data"]]
    columns = document["rows"]["columns"]
    document["rows"] = [
        {**{k: block[k] for k in BLOCK_KEYS}, **dict(zip(columns, row, strict=True))}
        for block in document["rows"]["blocks"]
        for row in block["data"]
    ]
    return document


def entries_by_key(document: Mapping[str, Any]) -> dict[tuple[str, int, str], Mapping[str, Any]]:
    """The aggregates of a results document by (corpus, budget, strategy)."""
    return {(e["corpus"], e["budget"], e["strategy"]): e for e in document["aggregates"]}


def mean_of(entry: Mapping[str, Any] | None, metric: str, kind: str = "metrics") -> float | None:
    """The mean of ``metric`` in an aggregate entry's ``kind`` (``metrics``, or ``delta``: the
    paired difference with top-k); None where the entry or the number is missing."""
    if entry is None:
        return None
    value = entry.get(kind, {}).get(metric, {}).get("mean")
    return None if value is None else float(value)


def strategy_table(document: Mapping[str, Any], corpus: str, budget: int) -> list[dict[str, Any]]:
    """One row per strategy for ``corpus`` at ``budget``: means from the aggregates, the
    primary metric's interval, paired differences and W/T/L on the primary metric."""
    out = []
    for entry in document["aggregates"]:
        if entry["corpus"] != corpus or entry["budget"] != budget:
            continue
        m, primary = entry["metrics"], entry["primary"]
        wtl = {base: entry["wtl"][base][primary] for base in entry["wtl"]}
        out.append(
            {
                "strategy": entry["strategy"],
                "family": document["strategies"].get(entry["strategy"], {}).get("family"),
                "primary": m[primary]["mean"],
                "primary_low": m[primary]["low"],
                "primary_high": m[primary]["high"],
                "answer_recall": m["answer_recall"]["mean"],
                "gold_recall": m["gold_recall"]["mean"],
                "iou": m["iou"]["mean"],
                "redundancy_mean": m["redundancy_mean"]["mean"],
                "redundancy_delta": entry["delta"]["redundancy_mean"]["mean"],
                "repeated_text": m.get("repeated_text", {}).get("mean"),
                "budget_use": m["budget_use"]["mean"],
                "near_duplicates": m["near_duplicates"]["mean"],
                "primary_delta": entry["delta"][primary]["mean"],
                **{
                    f"wtl_{name}": "{wins}/{ties}/{losses}".format(**wtl[name])
                    for name in (TOPK_BUDGET.name, TOPK_SAME_K.name)
                },
                "solved": f"{entry['n_solved']}/{entry['n_queries']}",
            }
        )
    return out


def cell(value: float | None, spec: str = ".3f", unit: str = "") -> str:
    """A number of a report's table, formatted by ``spec``; with a ``unit`` (``%``, ``pt``)
    a share, shown times 100. ``–`` where not measured.

    >>> cell(0.4123), cell(0.0412, ".1f", "%"), cell(-0.02, "+.1f", "pt"), cell(None)
    ('0.412', '4.1 %', '-2.0 pt', '–')
    """
    if value is None:
        return "–"
    return f"{100 * value:{spec}} {unit}" if unit else format(value, spec)


def corpus_summary(info: Mapping[str, Any]) -> str:
    """One sentence on a corpus's queries: how many have gold chunks and answers in the pool.

    >>> corpus_summary({"queries": 3, "with_gold": 2, "with_answers": 0, "answerable": 0})
    '3 queries; 2 with a gold chunk in the pool; no answer strings.'
    """
    answers = (
        f"{info['answerable']} of the {info['with_answers']} with answer strings have one in "
        "the pool"
        if info["with_answers"]
        else "no answer strings"
    )
    return (
        f"{info['queries']} queries; {info['with_gold']} with a gold chunk in the pool; {answers}."
    )


def primary_label(document: Mapping[str, Any], corpus: str) -> str:
    """The label of a corpus's primary metric (``answer recall`` or ``gold recall``)."""
    return METRIC_LABELS[document["corpora"][corpus]["primary"]]
