"""What one run of the greedy loop keeps while it runs and leaves when it stops."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .guard import Duplicate
from .packing import Merge, Passage
from .records import Step, StopReason
from .scores import Values

__all__ = ["Records", "Run"]


class Records:
    """What :meth:`Loop.record` keeps of each step until :meth:`Loop.finish` makes its
    Step: one list per field (appending to lists is the cheapest record on the fast path)."""

    def __init__(self) -> None:
        self.winner: list[int | None] = []
        self.accepted: list[bool] = []
        self.runner_up: list[int | None] = []
        self.values: list[Values] = []
        self.charged: list[int] = []  # tokens each accepted step's pick was charged
        self.used: list[int] = []  # tokens used after the step
        self.left: list[int] = []  # tokens left when the step was decided

    def __len__(self) -> int:
        return len(self.winner)


class Run(NamedTuple):
    """What one run of a loop leaves: the picks, the step records, why it stopped."""

    picks: list[int]
    steps: list[Step]
    reason: StopReason
    pick_similarity: np.ndarray | None
    duplicates: tuple[Duplicate, ...] = ()  # what the near-duplicate guard dropped
    tokens_used: int | None = None  # None: Σ ℓ of the picks (no packing)
    passages: tuple[Passage, ...] = ()  # the context as packing stitched it
    merges: tuple[Merge, ...] = ()
