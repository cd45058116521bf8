"""What the real-browser tests share: a Streamlit server started as a direct subprocess on
127.0.0.1 (stopped by its PID), Debian's Chromium through Playwright, and page probes.

Not a test module: ``test_browser*.py`` files import it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium through Playwright, closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running ``streamlit run app.py``: its URL and process."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self, timeout: float = 10.0) -> float:
        """SIGTERM, then wait; the seconds it took to exit (SIGKILL after ``timeout``)."""
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return time.monotonic() - start


def wait_until_up(
    url: str, process: subprocess.Popen[bytes], timeout: float = 90.0, poll: float = 0.3
) -> None:
    """Return once the server at ``url`` answers its health check (asked every ``poll`` s);
    raise if its process exits first or ``timeout`` s pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(poll)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout:.0f} s")


#: What ``make run`` sets for the server besides the BLAS threads: numpy without
#: transparent huge pages (the Makefile says why).
APP_ENVIRONMENT = {"NUMPY_MADVISE_HUGEPAGE": "0"}


def app_command(port: int) -> list[str]:
    """``streamlit run app.py`` on 127.0.0.1:``port``, headless, no file watcher."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]


@contextmanager
def server(log_dir: Path, **env: str) -> Iterator[Server]:
    """Start the app with the given environment (PCA and no prefetch unless given; numpy
    without huge pages, as ``make run`` starts it)."""
    port = free_port()
    environment = {
        **os.environ,
        "ADAGRES_PROJECTION": "pca",
        "ADAGRES_PREFETCH": "off",
        **APP_ENVIRONMENT,
        **env,
    }
    log = log_dir / f"streamlit-{port}.log"
    command = app_command(port)
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=out, stderr=out)
    running = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until_up(running.url, process)
        yield running
    finally:
        if process.poll() is None:
            running.stop()


@dataclass
class Watch:
    """What a page fetched from other hosts, the requests that failed and console errors.

    Streamlit's own probes of ``<page>/_stcore/...`` on a deep link answer 404 by design
    (it then tries the root), and a load the next ``page.goto`` cuts short is aborted;
    both are left out.
    """

    outside: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def watch(page: Any) -> Watch:
    seen = Watch()
    local = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")

    def on_request(request: Any) -> None:
        if not request.url.startswith(local):
            seen.outside.append(request.url)

    def on_response(response: Any) -> None:
        if response.status >= 400 and "/_stcore/" not in response.url:
            seen.failed.append(f"{response.status} {response.url}")

    def on_console(message: Any) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            seen.errors.append(message.text)

    page.on("request", on_request)
    page.on("response", on_response)

    def on_failure(request: Any) -> None:
        if request.failure != "net::ERR_ABORTED":  # a load cut short by the next page.goto
            seen.failed.append(f"{request.failure} {request.url}")

    page.on("requestfailed", on_failure)
    page.on("console", on_console)
    return seen


#: The number of full runs the app has finished in this browser session (app.py writes it
#: at the end of every run), 0 before the first.
RUNS = """() => Math.max(0, ...[...document.querySelectorAll('style')]
    .map(s => (s.textContent.match(/adagres-run (\\d+)/) || [0, 0])[1]).map(Number))"""
#: A settled page: a run newer than ``after`` has finished, no script runs (the status
#: widget is gone), nothing of an earlier run is left stale, no element still waits for its
#: code (Streamlit draws a skeleton meanwhile) and every table in view has drawn its grid.
SETTLED = """(after) => (RUNS)() > after
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-stale="true"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !document.documentElement.dataset.scrolling  // the app's scroll to an anchor is done
    && [...document.querySelectorAll('[data-testid="stDataFrame"]')]
        .every(t => { const r = t.getBoundingClientRect();  // out of view: drawn on scroll
            return !t.checkVisibility({visibilityProperty: true})  // a closed expander's
                || r.bottom <= 0 || r.top >= innerHeight
                || t.querySelector('thead th'); })""".replace("RUNS", RUNS)


def runs(page: Any) -> int:
    return int(page.evaluate(RUNS))


def wait_for_app(page: Any, *, charts: bool = True, after: int = 0) -> None:
    """Wait until a run later than ``after`` (a :func:`runs` count taken before an action)
    has finished and drawn: the app's state, never a fixed delay."""
    page.wait_for_selector("h1", timeout=90_000)
    page.wait_for_function(SETTLED, arg=after, timeout=90_000, polling=50)
    if charts:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)


#: Every chart drawn: plotly has laid each one out and holds no pending redraw.
CHARTS_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .every(gd => gd._fullLayout && !(gd._promises && gd._promises.length))"""


def settle_layout(page: Any) -> None:
    """Wait until the fonts are loaded, every chart is drawn and two frames have passed
    (plotly's automargin redraw lands in the frame after a draw): what a screenshot or a
    measurement of the layout needs, waited for by state, not by time."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    page.wait_for_function(CHARTS_DRAWN, timeout=90_000, polling=50)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


@contextmanager
def rerun(page: Any, *, charts: bool = True) -> Iterator[None]:
    """``with rerun(page): <an action that reruns the app>`` returns once the run that the
    action started has finished."""
    before = runs(page)
    yield
    wait_for_app(page, charts=charts, after=before)


#: The step each view of the Selection page shows (plotly's own figure data on each div:
#: ``_fullData``, whose arrays plotly has decoded; ``data`` keeps a typed array as sent).
STEP_VIEWS = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(p => p._fullData);
  const find = (name) => plots.find(p => p._fullData.some(t => t.name === name));
  const map = find('query'), timeline = find('runner-up'), bar = find('remaining');
  const ring = map && map._fullData.find(
      t => t.name === 'winner' || (t.name || '').startsWith('next'));
  const picks = map && map._fullData.find(t => t.name === 'selected');
  const marker = timeline && (timeline.layout.shapes || [])
      .filter(s => s.x0 === s.x1 && s.line && s.line.dash === 'dot').map(s => s.x0);
  const sentence = [...document.querySelectorAll('[data-testid="stText"]')]
      .map(e => e.innerText).find(t => /^Step \\d+ of \\d+:/.test(t));
  const step = (text) => text
      ? Number(text.replace(/<[^>]*>/g, '').match(/Step (\\d+) of/)[1]) : null;
  return JSON.stringify({
    sentence: step(sentence),
    map: map ? step(map.layout.title.text) : null,
    ring: ring ? [ring.x[0], ring.y[0]] : null,
    last_pick: picks && picks.x.length
        ? [picks.x[picks.x.length - 1], picks.y[picks.y.length - 1]] : null,
    picks: picks ? picks.x.length : null,
    timeline: marker && marker.length ? marker[0] : null,
    bar: bar ? [...(bar._fullData.find(t => t.name === 'picks').x || [])].length : null,
  });
}"""


def step_views(page: Any) -> dict[str, Any]:
    return json.loads(page.evaluate(STEP_VIEWS))


#: Screen coordinates of a chunk's point on the chunk map (by its pool position).
POINT_OF = """(position) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullData && p._fullData.some(t => t.name === 'query'));
  for (const t of gd._fullData) {
    const skip = t.name === 'winner' || /^(next|inspected)/.test(t.name || '');
    if (skip || !t.customdata) continue;
    const k = [...t.customdata].indexOf(position);
    if (k < 0) continue;
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, r = gd.getBoundingClientRect();
    return [r.left + xa._offset + xa.l2p(t.x[k]), r.top + ya._offset + ya.l2p(t.y[k])];
  }
  return null;
}"""


def click_chunk(page: Any, position: int) -> None:
    """Click the chunk's point on the map (scrolled into view first)."""
    page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .find(p => p.data && p.data.some(t => t.name === 'query'))
        .scrollIntoView({block: 'center', behavior: 'instant'})""")
    settle_layout(page)
    x, y = page.evaluate(POINT_OF, position)
    # Off the chart first, then onto the point in steps: a move to where the pointer
    # already rests (the same point clicked again) sends no hover to plotly.
    page.mouse.move(1, 1)
    page.mouse.move(x, y, steps=4)
    # plotly takes a click on the point its hover found: wait for the hover label.
    page.locator(".hoverlayer .hovertext").first.wait_for(timeout=30_000)
    page.mouse.click(x, y)


def in_view(page: Any, element_id: str) -> bool:
    """Whether the element's top is inside the window."""
    script = """(id) => { const e = document.getElementById(id); if (!e) return false;
        const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }"""
    return bool(page.evaluate(script, element_id))


def table_after(page: Any, element: str) -> Any:
    """The first ``st.dataframe`` after the element that ``element`` (an XPath) finds."""
    return page.locator(f"xpath={element}/following::div[@data-testid='stDataFrame'][1]")


def table_csv(page: Any, table: Any) -> list[dict[str, str]]:
    """The rows of the ``st.dataframe`` that the locator ``table`` finds, from its
    "Download as CSV" (the grid itself is drawn on a canvas)."""
    import csv
    import io

    table.scroll_into_view_if_needed()
    table.locator("thead th").first.wait_for(state="attached", timeout=30_000)
    table.hover()
    with page.expect_download(timeout=30_000) as download:
        table.get_by_role("button", name="Download as CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    return list(csv.DictReader(io.StringIO(text, newline="")))
