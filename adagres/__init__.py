"""AdaGReS: redundancy-aware, token-budgeted context selection for RAG.

Call :func:`select` where a pipeline would slice the top-k of its retrieved pool: it
returns a frozen :class:`Selection` with the picks and a record of every step. The core
needs only numpy; plotting and the app live elsewhere.

>>> import numpy as np, adagres
>>> q = np.array([1.0, 0.0])
>>> C = np.array([[0.94, 0.34], [0.91, 0.42], [0.87, -0.5]])
>>> adagres.select(q, C, [50, 50, 50], 100, lam=1.0).indices
(0, 2)
"""

import contextlib

from .core import baselines, metrics, sweep
from .core.calibration import FALLBACK_LAM, Calibration, calibrate, mean_pairwise_similarity
from .core.guarantee import Guarantee, guarantee
from .core.prepared import PreparedPool, prepare
from .core.presets import PRESETS, Preset, run_preset
from .core.records import Candidates, GainAtStep, Step, StopReason, Verdict, VerdictKind
from .core.result import Selection
from .core.selection import objective, select, select_prepared
from .core.settings import POLICIES, Settings

with contextlib.suppress(ImportError):  # the exact solver is an optional package of its own:
    from . import optimum  # noqa: F401  (present, it registers the strategy "exact")
from . import embed
from .corpora import datasets
from .corpora import documents as corpus
from .corpora.documents import chunk_documents, pool_from_documents
from .embed import tokens
from .embed.models import embed_texts
from .embed.tokens import TOKENIZERS, count_tokens
from .errors import AdagresError, InputError, PoolError, SolverError
from .pools import io
from .pools.io import (
    dump_retrieval,
    load_pool,
    load_pools,
    pool_from_retrieval,
    save_pool,
    save_pools,
)
from .pools.pool import Chunk, Pool
from .pools.ready import ensure_embeddings, ensure_token_counts

__all__ = [
    "FALLBACK_LAM",
    "POLICIES",
    "PRESETS",
    "TOKENIZERS",
    "AdagresError",
    "Calibration",
    "Candidates",
    "Chunk",
    "GainAtStep",
    "Guarantee",
    "InputError",
    "Pool",
    "PoolError",
    "PreparedPool",
    "Preset",
    "Selection",
    "Settings",
    "SolverError",
    "Step",
    "StopReason",
    "Verdict",
    "VerdictKind",
    "baselines",
    "calibrate",
    "chunk_documents",
    "corpus",
    "count_tokens",
    "datasets",
    "dump_retrieval",
    "embed",
    "embed_texts",
    "ensure_embeddings",
    "ensure_token_counts",
    "guarantee",
    "io",
    "load_pool",
    "load_pools",
    "mean_pairwise_similarity",
    "metrics",
    "objective",
    "pool_from_documents",
    "pool_from_retrieval",
    "prepare",
    "run_preset",
    "save_pool",
    "save_pools",
    "select",
    "select_prepared",
    "sweep",
    "tokens",
]

__version__ = "0.1.0"
