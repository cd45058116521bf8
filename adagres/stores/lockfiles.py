"""Store lock files across processes: who holds one, and letting go of inherited ones.

A Milvus Lite store is a folder holding a ``LOCK`` file that the process with the store
open keeps ``flock``-ed; one process per store. A process forked from it inherits the open
file, and with it the lock, until the child lets go: :func:`release_inherited` does that
in a worker process, and :func:`holders` names the processes that have a lock file open,
for the message a locked store gives. Both read ``/proc`` (Linux); elsewhere they do
nothing and find no one.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LOCK_NAME", "holders", "release_inherited"]

#: The name of a Milvus Lite store's lock file, inside the store's folder.
LOCK_NAME = "LOCK"
_PROC = Path("/proc")


def _open_files(pid: int | str = "self") -> dict[int, str]:
    """File descriptor -> the path it is open on, of process ``pid`` (those readable)."""
    folder = _PROC / str(pid) / "fd"
    found: dict[int, str] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        try:
            found[int(name)] = os.readlink(folder / name)
        except (OSError, ValueError):
            continue
    return found


def release_inherited() -> int:
    """In a forked worker: let go of every store this process inherited (its lock file and
    every file under its folder), so the store's lock ends with the process that opened it.
    Each such descriptor is pointed at /dev/null (its number stays taken, so no other file
    reuses it). Returns how many were released.

    >>> release_inherited() >= 0
    True
    """
    files = _open_files()
    stores = {os.path.dirname(t) for t in files.values() if os.path.basename(t) == LOCK_NAME}
    inside = [
        fd
        for fd, target in files.items()
        if any(target == s or target.startswith(s + os.sep) for s in stores)
    ]
    if not inside:
        return 0
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in inside:
            os.dup2(null, fd)
    finally:
        os.close(null)
    return len(inside)


def holders(lock: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose open files include ``lock`` (those this
    user may look at), lowest pid first."""
    target = os.path.realpath(lock)
    found = []
    try:
        pids = sorted(int(name) for name in os.listdir(_PROC) if name.isdigit())
    except OSError:
        return []
    for pid in pids:
        if target in _open_files(pid).values():
            try:
                raw = (_PROC / str(pid) / "cmdline").read_bytes()
            except OSError:
                raw = b""
            found.append((pid, raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()))
    return found
