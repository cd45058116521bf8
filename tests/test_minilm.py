"""The packaged MiniLM run with numpy (adagres.embed.minilm): the same vectors as
sentence-transformers, without torch.

Tolerance: cosine ≥ 0.99999 to sentence-transformers' vector of the same text (measured:
≥ 0.9999998), and each value within 2e-6 of the bundled pools' vectors (stored rounded to
6 decimals, so the rounding alone accounts for 5e-7).
"""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adagres.embed.minilm import gelu, packaged_folder, packaged_model, read_safetensors
from adagres.errors import PoolError

DATA = Path(__file__).resolve().parents[1] / "data"
COSINE = 0.99999


def _bundled() -> list[tuple[str, list[float]]]:
    pairs = []
    for path in sorted(DATA.glob("*.json")):
        pool = json.loads(path.read_text(encoding="utf-8"))
        pairs.append((pool["query"], pool["query_embedding"]))
        pairs += [(chunk["text"], chunk["embedding"]) for chunk in pool["chunks"]]
    return pairs


@pytest.mark.model
@pytest.mark.slow
def test_the_bundled_pools_vectors_are_reproduced():
    """Every chunk and query vector of data/*.json (made with sentence-transformers) comes
    back from the numpy model: the bundled files stay valid for the default model."""
    pairs = _bundled()
    assert len(pairs) == 201
    texts = [text for text, _ in pairs]
    stored = np.array([vector for _, vector in pairs], dtype=np.float32)
    ours = packaged_model().encode(texts)
    assert np.abs(ours - stored).max() <= 2e-6
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    assert float(np.min(np.sum(ours * stored, axis=1))) >= COSINE


@pytest.mark.model
@pytest.mark.data
@pytest.mark.slow
def test_same_vectors_as_sentence_transformers_on_wikipedia_summaries():
    """Differential: 160 Wikipedia summaries (the longest, so truncation at 256 tokens is
    exercised, and short ones), embedded by sentence-transformers (torch) and by numpy."""
    from sentence_transformers import SentenceTransformer

    from adagres.corpora.datasets import wiki_summaries

    extracts = sorted((item["extract"] for item in wiki_summaries().values()), key=len)
    texts = extracts[:40] + extracts[len(extracts) // 2 : len(extracts) // 2 + 60] + extracts[-60:]
    model = SentenceTransformer(str(packaged_folder()), device="cpu", local_files_only=True)
    theirs = model.encode(texts, convert_to_numpy=True, show_progress_bar=False)
    assert len(model.tokenizer(texts[-1])["input_ids"]) > 256  # truncation is exercised
    ours = packaged_model().encode(texts)
    cosine = np.sum(ours * theirs, axis=1) / np.linalg.norm(theirs, axis=1)
    assert float(cosine.min()) >= COSINE
    assert np.abs(ours - theirs).max() <= 1e-5


def test_vectors_do_not_depend_on_the_batch():
    """A text gets the same vector alone or padded in a batch of longer ones."""
    model = packaged_model()
    texts = ["a cat", "A much longer sentence about kittens, rugs and the afternoon sun."]
    together = model.encode(texts * 3)
    alone = model.encode(texts[:1])
    np.testing.assert_allclose(together[0], alone[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(together[0], together[2], rtol=0, atol=1e-6)
    assert model.encode([]).shape == (0, 384)


def test_gelu_is_the_exact_gelu_within_half_a_float32_step():
    """Against erf in float64 (SciPy) on a dense grid and far out: each value within half a
    float32 step of the exact GELU, plus 5e-8 (the tail below x = -4√2 is set to 0)."""
    from scipy.special import erf

    far = [-1e30, -50.0, -5.6568, 50.0, 1e30, 0.0]
    x = np.concatenate([np.linspace(-12, 12, 480_001), far]).astype(np.float32)
    x64 = x.astype(np.float64)
    exact = x64 * 0.5 * (1.0 + erf(x64 / math.sqrt(2.0)))
    step = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    ours = gelu(x.copy())
    assert ours.dtype == np.float32
    assert np.all(np.abs(ours - exact) <= 0.5 * step + 5e-8)


def test_gelu_works_in_place_on_contiguous_float32_only():
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    want = gelu(x.copy())
    assert gelu(x) is x and np.array_equal(x, want)
    wide = np.repeat(np.linspace(-3, 3, 7, dtype=np.float32), 2)
    strided = gelu(wide[::2])  # a view with a stride: computed on a copy
    assert np.array_equal(strided, want) and np.array_equal(wide[::2], np.linspace(-3, 3, 7))
    assert np.array_equal(gelu(np.linspace(-3, 3, 7)), want)  # float64 in, float32 out
    assert gelu(np.zeros((0, 4), dtype=np.float32)).shape == (0, 4)


def test_default_embedding_path_imports_no_torch(tmp_path):
    """embed_texts, ensure_embeddings and corpus mode with the packaged model load neither
    torch nor sentence-transformers nor transformers."""
    code = (
        "import sys, adagres\n"
        "from adagres.corpora.documents import pool_from_documents\n"
        f"v = adagres.embed_texts(['a cat', 'a kitten'], cache_dir={str(tmp_path)!r})\n"
        "pool = pool_from_documents({'d': 'Paris is in France.'}, 'Where is Paris?', size=20,"
        f" overlap=0, top_n=1, cache_dir={str(tmp_path)!r})\n"
        "names = ('torch', 'sentence_transformers', 'transformers')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(v.shape, round(float(v[0] @ v[1]), 2) > 0.5, pool.dimension, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["(2,", "384)", "True", "384", "[]"]
    assert "Loading weights" not in out.stderr and "it/s" not in out.stderr  # no progress bar


def _safetensors(path: Path, header: dict, body: bytes) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body)
    return path


def test_safetensors_reader_reads_float32_tensors_and_skips_others(tmp_path):
    values = np.arange(6, dtype="<f4")
    header = {
        "__metadata__": {"format": "pt"},
        "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "ids": {"dtype": "I64", "shape": [1], "data_offsets": [24, 32]},
    }
    path = _safetensors(tmp_path / "m.safetensors", header, values.tobytes() + bytes(8))
    tensors = read_safetensors(path)
    assert list(tensors) == ["w"]
    np.testing.assert_array_equal(tensors["w"], [[0, 1, 2], [3, 4, 5]])


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}}, "do not fit"),
        ({"w": {"dtype": "F32", "shape": [100], "data_offsets": [0, 400]}}, "do not fit"),
        ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}, "do not fit"),
        ({"w": {"dtype": "F32", "shape": [1]}}, "data_offsets"),
    ],
)
def test_a_broken_safetensors_file_is_a_one_line_pool_error(tmp_path, header, problem):
    path = _safetensors(tmp_path / "bad.safetensors", header, bytes(24))
    with pytest.raises(
        PoolError, match=f"bad.safetensors: not a readable safetensors file.*{problem}"
    ):
        read_safetensors(path)
    (tmp_path / "short.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(PoolError, match="header of 1099511627776 bytes"):
        read_safetensors(tmp_path / "short.safetensors")
