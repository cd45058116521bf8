"""Session-wide test setup: hypothesis profiles, markers, temporary paths, the expensive real
corpora (built once) and a fake encoder.

Markers (registered in pyproject.toml, ``--strict-markers``): ``slow`` (seconds each),
``model`` (loads the packaged embedding model), ``data`` (reads the optional real-corpus
packages), ``browser`` (drives Chromium). ``make test-fast`` runs
``-m "not slow and not browser"``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

# Tests import the reference implementations as a plain module.
sys.path.insert(0, str(Path(__file__).parent))

# --------------------------------------------------------------------------- hypothesis

# CI replays the same examples on every run (a red build is reproducible, not a dice roll);
# neither profile keeps an example database, which would be written into the checkout.
settings.register_profile("ci", derandomize=True, max_examples=50, deadline=None, database=None)
settings.register_profile("dev", deadline=None, database=None)
# `make fuzz`: thousands of random examples per property (HYPOTHESIS_PROFILE=long).
settings.register_profile("long", max_examples=3000, deadline=None, database=None)
_default_profile = "dev" if os.environ.get("CI", "").lower() in ("", "0", "false") else "ci"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or _default_profile)

# --------------------------------------------------------------------------- markers

# Files this conftest does not own get their marks here, keyed on the file name.
FILE_MARKS = {
    **{f"test_browser{part}.py": ("browser", "slow") for part in ("", "_app", "_layout")},
    "test_pool_corpora.py": ("data", "slow", "model"),  # real corpora, embedded for real
}
# Doctests in adagres/ that need more than numpy.
DOCTEST_MARKS = {
    "adagres.embed.models.embed_texts": ("model",),
    "adagres.embed.minilm.MiniLM": ("model",),
    "adagres.corpora.datasets.wiki_summaries": ("data",),
    "adagres.corpora.datasets.drug_reviews": ("data",),
}


#: Every test in these folders of tests/ gets the mark (``make test-fast`` leaves them out).
FOLDER_MARKS = {"app": ("app",), "integrations": ("frameworks",), "fuzz": ("fuzz",)}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = FILE_MARKS.get(item.path.name, ()) + DOCTEST_MARKS.get(item.name, ())
        if item.path.parent.parent.name == "tests" and "browser" not in item.path.name:
            names += FOLDER_MARKS.get(item.path.parent.name, ())
        for name in names:
            item.add_marker(name)


# --------------------------------------------------------------------------- temporary paths


class _SessionPaths:
    """Keep every test's files under pytest's own temporary directory (which it prunes to
    the last three runs), not in /tmp or the user's cache:

    - ADAGRES_CACHE_DIR (embedding and dataset caches) points to a fresh folder, so no test
      reads what an earlier version of the code left behind; set it yourself to reuse one
      between runs.
    - ``tempfile.tempdir`` points there too, for tests that call ``tempfile.mkdtemp()``.

    A plugin rather than a conftest fixture so that it covers the doctests in adagres/ too.
    """

    @pytest.fixture(scope="session", autouse=True)
    @classmethod
    def adagres_cache_dir(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
        given = os.environ.get("ADAGRES_CACHE_DIR")
        folder = Path(given) if given else tmp_path_factory.mktemp("adagres-cache")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("ADAGRES_CACHE_DIR", str(folder))
            patch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tempfile")))
            yield folder


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SessionPaths(), "adagres-session-paths")


# --------------------------------------------------------------------------- shared corpora


@pytest.fixture(scope="session")
def fanoutqa_dev_pools(adagres_cache_dir: Path):
    """The 558 FanOutQA dev pools, built once per session (BM25, about 10 s) into the
    session cache, where the app tests' own ``fanoutqa_pools()`` calls find them too."""
    from adagres.corpora import datasets

    return datasets.fanoutqa_pools()


@pytest.fixture(scope="module")
def demo():
    """The three bundled demo pools (data/) as evaluation cases, for tests/test_eval_*.py."""
    from adagres.eval import cases as harness_cases

    return harness_cases.demo_cases(Path(__file__).resolve().parents[1] / "data")


# --------------------------------------------------------------------------- fake encoder

_WORD = re.compile(r"\w+")
FAKE_DIMENSION = 64


def hashed_bag_of_words(texts: list[str]) -> np.ndarray:
    """Deterministic stand-in for the model: each lower-cased word adds 1 to one of 64
    hashed dimensions, plus a constant so that no vector is zero. Texts that share words
    have a higher cosine, so rankings still mean something."""
    out = np.zeros((len(texts), FAKE_DIMENSION), dtype=np.float32)
    out[:, 0] = 0.5
    for row, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            out[row, 1 + int.from_bytes(digest, "little") % (FAKE_DIMENSION - 1)] += 1.0
    return out


@dataclass
class FakeEncoder:
    """What the ``fake_encoder`` fixture gives a test: the batches the "model" saw, and the
    same vectors for the test's own expected values."""

    calls: list[list[str]] = field(default_factory=list)

    def vectors(self, texts: list[str]) -> np.ndarray:
        return hashed_bag_of_words(list(texts))


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> FakeEncoder:
    """Replace the model run by :func:`hashed_bag_of_words`, for tests where the model is not
    the thing under test."""
    from adagres.embed import models as embed

    fake = FakeEncoder()

    def encode(name: str, texts: list[str]) -> np.ndarray:
        fake.calls.append(list(texts))
        return fake.vectors(texts)

    monkeypatch.setattr(embed, "_encode", encode)
    return fake
