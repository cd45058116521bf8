"""Server time of the Selection page when the budget, λ or step control moves (AppTest).

Runs the page in-process with ``streamlit.testing.v1.AppTest`` on synthetic pools of 200 and
2,000 chunks (``tests/app/synthetic.py``), after one warm-up run (the first projection and
imports are excluded), and prints the median and the maximum of each kind of change.
The requirement is < 300 ms for a 200-chunk pool.

    .venv/bin/python bench/bench_app.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app")]
os.environ.setdefault("ADAGRES_PROJECTION", "pca")

from synthetic import write_pools  # noqa: E402

os.environ["ADAGRES_DATA_DIR"] = str(write_pools(Path(tempfile.mkdtemp(prefix="adagres-bench-"))))

from streamlit.testing.v1 import AppTest  # noqa: E402

PAGE = str(ROOT / "app_pages" / "2_selection.py")
LIMIT_MS = 300.0


def timed(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = (time.perf_counter() - start) * 1000
    assert not at.exception, [e.value for e in at.exception]
    return elapsed


def bench(pool: str) -> dict[str, list[float]]:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params.update({"pool": pool, "budget": "1500"})
    timed(at)  # first run: imports, first projection, first selection
    times: dict[str, list[float]] = {"budget": [], "lambda": [], "step": []}
    for budget in (1200, 900, 2000, 2500, 1700, 800, 3000, 1100):
        at.number_input(key="sb_budget").set_value(budget)
        times["budget"].append(timed(at))
    at.radio(key="sb_lam_mode").set_value("manual")
    timed(at)
    for lam in (0.1, 0.2, 0.35, 0.5, 0.05, 0.8, 0.3, 0.15):
        at.slider(key="sb_lam").set_value(lam)
        times["lambda"].append(timed(at))
    last = int(at.slider(key="sel_step").max)
    for step in range(1, min(last, 9)):  # distinct steps: no figure cache hits
        at.slider(key="sel_step").set_value(step)
        times["step"].append(timed(at))
    return times


def main() -> int:
    worst_200 = 0.0
    for pool, n in (("medium", 200), ("large", 2000)):
        times = bench(pool)
        print(f"{n} chunks (server time per re-render, ms)")
        for kind, values in times.items():
            print(
                f"  {kind:7s} median {statistics.median(values):6.1f}   max {max(values):6.1f}"
                f"   (n={len(values)})"
            )
            if n == 200:
                worst_200 = max(worst_200, max(values))
    verdict = "OK" if worst_200 < LIMIT_MS else "TOO SLOW"
    print(f"200 chunks: worst {worst_200:.1f} ms against {LIMIT_MS:.0f} ms: {verdict}")
    return 0 if worst_200 < LIMIT_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
