"""Embeddings, offline: the packaged all-MiniLM-L6-v2 or any local sentence-transformers folder.

The packaged model runs with numpy (:mod:`adagres.embed.minilm`: the ``embed`` extra plus
the model's files, no torch); a local folder of another model runs with
sentence-transformers (and torch), which this package does not install.

Vectors are cached on disk, one ``.npy`` file per (model, sha256 of text), read back with
``allow_pickle=False``; a second run over the same texts loads no model at all. The cache
lives in ``$ADAGRES_CACHE_DIR/embeddings`` (default ``~/.cache/adagres/embeddings``). An
entry that is not a usable vector (unreadable, not float32, empty, NaN, all zero, over
1 MB, or of another dimension than the model's) counts as a miss and is overwritten.

``sentence_transformers`` (and torch) are imported only for such a folder, inside the
functions that need it. Models load from local folders only, with safetensors weights only
(see ``_load_model``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from adagres.embed.minilm import packaged_model
from adagres.embed.tokens import check_texts, text_batches
from adagres.errors import InputError, MissingExtra, PoolError

__all__ = ["DEFAULT_MODEL", "cache_dir", "embed_texts", "resolve_model"]

#: The packaged model's name, as recorded in ``pool.embedding_model``.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2", "minilm"}
_BATCH = 64
_log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


def cache_dir(override: str | os.PathLike[str] | None = None, kind: str = "embeddings") -> Path:
    """Return the cache folder of ``kind``: ``override``, ``$ADAGRES_CACHE_DIR/<kind>`` or
    ``~/.cache/adagres/<kind>`` (embeddings; datasets for the corpora's built pools).

    >>> cache_dir("/tmp/x").as_posix()
    '/tmp/x'
    """
    if override is not None:
        return Path(override)
    root = os.environ.get("ADAGRES_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "adagres"
    return base / kind


def resolve_model(model: str | os.PathLike[str] | None) -> str:
    """Return the canonical model name: DEFAULT_MODEL for the packaged model, else the
    absolute path of a local sentence-transformers folder; raise if it is neither.

    >>> resolve_model("all-MiniLM-L6-v2") == DEFAULT_MODEL
    True
    """
    if model is None or str(model) in _PACKAGED_ALIASES:
        return DEFAULT_MODEL
    path = Path(model).expanduser()
    if path.is_dir() and ((path / "modules.json").is_file() or (path / "config.json").is_file()):
        return str(path.resolve())
    raise PoolError(
        f"embedding model {str(model)!r} is neither the packaged {DEFAULT_MODEL} nor a local "
        f"sentence-transformers folder; nothing is downloaded, so give a folder path or "
        f"supply the embeddings (including query_embedding) in the pool file"
    )


@lru_cache(maxsize=2)
def _load_model(name: str) -> Any:
    """Load a sentence-transformers model from a folder on this machine: never from a hub,
    never from a pickle (the packaged model does not come here: it runs with numpy).

    ``local_files_only`` keeps sentence-transformers and transformers off the network,
    ``use_safetensors`` refuses ``pytorch_model.bin`` checkpoints (pickles that could run
    code) in a user's folder, and the weights' loading bar is turned off.
    """
    try:
        from sentence_transformers import SentenceTransformer
    except ModuleNotFoundError as error:
        raise MissingExtra(
            f"embedding with the model folder {name} needs sentence-transformers and torch "
            f"(no module named {error.name!r}), which no extra installs: install torch's CPU "
            f"build, then pip install sentence-transformers; the packaged model "
            f"({DEFAULT_MODEL}) needs neither",
            extra="embed",
            module=error.name,
        ) from None
    with contextlib.suppress(ImportError, AttributeError):
        from transformers.utils import logging as transformers_logging

        quiet: Callable[[], None] = transformers_logging.disable_progress_bar  # untyped
        quiet()
    try:
        return SentenceTransformer(
            name, device="cpu", local_files_only=True, model_kwargs={"use_safetensors": True}
        )
    except (OSError, ValueError) as error:
        raise PoolError(
            f"embedding model {name!r} could not be loaded from {name} without the network "
            f"or a pickled checkpoint (it needs model.safetensors): {error}"
        ) from None


def _encode(name: str, texts: list[str]) -> np.ndarray:
    """Run the model (the only place that does); returns (len(texts), d) float32."""
    if name == DEFAULT_MODEL:
        return packaged_model().encode(texts)
    model = _load_model(name)
    vectors = model.encode(texts, batch_size=_BATCH, convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


def _model_folder(root: Path, name: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[-60:]
    return root / f"{slug}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_MAX_ENTRY_BYTES = 1 << 20  # 262,144 float32 values: far above any model's dimension


def _read_cached(path: Path) -> np.ndarray | None:
    """The cached vector at ``path``, or None when there is no usable one (a miss)."""
    try:
        if path.stat().st_size > _MAX_ENTRY_BYTES:
            return None
        vector = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None  # absent or a torn write: compute again
    usable = (
        isinstance(vector, np.ndarray)
        and vector.ndim == 1
        and vector.dtype == np.float32
        and vector.shape[0] > 0
        and bool(np.isfinite(vector).all())
        and bool(vector.any())
    )
    return vector if usable else None


def _write_cached(path: Path, vector: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    np.save(temporary, np.ascontiguousarray(vector, dtype=np.float32), allow_pickle=False)
    os.replace(temporary, path)


def embed_texts(
    texts: Sequence[str],
    *,
    model: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> np.ndarray:
    """Return the (N, d) float32 embeddings of ``texts``, from the disk cache when present.

    ``model`` is None (the packaged all-MiniLM-L6-v2) or a local sentence-transformers
    folder. ``progress(done, total)`` is called after each batch the model computes; without
    it, runs of more than one batch log their progress.

    >>> vectors = embed_texts(["a cat", "a kitten"])
    >>> vectors.shape
    (2, 384)
    """
    texts = check_texts(texts, max_chars=2**62)
    if not texts:
        raise InputError("embed_texts needs at least one text")
    name = resolve_model(model)
    folder = _model_folder(globals()["cache_dir"](cache_dir), name)
    keys = [_text_key(text) for text in texts]
    text_of = dict(zip(keys, texts, strict=True))  # each text once
    found = {key: _read_cached(folder / f"{key}.npy") for key in text_of}
    dimension: int | None = None
    for _ in range(3):  # misses; then entries of another dimension than the model's
        todo = [
            text_of[key]
            for key, vector in found.items()
            if vector is None or (dimension is not None and vector.shape[0] != dimension)
        ]
        sizes = {vector.shape[0] for vector in found.values() if vector is not None}
        if not todo and (dimension is not None or len(sizes) <= 1):
            break
        todo = todo or texts[:1]  # [:1]: learn the model's dimension
        done = 0
        for batch in text_batches(todo, _BATCH):
            for text, vector in zip(batch, _encode(name, batch), strict=True):
                key = _text_key(text)
                _write_cached(folder / f"{key}.npy", vector)
                found[key] = vector
                dimension = vector.shape[0]
            done += len(batch)
            if progress is not None:
                progress(done, len(todo))
            elif len(todo) > _BATCH:
                _log.info("embedded %d of %d texts", done, len(todo))
    vectors = [found[key] for key in keys]
    assert all(vector is not None for vector in vectors)  # every missing text was encoded
    return np.stack(vectors).astype(np.float32)  # type: ignore[arg-type]
