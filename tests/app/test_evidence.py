"""AppTest of the Evidence page: its numbers are results.json's, and a query opens its pool."""

from __future__ import annotations

import copy
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from adagres.eval import cases as harness_cases
from adagres.eval import harness
from adagres.eval.frontier import (
    compared,
    frontier_points,
    preset_entry,
    role,
    tradeoff_points,
    verdict,
)
from adagres.eval.report import packing_rows, write_report
from adagres.eval.results import read_results
from adagres.eval.targets import targets_table
from ui import evidence as ui_evidence
from ui.text import escape_md

ROOT = Path(__file__).resolve().parents[2]
APP = "../../app.py"
EVIDENCE = "app_pages/7_evidence.py"
TIMEOUT = 60


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """A report of the demo pools at two budgets, written as `make eval` writes one."""
    folder = tmp_path_factory.mktemp("reports")
    config = harness.Config(
        pools=("demo",), budgets=(300, 900), workers=1, resamples=300, exact_queries=0
    )
    document = harness.run(config, cases=harness_cases.demo_cases(ROOT / "data"), command="test")
    write_report(document, folder / "latest", png=False)
    return folder


@pytest.fixture
def evidence(reports, monkeypatch):
    monkeypatch.setenv("ADAGRES_REPORTS_DIR", str(reports))
    at = AppTest.from_file(f"../../{EVIDENCE}", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def close(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None
    return b is not None and math.isclose(a, b, abs_tol=1e-12)


def test_the_table_shows_the_numbers_of_results_json(evidence, reports):
    at = evidence
    assert at.title[0].value == "Evidence"
    document = read_results(reports / "latest" / "results.json")
    for budget in (300, 900):
        at.selectbox(key="ev_budget").set_value(budget).run()
        table = at.dataframe[3].value  # after the summary, the targets and what packing did
        entries = {e["strategy"]: e for e in document["aggregates"] if e["budget"] == budget}
        assert list(table["strategy"]) == list(entries)
        for _, row in table.iterrows():
            entry = entries[row["strategy"]]
            m = entry["metrics"]
            assert close(row["answer recall"], m["answer_recall"]["mean"])
            assert close(row["CI low"], m["answer_recall"]["low"])
            assert close(row["CI high"], m["answer_recall"]["high"])
            assert close(row["gold recall"], m["gold_recall"]["mean"])
            assert close(
                row["Δ answer recall vs topk_budget"], entry["delta"]["answer_recall"]["mean"]
            )
            assert close(row["IoU"], m["iou"]["mean"])
            assert close(row["mean cosine"], m["redundancy_mean"]["mean"])
            assert close(row["budget use"], m["budget_use"]["mean"])
            assert close(row["Δ cosine vs topk_budget"], entry["delta"]["redundancy_mean"]["mean"])
            wtl = entry["wtl"]["topk_budget"]["answer_recall"]
            assert row["W/T/L vs topk_budget"] == "{wins}/{ties}/{losses}".format(**wtl)
    texts = [t.value for t in at.text]
    assert all(f["text"] in texts for f in document["findings"])


def test_the_per_query_rows_are_the_rows_of_results_json(evidence, reports):
    at = evidence
    at.selectbox(key="ev_strategy").set_value("mmr").run()
    queries = at.dataframe[4].value  # the per-query table, after the strategy table
    document = read_results(reports / "latest" / "results.json")
    rows = {
        r["query_id"]: r for r in document["rows"] if r["strategy"] == "mmr" and r["budget"] == 300
    }
    assert sorted(queries["query id"]) == sorted(rows)
    for _, row in queries.iterrows():
        assert row["answer found"] == rows[row["query id"]]["answer_found"]
        assert close(row["mean cosine"], rows[row["query id"]]["redundancy_mean"])


def test_a_query_opens_its_pool_with_the_same_settings(evidence):
    at = evidence
    at.selectbox(key="ev_budget").set_value(900).run()
    at.selectbox(key="ev_strategy").set_value("adagres_derived_fill").run()
    at.selectbox(key="ev_query").set_value("open_domain_scattered").run()
    at.button(key="ev_open").click().run()
    # Run alone (not under app.py's navigation) the page cannot switch pages: the attempt is
    # the last thing it does, after the pool is registered and the settings are set.
    assert len(at.exception) == 1 and "`app_pages/2_selection.py`" in at.exception[0].value
    settings = at.session_state["settings"]
    assert settings.pool.startswith("eval-") and settings.budget == 900
    assert settings.strategy == "adagres"
    assert (settings.selector.formula, settings.selector.policy) == ("derived", "fill")
    expected = harness_cases.path_cases(ROOT / "data" / "open_domain_scattered.json")[0].pool

    # The other pages open that pool with those settings from the URL the app writes.
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params.update(settings.to_params())
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.title[0].value == "Selection"
    assert app.session_state["settings"] == settings
    from ui import pools

    assert pools.get_pool(settings.pool).fingerprint == expected.fingerprint


def test_a_report_command_naming_files_shows_as_text(tmp_path, monkeypatch):
    """The stamp's command names the user's pool files; Markdown in it stays text."""
    config = harness.Config(
        pools=("demo",),
        budgets=(300,),
        workers=1,
        resamples=50,
        exact_queries=0,
        strategies=("mmr",),
    )
    command = "python -m adagres.eval --pools **runs**_[x](y).jsonl"
    document = harness.run(
        config, cases=harness_cases.demo_cases(ROOT / "data")[:1], command=command
    )
    write_report(document, tmp_path / "latest", png=False)
    monkeypatch.setenv("ADAGRES_REPORTS_DIR", str(tmp_path))
    at = AppTest.from_file(f"../../{EVIDENCE}", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    stamp = at.caption[0].value
    assert stamp.startswith(escape_md(command) + " · ")
    assert r"\*\*runs\*\*\_\[x\]\(y\)" in stamp  # no bold, no link


def test_what_the_page_computes_leaves_the_shared_report_as_it_was(reports):
    """Every session reads one cached copy of a report (st.cache_resource): nothing the page
    computes from it may change it. Each function the page calls runs on a document that is
    then compared with a deep copy taken before."""
    doc = read_results(reports / "latest" / "results.json")
    before = copy.deepcopy(doc)
    ui_evidence.summary_frame(doc)
    ui_evidence.targets_frame(doc)
    ui_evidence.packing_frame(doc)
    for corpus in doc["corpora"]:
        verdict(doc, corpus)
        tradeoff_points(doc, corpus)  # what the figures read of the report
        frontier_points(doc, corpus)
        for budget in doc["stamp"]["config"]["budgets"]:
            ui_evidence.table_frame(doc, corpus, int(budget))
            for strategy in doc["strategies"]:
                ui_evidence.query_frame(doc, corpus, int(budget), strategy)
                ui_evidence.app_settings(doc, strategy)
    assert doc == before


def test_the_page_leads_with_repeated_text_against_recall(evidence, reports):
    """The first table is the report's summary: a row per compared strategy, per corpus its
    recall, paired Δ and repeated text at the mid budget, read from results.json; a sentence
    per corpus above it; the targets of the recommended preset next."""
    at = evidence
    document = read_results(reports / "latest" / "results.json")
    names = compared(document)
    assert names[0] == "topk_budget" and len(names) <= 6
    lead = at.dataframe[0].value
    assert list(lead["strategy"]) == [role(document, s) for s in names]
    assert list(lead.columns) == [
        "strategy",
        "demo: answer recall",
        "demo: Δ vs top-k",
        "demo: repeated text",
    ]
    entries = {e["strategy"]: e for e in document["aggregates"] if e["budget"] == 300}
    for name, (_, row) in zip(names, lead.iterrows(), strict=True):
        entry = entries[name]  # the mid budget of 300 and 900 is 300
        assert close(row["demo: answer recall"], entry["metrics"]["answer_recall"]["mean"])
        assert close(row["demo: Δ vs top-k"], entry["delta"]["answer_recall"]["mean"])
        assert close(row["demo: repeated text"], entry["metrics"]["repeated_text"]["mean"])
    sentences = [m.value for m in at.markdown]
    assert f"- {escape_md(verdict(document, 'demo'))}" in sentences
    targets = at.dataframe[1].value
    recommended = preset_entry(document, "recommended")
    assert recommended is not None
    assert targets.to_dict("records") == targets_table(document, recommended)


def test_the_long_tables_and_the_paragraphs_fold_away(evidence, reports):
    """The full table, the cosine figure and the paragraphs per strategy sit in expanders."""
    at = evidence
    labels = [e.label for e in at.main.expander]
    assert labels == [
        "Every strategy on demo at 300 tokens",
        "demo: recall against mean pairwise cosine, per budget",
        "Where each strategy loses or ties",
    ]
    document = read_results(reports / "latest" / "results.json")
    assert len(at.main.expander[2].text) == sum(f["corpus"] == "demo" for f in document["findings"])
    assert at.main.expander[0].dataframe[0].value.shape[0] == len(document["strategies"])


def test_the_page_says_what_packing_did(evidence, reports):
    """After the targets, one row per corpus and budget of each strategy that packs (the
    recommended preset and the packed candidates of the run), the means of results.json:
    picks stitched, sentences and words left out, tokens saved, repeated text beside
    top-k's; tokens saved is never negative and at most what top-k's picks could cost."""
    at = evidence
    document = read_results(reports / "latest" / "results.json")
    table = at.dataframe[2].value
    rows = packing_rows(document)
    packs = [n for n, i in document["strategies"].items() if (i["settings"] or {}).get("packing")]
    assert rows and len(rows) == len(packs) * 2  # the demo pools at 300 and 900 tokens
    assert list(table.columns) == [
        "corpus",
        "budget",
        "strategy",
        "stitched",
        "sentences left out",
        "words left out",
        "tokens saved",
        "repeated text",
        "top-k's repeated text",
    ]
    entries = {(e["strategy"], e["budget"]): e for e in document["aggregates"]}
    names = {role(document, n): n for n in packs}
    for _, row in table.iterrows():
        entry = entries[names[row["strategy"]], row["budget"]]
        m = entry["metrics"]
        assert close(row["stitched"], m["stitched"]["mean"])
        assert close(row["sentences left out"], m["left_out"]["mean"])
        assert close(row["words left out"], m["left_out_words"]["mean"])
        assert close(row["tokens saved"], m["tokens_saved"]["mean"])
        assert close(row["repeated text"], m["repeated_text"]["mean"])
        top = entries["topk_budget", row["budget"]]["metrics"]["repeated_text"]["mean"]
        assert close(row["top-k's repeated text"], top)
        assert 0 <= row["tokens saved"] <= row["budget"]


def committed_reports(target: Path) -> Path:
    """The files git keeps under reports/, copied to ``target``: what a fresh clone holds."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "reports"], capture_output=True, check=True, text=True
    ).stdout.split()
    for path in listed:
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, target / path)
    return target / "reports"


def test_a_fresh_clone_shows_the_committed_summaries(tmp_path, monkeypatch):
    """Git keeps each report's Markdown, not its results.json or figures: the page shows that
    summary, its folded blocks as expanders, no link to a figure the clone lacks, and one
    line on how to build a full report."""
    reports = committed_reports(tmp_path)
    assert not list(reports.rglob("results.json"))
    monkeypatch.setenv("ADAGRES_REPORTS_DIR", str(reports))
    at = AppTest.from_file(f"../../{EVIDENCE}", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="ev_report").options == ["latest", "dev"]
    assert len(at.info) == 1 and "`make eval-quick`" in at.info[0].value
    text = (reports / "latest" / "report.md").read_text(encoding="utf-8")
    titles = re.findall(r"<summary>(.*)</summary>", text)
    assert [e.label for e in at.main.expander] == titles and len(titles) == 6
    shown = "\n".join(m.value for m in at.markdown)
    assert "## Summary: recall against repeated text" in shown
    assert "](frontier_" not in shown and "<details>" not in shown
    assert not at.dataframe  # nothing read from a results.json
    at.selectbox(key="ev_report").set_value("dev").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "quick" not in at.selectbox(key="ev_report").options


def test_a_summary_keeps_the_links_to_figures_it_has(reports, tmp_path, monkeypatch):
    """The summary of a built report read without its results.json: every line of report.md
    but the <details> markers, the figure links kept while the figures are there; a built
    report is listed before one that holds its summary only."""
    folder = tmp_path / "reports"
    shutil.copytree(reports, folder)
    shutil.copytree(folder / "latest", folder / "summary")
    (folder / "summary" / "results.json").unlink()
    monkeypatch.setenv("ADAGRES_REPORTS_DIR", str(folder))
    assert ui_evidence.report_names() == ["latest", "summary"]
    assert ui_evidence.has_results("latest") and not ui_evidence.has_results("summary")
    text = (folder / "summary" / "report.md").read_text(encoding="utf-8")
    kept = [
        line
        for line in text.splitlines()
        if line.strip() and line not in ("<details>", "</details>") and "<summary>" not in line
    ]
    blocks = ui_evidence.summary_blocks("summary")
    assert [line for _, b in blocks for line in b.splitlines() if line.strip()] == kept
    assert any("[interactive](frontier_demo.html)" in b for _, b in blocks)
    (folder / "summary" / "frontier_demo.html").unlink()
    blocks = ui_evidence.summary_blocks("summary")
    assert not any("frontier_demo" in b for _, b in blocks)


def test_with_no_report_the_page_says_how_to_build_one(tmp_path, monkeypatch):
    monkeypatch.setenv("ADAGRES_REPORTS_DIR", str(tmp_path / "none"))
    at = AppTest.from_file(f"../../{EVIDENCE}", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "`make eval-quick`" in at.info[0].value and not at.main.selectbox
