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
from playwright.sync_api import Page  # noqa: E402

__all__ = ["CHROMIUM", "FLAGS", "RETRIED", "ROOT", "RUNS", "Server", "free_port", "open_page",
           "settle", "slider"]  # fmt: skip

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
SETTLED = """([t0, timeout, needRun, startBy]) => new Promise((resolve) => {
  // A run that was going at t0 counts: the action joins it (its state may never flip).
  const before = window.__states.filter(([t]) => t < t0).pop();
  const busy = before && before[1] !== 'notRunning';
  const ran = () => !needRun || busy
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
})"""


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
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)  # fmt: skip

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


def settle(page: Page, action: Any, timeout_ms: float = 20_000, name: str = "") -> float:
    """Seconds from just before ``action()`` until the page has settled (-1: timed out).

    An action after which no script run begins within 3 s while the page is idle did not
    reach the app (a click on an element being replaced): it is taken once more, timed
    from then, and named in :data:`RETRIED`. The script's own run (running → notRunning)
    is appended to :data:`RUNS`.
    """
    for attempt in range(2):
        page.evaluate(RECORDER)
        t0 = page.evaluate("() => performance.now()")
        action()
        done, started, ended = page.evaluate(SETTLED, [t0, timeout_ms, True, 3_000])
        if done != -2:
            break
        if attempt == 0:
            RETRIED.append(name)
    done = -1.0 if done < 0 else done
    RUNS.append(-1.0 if done < 0 else max(0.0, ended - started) / 1000)
    return -1.0 if done < 0 else (done - t0) / 1000


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=120_000)  # fmt: skip
    page.evaluate(RECORDER)
    page.evaluate(SETTLED, [0, 120_000, False, 0])


def slider(page: Page, where: str, index: int = 0) -> Any:
    return page.locator(f'{where} [data-testid="stSlider"] input[type="range"]').nth(index)
