import os
import sys
import tempfile
from pathlib import Path

# Tests import the reference implementations as a plain module.
sys.path.insert(0, str(Path(__file__).parent))

# Embedding and dataset caches go to a fresh folder for each test session, so no test
# reads what an earlier version of the code left in the user's cache (set
# ADAGRES_CACHE_DIR yourself to reuse one between runs).
os.environ.setdefault("ADAGRES_CACHE_DIR", tempfile.mkdtemp(prefix="adagres-test-cache-"))
