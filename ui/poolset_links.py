"""Links to a pool set's query: the set's path on the server and where the query's pool lies
in it, in the address, so that a link or a reload opens that pool again.

A query opened from the Pool sets page becomes a private pool of the session
(``poolset-<digest>``): another browser does not have it. The address carries ``set`` (the
set's path, only where the server shares it: an upload's path is never written) and
``setq`` (``<piece>.<position>``: the piece of the set and the pool's place in it). When
the address names a ``poolset-`` pool this session lacks, the sidebar calls
:func:`restore_from_url`, which reads the pool from the set again.
"""

from __future__ import annotations

from adagres.errors import AdagresError, InputError

from . import pools, render, state

__all__ = ["PIECE", "SET", "is_poolset_key", "linkable", "remember", "restore_from_url"]

PREFIX = "poolset-"


def _shared(path: str) -> bool:
    """Whether the server shares ``path`` (an upload's path is this session's only)."""
    try:
        pools.server_path(path, "set")
    except InputError:
        return False
    return True


def _piece(raw: str) -> tuple[int, int]:
    parts = raw.split(".")
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 9 for p in parts):
        raise ValueError("expected <piece>.<position>, e.g. 0.3")
    return int(parts[0]), int(parts[1])


SET = state.Option("set", str, shareable=_shared)
PIECE = state.Option("setq", _piece, lambda v: f"{v[0]}.{v[1]}")


def is_poolset_key(key: str) -> bool:
    """Whether ``key`` names a pool opened from a pool set."""
    return key.startswith(PREFIX)


def linkable(key: str) -> bool:
    """Whether a link brings the pool ``key`` back: a pool set's query whose set the server
    shares (an upload's query does not come back)."""
    return is_poolset_key(key) and _shared(state.option(SET, ""))


def remember(source: str, piece: int, position: int) -> None:
    """Put the set's path and the query's place in it into the view (written to the address
    with the pool's key; the path only where the server shares it)."""
    state.set_option(SET, str(source))
    state.set_option(PIECE, (int(piece), int(position)))


def restore_from_url() -> None:
    """Read the pool the address's ``set`` and ``setq`` name from the set again and make it
    the current pool (a link opened in a fresh browser, or a reload after the server
    restarted); a set that cannot be read is said with its reason."""
    path, piece = state.option(SET, ""), state.option(PIECE, None)
    if not path or piece is None:
        return
    from adagres.poolsets import summaries as poolsets

    from . import poolsets as sets

    try:
        pool_set = sets.open_set(path)
        unit, position = piece
        if not 0 <= unit < len(pool_set.units):
            raise InputError(f"setq: the set has {len(pool_set.units)} pieces, not {unit + 1}")
        found = poolsets.load_unit(pool_set.units[unit])
        if not 0 <= position < len(found):
            raise InputError(f"setq: piece {unit} holds {len(found)} pools, not {position + 1}")
        pool = poolsets.prepare_pool(found[position])
    except AdagresError as error:
        render.error(f"Could not reopen the pool set's query: {error}")
        return
    label = f"{sets.display_name(pool_set)} {unit}.{position}: {pool.query[:40]}"
    key = pools.add_pool(pool, "poolset", label)
    if key != state.current().pool:  # the set changed since the link was made
        state.update(pool=key, step=None, chunk=None, record=False)
