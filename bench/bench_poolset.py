"""Benchmark of opening a pool set: 500 queries of 40 chunks, as the Pool sets page opens it.

Run from the repository root:

    .venv/bin/python bench/bench_poolset.py                # writes bench/poolset_results.json
    .venv/bin/python bench/bench_poolset.py --queries 100 --json /tmp/r.json

The set is written once, seeded (``make_pool``: 40 unit vectors of 384 dimensions around the
query and a few topics, token counts 40-160, three gold chunks and an answer string), as one
JSONL file of pools with embeddings and token counts, the way the framework adapters'
``record_to=`` writes them. Then, each in a fresh process so that no cache of an earlier
step helps, the script times:

- ``open``: :func:`adagres.poolsets.summaries.load_pool_set` (finds the lines, reads no pool);
- ``summarize``: :func:`~adagres.poolsets.summaries.summarize` on the local cores (every pool
  loaded and validated, three selections and their metrics per query): the first open;
- ``page``: the Pool sets page run cold in ``streamlit.testing.v1.AppTest`` with an empty
  rows cache (what a user waits for on a first open, minus the browser's drawing), then
  again with the rows cached on disk (a new server), then the table sorted by another
  column (the rows in memory).

With ``--browser`` it also opens the set in Chromium (Debian's, through Playwright, as
``browser_driver.py`` does): a server on a new, empty cache, the Pool sets page, the set's
path typed into its box, and the wait until the table and both charts are drawn; then a
change of the sort column, and the same path opened again by a second server (the rows on
disk).

It also times the serial run (one process) so the parallel speed-up shows, and records the
load average before and after: figures taken while the machine is busy are not the
machine's.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package (this folder is on the path: the script's own)

import numpy as np  # noqa: E402

BUDGET = 600
TARGET_SECONDS = 5.0


def make_pool(seed: int, n: int = 40, d: int = 384) -> dict:
    """One query's pool as a JSON object (the pool format), seeded."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=d)
    q /= np.linalg.norm(q)
    topics = rng.normal(size=(4, d))
    C = 0.5 * q + 0.6 * topics[rng.integers(0, 4, n)] / np.sqrt(d) * 4 + rng.normal(size=(n, d))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    tokens = rng.integers(40, 161, n)
    gold = set(rng.choice(n, 3, replace=False).tolist())
    answer = f"needle{seed}"
    return {
        "query": f"query {seed}",
        "query_embedding": q.astype(np.float32).tolist(),
        "answers": [answer],
        "chunks": [
            {
                "id": f"q{seed}-c{i}",
                "text": f"chunk {i} of query {seed}" + (f" holds {answer}" if i in gold else ""),
                "tokens": int(tokens[i]),
                "gold": i in gold,
                "embedding": C[i].astype(np.float32).tolist(),
            }
            for i in range(n)
        ],
    }


def write_set(path: Path, queries: int) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for seed in range(queries):
            handle.write(json.dumps(make_pool(seed)) + "\n")
    return path


STEPS = {
    "open": """
from adagres.poolsets.summaries import load_pool_set
start = time.perf_counter(); s = load_pool_set(PATH); result = time.perf_counter() - start
""",
    "summarize": """
import adagres
from adagres.poolsets.summaries import load_pool_set, summarize
start = time.perf_counter()
rows = summarize(load_pool_set(PATH), adagres.Settings(), BUDGET)
result = time.perf_counter() - start
assert len(rows) == QUERIES
""",
    "summarize_serial": """
import adagres
from adagres.poolsets.summaries import load_pool_set, summarize
start = time.perf_counter()
rows = summarize(load_pool_set(PATH), adagres.Settings(), BUDGET, workers=1)
result = time.perf_counter() - start
""",
    "page": """
from streamlit.testing.v1 import AppTest
def run(at):
    start = time.perf_counter(); at.run(timeout=600); took = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]
    return took
at = AppTest.from_file("app_pages/9_pool_sets.py", default_timeout=600)
at.session_state["ps_path"] = PATH
at.session_state["ps_budget"] = BUDGET
cold = run(at)
assert f"{QUERIES} queries" in " ".join(t.value for t in at.text), [t.value for t in at.text]
at.selectbox(key="ps_sort").select("dropped")
sort = run(at)
result = {"cold": cold, "sort": sort}
""",
}


def run_step(step: str, path: Path, queries: int, cache: Path) -> object:
    """One step in a fresh interpreter; its result (seconds, or a dict of them)."""
    code = (
        f"import sys, time, json\nsys.path.insert(0, {str(ROOT)!r})\n"
        f"PATH, QUERIES, BUDGET = {str(path)!r}, {queries}, {BUDGET}\n"
        + STEPS[step]
        + "\nprint('RESULT', json.dumps(result))\n"
    )
    env = {**os.environ, "ADAGRES_CACHE_DIR": str(cache), "ADAGRES_PROJECTION": "pca"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{step} failed:\n{done.stderr[-2000:]}")
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


def browser_open(path: Path, cache: Path) -> dict[str, float]:
    """Seconds until the Pool sets page shows ``path``'s table and charts in Chromium."""
    sys.path.insert(0, str(ROOT / "bench"))
    from browser_driver import CHROMIUM, FLAGS, Server, open_page, settle
    from playwright.sync_api import sync_playwright

    os.environ["ADAGRES_CACHE_DIR"] = str(cache)
    data = cache.parent / "data"  # the server's pools: one bundled pool, not the set
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "data" / "distinct_topics.json", data / "distinct_topics.json")
    result: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            for run in ("first open", "rows on disk"):
                server = Server(data, projection="pca", blas_threads=1)
                try:
                    server.wait_up()
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    open_page(page, f"{server.url}/pool_sets")
                    box = page.get_by_label("Or a path on this server")
                    box.fill(str(path))
                    result[run] = settle(page, functools.partial(box.press, "Enter"), 120_000)
                    if result[run] < 0:
                        page.screenshot(path=str(cache.parent / "timeout.png"))
                        raise SystemExit(f"{run}: the page did not settle within 120 s")
                    assert f"{path}: " in page.inner_text("body"), "the set did not open"
                    if run == "first open":
                        page.get_by_role("combobox", name="Sort by").click()
                        option = page.get_by_role("option", name="dropped", exact=True)
                        result["sort"] = settle(page, option.click, 60_000)
                    page.close()
                finally:
                    server.stop()
        finally:
            browser.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--json", default=str(ROOT / "bench" / "poolset_results.json"))
    parser.add_argument("--browser", action="store_true", help="also open the set in Chromium")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="adagres-poolset-") as folder:
        path = write_set(Path(folder) / "runs.jsonl", args.queries)
        size = path.stat().st_size
        cache = Path(folder) / "cache"
        results: dict[str, object] = {}
        for step in ("open", "summarize", "summarize_serial"):
            results[step] = run_step(step, path, args.queries, cache)
        results["page_cold"] = run_step("page", path, args.queries, cache / "empty")
        results["page_rows_on_disk"] = run_step("page", path, args.queries, cache / "empty")
        if args.browser:
            results["browser"] = browser_open(path, cache / "browser")
    load_after = os.getloadavg()
    report = {
        "when": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "queries": args.queries,
        "chunks_per_query": 40,
        "file_bytes": size,
        "budget": BUDGET,
        "target_seconds": TARGET_SECONDS,
        "seconds": results,
    }
    Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"{args.queries} queries, {size / 1e6:.0f} MB JSONL, load {load_before[0]:.1f}")
    for step, value in results.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v:.2f} s" for k, v in value.items())
        else:
            value = f"{value:.2f} s"
        print(f"  {step:<20} {value}")
    cold = results["page_cold"]
    assert isinstance(cold, dict)
    first = results["browser"]["first open"] if args.browser else cold["cold"]  # type: ignore[index]
    where = "in Chromium" if args.browser else "in the page (AppTest)"
    verdict = "MET" if 0 <= first <= TARGET_SECONDS else "MISSED"
    print(f"  first open {where}: {first:.2f} s, target ≤ {TARGET_SECONDS} s: {verdict}")


if __name__ == "__main__":
    main()
