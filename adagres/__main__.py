"""``python -m adagres``: see :mod:`adagres.cli`."""

import sys

from .cli import main

sys.exit(main())
