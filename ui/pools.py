"""The pools of this server process, by key, and which session may open each.

Pools live in a process-wide registry (``st.cache_resource``), each with token counts and
embeddings, under a short key:

- ``<file stem>``: a bundled pool (``data/*.json``, or ``$ADAGRES_DATA_DIR``), loaded on
  first use and shared;
- ``fanoutqa-<index>``: a FanOutQA dev sub-question's pool, public and rebuilt on demand
  from its key (so a link to it works on a new session or server); ``eval-<12 hex>``: a
  query of an evaluation report, public, rebuilt by the Evidence page;
- ``<kind>-<12 hex of pool_digest>`` for each of :data:`PRIVATE_KINDS` (an upload, pasted
  documents, drug reviews, a Live retrieval, a pool set's query, a question asked):
  **private**, listed and opened only by the session that made it (:func:`add_pool`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path

import numpy as np
import streamlit as st

from adagres.errors import InputError, PoolError
from adagres.pools.io import load_pools
from adagres.pools.pool import Pool

from .preparing import prepare_bundled

__all__ = [
    "ROOT",
    "add_pool",
    "budget_max",
    "budget_step",
    "data_dir",
    "fanoutqa_index",
    "fanoutqa_key",
    "get_pool",
    "is_private",
    "kind",
    "pool_digest",
    "pool_keys",
    "pool_label",
    "registered",
    "server_path",
    "short_hash",
    "unavailable_reason",
]

ROOT = Path(__file__).resolve().parent.parent
FANOUTQA_PREFIX = "fanoutqa-"
_FANOUTQA_INDEX = re.compile(r"0|[1-9][0-9]{0,5}")
#: Key prefixes of pools that belong to the session that made them.
PRIVATE_KINDS = ("upload", "corpus", "drugs", "live", "poolset", "asked")
_OWNED = "pools_owned"  # session state: {key: label} of the private pools this session made


def data_dir() -> Path:
    """Folder of the bundled pools (``$ADAGRES_DATA_DIR`` or ``<repo>/data``)."""
    return Path(os.environ.get("ADAGRES_DATA_DIR") or ROOT / "data")


#: Environment variable: more folders (``os.pathsep``-separated) whose files a browser user
#: may name by path, beside the data folder.
SERVER_PATHS = "ADAGRES_SERVER_PATHS"


def shared_folders() -> list[Path]:
    """The folders whose files a browser user may open by typing a path: the data folder
    and the folders of ``$ADAGRES_SERVER_PATHS``."""
    extra = [p for p in os.environ.get(SERVER_PATHS, "").split(os.pathsep) if p.strip()]
    return [Path(os.path.abspath(Path(p).expanduser())) for p in [str(data_dir()), *extra]]


def server_path(text: str, what: str, own: frozenset[str] = frozenset()) -> Path:
    """The server file or folder a browser user typed, if the server shares it.

    Anyone who reaches the server can type a path, so only paths inside
    :func:`shared_folders` (or in ``own``: this session's own uploads) are opened; any
    other raises InputError before the path is looked at, so the message says nothing of
    what exists there. ``..`` is resolved first; links inside a shared folder are followed
    (putting a link there is the operator's choice to share its target).
    """
    path = Path(os.path.abspath(Path(text.strip()).expanduser()))
    folders = shared_folders()
    if str(path) in own or any(path.is_relative_to(folder) for folder in folders):
        return path
    shown = ", ".join(str(folder) for folder in folders)
    raise InputError(
        f"{what}: {text.strip()!r} is outside the folders this server shares ({shown}); "
        f"its operator can share more with ${SERVER_PATHS}"
    )


def short_hash(data: bytes) -> str:
    """12 hex characters of sha256 (names a set of parameters)."""
    return hashlib.sha256(data).hexdigest()[:12]


def pool_digest(pool: Pool) -> str:
    """sha256 hex of everything that makes the pool what it is.

    :attr:`Pool.fingerprint` covers the query, ids, texts, token counts, the embedding model
    and the vectors, but not gold labels, answers, titles, scores, sources, metadata, the
    tokenizer's name or the pool's extra fields: two files with the same texts and different
    gold labels would share it. This digest adds all of those (each chunk's canonical form).
    The file's name is not part of it: the same pool uploaded under two names is one pool.
    """
    rest = {
        "fingerprint": pool.fingerprint,
        "answers": list(pool.answers),
        "tokenizer": pool.tokenizer,
        "extra": pool.extra,
        "chunks": [chunk.to_dict() for chunk in pool.chunks],
    }
    text = json.dumps(rest, ensure_ascii=False, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def budget_max(pool: Pool) -> int:
    """The top of the budget input's range (from 1): the pool's total tokens (at least 1).
    A larger budget buys nothing more: every chunk fits."""
    return max(int(np.asarray(pool.token_counts).sum()), 1)


def budget_step(high: int) -> int:
    """The budget input's +/- step: a round number (1, 2 or 5 × 10^k) near 1/40 of ``high``.

    >>> budget_step(23_000), budget_step(1_000), budget_step(30)
    (500, 20, 1)
    """
    rough = max(high / 40.0, 1.0)
    power = 10 ** math.floor(math.log10(rough))
    return int(next(m * power for m in (1, 2, 5, 10) if m * power >= rough * 0.75))


# --------------------------------------------------------------------------- registry


@st.cache_resource(show_spinner=False)
def _registry() -> tuple[dict[str, Pool], dict[str, str]]:
    """The pools by key and the labels of the public ones (private labels are per session),
    shared by every session of this server process (who may open which is decided by
    :func:`get_pool`); created once per server process."""
    return {}, {}


def _put(key: str, pool: Pool, label: str | None = None) -> Pool:
    """Register ``pool`` under ``key`` unless one is there already; return the one kept
    (same key, same :func:`pool_digest`: the same pool). ``dict.setdefault`` is atomic, so
    two sessions registering one key keep one pool."""
    found, labels = _registry()
    if label is not None:
        labels.setdefault(key, label)
    return found.setdefault(key, pool)


def registered(key: str) -> Pool | None:
    """The pool registered under ``key``, whoever made it (tests and background work; pages
    use :func:`get_pool`, which checks the session)."""
    return _registry()[0].get(key)


def kind(key: str) -> str:
    """The kind of pool ``key`` names: its prefix (``live`` for ``live-<hex>``), "" for a
    bundled pool's key."""
    return key.split("-", 1)[0] if "-" in key else ""


def is_private(key: str) -> bool:
    """Whether ``key`` names a pool that belongs to the session that made it."""
    return kind(key) in PRIVATE_KINDS


def _owned() -> dict[str, str]:
    return st.session_state.setdefault(_OWNED, {})


def add_pool(pool: Pool, kind: str, label: str, key: str | None = None) -> str:
    """Register a prepared pool; return its key. With ``key``, a pool every session may
    open (FanOutQA, Evidence's rebuilt queries); without, a private pool of this session,
    keyed ``<kind>-<12 hex of pool_digest>``."""
    if key is not None:
        _put(key, pool, label)
        return key
    if kind not in PRIVATE_KINDS:
        raise ValueError(f"kind: expected one of {', '.join(PRIVATE_KINDS)}, got {kind!r}")
    key = f"{kind}-{pool_digest(pool)[:12]}"
    _put(key, pool)
    _owned()[key] = label  # this session's, listed as label
    return key


def bundled_pools() -> dict[str, Path]:
    """Bundled pool files by key (file stem), sorted by name."""
    folder = data_dir()
    if not folder.is_dir():
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.json"))}


def pool_keys() -> list[str]:
    """Keys of every pool this session can choose: bundled ones first, then the public pools
    loaded in this process, then this session's own."""
    keys = list(bundled_pools())
    names = list(_registry()[0])
    keys += [key for key in names if key not in keys and not is_private(key)]
    return keys + [key for key in _owned() if key in names]


def pool_label(key: str) -> str:
    """A short label for a pool key (plain text)."""
    return _owned().get(key) or _registry()[1].get(key) or key.replace("_", " ")


def unavailable_reason(key: str) -> str:
    """Why ``key`` cannot be opened in this session (one sentence, names nothing of it)."""
    if is_private(key):
        return (
            f"Pool {key!r} is not available in this session: uploaded and built pools stay "
            "with the browser session that made them (and with this server run)."
        )
    return f"Pool {key!r} is not available here."


def fanoutqa_key(index: int) -> str:
    """The pool key of FanOutQA dev sub-question ``index`` (``fanoutqa-<index>``)."""
    return f"{FANOUTQA_PREFIX}{int(index)}"


def fanoutqa_index(key: str) -> int | None:
    """The sub-question index of a ``fanoutqa-<index>`` key, else None.

    The index is written in ASCII digits, without leading zeros, at most six of them
    (FanOutQA's dev set has 2,142 sub-questions): ``str.isdigit`` also takes ``²`` and
    other digits ``int`` refuses, and ``int`` refuses more than 4,300 digits, so a link
    with either names no pool (the page says so) instead of raising.

    >>> fanoutqa_index("fanoutqa-12"), fanoutqa_index("fanoutqa-²"), fanoutqa_index("fanoutqa-012")
    (12, None, None)
    """
    rest = key[len(FANOUTQA_PREFIX) :] if key.startswith(FANOUTQA_PREFIX) else ""
    return int(rest) if _FANOUTQA_INDEX.fullmatch(rest) else None


def get_pool(key: str) -> Pool:
    """The pool with this key, loading a bundled file on first use.

    PoolError if there is no such pool, or if it is another session's private pool (the
    message names nothing of it). FanOutQA pools are built by ``ui.corpora`` first.
    """
    if is_private(key) and key not in _owned():
        raise PoolError(unavailable_reason(key))
    pool = registered(key)
    if pool is not None:
        return pool
    path = bundled_pools().get(key)
    if path is None:
        raise PoolError(f"no pool with key {key!r}")
    pool = load_pools(path)[0]
    if pool.token_counts is None or pool.raw_embeddings is None:
        pool = prepare_bundled(pool, path.name)
    return _put(key, pool, key.replace("_", " "))
