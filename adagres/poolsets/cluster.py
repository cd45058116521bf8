"""Work on a Dask cluster (a ``distributed.Client``): what the workers need, checked and
shipped once.

- Pool files are read by the workers at the absolute paths the client loaded them from:
  :func:`check_workers_read` asks every worker, before anything is submitted, whether it
  can read each file, and names the first file and worker that cannot (a cluster needs the
  files on storage that every worker mounts at the same path).
- :func:`map_scattered` scatters each batch once, straight to one worker, and maps over the
  references, so the task graph stays small even when the batches carry pools in memory
  (a pool set built from a collection spec).

``distributed`` itself is not imported here: the caller's client brings it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from adagres.errors import PoolError

__all__ = ["check_workers_read", "file_problems", "map_scattered"]


def file_problems(sizes: Mapping[str, int]) -> list[tuple[str, str]]:
    """``(path, problem)`` for each file that this process cannot read as the client did:
    absent, unreadable, or shorter than the ``sizes`` bytes the client read.

    >>> file_problems({"/no/such/pool.jsonl": 10})
    [('/no/such/pool.jsonl', 'no such file or directory')]
    """
    problems = []
    for path, size in sizes.items():
        try:
            found = os.stat(path).st_size
        except OSError as error:
            problems.append((path, str(error.strerror).lower()))
            continue
        if not os.access(path, os.R_OK):
            problems.append((path, "not readable"))
        elif found < size:
            problems.append((path, f"has {found:,} bytes, the pool set read {size:,}"))
    return problems


def check_workers_read(client: Any, sizes: Mapping[str, int]) -> None:
    """Raise a PoolError naming the first file (of ``sizes``, path -> bytes read) and the
    first worker of ``client`` that cannot read it."""
    if not sizes:
        return
    for worker, problems in sorted(client.run(file_problems, dict(sizes)).items()):
        if problems:
            path, problem = problems[0]
            raise PoolError(
                f"{path}: {problem} on Dask worker {worker}; workers read the pool set's files "
                f"at the paths this process loaded them from, so put them on storage that "
                f"every worker mounts at the same path"
            )


def map_scattered(client: Any, function: Callable[..., Any], batches: Sequence[Any]) -> list[Any]:
    """``[function(batch) for batch in batches]`` on the cluster, in order; each batch is
    scattered once and the tasks hold only its reference."""
    scattered = client.scatter(list(batches))
    futures = client.map(function, scattered, pure=False)
    return list(client.gather(futures))
