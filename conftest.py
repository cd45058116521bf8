"""Settings every pytest run needs, whichever folder it collects (tests/ or adagres/ doctests)."""

import os

# Haystack writes a telemetry config under the home folder on first import unless told not to.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
