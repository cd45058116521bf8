"""Fixtures of the app tests: synthetic bundled pools and a cheap projection (no numba)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
for path in (ROOT, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from synthetic import write_pools  # noqa: E402

# Set before any page runs: the app reads these at call time. No background warm-up of the
# embedding model or the FanOutQA pools (tests that time a load turn it on themselves).
os.environ["ADAGRES_PROJECTION"] = "pca"
os.environ["ADAGRES_PREFETCH"] = "off"
POOLS = write_pools(Path(tempfile.mkdtemp(prefix="adagres-pools-")))
os.environ["ADAGRES_DATA_DIR"] = str(POOLS)


@pytest.fixture(scope="session")
def pools_dir() -> Path:
    """Folder holding tiny.json (10 chunks), medium.json (200) and large.json (2000)."""
    return POOLS


@pytest.fixture(scope="module")
def data_dir(pools_dir: Path) -> Iterator[Path]:
    """The synthetic pools and the bundled demo pools in one data folder (links), as the
    app's data folder for the module (``pytestmark = pytest.mark.usefixtures("data_dir")``)."""
    folder = Path(tempfile.mkdtemp(prefix="adagres-analysis-"))
    for path in [*pools_dir.glob("*.json"), *(ROOT / "data").glob("*.json")]:
        (folder / path.name).symlink_to(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAGRES_DATA_DIR", str(folder))
        patch.setenv("ADAGRES_PROJECTION", "pca")
        yield folder
