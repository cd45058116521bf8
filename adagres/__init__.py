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

from . import baselines, metrics
from .calibration import FALLBACK_LAM, Calibration, calibrate, mean_pairwise_similarity
from .errors import AdagresError, InputError, PoolError, SolverError
from .guarantee import Guarantee, guarantee
from .selection import (
    POLICIES,
    Candidates,
    GainAtStep,
    Selection,
    Step,
    StopReason,
    Verdict,
    VerdictKind,
    objective,
    select,
)

__all__ = [
    "FALLBACK_LAM",
    "POLICIES",
    "AdagresError",
    "Calibration",
    "Candidates",
    "GainAtStep",
    "Guarantee",
    "InputError",
    "PoolError",
    "Selection",
    "SolverError",
    "Step",
    "StopReason",
    "Verdict",
    "VerdictKind",
    "baselines",
    "calibrate",
    "guarantee",
    "mean_pairwise_similarity",
    "metrics",
    "objective",
    "select",
]

__version__ = "0.1.0"
