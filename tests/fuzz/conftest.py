"""The fuzz suite: property-based tests that every loader, the pool round trip, the CLI and
the core's public functions either give a valid result or raise the project's own error
with a one-line message. ``make test`` runs the ``ci`` hypothesis profile (derandomised, 50
examples per property); ``make fuzz`` runs the ``long`` profile (thousands)."""

from __future__ import annotations

import sys
from pathlib import Path

here = str(Path(__file__).parent)
if here not in sys.path:
    sys.path.insert(0, here)
