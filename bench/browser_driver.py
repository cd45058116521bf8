"""Driving the app in Chromium for the benchmarks: a server process, and "settled".

:class:`Server` runs ``streamlit run app.py`` as a direct child process on a free port
(stopped by its PID), started as ``make run`` starts it. :func:`settle` times an action
until the page has settled: Streamlit's run state went to ``running`` after the action and
is back to ``notRunning``, no element is stale, every Plotly chart has drawn its SVG, and
two animation frames have passed; times are taken inside the page (``performance.now()``).
Used by ``bench_browser.py`` and ``bench_poolset.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app")]

from browser_support import (  # noqa: E402
    APP_ENVIRONMENT,
    CHROMIUM,
    FLAGS,
    app_command,
    free_port,
    wait_until_up,
)
from browser_support import RUNS as APP_RUNS  # noqa: E402
from playwright.sync_api import Page  # noqa: E402

__all__ = [
    "CHROMIUM",
    "FLAGS",
    "RETRIED",
    "ROOT",
    "RUNS",
    "Server",
    "free_port",
    "open_page",
    "settle",
    "slider",
]

# Records every change of Streamlit's run state with its time (installed once per page).
RECORDER = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || window.__states) return;
  window.__states = [[performance.now(), app.getAttribute('data-test-script-state')]];
  new MutationObserver(() => window.__states.push(
      [performance.now(), app.getAttribute('data-test-script-state')]))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
# Resolves with the time the page settled after t0 (see the module docstring).
SETTLED = """([t0, timeout, needRun, startBy, runs0]) => new Promise((resolve) => {
  // A run that was going at t0 counts: the action joins it (its state may never flip).
  const before = window.__states.filter(([t]) => t < t0).pop();
  const busy = before && before[1] !== 'notRunning';
  // A short run can start and end within one frame, so that the run state never flips:
  // the app's own count of finished runs (app.py writes it last) tells that it ran.
  const ran = () => !needRun || busy || (APP_RUNS)() > runs0
      || window.__states.some(([t, s]) => t >= t0 && s !== 'notRunning');
  const drawn = () => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
      .every((el) => el.querySelector('.main-svg'));
  const tick = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const idle = app.getAttribute('data-test-script-state') === 'notRunning';
    if (ran() && idle && !document.querySelector('[data-stale="true"]') && drawn()) {
      // when the script run started and ended (after t0): the server's share of the wait
      const after = window.__states.filter(([t]) => t >= t0);
      const start = after.find(([, s]) => s !== 'notRunning');
      const end = [...after].reverse().find(([, s]) => s === 'notRunning');
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(
        [performance.now(), start ? start[0] : t0, end ? end[0] : t0])));
    } else if (needRun && !ran() && idle && performance.now() - t0 > startBy) {
      resolve([-2, 0, 0]);  // no run began: the action did not reach the app
    } else if (performance.now() - t0 > timeout) {
      resolve([-1, 0, 0]);
    } else {
      setTimeout(tick, 5);
    }
  };
  tick();
})""".replace("APP_RUNS", APP_RUNS)


class Server:
    """``streamlit run app.py`` as a direct child process, stopped by its PID."""

    def __init__(self, data: Path, *, projection: str, blas_threads: int | None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "ADAGRES_DATA_DIR": str(data), "ADAGRES_PROJECTION": projection}
        env.pop("OPENBLAS_NUM_THREADS", None)
        env.update(APP_ENVIRONMENT)  # as ``make run`` starts the app
        if blas_threads is not None:
            env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
        command = app_command(self.port)
        self.started = time.monotonic()
        self.started_wall = time.time()  # to place times taken inside the page (their clock)
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def wait_up(self, timeout: float = 90.0) -> None:
        """Return once the server answers (asked every 50 ms: cold launches are timed)."""
        wait_until_up(self.url, self.process, timeout, poll=0.05)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


#: Script run time (first "running" to the last "notRunning" after the action) per settle.
RUNS: list[float] = []


#: Actions taken again because no script run began within 3 s of the first try.
RETRIED: list[str] = []


def settle(
    page: Page, action: Any, timeout_ms: float = 20_000, name: str = "", retry: bool = True
) -> float:
    """Seconds from just before ``action()`` until the page has settled (-1: timed out).

    An action after which no script run begins within 3 s while the page is idle did not
    reach the app (a click on an element being replaced): it is taken once more, timed
    from then, and named in :data:`RETRIED`. ``retry=False`` (the browser's Back and
    Forward, which taken twice would move two entries): never taken again, its run may
    begin any time before ``timeout_ms``. The script's own run (running → notRunning) is
    appended to :data:`RUNS`.
    """
    start_by = 3_000 if retry else timeout_ms
    for attempt in range(2 if retry else 1):
        page.evaluate(RECORDER)
        runs0 = page.evaluate(APP_RUNS)
        t0 = page.evaluate("() => performance.now()")
        action()
        done, started, ended = page.evaluate(SETTLED, [t0, timeout_ms, True, start_by, runs0])
        if done != -2:
            break
        if attempt == 0 and retry:
            RETRIED.append(name)
    done = -1.0 if done < 0 else done
    RUNS.append(-1.0 if done < 0 else max(0.0, ended - started) / 1000)
    return -1.0 if done < 0 else (done - t0) / 1000


def open_page(page: Page, url: str) -> None:
    """Open ``url`` and wait until the app's first run has ended (its run counter, which
    ``app.py`` writes last: the run state reads ``notRunning`` before the first run has
    begun, when the sidebar's page list is not drawn yet) and the page has settled."""
    page.goto(url)
    page.wait_for_function(f"() => ({APP_RUNS})() > 0", timeout=120_000)
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=120_000
    )
    page.evaluate(RECORDER)
    page.evaluate(SETTLED, [0, 120_000, False, 0, 0])


def slider(page: Page, where: str, index: int = 0) -> Any:
    return page.locator(f'{where} [data-testid="stSlider"] input[type="range"]').nth(index)
