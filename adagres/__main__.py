"""``python -m adagres``: see :mod:`adagres.cli`."""

from .cli import run

run()
