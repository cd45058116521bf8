"""The project's error types.

Every error a user can cause (a bad argument, a bad file, a pool too large to solve) is an
:class:`AdagresError`, so a caller (the CLI, the app) can catch one type and show its
message, which names the field, the chunk and the numbers involved.
"""

from __future__ import annotations

__all__ = ["AdagresError", "InputError", "PoolError", "SolverError"]


class AdagresError(ValueError):
    """Base class of every error that bad input can raise."""


class InputError(AdagresError):
    """An argument of a public function is invalid (shape, value, option)."""


class PoolError(AdagresError):
    """A pool file or pool object is invalid; the message names file, line, field and chunk."""


class SolverError(AdagresError):
    """The exact solver refused a pool (too large) or could not prove optimality."""
