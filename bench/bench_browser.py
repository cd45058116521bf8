"""What a user waits for in AdaGReS Explorer, measured in a real browser (Chromium).

Starts ``streamlit run app.py`` on free ports as direct child processes (stopped by PID),
drives Debian's Chromium with Playwright and reports medians and maxima of:

* control change → settled, on every page, at 88 (the biomedical demo pool), 200 and
  2,000 chunks: the budget's "+" button and the λ slider in the sidebar, and the page's
  own controls where it has them (Selection's replay step, Similarity's threshold);
* page switch → settled (a click in the sidebar's page list), and the browser's Back to
  the page before and Forward again (one history entry each way);
* cold launch → first chart, and → the UMAP map replacing PCA (with real UMAP). The first
  chart is timed inside the page, once the first frame in which a Plotly chart has drawn
  a trace has been painted; Playwright's ``wait_for_selector``, which polls every
  100–500 ms, is recorded beside it.

"Settled" is :func:`browser_driver.settle`'s, timed from just before the action. The
server runs with one BLAS thread
(``OPENBLAS_NUM_THREADS=1``, as ``make run`` does) and, for comparison, with the default.

    .venv/bin/python bench/bench_browser.py            # everything (~25 min)
    .venv/bin/python bench/bench_browser.py --quick    # fewer repeats, no BLAS comparison
    .venv/bin/python bench/bench_browser.py --json out.json
    .venv/bin/python bench/bench_browser.py --one-thread --pool p2000 --no-cold --json out.json
    .venv/bin/python bench/bench_browser.py --one-thread --cold 3   # three cold launches each
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_driver import (
    APP_RUNS,
    CHROMIUM,
    FLAGS,
    RETRIED,
    ROOT,
    RUNS,
    Server,
    open_page,
    settle,
    slider,
)
from playwright.sync_api import Page, sync_playwright
from synthetic import synthetic_pool

POOLS = {"bio": 88, "p200": 200, "p2000": 2000}  # key in the data folder -> chunks
TARGETS = {200: 0.8, 2000: 1.5}  # median seconds, control change → settled
LIMITS = {"any interaction": 3.0, "page switch": 1.0, "first chart": 5.0, "umap": 15.0}


def write_pools(folder: Path) -> Path:
    """The demo pool and two synthetic 384-d pools (200, 2,000 chunks) in one data folder."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "data" / "biomedical_redundant.json", folder / "bio.json")
    for name in ("p200", "p2000"):
        pool = synthetic_pool(POOLS[name], seed=POOLS[name], dim=384)
        (folder / f"{name}.json").write_text(json.dumps(pool), encoding="utf-8")
    return folder


def interactions(page: Page, title: str) -> dict[str, Any]:
    """The controls measured on the page ``title``: name -> a callable that moves it."""
    sidebar = '[data-testid="stSidebar"]'
    main = '[data-testid="stMain"]'
    out: dict[str, Any] = {
        "budget +": lambda: page.locator(
            f'{sidebar} [data-testid="stNumberInputStepUp"]'
        ).first.click(),
    }
    if page.locator(f'{sidebar} [data-testid="stSlider"]').count():  # manual λ: its slider
        out["λ slider"] = lambda: slider(page, sidebar).press("ArrowRight")
    main_sliders = page.locator(f'{main} [data-testid="stSlider"]')
    if title == "Selection" and main_sliders.count():
        out["replay step"] = lambda: slider(page, main).press("ArrowLeft")
    if title == "Similarity" and main_sliders.count():
        out["threshold"] = lambda: slider(page, main, main_sliders.count() - 1).press("ArrowLeft")
    return out


def measure_pages(url: str, pool: str, repeats: int, log: Any) -> dict[str, list[float]]:
    """Every page's control changes and the page switches, for one pool."""
    times: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_page(page, f"{url}/?pool={pool}&budget=1500&lam=0.2")
        nav = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
        nav.first.wait_for(timeout=60_000)  # the page list can show after the run has ended
        # A link's label is its last line (after its icon).
        labels = [nav.nth(i).inner_text().strip().splitlines()[-1] for i in range(nav.count())]

        def record(key: str, seconds: float) -> None:
            times.setdefault(key, []).append(seconds)
            times.setdefault(f"{key} [script run]", []).append(RUNS[-1])

        for i, label in enumerate(labels):
            # The page switch, then the browser's Back to the page before and Forward to
            # this one again: one history entry each way (so never taken twice).
            took = {}
            moves = {
                "page switch": (lambda i=i: nav.nth(i).click(), True),
                "Back": (page.go_back, False),
                "Forward": (page.go_forward, False),
            }
            for what, (move, retry) in moves.items():
                took[what] = settle(page, move, name=f"{pool} {label}: {what}", retry=retry)
                record(what, took[what])
            log(f"    {pool} {label}: " + ", ".join(f"{w} {s:.2f} s" for w, s in took.items()))
            for name, move in interactions(page, label).items():
                for _ in range(repeats):
                    record(f"{label}: {name}", settle(page, move, name=f"{pool} {label}: {name}"))
                waits = " ".join(f"{t:.2f}" for t in times[f"{label}: {name}"][-repeats:])
                runs = " ".join(f"{t:.2f}" for t in RUNS[-repeats:])
                log(f"    {pool} {label}: {name} {waits}  (script runs {runs})")
        browser.close()
    return times


# Records, inside the page, when the first frame in which a Plotly chart has drawn a trace
# has been painted: what the user sees as the first chart (installed before the page loads).
# Playwright's wait_for_selector polls every 100-500 ms, so that the time it returns is
# 0.1-0.5 s after the chart appeared on an idle page, and later while the page is busy.
FIRST_CHART = """(() => {
  const drawn = () => {
    const trace = document.querySelector('.js-plotly-plot .main-svg .trace');
    return trace && trace.closest('.main-svg').getBoundingClientRect().width > 0;
  };
  const observer = new MutationObserver(() => {
    if (!drawn()) return;
    observer.disconnect();
    // the task after the next frame: that frame has been laid out and painted
    requestAnimationFrame(() => setTimeout(() => {
      window.__adagresFirstChart = performance.now();
    }, 0));
  });
  observer.observe(document, {subtree: true, childList: true});
})();"""


def cold_launch(
    data: Path,
    blas_threads: int | None,
    log: Any,
    projection: str = "umap",
    profile: Path | None = None,
) -> dict[str, float]:
    """Server start → first chart of the Selection page, and → the UMAP map (with
    ``projection="pca"``: no UMAP and no warm-up, the first chart only). ``profile``: a
    Chromium profile folder kept between launches (a browser that has seen the app before,
    with its HTTP and code caches), instead of a fresh browser."""
    server = Server(data, projection=projection, blas_threads=blas_threads)
    try:
        with sync_playwright() as playwright:
            viewport: Any = {"width": 1400, "height": 1000}
            if profile is None:
                browser: Any = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                page = browser.new_page(viewport=viewport)
            else:
                browser = playwright.chromium.launch_persistent_context(
                    str(profile), executable_path=CHROMIUM, args=FLAGS, viewport=viewport
                )
                page = browser.new_page()
            server.wait_up()
            up = time.monotonic() - server.started
            page.add_init_script(FIRST_CHART)
            page.goto(f"{server.url}/?pool=bio")
            page.wait_for_selector('[data-testid="stApp"]', timeout=120_000)
            shell = time.monotonic() - server.started
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
            polled = time.monotonic() - server.started
            shown = page.wait_for_function(
                "() => window.__adagresFirstChart && "
                "performance.timeOrigin + window.__adagresFirstChart",
                timeout=120_000,
            ).json_value()
            first = shown / 1000 - server.started_wall
            page.wait_for_function(f"() => ({APP_RUNS})() > 0", timeout=120_000)
            ran = time.monotonic() - server.started  # the first run's end, on the page
            umap = -1.0
            if projection == "umap":
                page.get_by_text("Map: UMAP").first.wait_for(timeout=120_000)
                page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
                umap = time.monotonic() - server.started
            browser.close()
    finally:
        server.stop()
    seen = "" if profile is None else ", browser that has seen the app"
    log(
        f"    cold launch ({projection}, BLAS threads {blas_threads or 'default'}{seen}): "
        f"server up {up:.1f} s, page shell {shell:.1f} s, first chart {first:.1f} s (Playwright "
        f"saw it at {polled:.1f} s), first run "
        f"drawn {ran:.1f} s, UMAP map {umap:.1f} s"
    )
    return {
        "server up": up,
        "page shell": shell,
        "first chart": first,
        "first chart, polled": polled,
        "first run": ran,
        "umap": umap,
    }


def summary(values: list[float]) -> dict[str, float]:
    ok = [v for v in values if v >= 0]
    return {
        "median": statistics.median(ok) if ok else -1.0,
        "max": max(ok) if ok else -1.0,
        "n": len(values),
        "timeouts": len(values) - len(ok),
    }


def run_config(
    data: Path,
    blas_threads: int | None,
    repeats: int,
    cold: int,
    log: Any,
    pages: bool = True,
    pools: list[str] | None = None,
) -> dict:
    out: dict[str, Any] = {"blas_threads": blas_threads or "default", "pools": {}, "cold": []}
    if pages:
        server = Server(data, projection="pca", blas_threads=blas_threads)
        try:
            server.wait_up()
            RETRIED.clear()
            for pool in pools or POOLS:
                out["pools"][pool] = measure_pages(server.url, pool, repeats, log)
            out["retried"] = list(RETRIED)
        finally:
            server.stop()
    for _ in range(cold):
        out["cold"].append(cold_launch(data, blas_threads, log))
    # The same launch with no UMAP at all: what the warm-up costs the first chart.
    out["cold_pca"] = [cold_launch(data, blas_threads, log, "pca") for _ in range(cold)]
    # A new server for a browser that has seen the app (a restart, then a reload): the
    # profile is primed by one visit, then each launch reuses it.
    if cold:
        profile = Path(tempfile.mkdtemp(prefix="adagres-profile-"))
        try:
            cold_launch(data, blas_threads, lambda _line: None, profile=profile)
            out["cold_seen"] = [
                cold_launch(data, blas_threads, log, profile=profile) for _ in range(cold)
            ]
        finally:
            shutil.rmtree(profile, ignore_errors=True)
    return out


def report(result: dict[str, Any]) -> list[str]:
    lines = [f"BLAS threads in the server: {result['blas_threads']}"]
    worst = 0.0
    for pool, times in result["pools"].items():
        n = POOLS[pool]
        lines.append(f"  {pool} ({n} chunks){'':24s}median    max   script run (median, s)")
        for name, values in times.items():
            if name.endswith("[script run]"):
                continue
            s = summary(values)
            run = summary(times.get(f"{name} [script run]", []))["median"]
            worst = max(worst, s["max"])
            switch = name in ("page switch", "Back", "Forward")  # a page comes back
            target = LIMITS["page switch"] if switch else TARGETS.get(n)
            verdict = "" if target is None else ("ok" if s["median"] <= target else "SLOW")
            timeouts = f"  ({s['timeouts']} timed out)" if s["timeouts"] else ""
            lines.append(
                f"    {name:38s} {s['median']:6.2f} {s['max']:6.2f}   {run:6.2f}  "
                f"{verdict}{timeouts}"
            )
    lines.append(f"  slowest interaction {worst:.2f} s (limit {LIMITS['any interaction']:g} s)")
    retried = result.get("retried", [])
    if retried:
        lines.append(
            f"  taken again (no run began within 3 s of the first try): "
            f"{len(retried)}: {', '.join(retried)}"
        )

    def spread(values: list[float]) -> str:
        return f"median {statistics.median(values):.1f} s, max {max(values):.1f} s"

    cold = result["cold"]
    for key in ("first chart", "umap"):
        values = [c[key] for c in cold]
        if values:
            verdict = "ok" if statistics.median(values) <= LIMITS[key] else "SLOW"
            lines.append(
                f"  cold launch → {key}: {spread(values)} (limit {LIMITS[key]:g} s, "
                f"n={len(values)})  {verdict}"
            )
    if cold:
        polled = [c["first chart, polled"] for c in cold]
        lines.append(f"    (Playwright's wait_for_selector returned at: {spread(polled)})")
        loads = [c["first chart"] - c["server up"] for c in cold]
        lines.append(f"  of which page load → first chart (server answering): {spread(loads)}")
    for key in ("first chart", "umap"):
        values = [c[key] for c in result.get("cold_seen", [])]
        if values:
            lines.append(f"  cold server, browser that has seen the app → {key}: {spread(values)}")
    values = [c["first chart"] for c in result.get("cold_pca", [])]
    if values:
        lines.append(
            f"  cold launch without UMAP → first chart: median "
            f"{statistics.median(values):.1f} s (what the warm-up costs it)"
        )
    return lines


def probe() -> float:
    """Microseconds of a fixed pure-Python loop (best of 5): how fast this shared machine
    runs right now, recorded before and after a run so that runs can be compared."""
    import timeit

    return min(timeit.repeat(lambda: sum(range(1000)), number=2000, repeat=5)) / 2000 * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, one BLAS setting")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "browser_results.json")
    parser.add_argument("--cold-only", action="store_true", help="only the cold launches")
    parser.add_argument("--one-thread", action="store_true", help="only OPENBLAS_NUM_THREADS=1")
    parser.add_argument(
        "--pool",
        action="append",
        choices=sorted(POOLS),
        help="measure the pages on this pool only (repeatable; default: all)",
    )
    parser.add_argument("--no-cold", action="store_true", help="skip the cold launches")
    parser.add_argument("--cold", type=int, help="cold launches of each kind (default 5; 1 quick)")
    args = parser.parse_args(argv)
    # Single cold launches of the same code range over ±1.5 s here (docs/SPEED.md): a median
    # of two said little, so five of each kind.
    repeats, cold = (2, 1) if args.quick else (3, 5)
    cold = 0 if args.no_cold else (cold if args.cold is None else args.cold)
    configs: tuple[int | None, ...] = (1,) if args.quick or args.one_thread else (1, None)
    data = write_pools(Path(tempfile.mkdtemp(prefix="adagres-browser-")))
    # As ``make run`` does before it starts the server: the app's modules compiled once.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "app.py", "app_pages", "ui", "adagres"],
        cwd=ROOT,
        check=True,
    )
    results = []
    load_before = os.getloadavg()[0]  # other work on the machine slows every number
    before = probe()
    try:
        for threads in configs:
            print(f"== server with BLAS threads: {threads or 'default'} ==", flush=True)
            results.append(
                run_config(
                    data,
                    threads,
                    repeats,
                    cold,
                    lambda line: print(line, flush=True),
                    pages=not args.cold_only,
                    pools=args.pool or list(POOLS),
                )
            )
    finally:
        shutil.rmtree(data, ignore_errors=True)
    after = probe()
    load_after = os.getloadavg()[0]
    for result in results:
        result["machine_probe_us"] = {"before": round(before, 2), "after": round(after, 2)}
        result["load_average_1min"] = {"before": load_before, "after": load_after}
    print(
        f"\nmachine probe (a 1,000-step Python loop): {before:.1f} µs before, {after:.1f} µs "
        f"after (smaller is faster); load average {load_before:.2f} before, "
        f"{load_after:.2f} after"
    )
    for result in results:
        print("\n".join(report(result)))
    args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
