"""Checks shared by the figure builders (validated once, at the figure's boundary)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.records import Candidates
from ..core.result import Selection
from ..errors import InputError


def check_length(values: Sequence[Any] | None, name: str, n: int) -> None:
    """Raise unless ``values`` is None or has one entry per chunk of the pool."""
    if values is None:
        return
    if isinstance(values, str) or len(values) != n:
        got = "a single string" if isinstance(values, str) else f"{len(values)} entries"
        raise InputError(f"{name}: got {got}, the pool has {n} chunks")


def step_candidates(selection: Selection, t: int) -> Candidates:
    """Per-candidate numbers of step ``t`` (1-based); needs a traced run except at the stop."""
    candidates = selection.steps[t - 1].candidates
    if candidates is None:
        raise InputError(
            f"step {t}: the selection was made with trace=False, so only the last step "
            f"({len(selection.steps)}) has per-candidate numbers; select with trace=True"
        )
    return candidates
