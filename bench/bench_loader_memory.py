"""Peak memory of the loaders on hostile inputs, each case in a fresh interpreter.

Cases:

- ``parquet_bomb``: a 782-byte Parquet file whose text column is dictionary-encoded (1,000 rows
  of one 300,000-character string, 300 MB decoded, past the 200 MB limit);
- ``set_tiny_lines``: a 4 MB pool-set JSONL of 1.3 million ``{}`` lines, opened with
  ``load_pool_set``;
- ``set_100k_lines``: a pool set of 100,000 short lines (the default ``max_set_pools``);
- ``line_200k``: reading the pool of line 200,000 of a set (``load_unit``), the time it
  takes and its memory.

Prints one JSON object per case: the outcome (loaded or the error's first 100 characters),
the peak resident memory of the process above what it held after the imports (MB), and
the seconds. Run it against another checkout with ``--code PATH`` to compare.

    python bench/bench_loader_memory.py [--code PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

_CASE = r"""
import io, json, resource, sys, time
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
import adagres
from adagres.poolsets import summaries as poolsets

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

case, folder = sys.argv[1], Path(sys.argv[2])
line = json.dumps({"query": "q", "chunks": [{"id": "a", "text": "x", "tokens": 1}]})
if case == "parquet_bomb":
    rows = 1000
    indices = pa.array([0] * rows, pa.int32())  # one entry, every row: nothing decoded here
    table = pa.table({"query": pa.DictionaryArray.from_arrays(indices, pa.array(["q"])),
                      "text": pa.DictionaryArray.from_arrays(indices, pa.array(["x" * 300_000]))})
    target = folder / "bomb.parquet"
    pq.write_table(table, target, compression="zstd")
    del table
    work = lambda: adagres.load_pools(target)
elif case == "set_tiny_lines":
    target = folder / "tiny.jsonl"
    target.write_bytes(b"{}\n" * 1_400_000)
    work = lambda: poolsets.load_pool_set(target)
elif case == "set_100k_lines":
    target = folder / "lines.jsonl"
    target.write_text((line + "\n") * 100_000)
    work = lambda: poolsets.load_pool_set(target)
elif case == "line_200k":
    target = folder / "long.jsonl"
    target.write_text((line + "\n") * 200_000)
    try:
        from adagres.pools.load_limits import Limits
        pool_set = poolsets.load_pool_set(target, limits=Limits(max_set_pools=200_000))
    except TypeError:  # a version without limits=
        pool_set = poolsets.load_pool_set(target)
    work = lambda: poolsets.load_unit(pool_set.units[-1])
base = peak_mb()
start = time.perf_counter()
try:
    result = work()
    outcome = f"loaded ({len(result)})"
except Exception as error:
    outcome = f"{type(error).__name__}: {str(error)[:100]}"
seconds = time.perf_counter() - start
code = str(Path(adagres.__file__).parents[1])
growth = round(peak_mb() - base, 1)
print(json.dumps({"code": code, "case": case, "outcome": outcome,
                  "peak_mb_above_imports": growth, "seconds": round(seconds, 4)}))
"""

CASES = ("parquet_bomb", "set_tiny_lines", "set_100k_lines", "line_200k")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            done = subprocess.run(
                [sys.executable, "-c", _CASE, case, folder],
                env={"PYTHONPATH": args.code, "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=False,
                cwd=folder,
            )
            print(done.stdout.strip() or done.stderr.strip()[-300:], flush=True)


if __name__ == "__main__":
    main()
