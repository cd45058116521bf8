"""The report of a run: ``report.md``, the figures per corpus (HTML, and PNG where plotly's
kaleido finds a Chromium) and ``results.json``.

``report.md`` leads with what a reader compares (:mod:`adagres.eval.frontier`): one
sentence per corpus, one table across corpora at the mid budget, the targets of the
recommended preset, and per corpus the recall–repeated-text frontier
(:func:`adagres.figures.evaluation.frontier_figure`). The full tables per budget, the recall
against mean pairwise cosine figure and the paragraphs per strategy fold away in
``<details>`` blocks.

The HTML figures load plotly.js from one shared local copy, ``plotly.min.js`` beside the
report folders (written from the installed plotly), so they open offline and the report
stays small. Git keeps only ``report.md`` of the published reports (``reports/.gitignore``):
it links its figures rather than embedding them, so that it reads whole without them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from ..figures.evaluation import frontier_figure, tradeoff_figure
from .aggregate import METRIC_LABELS, interval_text
from .frontier import (
    compared,
    frontier_points,
    mid_budget,
    preset_entry,
    role,
    summary_rows,
    tradeoff_points,
    verdict,
)
from .optimality import optimality_markdown
from .results import (
    cell,
    corpus_summary,
    entries_by_key,
    primary_label,
    strategy_table,
    write_results,
)
from .run import NOT_RUN, QUERY_COLUMNS, ROW_COLUMNS
from .strategies import BASELINE_BUDGET, optimum_names
from .targets import TARGETS, target_failures, targets_table

__all__ = [
    "BUILT_BESIDE",
    "PACKING_COLUMNS",
    "PLOTLY_JS",
    "figure_line",
    "lead_markdown",
    "packing_markdown",
    "packing_rows",
    "targets_markdown",
    "write_report",
]

#: File name of the shared plotly.js copy, one folder above each report.
PLOTLY_JS = "plotly.min.js"


def lead_markdown(document: Mapping[str, Any]) -> list[str]:
    """The summary the report leads with: a sentence per corpus, then the compared
    strategies across corpora at the mid budget (recall, paired Δ with top-k, repeated
    text), the numbers of :func:`adagres.eval.frontier.summary_rows`."""
    budget = mid_budget(document)
    corpora = list(document["corpora"])
    out = [
        "## Summary: recall against repeated text",
        "",
        *[f"- {verdict(document, corpus)}" for corpus in corpora],
        "",
        f"The compared strategies at {budget} tokens. Recall: the corpus's primary metric "
        "(answer recall; gold recall where the corpus has no answer strings); Δ: its paired "
        "mean difference with top-k (topk_budget) over the same queries, in points; repeated "
        "text: share of the context's words that repeat a word 8-gram already in it. Every "
        "other strategy is in the tables of each corpus.",
        "",
    ]
    head, rule = "| strategy |", "|---|"
    for corpus in corpora:
        head += f" {corpus}: {primary_label(document, corpus)} | Δ vs top-k | repeated text |"
        rule += "---:|---:|---:|"
    out += [head, rule]
    for row in summary_rows(document, budget):
        cells = [
            f"{cell(row[c]['recall'])} | {cell(row[c]['delta'], '+.1f', 'pt')} | "
            f"{cell(row[c]['repeated'], '.1f', '%')}"
            for c in corpora
        ]
        out.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    return [*out, ""]


def targets_markdown(document: Mapping[str, Any]) -> list[str]:
    """The targets of the recommended preset as one small table: which holds or fails on
    which corpus and budget (``–``: the target does not apply there)."""
    name = preset_entry(document, "recommended")
    out = ["## Targets of the recommended preset", ""]
    if name is None:
        return [*out, "This run did not measure the recommended preset.", ""]
    out += [
        f"Each against top-k on the same queries: {'; '.join(TARGETS.values())}. "
        f"Measured on {role(document, name)}.",
        "",
    ]
    rows = targets_table(document, name)
    if rows:
        columns = list(rows[0])
        out += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        out += ["| " + " | ".join(r.get(c, "–") for c in columns) + " |" for r in rows]
        out.append("")
    misses = len(target_failures(document, name))
    out.append(
        f"{role(document, name)} misses {misses} target(s) of this run."
        if misses
        else f"{role(document, name)} meets every target on every corpus and budget of this run."
    )
    return [*out, ""]


#: The columns of :func:`packing_rows` after corpus, budget and strategy, with their labels.
PACKING_COLUMNS = {
    "stitched": "stitched",
    "left_out": "sentences left out",
    "left_out_words": "words left out",
    "tokens_saved": "tokens saved",
    "repeated_text": "repeated text",
    "topk_repeated_text": "top-k's repeated text",
}


def packing_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What each mechanism of packing did, per corpus and budget, for every strategy of the
    run that packs (its settings say ``packing``): the means per query of the picks
    stitched to a passage (windows of one source), the sentences and words left out because
    the context already held them, the tokens the budget did not pay for, and the repeated
    text left, beside top-k's; None where not measured."""
    packs = {
        name
        for name, info in document.get("strategies", {}).items()
        if (info.get("settings") or {}).get("packing")
    }
    top = {
        (e["corpus"], e["budget"]): e["metrics"].get("repeated_text", {}).get("mean")
        for e in document["aggregates"]
        if e["strategy"] == BASELINE_BUDGET
    }
    rows = []
    for e in document["aggregates"]:
        m = e["metrics"]
        if e["strategy"] not in packs or "tokens_saved" not in m:
            continue
        row: dict[str, Any] = {
            "corpus": e["corpus"],
            "budget": e["budget"],
            "strategy": role(document, e["strategy"]),
        }
        for key in ("stitched", "left_out", "left_out_words", "tokens_saved", "repeated_text"):
            row[key] = m.get(key, {}).get("mean")
        row["topk_repeated_text"] = top.get((e["corpus"], e["budget"]))
        rows.append(row)
    return rows


def packing_markdown(document: Mapping[str, Any]) -> list[str]:
    """:func:`packing_rows` as the report's section "What packing did" (none without rows)."""
    rows = [
        f"| {r['corpus']} | {r['budget']} | {r['strategy']} | {cell(r['stitched'], '.2f')} | "
        f"{cell(r['left_out'], '.2f')} | {cell(r['left_out_words'], '.1f')} | "
        f"{cell(r['tokens_saved'], '.1f')} | {cell(r['repeated_text'], '.1f', '%')} | "
        f"{cell(r['topk_repeated_text'], '.1f', '%')} |"
        for r in packing_rows(document)
    ]
    if not rows:
        return []
    return [
        "## What packing did",
        "",
        "Means per query. Stitched: picks joined to a passage of their source (overlapping "
        "windows); left out: sentences of at least six words a pick would have repeated "
        "(the context already held them, a marker stands in their place); tokens saved: "
        "what the picks would have cost apart, less what the budget paid.",
        "",
        "| corpus | budget | strategy | " + " | ".join(PACKING_COLUMNS.values()) + " |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]


#: The report's line on what lies beside it: the committed summary outlives those files.
BUILT_BESIDE = (
    "The figures this file links to and `results.json` (every per-query row) are written "
    "beside it by the command above; they are not kept in git."
)


def figure_line(corpus: str, names: str, files: Sequence[str]) -> str:
    """The line that links the frontier figure of ``corpus`` (``files``: its PNG, when
    written, and its HTML). Links, not an embedded image: the committed report stays
    readable where the figures are not built."""
    kinds = {".png": "image", ".html": "interactive"}
    links = [f"[{kinds[Path(f).suffix]}]({f})" for f in files]
    return f"Figure, {corpus}: recall against repeated text ({names}): " + " · ".join(links)


def _details(summary: str, body: Sequence[str]) -> list[str]:
    """A folded block: GitHub and most viewers render the Markdown inside it."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def _table_markdown(document: Mapping[str, Any], corpus: str, budget: int) -> list[str]:
    label = primary_label(document, corpus)
    rows = strategy_table(document, corpus, budget)
    entries = entries_by_key(document)
    other = "gold recall" if label == "answer recall" else "answer recall"
    head = (
        f"| strategy | {label} (95 % CI) | {other} | IoU | mean cos | Δ cos vs top-k "
        "| repeated text | budget use | near-dup pairs | W/T/L vs topk_budget "
        "| W/T/L vs topk_same_k | solved |"
    )
    lines = [head, "|" + "---|" * 12]
    for row in rows:
        entry = entries[(corpus, budget, row["strategy"])]
        m = entry["metrics"]
        primary = interval_text(m[entry["primary"]])
        second = m["gold_recall" if other == "gold recall" else "answer_recall"]["mean"]
        lines.append(
            f"| {row['strategy']} | {primary} | {cell(second)} | {cell(row['iou'])} | "
            f"{cell(row['redundancy_mean'])} | {cell(row['redundancy_delta'], '+.3f')} | "
            f"{cell(row['repeated_text'], '.1f', '%')} | {cell(row['budget_use'], '.0f', '%')} | "
            f"{cell(row['near_duplicates'], '.2f')} | "
            f"{row['wtl_topk_budget']} | {row['wtl_topk_same_k']} | {row['solved']} |"
        )
    return lines


def _markdown(
    document: Mapping[str, Any], figures: Mapping[str, Sequence[str]], notes: Sequence[str]
) -> str:
    """``figures``: per corpus the frontier's files (PNG first, when written), then the
    cosine figure's."""
    stamp = document["stamp"]
    config = stamp["config"]
    out = [
        "# AdaGReS Explorer: evaluation report",
        "",
        f"Command: `{stamp['command']}`  ",
        f"Created {stamp['created']} at commit "
        f"`{stamp['commit']}`; {stamp['cpus']} CPUs, {config['workers']} worker(s); build "
        f"{stamp['seconds']['build']} s, evaluation {stamp['seconds']['evaluate']} s.",
        "",
        f"Budgets: {', '.join(map(str, config['budgets']))} tokens. Tokens: {stamp['tokens']}. "
        f"Embeddings: {stamp['embedding_model']}. Query sample: split `{config['split']}` "
        f"(held-out share {config['held_out']}), "
        + (f"at most {config['queries']} queries" if config["queries"] else "every query")
        + f" of it per pool set; seed {config['seed']}: {stamp['seeds']['query sample']}; "
        f"bootstrap {config['resamples']} resamples per interval, {stamp['seeds']['bootstrap']}.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in stamp["versions"].items() if v) + ".",
        "",
        BUILT_BESIDE,
        "",
        *lead_markdown(document),
        *targets_markdown(document),
        *packing_markdown(document),
        *_details("How to read the numbers", _READING),
    ]
    names = ", ".join(role(document, s) for s in compared(document))
    for corpus, info in document["corpora"].items():
        out += [
            f"## {corpus}",
            "",
            info["description"],
            "",
            f"{corpus_summary(info)} Mean {info['mean_chunks']:.1f} chunks, "
            f"{info['mean_pool_tokens']:.0f} tokens and pairwise cosine "
            f"{info['mean_similarity']:.3f} per pool. Primary metric: "
            f"{METRIC_LABELS[info['primary']]}.",
            "",
            f"- {verdict(document, corpus)}",
            "",
        ]
        files = list(figures.get(corpus, ()))
        frontier = [f for f in files if f.startswith("frontier_")]
        cosine = [f for f in files if not f.startswith("frontier_")]
        if frontier:
            out += [figure_line(corpus, names, frontier), ""]
        tables: list[str] = []
        for budget in config["budgets"]:
            tables += [
                f"**{corpus} at {budget} tokens**",
                "",
                *_table_markdown(document, corpus, budget),
                "",
            ]
        tables += [
            f"Recall against mean pairwise cosine, one panel per budget: [{f}]({f})" for f in cosine
        ]
        out += _details(
            f"Every strategy on {corpus} at each budget ({len(config['budgets'])} tables)",
            tables,
        )
    if any(r["strategy"] in optimum_names() for r in document["rows"]):
        out += optimality_markdown(document)
    paragraphs = [
        "Against topk_budget on each corpus's primary metric: *loses* where the paired 95 % "
        "interval of the difference lies below zero, *wins* where it lies above, *ties* "
        "where it contains zero (numbers: mean difference, interval, W/T/L).",
        "",
    ]
    for corpus in document["corpora"]:
        paragraphs += [f"**{corpus}**", ""]
        paragraphs += [f"- {f['text']}" for f in document["findings"] if f["corpus"] == corpus]
        paragraphs.append("")
    out += ["## Where each strategy loses or ties", ""]
    out += _details("One paragraph per strategy and corpus", paragraphs)
    if notes:
        out += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(out)


_READING = [
    "- **answer recall** (answer-in-context, first): share of queries whose selected text "
    "holds a gold answer string (lower case, punctuation and articles removed, whole "
    "words; an answer of several sentences also counts when each of its sentences stands "
    "somewhere in the context, so a sentence packing left out because the context already "
    "held it is not a lost fact), over the queries whose *pool* holds one; **gold "
    "recall**, **IoU** (the paper's metric): against the gold chunks, over queries with a "
    "gold chunk in the pool.",
    "- **repeated text**: share of the context's words (lower-cased word tokens, the "
    "passages as sent, in pick order) that lie in a word 8-gram already earlier in the "
    "context: what the reader pays for twice.",
    "- **mean cos**: mean pairwise cosine inside the selection; **Δ cos**: its paired "
    "difference with topk_budget (negative = less redundant); **near-dup pairs**: pairs "
    "with cosine ≥ 0.9; **budget use**: tokens used / budget.",
    "- Intervals: 95 % percentile bootstrap over queries. **W/T/L**: queries where the "
    "strategy is above / equal to / below the baseline on the primary metric.",
    "- Every strategy runs on the same pool and budget; none may exceed the budget.",
]


def write_report(
    document: Mapping[str, Any], folder: str | os.PathLike[str], *, png: bool = True
) -> list[str]:
    """Write ``results.json``, the figures and ``report.md`` into ``folder``; return notes
    (what could not be written and why)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    shared, script = out.parent / PLOTLY_JS, get_plotlyjs()
    if not shared.is_file() or shared.read_text(encoding="utf-8") != script:
        shared.write_text(script, encoding="utf-8")
    write_results(
        out / "results.json", document, row_columns=ROW_COLUMNS, query_columns=QUERY_COLUMNS
    )
    notes: list[str] = []
    figures: dict[str, list[str]] = {}
    shown, drawn = compared(document), {}
    for corpus in document["corpora"]:
        label = primary_label(document, corpus)
        drawn[corpus] = frontier = frontier_figure(
            frontier_points(document, corpus, shown),
            corpus=corpus,
            label=label,
            order=shown,
            baseline=BASELINE_BUDGET,
        )
        cosine = tradeoff_figure(
            tradeoff_points(document, corpus, shown), corpus=corpus, label=label
        )
        figures[corpus] = [f"frontier_{corpus}.html", f"tradeoff_{corpus}.html"]
        for figure, name in zip((frontier, cosine), figures[corpus], strict=True):
            figure.write_html(out / name, include_plotlyjs=f"../{PLOTLY_JS}", full_html=True)
    if png:
        notes += _write_pngs(drawn, out, figures)
    else:
        notes.append("PNG figures were not requested (--no-png).")
    exact = [r for r in document["rows"] if r["strategy"] in optimum_names()]
    if exact:
        solved = sum(1 for r in exact if r["solved"])
        skipped = sum(1 for r in exact if r["error"] == NOT_RUN)
        reasons = sorted(
            {_reason(str(r["error"])) for r in exact if r["error"] and r["error"] != NOT_RUN}
        )
        limit = document["stamp"]["config"]["exact_queries"]
        scope = (
            "on every query" if limit is None else f"on the first {limit} queries of each pool set"
        )
        notes.append(
            f"exact: solved {solved} of {len(exact)} runs; {skipped} not run (exact runs "
            f"{scope}); the solver gave no proven optimum in the other "
            f"{len(exact) - solved - skipped}" + (f" ({'; '.join(reasons)})." if reasons else ".")
        )
    notes.append(
        "time per selection (mean ms, in results.json) differs between runs; "
        "every other number is the same on a rerun."
    )
    (out / "report.md").write_text(_markdown(document, figures, notes), encoding="utf-8")
    return notes


def _reason(error: str) -> str:
    """What kind of refusal an exact error message states, in a few words."""
    if "no proven optimum" in error:
        return "search limit reached"
    if "fit the budget" in error:
        return "the pool is larger than the solver accepts"
    return "refused"


def _write_pngs(
    drawn: Mapping[str, go.Figure], out: Path, figures: dict[str, list[str]]
) -> list[str]:
    import plotly.io as pio

    names = {corpus: f"frontier_{corpus}.png" for corpus in drawn}
    try:
        figures_ = list(drawn.values())
        pio.write_images(
            figures_,
            [out / names[c] for c in drawn],
            width=1000,
            height=[int(f.layout.height) for f in figures_],
        )
    except Exception as error:  # kaleido or its browser missing: the HTML figures remain
        return [f"PNG figures not written ({type(error).__name__}: {error}); HTML only."]
    for corpus in drawn:
        figures[corpus].insert(0, names[corpus])
    return []
