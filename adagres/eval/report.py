"""The report of a run: ``report.md``, one trade-off figure per corpus (HTML, and PNG where
plotly's kaleido finds a Chromium) and ``results.json``.

The only module of the harness that imports plotly. The HTML figures load plotly.js from
one shared local copy, ``plotly.min.js`` beside the report folders (written from the
installed plotly), so they open offline and the report stays small. Figures are drawn from
plain points (:func:`tradeoff_points`), which tests check exactly.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from ..figures.layout import apply_layout, panel_vline
from .aggregate import METRIC_LABELS, interval_text
from .optimality import optimality_markdown
from .results import corpus_summary, primary_label, strategy_table, write_results
from .run import NOT_RUN, QUERY_COLUMNS, ROW_COLUMNS
from .strategies import BASELINE_BUDGET
from .targets import TARGETS, compared_strategies, summary_markdown

__all__ = ["PLOTLY_JS", "tradeoff_figure", "tradeoff_points", "write_report"]

#: File name of the shared plotly.js copy, one folder above each report.
PLOTLY_JS = "plotly.min.js"
_FAMILY_SYMBOLS = {
    "adagres": "circle",
    "fixed λ": "diamond",
    "baseline": "square",
    "variant": "star",
    "preset": "star-diamond",
    "custom": "triangle-up",
}


def tradeoff_points(document: Mapping[str, Any], corpus: str) -> list[dict[str, Any]]:
    """One point per (strategy, budget) of ``corpus``: ``x`` = mean pairwise cosine of the
    selection minus topk_budget's (paired mean over queries), ``y`` = the primary metric's
    mean, ``y_low``/``y_high`` its bootstrap interval, ``n`` the queries it is measured on
    and ``n_all`` those of topk_budget (fewer for a strategy that was not solved or not run
    on every query)."""
    full = {(e["corpus"], e["budget"]): e["metrics"][e["primary"]]["n"]
            for e in document["aggregates"] if e["strategy"] == BASELINE_BUDGET}  # fmt: skip
    points = []
    for entry in document["aggregates"]:
        if entry["corpus"] != corpus:
            continue
        y = entry["metrics"][entry["primary"]]
        x = entry["delta"]["redundancy_mean"]["mean"]
        if y["mean"] is None or x is None:
            continue
        points.append(
            {
                "strategy": entry["strategy"],
                "family": document["strategies"].get(entry["strategy"], {}).get("family", "custom"),
                "budget": entry["budget"],
                "x": x,
                "y": y["mean"],
                "y_low": y["low"],
                "y_high": y["high"],
                "n": y["n"],
                "n_all": full.get((corpus, entry["budget"]), y["n"]),
            }
        )
    return points


def tradeoff_figure(
    document: Mapping[str, Any], corpus: str, *, panel_height: int = 380
) -> go.Figure:
    """The recall–redundancy trade-off of ``corpus``: one panel per budget (two per row),
    one marker per strategy (x: Δ mean pairwise cosine vs topk_budget, paired over queries;
    y: the primary metric with its 95 % CI). Markers: the strategy's family; an open marker
    is measured on fewer queries than topk_budget (see the hover)."""
    points = tradeoff_points(document, corpus)
    budgets = sorted({p["budget"] for p in points})
    label = primary_label(document, corpus)
    columns = min(2, max(len(budgets), 1))
    rows = max(1, math.ceil(len(budgets) / columns))
    figure = make_subplots(
        rows=rows,
        cols=columns,
        shared_yaxes=True,
        subplot_titles=[f"{b} tokens" for b in budgets],
        horizontal_spacing=0.04,
        vertical_spacing=0.12,
    )
    strategies = list(dict.fromkeys(p["strategy"] for p in points))
    colour = {name: _PALETTE[i % len(_PALETTE)] for i, name in enumerate(strategies)}
    # Traces name their panel's axes (x, x2, …: make_subplots numbers them row by row) and
    # go in with one call, the x = 0 lines with the layout: add_trace(row=, col=) and
    # add_vline looked the panel up per call (0.1–0.19 s for 23 strategies at 4 budgets).
    traces, lines = [], []
    for position, budget in enumerate(budgets):
        where = {"row": position // columns + 1, "col": position % columns + 1}
        axis = "" if position == 0 else str(position + 1)
        for p in (p for p in points if p["budget"] == budget):
            traces.append(
                go.Scatter(
                    x=[p["x"]],
                    y=[p["y"]],
                    xaxis=f"x{axis}",
                    yaxis=f"y{axis}",
                    mode="markers",
                    name=p["strategy"],
                    legendgroup=p["strategy"],
                    showlegend=position == 0,
                    marker={
                        "color": colour[p["strategy"]],
                        "size": 10,
                        "opacity": 0.85,
                        "symbol": _FAMILY_SYMBOLS.get(p["family"], "circle")
                        + ("-open" if p["n"] < p["n_all"] else ""),
                    },
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [p["y_high"] - p["y"]],
                        "arrayminus": [p["y"] - p["y_low"]],
                        "thickness": 1,
                        "width": 3,
                    },
                    hovertemplate=f"{p['strategy']} · {budget} tokens · {p['n']} of "
                    f"{p['n_all']} queries<br>Δ cosine %{{x:+.3f}}"
                    f"<br>{label} %{{y:.3f}}<extra></extra>",
                )
            )
        lines.append(panel_vline(0, position + 1, {"color": "#999", "width": 1, "dash": "dot"}))
        if position >= len(budgets) - columns:  # the bottom row names the axis
            figure.update_xaxes(title_text="Δ mean cosine vs topk_budget", **where)
        if where["col"] == 1:
            figure.update_yaxes(title_text=label, **where)
    figure.add_traces(traces)
    figure.update_layout(shapes=lines, legend={"font": {"size": 10}, "tracegroupgap": 0})
    # The shared look: the title below the mode bar's row, the legend (one entry per
    # strategy, several rows at 1024 px) under the panels, where it pushes them up.
    title = f"{corpus}: {label} (95 % CI) against redundancy"
    return apply_layout(figure, title=title, height=max(panel_height * rows + 280, 700))


_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#e7ba52",
    "#637939",
    "#843c39",
    "#7b4173",
    "#3182bd",
    "#e6550d",
    "#31a354",
    "#756bb1",
    "#636363",
    "#6baed6",
    "#fd8d3c",
    "#74c476",
    "#9e9ac8",
)


def _table_markdown(document: Mapping[str, Any], corpus: str, budget: int) -> list[str]:
    label = primary_label(document, corpus)
    rows = strategy_table(document, corpus, budget)
    entries = {
        e["strategy"]: e
        for e in document["aggregates"]
        if e["corpus"] == corpus and e["budget"] == budget
    }
    other = "gold recall" if label == "answer recall" else "answer recall"
    head = (
        f"| strategy | {label} (95 % CI) | {other} | IoU | mean cos | Δ cos vs top-k "
        "| repeated text | budget use | near-dup pairs | W/T/L vs topk_budget "
        "| W/T/L vs topk_same_k | solved |"
    )
    lines = [head, "|" + "---|" * 12]
    for row in rows:
        m = entries[row["strategy"]]["metrics"]
        primary = interval_text(m[entries[row["strategy"]]["primary"]])
        second = m["gold_recall" if other == "gold recall" else "answer_recall"]["mean"]
        lines.append(
            f"| {row['strategy']} | {primary} | {_num(second)} | {_num(row['iou'])} | "
            f"{_num(row['redundancy_mean'])} | {_num(row['redundancy_delta'], signed=True)} | "
            f"{_share(row['repeated_text'])} | {_num(row['budget_use'], percent=True)} | "
            f"{_num(row['near_duplicates'], 2)} | "
            f"{row['wtl_topk_budget']} | {row['wtl_topk_same_k']} | {row['solved']} |"
        )
    return lines


def _share(value: float | None) -> str:
    """A share in percent with one decimal (repeated text is often a few percent)."""
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(
    value: float | None, digits: int = 3, *, signed: bool = False, percent: bool = False
) -> str:
    if value is None:
        return "–"
    if percent:
        return f"{100 * value:.0f} %"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _markdown(
    document: Mapping[str, Any], figures: Mapping[str, Sequence[str]], notes: Sequence[str]
) -> str:
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
        "## How to read the numbers",
        "",
        "- **answer recall** (answer-in-context, first): share of queries whose selected text "
        "holds a gold answer string (lower case, punctuation and articles removed, whole "
        "words), over the queries whose *pool* holds one; **gold recall**, **IoU** (the "
        "paper's metric): against the gold chunks, over queries with a gold chunk in the pool.",
        "- **mean cos**: mean pairwise cosine inside the selection; **Δ cos**: its paired "
        "difference with topk_budget (negative = less redundant); **near-dup pairs**: pairs "
        "with cosine ≥ 0.9; **budget use**: tokens used / budget.",
        "- Intervals: 95 % percentile bootstrap over queries. **W/T/L**: queries where the "
        "strategy is above / equal to / below the baseline on the primary metric.",
        "- Every strategy runs on the same pool and budget; none may exceed the budget.",
        "- **repeated text**: share of the selection's words (lower-cased word tokens, chunks "
        "in pick order) that lie in a word 8-gram already earlier in the context: what the "
        "reader pays for twice.",
        "",
        "## Summary: recall against repeated text",
        "",
        "Targets of the recommended preset, each against topk_budget: "
        + "; ".join(TARGETS.values())
        + ". Δ recall: the corpus's primary metric minus top-k's, in points.",
        "",
        *summary_markdown(document, compared_strategies(document)),
    ]
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
        ]
        for budget in config["budgets"]:
            out += [
                f"### {corpus} at {budget} tokens",
                "",
                *_table_markdown(document, corpus, budget),
                "",
            ]
        for path in figures.get(corpus, ()):
            out += [
                f"![{corpus} trade-off]({path})"
                if path.endswith(".png")
                else f"Interactive figure: [{path}]({path})",
                "",
            ]
    if any(r["strategy"] == "exact" for r in document["rows"]):
        out += optimality_markdown(document)
    out += [
        "## Where each strategy loses or ties",
        "",
        "Against topk_budget on each corpus's primary metric: *loses* where the paired 95 % "
        "interval of the difference lies below zero, *wins* where it lies above, *ties* "
        "where it contains zero (numbers: mean difference, interval, W/T/L).",
        "",
    ]
    for corpus in document["corpora"]:
        out += [f"### {corpus}", ""]
        out += [f"- {f['text']}" for f in document["findings"] if f["corpus"] == corpus]
        out.append("")
    if notes:
        out += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(out)


def _write_plotly_js(root: Path) -> None:
    target = root / PLOTLY_JS
    script = get_plotlyjs()
    if not target.is_file() or target.read_text(encoding="utf-8") != script:
        target.write_text(script, encoding="utf-8")


def write_report(
    document: Mapping[str, Any], folder: str | os.PathLike[str], *, png: bool = True
) -> list[str]:
    """Write ``results.json``, the figures and ``report.md`` into ``folder``; return notes
    (what could not be written and why)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    _write_plotly_js(out.parent)
    write_results(
        out / "results.json", document, row_columns=ROW_COLUMNS, query_columns=QUERY_COLUMNS
    )
    notes: list[str] = []
    figures: dict[str, list[str]] = {}
    drawn = {corpus: tradeoff_figure(document, corpus) for corpus in document["corpora"]}
    for corpus, figure in drawn.items():
        name = f"tradeoff_{corpus}.html"
        figure.write_html(out / name, include_plotlyjs=f"../{PLOTLY_JS}", full_html=True)
        figures[corpus] = [name]
    if png:
        notes += _write_pngs(drawn, out, figures)
    else:
        notes.append("PNG figures were not requested (--no-png).")
    exact = [r for r in document["rows"] if r["strategy"] == "exact"]
    if exact:
        solved = sum(1 for r in exact if r["solved"])
        skipped = sum(1 for r in exact if r["error"] == NOT_RUN)
        reasons = sorted({_reason(str(r["error"])) for r in exact
                          if r["error"] and r["error"] != NOT_RUN})  # fmt: skip
        limit = document["stamp"]["config"]["exact_queries"]
        scope = ("on every query" if limit is None
                 else f"on the first {limit} queries of each pool set")  # fmt: skip
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

    names = {corpus: f"tradeoff_{corpus}.png" for corpus in drawn}
    try:
        figures_ = list(drawn.values())
        pio.write_images(
            figures_,
            [out / names[c] for c in drawn],
            width=1300,
            height=[int(f.layout.height) for f in figures_],
        )
    except Exception as error:  # kaleido or its browser missing: the HTML figures remain
        return [f"PNG figures not written ({type(error).__name__}: {error}); HTML only."]
    for corpus in drawn:
        figures[corpus].insert(0, names[corpus])
    return []
